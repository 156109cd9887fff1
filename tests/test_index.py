"""Ranking: BM25 as bm25s computes it, stable under incremental updates."""

from __future__ import annotations

import shutil

import bm25s
import numpy as np

from core.index import bm25
from core.index.bm25 import Snapshot
from core.index.segment import build_from_coo, merge_segments
from core.index.tokenize import Tokenizer

from .hostile_support import exchange, write_jsonl
from .support import open_archive, project_dir, transcript

QUERIES = [
    "k1 saturation", "snowball stemmer", "watchdog debounce partial line", "sidebar overlaps footer",
    "psycopg UndefinedFunction", "flaky test_invoice_rollover", "pyright 1.1.390", "E0502 borrow",
    "ruff import sorting", "watermark skew", "index", "test", "kafka consumer lag", "snippet",
]


def _coo_segment(name, docs: list[dict[int, int]], first_id: int = 1):
    terms, pos, tfs = [], [], []
    for i, counts in enumerate(docs):
        for term, tf in counts.items():
            terms.append(term)
            pos.append(i)
            tfs.append(tf)
    n = len(docs)
    lengths = np.array([sum(d.values()) for d in docs], dtype=np.float32)
    return build_from_coo(
        name, np.array(terms, np.int64), np.array(pos, np.int32), np.array(tfs, np.float32),
        np.arange(first_id, first_id + n, dtype=np.int64), np.zeros(n, np.int32), np.zeros(n),
        lengths, np.zeros(n, np.float32),
    )


def test_scores_equal_bm25s_lucene():
    corpus = [
        "the watchdog observer debounces bursts of file events",
        "bm25 ranking with k1 and b parameters",
        "a flaky test in the invoice rollover job",
        "watchdog events arrive in bursts when agents append",
        "partial lines are read again once complete",
    ] * 3
    tok = Tokenizer()
    token_lists = [tok.terms(text) for text in corpus]
    vocab: dict[str, int] = {}
    docs = []
    for tokens in token_lists:
        counts: dict[int, int] = {}
        for t in tokens:
            term_id = vocab.setdefault(t, len(vocab))
            counts[term_id] = counts.get(term_id, 0) + 1
        docs.append(counts)
    # Split over three segments: scores must not depend on the split.
    segs = [_coo_segment("a", docs[:4], 1), _coo_segment("b", docs[4:9], 5), _coo_segment("c", docs[9:], 10)]
    snap = Snapshot.create(segs, np.zeros(0, np.int64))
    reference = bm25s.BM25(method="lucene", k1=bm25.K1, b=bm25.B)
    reference.index(bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in toks] for toks in token_lists], vocab={str(v): v for v in vocab.values()}), show_progress=False)
    for query in ("watchdog bursts", "flaky invoice", "partial lines complete", "bm25 k1"):
        ids = [vocab[t] for t in tok.query_terms(query) if t in vocab]
        ours = {h.doc_id - 1: h.bm25 for h in snap.search(ids, 100)}
        theirs = reference.get_scores([str(i) for i in ids])
        for doc, score in enumerate(theirs):
            assert abs(ours.get(doc, 0.0) - score) < 1e-4, (query, doc)


def test_merge_keeps_scores_and_drops_dead():
    docs = [{1: 2, 2: 1}, {2: 3}, {1: 1, 3: 4}, {3: 1}]
    a, b = _coo_segment("a", docs[:2], 1), _coo_segment("b", docs[2:], 3)
    dead = np.array([2], np.int64)
    before = Snapshot.create([a, b], dead)
    merged = merge_segments("m", [a, b], list(before.alive))
    after = Snapshot.create([merged], np.zeros(0, np.int64))
    for q in ([1], [2], [3], [1, 3]):
        assert [(h.doc_id, round(h.score, 6)) for h in before.search(q, 10)] == [(h.doc_id, round(h.score, 6)) for h in after.search(q, 10)]
    assert 2 not in merged.doc_ids.tolist()


def test_query_without_matching_term_returns_nothing(demo):
    archive, _ = demo
    assert archive.search("zzzqqqxxyy") == []
    assert archive.search("the and of") == []  # stopwords only
    assert archive.search("") == []


def test_demo_queries_rank_their_session_first(demo):
    archive, corpus = demo
    for query, session_id in corpus.queries:
        hits = archive.search(query, limit=10)
        assert hits and hits[0].session_id == session_id, query


def test_tool_output_is_findable_but_ranks_below_conversation(tmp_path):
    proj = project_dir(tmp_path)
    t = transcript("11111111-1111-4111-8111-111111111111")
    t.user("upgrade the type checker config")
    t.tool("Bash", {"command": "npx pyright"}, "0 errors\nA new version of pyright is available: 1.1.390")
    t.assistant("Config updated.")
    t.write(proj)
    u = transcript("22222222-2222-4222-8222-222222222222")
    u.user("why does pyright complain about the new version of our API?")
    u.assistant("The pyright error comes from the version field.")
    u.write(proj)
    with open_archive(tmp_path) as archive:
        hits = archive.search("pyright new version")
        assert [h.session_id[:2] for h in hits] == ["22", "11"]


def test_identifiers_match_whole_and_by_parts(tmp_path):
    proj = project_dir(tmp_path)
    t = transcript("33333333-3333-4333-8333-333333333333")
    t.user("why does _is_cache_version_compatible return False for core/index/segment.py?")
    t.assistant("Because parseSessionRange rejects it.")
    t.write(proj)
    with open_archive(tmp_path) as archive:
        for q in ("_is_cache_version_compatible", "cache version compatible", "segment.py", "core/index/segment.py", "session range", "parseSessionRange"):
            assert archive.search(q), q


def _ranking(archive):
    return {q: [(h.session_id, h.turn_number, round(h.score, 5)) for h in archive.search(q, limit=10)] for q in QUERIES}


def _rows(archive):
    """Every field of every session row (list_sessions), in list order."""
    return [s.to_dict() | {"skipped_lines": s.skipped_lines} for s in archive.list_sessions(limit=500)]


def test_incremental_updates_rank_and_list_like_a_rebuild(demo_home, tmp_path):
    home, corpus = demo_home
    projects = home / ".claude" / "projects"
    # plus a session whose own summary describes a session of no file we have
    dangling = {"type": "summary", "summary": "Summary of a deleted session", "leafUuid": "99999999-9999-4999-8999-999999999999"}
    sid = "44444444-4444-4444-8444-444444444444"
    turns = exchange(sid, "tidy the flaky retry test", "done", "2026-01-05T10:00:00Z", slug="quiet-amber-fox")
    write_jsonl(projects / "-home-t-proj" / f"{sid}.jsonl", [dangling, *turns, *exchange(sid, "and the snippet", "ok", "2026-01-05T10:01:00Z", ids=("u2", "a2"))])
    # Start from half the corpus, then grow it file by file and line by line.
    staged = tmp_path / "staged"
    shutil.copytree(projects, staged)
    for path in sorted(projects.rglob("*.jsonl")):
        path.unlink()
    files = sorted(staged.rglob("*.jsonl"))
    with open_archive(home) as archive:
        for src in files:
            dest = projects / src.relative_to(staged)
            dest.parent.mkdir(parents=True, exist_ok=True)
            lines = src.read_bytes().splitlines(keepends=True)
            # write in three appends (incremental reads from the last offset)
            for chunk in (lines[: len(lines) // 3], lines[len(lines) // 3 : 2 * len(lines) // 3], lines[2 * len(lines) // 3 :]):
                with open(dest, "ab") as handle:
                    handle.write(b"".join(chunk))
                archive.sync([dest])
        incremental = _ranking(archive)
        rows = _rows(archive)
        assert len(archive.catalog.segment_names()) > 9  # one small segment per update …
        archive.compact()
        assert len(archive.catalog.segment_names()) == 1  # … merged, dead documents purged
        assert _ranking(archive) == incremental
        assert _rows(archive) == rows
    fresh_cache = tmp_path / "fresh-cache"
    from core.api import Archive
    from core.fixtures.demo import DEFAULT_NOW

    from .support import config_for

    with Archive.open(config_for(home, cache_dir=fresh_cache), now=lambda: DEFAULT_NOW.timestamp()) as rebuilt:
        assert _ranking(rebuilt) == incremental
        assert _rows(rebuilt) == rows  # labels, counts, times, chains: every field


def test_a_big_sync_gives_the_writers_page_cache_back(demo_home, monkeypatch):
    """A big sync runs with a bigger SQLite page cache (core.archive.indexer._bulk_cache); a
    long-lived process must not keep it afterwards."""
    import core.archive.indexer as indexer
    from core.archive.catalog import PAGE_CACHE_KIB

    home, _ = demo_home
    seen: list[int] = []
    commit = indexer.Indexer._commit

    def watching(self, *args, **kw):
        seen.append(self.catalog.db.execute("PRAGMA cache_size").fetchone()[0])
        return commit(self, *args, **kw)

    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 0)  # every sync is a big one (inline here)
    monkeypatch.setattr(indexer, "available_cpus", lambda: 1)
    monkeypatch.setattr(indexer.Indexer, "_commit", watching)
    archive = open_archive(home)
    try:
        archive.sync()
        assert seen and set(seen) == {-indexer.BULK_CACHE_KB}
        assert archive.indexer.catalog.db.execute("PRAGMA cache_size").fetchone()[0] == -PAGE_CACHE_KIB  # (its own again)
        assert archive.search("watchdog")  # and the index is whole
    finally:
        archive.close()


def test_index_size_survives_a_segment_deleted_while_it_is_counted(tmp_path, monkeypatch):
    """A background merge deletes a retired segment while stats() walks the cache
    (it failed test_poison_appended_under_a_running_watcher once): that file counts as
    nothing, every other file still counts, and nothing raises."""
    import os

    from core.query import stats

    segments = tmp_path / "segments"
    (segments / "seg-1").mkdir(parents=True)
    (segments / "seg-1" / "postings.npy").write_bytes(b"x" * 100)
    (segments / "seg-1" / "retired.npy").write_bytes(b"x" * 1000)
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"y" * 10)
    real_stat = os.stat

    def stat_after_a_merge(path, *args, **kwargs):
        if str(path).endswith("retired.npy"):  # listed, then deleted by the merge before its stat
            os.unlink(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(stats.os, "stat", stat_after_a_merge)
    assert stats.bytes_on_disk([segments, catalog]) == 110
    assert stats.bytes_on_disk([tmp_path / "gone", catalog]) == 10
