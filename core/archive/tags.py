"""Tags a person gives sessions: user data, kept apart from the rebuildable cache.

Stored in ``$XDG_DATA_HOME/relay-search/tags.sqlite`` — never in a transcript dir,
and not lost when the cache is deleted or rebuilt.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from .catalog import TEMP_IN_MEMORY


class TagStore:
    def __init__(self, directory: Path) -> None:
        self.path = directory / "tags.sqlite"
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._writes = 0  # our own commits (data_version counts only other connections')

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=10, isolation_level=None)
            self._conn.execute(TEMP_IN_MEMORY)
            self._conn.execute("CREATE TABLE IF NOT EXISTS tags(session_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY(session_id, tag))")
        return self._conn

    def all(self) -> dict[str, tuple[str, ...]]:
        if not self.path.exists():
            return {}
        with self._lock:
            rows = self._db().execute("SELECT session_id, tag FROM tags ORDER BY tag").fetchall()
        out: dict[str, list[str]] = {}
        for sid, tag in rows:
            out.setdefault(sid, []).append(tag)
        return {k: tuple(v) for k, v in out.items()}

    def version(self) -> tuple[int, int]:
        """Changes whenever the tags do, in this process or another (a cheap poll).

        SQLite's ``PRAGMA data_version`` moves when another connection commits;
        our own commits are counted in ``_writes``.
        """
        if self._conn is None and not self.path.exists():
            return (0, self._writes)
        with self._lock:
            (other,) = self._db().execute("PRAGMA data_version").fetchone()
        return (other, self._writes)

    def set(self, session_id: str, tags: list[str]) -> None:
        clean = sorted({t.strip() for t in tags if t and t.strip()})
        with self._lock:
            db = self._db()
            db.execute("BEGIN")
            db.execute("DELETE FROM tags WHERE session_id=?", (session_id,))
            db.executemany("INSERT INTO tags VALUES(?, ?)", [(session_id, t) for t in clean])
            db.execute("COMMIT")
            self._writes += 1

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
