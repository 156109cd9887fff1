"""Storing resolved links and summaries (``sessions.apply_links``) and the compact rows
relinking reads (``catalog.LinkRow``): the parts the 100,000-file memory work changed."""

from __future__ import annotations

import sqlite3

from core.archive.catalog import LINK_COLUMNS, LinkRow
from core.archive.sessions import apply_links


def sessions_db(rows: list[tuple[str, str | None, str | None]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE sessions(session_id TEXT PRIMARY KEY, continues TEXT, summary TEXT)")
    db.executemany("INSERT INTO sessions VALUES(?, ?, ?)", rows)
    return db


def stored(db: sqlite3.Connection) -> dict[str, tuple]:
    return {sid: (cont, summ) for sid, cont, summ in db.execute("SELECT * FROM sessions")}


def test_links_and_summaries_are_set_kept_and_cleared():
    db = sessions_db([
        ("a", "old", None),      # linked before, not now: cleared
        ("b", None, "stale"),    # summarised before, not now: cleared
        ("c", "x", "kept"),      # the same as before: untouched
        ("d", None, None),       # given a link now
        ("e", None, None),       # given a summary now (the last of its texts)
        ("f", None, None),       # nothing before or now
    ])  # fmt: skip
    changes = apply_links(db, {"c": "x", "d": "c", "ghost": "a"}, {"c": ["kept"], "e": ["first", "last"], "nobody": ["t"]})
    assert stored(db) == {
        "a": (None, None), "b": (None, None), "c": ("x", "kept"),
        "d": ("c", None), "e": (None, "last"), "f": (None, None),
    }  # fmt: skip
    assert changes.changed == {"a", "b", "d", "e"}  # (no row for "ghost" or "nobody")


def test_a_link_row_reads_by_name_and_by_position():
    values = (7, "/p/s.jsonl", "sid", b"\x01" * 8, b"\x02" * 16, None, 3)
    row = LinkRow(values)
    assert [row[name] for name in LINK_COLUMNS] == list(values)
    assert row.get("replay_of") == 3 and row.get("summaries") is None and row.get("no such", "d") == "d"
    assert row[1] == "/p/s.jsonl" and row[:2] == (7, "/p/s.jsonl") and tuple(row) == values
