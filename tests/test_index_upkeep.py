"""Index upkeep, compared with what a rebuild gives (issue 26).

- A deleted transcript's documents leave the index statistics (document count,
  average lengths, document frequencies) at once, while they are only tombstoned
  in their segment: the BM25 scores after the delete equal those of a rebuild.
- A cache that must be rebuilt is wiped whole: no old segment stays on disk.
- A cache made by another index format (tokenizer or parser version) is rebuilt,
  with the one line saying why.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.archive import store
from core.fixtures.demo import write_demo_corpus
from core.index.tokenize import TOKENIZER_VERSION
from core.sources import PARSER_VERSION

from .hostile_support import cli_json, run_cli
from .support import open_archive

QUERIES = ["snowball stemmer", "tool output field", "test", "index", "cache"]


def _scores(home: Path, *mode: str) -> dict[str, list[tuple[str, int, float]]]:
    return {
        query: [(hit["session_id"], hit["turn_number"], hit["score"]) for hit in cli_json(home, "search", query, "--limit", "50", *mode)["results"]]
        for query in QUERIES
    }


def _segments(home: Path) -> set[str]:
    return {path.name for path in (home / ".cache" / "relay-search" / "segments").iterdir()}


def test_a_deleted_transcripts_documents_leave_the_statistics(tmp_path):
    corpus = write_demo_corpus(tmp_path)
    assert run_cli(tmp_path, "index").returncode == 0
    segments = _segments(tmp_path)
    # the two longest transcripts: their documents weigh most in the statistics
    doomed = sorted(corpus.root.rglob("*.jsonl"), key=lambda p: p.stat().st_size)[-2:]
    for path in doomed:
        path.unlink()
    # (BM25 alone: hybrid recall's int8 model quantises each batch's activations together,
    # so a passage's vector moves in the last digits with its batch mates, which a rebuild changes)
    after_delete = _scores(tmp_path, "--mode", "lexical")  # `search` syncs the delete: tombstones, no merge
    assert _segments(tmp_path) == segments, "the delete must be seen while its segment still holds the documents"
    assert run_cli(tmp_path, "index", "--rebuild").returncode == 0
    rebuilt = _scores(tmp_path, "--mode", "lexical")
    assert [q for q in QUERIES if not rebuilt[q]] == []
    assert after_delete == rebuilt


def _mark_old_segments(home: Path) -> None:
    """A stray segment and a marker in every segment: a rebuilt cache holds neither."""
    segments = home / ".cache" / "relay-search" / "segments"
    (segments / "seg-0999999999").mkdir()
    for segment in segments.iterdir():
        (segment / "old-cache").write_bytes(b"left over")


def _set_format(home: Path, value: str) -> None:
    with sqlite3.connect(home / ".cache" / "relay-search" / "catalog.sqlite") as db:
        db.execute("UPDATE meta SET value=? WHERE key='index_format'", (value,))


def test_a_cache_of_another_format_is_rebuilt_and_wiped_whole(tmp_path):
    write_demo_corpus(tmp_path)
    expected = cli_json(tmp_path, "search", "watchdog")["results"]
    _mark_old_segments(tmp_path)
    older = store.INDEX_FORMAT.replace(f"tokenizer {TOKENIZER_VERSION}", f"tokenizer {TOKENIZER_VERSION - 1}")
    _set_format(tmp_path, older)
    proc = run_cli(tmp_path, "search", "watchdog", "--json")
    assert proc.returncode == 0
    assert proc.stderr.decode().splitlines() == [
        f"relay-search: rebuilding the cache (the cache was made with {older}; this is {store.INDEX_FORMAT})"
    ]
    segments = tmp_path / ".cache" / "relay-search" / "segments"
    assert "seg-0999999999" not in _segments(tmp_path)
    assert not list(segments.rglob("old-cache"))  # the wipe left nothing of the old cache
    assert cli_json(tmp_path, "search", "watchdog")["results"] == expected
    again = run_cli(tmp_path, "search", "watchdog", "--json")
    assert again.stderr == b""  # rebuilt once, not on every open


def test_the_index_format_names_the_tokenizer_and_parser_versions():
    assert f"tokenizer {TOKENIZER_VERSION}" in store.INDEX_FORMAT
    assert f"parser {PARSER_VERSION}" in store.INDEX_FORMAT


def test_a_format_bump_rebuilds_the_cache(tmp_path, monkeypatch):
    """The next release bumps a version: the cache this one made is rebuilt on open,
    and nothing of it is left in the segments directory."""
    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is None
        sessions = len(archive.library.sessions)
    _mark_old_segments(tmp_path)
    monkeypatch.setattr(store, "INDEX_FORMAT", store.INDEX_FORMAT.replace(f"parser {PARSER_VERSION}", f"parser {PARSER_VERSION + 1}"))
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is not None and f"parser {PARSER_VERSION + 1}" in archive.rebuilt
        assert len(archive.library.sessions) == sessions
        assert "seg-0999999999" not in _segments(tmp_path)
        assert not list((tmp_path / ".cache" / "relay-search" / "segments").rglob("old-cache"))
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is None


def test_a_merge_deletes_the_segments_it_replaced(tmp_path):
    """Segments a merge replaced leave the disk (no reader is opening a snapshot), and
    the catalog forgets them; the merged index answers as before."""
    corpus = write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        expected = [(h.session_id, h.turn_number) for h in archive.search("watchdog", limit=20)]
        path = next(corpus.root.rglob(f"{corpus.session_ids[0]}.jsonl"))
        path.unlink()  # a second state: tombstones to purge
        archive.sync()
        before = _segments(tmp_path)
        archive.compact()
        after = _segments(tmp_path)
        assert len(after) == 1 and not (before & after), (before, after)
        assert archive.catalog.retired_names() == []
        assert [(h.session_id, h.turn_number) for h in archive.search("watchdog", limit=20)] == [
            hit for hit in expected if hit[0] != corpus.session_ids[0]
        ]


def test_a_catalog_replaced_by_a_directory_is_rebuilt_in_process(tmp_path):
    """(The CLI case is in test_faults; this one runs in-process, where a mutation tool sees it.)"""
    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        expected = [(h.session_id, h.turn_number) for h in archive.search("watchdog")]
    catalog = tmp_path / ".cache" / "relay-search" / "catalog.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{catalog}{suffix}").unlink(missing_ok=True)
    catalog.mkdir()
    (catalog / "x").write_text("x")
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is not None and "is not a file" in archive.rebuilt
        assert catalog.is_file()
        assert [(h.session_id, h.turn_number) for h in archive.search("watchdog")] == expected


def test_a_rebuild_wipes_the_old_segments_at_once(tmp_path):
    """``index --rebuild`` (Archive.rebuild) throws the whole cache away before indexing
    again: no old segment, nor a file of one, outlives it (the next open's sweep of
    unnamed segments must not be what cleans up)."""
    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        expected = [(h.session_id, h.turn_number) for h in archive.search("watchdog")]
        _mark_old_segments(tmp_path)
        archive.rebuild()
        assert "seg-0999999999" not in _segments(tmp_path)
        assert not list((tmp_path / ".cache" / "relay-search" / "segments").rglob("old-cache"))
        assert [(h.session_id, h.turn_number) for h in archive.search("watchdog")] == expected


def test_a_cache_without_its_segments_directory_is_still_wiped_and_rebuilt(tmp_path, monkeypatch):
    import shutil

    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        sessions = len(archive.library.sessions)
    shutil.rmtree(tmp_path / ".cache" / "relay-search" / "segments")
    monkeypatch.setattr(store, "INDEX_FORMAT", store.INDEX_FORMAT + ", next")
    with open_archive(tmp_path) as archive:
        assert archive.rebuilt is not None
        assert len(archive.library.sessions) == sessions


def test_a_retired_segment_already_gone_is_forgotten_without_error(tmp_path):
    """Another process (or the open's sweep) may have deleted a retired segment first."""
    write_demo_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        with archive.catalog.write() as db:
            db.execute("INSERT INTO retired(name) VALUES('seg-0999999998')")
        archive.indexer.purge_retired()
        assert archive.catalog.retired_names() == []
