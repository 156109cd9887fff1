"""Which sessions continue which, found in the record uuids files share.

A session without a slug joins the chain of the session it provably continues: its
file starts with records replayed from that session (the same uuids with the same
content), or a ``summary`` record's ``leafUuid`` points into it. The indexer applies what this
finds: links and resolved summaries go into the session rows, and a file that
replays another is read again without the replayed records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .catalog import Catalog, LinkRow
from .ingest import uuid_hash

Row = LinkRow | Mapping[str, Any]  # a link_keys row (tests build them as dicts)
Links = tuple[dict[str, str], dict[str, list[str]], list[tuple[Row, int | None]]]
QUICK_CHECK_FILES = 16  # new main files checked one by one before relinking is skipped


def links_may_change(catalog: Catalog, new_files: set[int]) -> bool:
    """Whether reading these new main files (no summaries of their own) can change
    what :func:`find_links` finds; if not, relinking (which reads every main file's
    keys and walks them in Python: ~1.5 s at 100,000 files) is skipped.

    A link comes only from shared records or a summary's leaf, so a new file ``F``
    changes nothing unless one of its first three record hashes is held by another
    file (``F`` may replay it), one of its record hashes is among another file's
    first three (it may replay ``F``, or ``F`` joins the owners ``find_links`` picks
    among), or one of its uuids is a summary's leaf. Each is a query (the indexed
    ``first_records``, a byte search of ``link_keys``); many new files at once are
    simply relinked.
    """
    if not new_files or len(new_files) > QUICK_CHECK_FILES:
        return True
    db = catalog.db
    for file_id in new_files:
        row = db.execute("SELECT record_hashes FROM link_keys WHERE file_id=?", (file_id,)).fetchone()
        own = np.frombuffer(row[0], dtype=np.int64) if row and row[0] else np.zeros(0, np.int64)
        # another file's first records among ours (an indexed lookup) …
        if own.shape[0] and db.execute(
            "SELECT 1 FROM first_records WHERE file_id != ? AND hash IN (SELECT value FROM json_each(?)) LIMIT 1",
            (file_id, json.dumps(own.tolist())),
        ).fetchone():
            return True
        # … or our first records in another file (a byte search of the blobs in SQLite: a
        # match at an unaligned offset only costs a relink that was not needed)
        firsts = [np.int64(h).tobytes() for h in own[:3].tolist()]
        if firsts and db.execute(
            "SELECT 1 FROM link_keys WHERE file_id != ? AND ("
            + " OR ".join(["instr(record_hashes, ?) > 0"] * len(firsts)) + ") LIMIT 1",
            (file_id, *firsts),
        ).fetchone():
            return True
    marks = ",".join("?" * len(new_files))
    uuids = [blob for (blob,) in db.execute(f"SELECT uuid_hashes FROM link_keys WHERE file_id IN ({marks})",
                                            tuple(new_files)) if blob]
    new_uuids = np.frombuffer(b"".join(uuids), dtype=np.int64)
    for (text,) in db.execute("SELECT summaries FROM link_keys WHERE summaries IS NOT NULL"):  # (a partial index)
        leaves = [uuid_hash(leaf) for leaf, _ in json.loads(text) if leaf]
        if leaves and np.isin(np.asarray(leaves, dtype=np.int64), new_uuids).any():
            return True
    return False


def find_links(rows: Sequence[Row]) -> Links:
    """(session → session it continues, session → summaries, files to read again).

    ``rows`` are the main files' catalog rows (file_id, path, session_id,
    uuid_hashes, record_hashes, summaries, replay_of). A file replays another
    when it repeats that file's records, uuid *and* content (``record_hashes``), as
    within a file: records that only reuse uuids are a conversation of their own.
    A summary's leaf is a bare uuid (``uuid_hashes``). This is the only place
    summaries are resolved, so a fresh build and an update label sessions alike.
    """
    by_id = {row["file_id"]: row for row in rows}
    uuid_owners = _Owners(rows, "uuid_hashes")
    record_owners = _Owners(rows, "record_hashes")
    owners_of = record_owners.owners_of
    shared = record_owners.shares_a_first_record(rows)

    links: dict[str, str] = {}
    summaries: dict[str, list[str]] = {}
    rereads: list[tuple[Row, int | None]] = []
    for index, row in enumerate(rows):
        sid = row["session_id"]
        replay_of = None
        if shared[index]:  # (most files share no record with another: nothing to look at)
            for h in _hashes(row, "record_hashes")[:3].tolist():
                others = [f for f in owners_of(h) if f != row["file_id"]]
                older = [f for f in others if _replays(row, by_id[f], owners_of)]
                if older:
                    replay_of = older[0]
                    break
        if replay_of is not None and by_id[replay_of]["session_id"] != sid:
            links[sid] = by_id[replay_of]["session_id"]
        if (row["replay_of"] or None) != replay_of:
            rereads.append((row, replay_of))
        if not row["summaries"] or row["summaries"] == "[]":
            continue
        for leaf, text in json.loads(row["summaries"]):
            # A summary describes the conversation holding its leaf; 1.0.x writes
            # summaries of earlier (often deleted) sessions into the current file,
            # so one whose leaf is in no file we know describes none of ours.
            targets = uuid_owners.owners_of(uuid_hash(leaf)) if leaf else []
            if leaf and not targets:
                continue
            target_sid = by_id[targets[0]]["session_id"] if targets else sid
            summaries.setdefault(target_sid, []).append(text)
            if target_sid != sid and sid not in links:
                links[sid] = target_sid
    return links, summaries, rereads


class _Owners:
    """Which files hold a hash, for one hash column of the files' rows.

    Built from all rows at once (one join of the blobs, not an array per file): at
    100,000 files the per-file way cost seconds on every update.
    """

    def __init__(self, rows: Sequence[Row], column: str) -> None:
        blobs = [row.get(column) or b"" for row in rows]
        counts = np.fromiter((len(b) // 8 for b in blobs), dtype=np.int64, count=len(blobs))
        hashes = np.frombuffer(b"".join(blobs), dtype=np.int64)
        files = np.repeat(np.fromiter((row["file_id"] for row in rows), dtype=np.int64, count=len(rows)), counts)
        order = np.argsort(hashes, kind="stable")
        self.hashes, self.files = hashes[order], files[order]
        self._starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(rows) else np.zeros(0, np.int64)
        self._counts = counts
        self._unsorted = hashes

    def owners_of(self, h: int) -> list[int]:
        lo = int(np.searchsorted(self.hashes, h, "left"))
        hi = int(np.searchsorted(self.hashes, h, "right"))
        return self.files[lo:hi].tolist()

    def shares_a_first_record(self, rows: Sequence[Row]) -> np.ndarray:
        """Per row: is one of its first three hashes held more than once (by another
        file, or twice by this one)? Only those rows can replay another file."""
        shared = np.zeros(len(rows), dtype=bool)
        for k in range(3):
            has = self._counts > k
            firsts = self._unsorted[self._starts[has] + k]
            held = np.searchsorted(self.hashes, firsts, "right") - np.searchsorted(self.hashes, firsts, "left")
            shared[np.flatnonzero(has)[held > 1]] = True
        return shared


def _hashes(row: Row, column: str) -> np.ndarray:
    blob = row.get(column)
    return np.frombuffer(blob, dtype=np.int64) if blob else np.zeros(0, np.int64)


def _replays(row: Row, other: Row, owners_of) -> bool:
    """Does ``row``'s file start with records copied from ``other``'s file?

    Both files then share records; the copy is the file that holds all of the
    other's records and more (a continued session replays its predecessor and goes
    on). A file that is a strict subset of another is the original.
    """
    mine = _hashes(row, "record_hashes")
    theirs = _hashes(other, "record_hashes")
    if theirs.shape[0] == 0:
        return False
    if row["file_id"] not in owners_of(int(theirs[0])):
        return True  # their first record is not ours: we copied from them, not the reverse
    if mine.shape[0] != theirs.shape[0]:
        return mine.shape[0] > theirs.shape[0]
    return row["path"] > other["path"]
