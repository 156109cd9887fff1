"""One session's usage records (what the reader header and session statistics sum),
read with as few rows as possible, follow the catalog's ownership rule exactly: a
response belongs to the first file holding it, replaying files last; among the
session's own files its counts merge by maximum. Pinned against a plain reading of
that rule on random catalogs."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.archive import usage_records as usage

FILES = st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), min_size=1, max_size=6)  # (session, replays)
ROWS = st.lists(
    st.tuples(
        st.sampled_from(["k1", "k2", "k3", "k4", "é5"]),
        st.integers(0, 5),  # index into the files
        st.sampled_from([None, "claude-sonnet-4-5", "gpt-5", "mystery"]),
        st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(0, 50),
    ),
    max_size=25,
)


def catalog(files, rows):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE files(file_id INTEGER PRIMARY KEY, session_id TEXT, replay_of INTEGER)")
    db.executescript(usage.CATALOG_SCHEMA)
    for file_id, (session, replays) in enumerate(files, start=1):
        db.execute("INSERT INTO files VALUES(?,?,?)", (file_id, session, 99 if replays else None))
    for key, index, model, *counts in rows:
        if index < len(files):
            db.execute(
                "INSERT OR IGNORE INTO usage(file_id, key, ts, model, input, output, cache_creation, cache_read) VALUES(?,?,?,?,?,?,?,?)",
                (index + 1, key, f"2026-01-0{index + 1}T00:00:00Z", model, *counts),
            )
    return SimpleNamespace(db=db)


def by_the_rule(db, ids):
    rows = db.execute(
        "SELECT u.key, u.file_id, u.ts, u.model, u.input, u.output, u.cache_creation, u.cache_read, f.replay_of IS NOT NULL "
        "FROM usage u JOIN files f ON f.file_id = u.file_id"
    ).fetchall()
    owner: dict[str, tuple] = {}
    for r in rows:
        owner[r[0]] = min(owner.get(r[0], (bool(r[8]), r[1])), (bool(r[8]), r[1]))
    mine = sorted((r for r in rows if r[1] in ids), key=lambda r: (r[0], bool(r[8]), r[1]))
    replaying = {r[1] for r in mine if r[8]}
    return [rec for rec in usage.dedupe(r[:8] for r in mine) if owner[rec.key] == (rec.file_id in replaying, rec.file_id)]


@settings(max_examples=300, deadline=None)
@given(FILES, ROWS)
def test_a_sessions_records_follow_the_ownership_rule(files, rows):
    cat = catalog(files, rows)
    for session in "abc":
        ids = [r[0] for r in cat.db.execute("SELECT file_id FROM files WHERE session_id=?", (session,))]
        assert usage.catalog_file_records(cat, ids) == by_the_rule(cat.db, ids)
