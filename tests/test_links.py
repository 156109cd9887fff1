"""core.archive.links finds the same continuations and replays as the plain per-file rule.

find_links only looks closely at files that share one of their first records with
another file (the rest cannot replay anything); this pins that shortcut to the
rule applied to every file, on random files that share records often.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.archive.ingest import uuid_hash, uuid_hashes
from core.archive.links import _hashes, _Owners, _replays, find_links


def _reference(rows: list[dict]):
    """The rule as first written: every file's first three records looked up."""
    by_id = {row["file_id"]: row for row in rows}
    uuid_owners = _Owners(rows, "uuid_hashes")
    owners_of = _Owners(rows, "record_hashes").owners_of
    links, summaries, rereads = {}, {}, []
    for row in rows:
        sid = row["session_id"]
        replay_of = None
        for h in _hashes(row, "record_hashes")[:3].tolist():
            older = [f for f in owners_of(h) if f != row["file_id"] and _replays(row, by_id[f], owners_of)]
            if older:
                replay_of = older[0]
                break
        if replay_of is not None and by_id[replay_of]["session_id"] != sid:
            links[sid] = by_id[replay_of]["session_id"]
        if (row["replay_of"] or None) != replay_of:
            rereads.append((row, replay_of))
        for leaf, text in json.loads(row["summaries"] or "[]"):
            targets = uuid_owners.owners_of(uuid_hash(leaf)) if leaf else []
            if leaf and not targets:
                continue
            target = by_id[targets[0]]["session_id"] if targets else sid
            summaries.setdefault(target, []).append(text)
            if target != sid and sid not in links:
                links[sid] = target
    return links, summaries, rereads


_records = st.lists(st.integers(0, 12), max_size=6)  # few distinct values: files share records often


@st.composite
def _rows(draw) -> list[dict]:
    n = draw(st.integers(0, 8))
    rows = []
    for i in range(n):
        records = draw(_records)
        uuids = draw(st.lists(st.sampled_from(["u1", "u2", "u3", "u4"]), max_size=3))
        leaves = draw(st.lists(st.sampled_from(["u1", "u2", "u9", ""]), max_size=2))
        rows.append({
            "file_id": i + 1,
            "path": f"/p/{draw(st.integers(0, 3))}-{i}.jsonl",
            "session_id": f"s{draw(st.integers(0, n))}",
            "record_hashes": np.array(records, dtype=np.int64).tobytes() if records else None,
            "uuid_hashes": np.array([uuid_hash(u) for u in uuids], dtype=np.int64).tobytes() if uuids else None,
            "summaries": json.dumps([[leaf, f"summary {i}"] for leaf in leaves]) if leaves else draw(st.sampled_from([None, "[]"])),
            "replay_of": draw(st.sampled_from([None, 1, 2])),
        })
    return rows


@settings(max_examples=300, deadline=None)
@given(_rows())
def test_find_links_matches_the_rule_applied_to_every_file(rows):
    got = find_links(rows)
    want = _reference(rows)
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert [(r["file_id"], to) for r, to in got[2]] == [(r["file_id"], to) for r, to in want[2]]


def test_a_file_that_replays_another_is_found():
    first = {"file_id": 1, "path": "/p/a.jsonl", "session_id": "a", "record_hashes": np.array([5, 6], np.int64).tobytes(),
             "uuid_hashes": None, "summaries": None, "replay_of": None}
    copy = {"file_id": 2, "path": "/p/b.jsonl", "session_id": "b", "record_hashes": np.array([5, 6, 7], np.int64).tobytes(),
            "uuid_hashes": None, "summaries": None, "replay_of": None}
    links, _, rereads = find_links([first, copy])
    assert links == {"b": "a"}
    assert [(r["file_id"], to) for r, to in rereads] == [(2, 1)]


def test_a_files_keys_hashed_at_once_as_one_at_a_time() -> None:
    """uuid_hashes' shortcuts (all hex uuids, all record keys) give uuid_hash's values."""
    uuids = [f"{i:08x}-0000-4000-8000-{i * 7919:012x}" for i in range(50)]
    keys = [f"{u}@{i * 31}" for i, u in enumerate(uuids)]
    odd = ["0x" + "a" * 30, "1_" + "2" * 30, " " + "a" * 31, "\u0663" * 32, "g" * 32, "A" * 32, "", "x" * 30 + "@1"]
    lists = [[], uuids, keys, uuids[:3] + keys[:3], *([*uuids[:3], o] for o in odd), *([o] for o in odd)]
    for values in lists:
        expected = np.array([uuid_hash(v) for v in values], dtype=np.int64)
        assert np.array_equal(uuid_hashes(values), expected), values
