"""The tiered merge policy (core/index/merge_policy.py) and the bounded-memory merge.

A long-lived process's first background merges after a cold index used to merge
37 of 38 segments at once (~300 MB). The policy merges similar sizes, caps the
bytes one merge reads, and keeps the segment count logarithmic in the archive.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.index import segment as segment_module
from core.index.merge_policy import TieredPolicy, allowed_segments, pick_merge
from core.index.segment import build_from_coo, merge_segments

from .support import open_archive, project_dir, transcript

MB = 1 << 20
POLICY = TieredPolicy(segments_per_tier=8, merge_factor=8, max_merge_bytes=40 * MB, floor_bytes=2 * MB)


def _settle(sizes: list[int], policy: TieredPolicy = POLICY, force: bool = False) -> tuple[list[int], list[list[int]]]:
    """Apply the policy's merges until it picks none: (final sizes, the sizes each merge took)."""
    merges = []
    while picked := pick_merge(sizes, [0.0] * len(sizes), policy, force=force):
        merges.append([sizes[i] for i in picked])
        sizes = [s for i, s in enumerate(sizes) if i not in picked] + [sum(sizes[i] for i in picked)]
    return sizes, merges


def test_a_cold_index_of_38_segments_is_merged_in_capped_steps_of_similar_sizes():
    final, merges = _settle([4 * MB] * 38)
    assert merges, "38 segments are more than the tiers allow"
    assert all(sum(m) <= POLICY.max_merge_bytes for m in merges)  # never 37 of 38 at once
    assert all(len(m) <= POLICY.merge_factor for m in merges)
    assert all(max(m) == min(m) for m in merges)  # similar sizes (here: equal)
    assert len(final) <= allowed_segments(final, POLICY) < 38
    final, merges = _settle([15 * MB] * 20)  # eight at once would be 120 MB
    assert merges and all(sum(m) <= POLICY.max_merge_bytes for m in merges)


def test_similar_sizes_are_picked_and_a_big_segment_is_left_alone():
    sizes = [30 * MB] + [MB // 2] * 9 + [6 * MB] * 3
    picked = pick_merge(sizes, [0.0] * len(sizes), POLICY)
    assert len(picked) == 8 and set(picked) <= set(range(1, 10))  # eight of the small ones, together
    assert 0 not in picked  # 30 MB is over half the cap: done growing


def test_segment_count_grows_logarithmically_until_the_cap():
    counts = {}
    for n in (16, 64, 256):
        final, merges = _settle([MB // 4] * n, TieredPolicy(max_merge_bytes=1 << 40))
        counts[n] = len(final)
        assert all(len(m) <= 8 for m in merges)
    assert counts[256] <= counts[16] + 2 * 8  # x16 the segments: two more tiers at most


def test_heavily_deleted_segments_are_rewritten_and_force_merges_what_fits():
    assert pick_merge([10 * MB, 3 * MB], [0.5, 0.0], POLICY) == [0]
    assert pick_merge([10 * MB, 3 * MB], [0.1, 0.0], POLICY) == []
    final, merges = _settle([3 * MB] * 5, force=True)
    assert final == [15 * MB] and merges
    final, merges = _settle([4 * MB] * 38, force=True)  # `relay-search index`: still capped
    assert all(sum(m) <= POLICY.max_merge_bytes for m in merges)
    assert sorted(final) == [24 * MB] + [32 * MB] * 4  # 8 at once, each over half the cap after


def _random_segment(rng, name: str, n_docs: int, first_id: int):
    n = int(rng.integers(n_docs, n_docs * 30))
    term = rng.integers(0, 400, n).astype(np.int64)
    pos = rng.integers(0, n_docs, n).astype(np.int32)
    key = np.unique(term * n_docs + pos)
    term, pos = key // n_docs, (key % n_docs).astype(np.int32)
    tf = rng.integers(1, 5, key.shape[0]).astype(np.float32)
    return build_from_coo(name, term, pos, tf, np.arange(first_id, first_id + n_docs, dtype=np.int64),
                          np.arange(n_docs, dtype=np.int32), rng.random(n_docs), rng.random(n_docs).astype(np.float32),
                          rng.random(n_docs).astype(np.float32))


def _merge_by_sorting(segments, alive):
    """The plain merge: every alive (term, new position, tf) sorted again."""
    terms, pos, tfs, docs = [], [], [], {k: [] for k in ("doc_ids", "file_ids", "ts", "len_main", "len_tool")}
    base = 0
    for seg, keep in zip(segments, alive, strict=True):
        remap = np.full(seg.n_docs, -1)
        kept = np.flatnonzero(keep)
        remap[kept] = np.arange(base, base + kept.shape[0])
        new = remap[seg.postings]
        ok = new >= 0
        terms.append(np.repeat(seg.terms, np.diff(seg.offsets))[ok])
        pos.append(new[ok])
        tfs.append(seg.tfs[ok])
        for key in docs:
            docs[key].append(getattr(seg, key)[kept])
        base += kept.shape[0]
    cat = np.concatenate
    return build_from_coo("ref", cat(terms), cat(pos).astype(np.int32), cat(tfs), *(cat(docs[k]) for k in docs))


@pytest.mark.parametrize("block", [7, 1 << 20])
def test_the_bounded_merge_writes_the_same_arrays_as_sorting_everything(monkeypatch, block):
    monkeypatch.setattr(segment_module, "MERGE_BLOCK_POSTINGS", block)
    rng = np.random.default_rng(25)
    segments = [_random_segment(rng, f"s{i}", int(rng.integers(1, 40)), 1000 * i) for i in range(5)]
    alive = [rng.random(s.n_docs) > 0.3 for s in segments]
    alive[2][:] = False  # a segment with nothing left
    merged = merge_segments("m", segments, alive)
    reference = _merge_by_sorting(segments, alive)
    for key in ("terms", "offsets", "postings", "tfs", "doc_ids", "file_ids", "ts", "len_main", "len_tool"):
        ours, theirs = getattr(merged, key), getattr(reference, key)
        assert ours.dtype == theirs.dtype, key
        assert np.array_equal(ours, theirs), key


def test_a_watching_process_never_merges_past_the_cap(tmp_path, monkeypatch):
    """Through the archive: many small updates, a tiny cap; every merge the long-lived
    process makes reads at most the cap (plus the one segment that crossed it)."""
    from core.archive import indexer as indexer_module

    tiny = TieredPolicy(segments_per_tier=2, merge_factor=3, max_merge_bytes=6_000, floor_bytes=100)
    monkeypatch.setattr(indexer_module, "MERGE_POLICY", tiny)
    merged_sizes: list[int] = []
    real_merge = indexer_module.Indexer.merge

    def spy(self, segments, alive):
        merged_sizes.append(sum(s.nbytes() for s in segments))
        return real_merge(self, segments, alive)

    monkeypatch.setattr(indexer_module.Indexer, "merge", spy)
    sid = "5e551011-0000-4000-8000-000000000025"
    t = transcript(sid)
    t.user("start the widget survey")
    path = t.write(project_dir(tmp_path))
    with open_archive(tmp_path) as archive:
        for i in range(12):
            with open(path, "ab") as handle:
                uuid = f"aaaaaaaa-0000-4000-8000-0000000025{i:02d}"
                handle.write(_prompt(sid, f"kestrel question {i} about widgets", uuid))
            archive.sync([path])
            archive.indexer.merge_until_settled()
        assert merged_sizes, "the policy merged nothing"
        assert all(size <= tiny.max_merge_bytes for size in merged_sizes)
        assert len(archive.search("kestrel", limit=50)) == 12


def _prompt(sid: str, text: str, uuid: str) -> bytes:
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
        "sessionId": sid, "version": "2.1.39", "type": "user", "message": {"role": "user", "content": text},
        "uuid": uuid, "timestamp": "2026-11-01T10:00:00.000Z",
    }
    return (json.dumps(record) + "\n").encode()
