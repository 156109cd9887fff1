"""The team store's rows in the shapes the embedded core reads them in.

:class:`UserRows` serves one user's session and file rows through the three calls
:class:`~core.archive.library.Library` makes on a catalog, so chains, session numbers,
project names, references and file bases are computed by the very same code as
for the embedded store. :class:`PgReader` is the :class:`~core.query.reading.MessageReader`
of the team store: messages come from the ``messages`` table instead of the
transcript files, numbered into the session with the file's bases.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from core.archive.catalog import SESSION_COLUMNS
from core.archive.library import FileEntry
from core.model import Message
from core.sources import MAIN

CACHE_SESSIONS = 8
PAGE = 2000  # messages per query when streaming a file
_MESSAGE_SELECT = "idx, role, type, text, ts, uuid, parent_uuid, side, entry_index, turn, tool_name, tool_input, branch"
_INT_DEFAULTS = ("turn_count", "message_count", "skipped", "mtime_ns")


class UserRows:
    """A duck-typed :class:`~core.archive.catalog.Catalog` over one user's rows."""

    def __init__(self, user: str, generation: int, sessions: list[tuple], files: list[tuple]) -> None:
        self._generation = generation
        self._files = [
            {"file_id": f[0], "path": f[1], "agent": f[2], "kind": f[3], "session_id": f[4], "n_messages": f[5], "n_turns": f[6], "replay_of": None}
            for f in files
        ]
        owner = {f["file_id"]: f["session_id"] for f in self._files}
        self._sessions = []
        for sid, extra, file_ids, turn_count, message_count in sessions:
            row: dict[str, Any] = {k: None for k in SESSION_COLUMNS}
            row.update(extra or {})
            row.update(
                session_id=sid,
                user=user,
                # a file that moved to another session since stays out of this one
                file_ids=json.dumps([i for i in file_ids if owner.get(i) == sid]),
                turn_count=turn_count,
                message_count=message_count,
            )
            for key in _INT_DEFAULTS:
                row[key] = row[key] or 0
            row["aliases"] = row["aliases"] or "[]"
            row["agent"] = row["agent"] or "claude"
            row["project_key"] = row["project_key"] or ""
            self._sessions.append(row)

    def generation(self) -> int:
        return self._generation

    def sessions(self, where: str = "", args=()) -> list[dict[str, Any]]:
        return self._sessions

    def files(self, columns=(), where: str = "", args=()) -> list[dict[str, Any]]:
        return [{c: f.get(c) for c in columns} for f in self._files] if columns else self._files


def load_user_rows(conn, user_id: int, user: str, generation: int) -> UserRows:
    """One user's rows from one consistent snapshot."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        sessions = conn.execute(
            "SELECT session_id, extra, file_ids, turn_count, message_count FROM sessions WHERE user_id=%s", (user_id,)
        ).fetchall()
        files = conn.execute(
            "SELECT file_id, path, agent, kind, session_id, n_messages, n_turns FROM files WHERE user_id=%s", (user_id,)
        ).fetchall()
    return UserRows(user, generation, sessions, files)


def message_from_row(entry: FileEntry, row: tuple) -> Message:
    """A stored message numbered into its session, as :meth:`MessageReader.iter_file` does.

    The store keeps each file's own numbering (``idx``, ``turn`` counted from the
    file's first prompt) and the record's raw sidechain flag; the session's file
    bases and whether the file is part of the session's own stream are applied here.
    """
    idx, role, type_, text, ts, uuid, parent, side, entry_index, turn, tool_name, tool_input, branch = row
    primary = entry.primary
    number = None
    if primary and (not side or entry.kind != MAIN):
        # before a file's first prompt a message belongs to the previous file's last turn
        number = entry.turn_base + turn if turn is not None else (entry.turn_base - 1 if entry.turn_base > 0 else None)
    return Message(
        session_id=entry.session_id,
        agent=entry.agent,
        sequence=entry.seq_base + idx,
        role=role,
        type=type_,
        text=text,
        timestamp=ts,
        uuid=uuid,
        parent_uuid=parent,
        is_sidechain=bool(side) or not primary,
        file_index=entry.file_index,
        entry_index=entry_index,
        turn=number,
        tool_name=tool_name,
        tool_input=tool_input,
        branch=branch,
    )


class PgReader:
    """Reads sessions' messages from the store; recent sessions cached until a refresh."""

    def __init__(self, run) -> None:
        self._run = run  # run(fn(conn)) on a pooled connection
        self._cache: OrderedDict[tuple, list[Message]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def iter_file(self, entry: FileEntry) -> Iterator[Message]:
        after = -1
        while True:
            rows = self._run(
                lambda conn: conn.execute(
                    f"SELECT {_MESSAGE_SELECT} FROM messages WHERE file_id=%s AND idx>%s ORDER BY idx LIMIT %s",
                    (entry.file_id, after, PAGE),  # noqa: B023 (the lambda runs at once, in this iteration)
                ).fetchall()
            )
            for row in rows:
                yield message_from_row(entry, row)
            if len(rows) < PAGE:
                return
            after = rows[-1][0]

    def iter_session(self, files: list[FileEntry]) -> Iterator[Message]:
        for entry in files:
            yield from self.iter_file(entry)

    def session(self, files: list[FileEntry]) -> list[Message]:
        key = tuple((f.file_id, f.seq_base, f.turn_base, f.file_index) for f in files)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        by_id = {f.file_id: f for f in files}
        rows = self._run(
            lambda conn: conn.execute(
                f"SELECT file_id, {_MESSAGE_SELECT} FROM messages WHERE file_id = ANY(%s)", ([f.file_id for f in files],)
            ).fetchall()
        )
        position = {f.file_id: i for i, f in enumerate(files)}
        rows.sort(key=lambda r: (position[r[0]], r[1]))
        messages = [message_from_row(by_id[r[0]], r[1:]) for r in rows]
        with self._lock:
            self._cache[key] = messages
            while len(self._cache) > CACHE_SESSIONS:
                self._cache.popitem(last=False)
        return messages
