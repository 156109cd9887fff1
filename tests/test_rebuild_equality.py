"""Incremental updates and a fresh build agree on every field (issue 11 point 7).

The cache is derived data: whatever order files and lines arrived in, a session's
row (every field ``list_sessions`` gives) and the order of search hits, ties
included, must be what a fresh build of the same files gives.
"""

from __future__ import annotations

import random

from .hostile_support import cli_json, exchange, record, run_cli, write_jsonl

SID = "44444444-4444-4444-8444-444444444444"
TS = "2026-01-05T10:00:00.000Z"


def _rebuilt(home, *args: str):
    assert run_cli(home, "index", "--rebuild").returncode == 0
    return cli_json(home, *args)


def test_a_summary_of_no_known_leaf_never_labels_the_session(tmp_path):
    path = tmp_path / ".claude" / "projects" / "-home-t-proj" / f"{SID}.jsonl"
    dangling = {"type": "summary", "summary": "Summary of a deleted session", "leafUuid": "99999999-9999-4999-8999-999999999999"}
    write_jsonl(path, [dangling, *exchange(SID, "tidy the flaky retry test", "done", TS, slug="quiet-amber-fox")])
    fresh = cli_json(tmp_path, "list")["sessions"]
    assert fresh[0]["summary"] == "quiet-amber-fox"
    write_jsonl(path, [record("user", "u9", "a1", SID, "one more thing", TS, slug="quiet-amber-fox")], mode="a")
    appended = cli_json(tmp_path, "list")["sessions"]
    assert appended[0]["summary"] == "quiet-amber-fox"
    rows = {k: v for k, v in appended[0].items() if k != "is_live"}
    rebuilt = {k: v for k, v in _rebuilt(tmp_path, "list")["sessions"][0].items() if k != "is_live"}
    assert rows == rebuilt


def test_equal_hits_come_back_in_one_order(tmp_path):
    """Sessions with the same text and the same time tie on score and time."""
    project = tmp_path / ".claude" / "projects" / "-home-t-proj"
    ids = [f"{n:08d}-5555-4555-8555-555555555555" for n in range(12)]
    order = ids[:]
    random.Random(7).shuffle(order)
    seen = []
    for n, sid in enumerate(order):  # one file per update, in a scrambled order
        write_jsonl(project / f"{sid}.jsonl", exchange(sid, "rotate the signing keys", "rotated", TS, ids=(f"u{n}", f"a{n}")))
        if n % 4 == 3:
            seen.append([h["session_id"] for h in cli_json(tmp_path, "search", "rotate signing keys", "--limit", "50")["results"]])
    incremental = [h["session_id"] for h in cli_json(tmp_path, "search", "rotate signing keys", "--limit", "50")["results"]]
    assert incremental == sorted(ids)  # equal score, equal time: then the session id
    assert all(s == sorted(s) for s in seen)
    fresh = [h["session_id"] for h in _rebuilt(tmp_path, "search", "rotate signing keys", "--limit", "50")["results"]]
    assert fresh == incremental
    limited = [h["session_id"] for h in cli_json(tmp_path, "search", "rotate signing keys", "--limit", "5")["results"]]
    assert limited == incremental[:5]
