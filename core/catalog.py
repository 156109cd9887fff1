"""The SQLite catalog: files read so far, sessions, turn documents, segments.

One writer process at a time (a lock file held by :class:`~core.store.CacheLock`);
readers in other processes see committed state only (WAL mode). The catalog and
the segment files together are the cache: derived data, rebuilt when missing, of
another schema version, or corrupt.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .usage import CATALOG_SCHEMA as USAGE_SCHEMA

SCHEMA_VERSION = 6  # 6: token usage per API response (core.usage)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    file_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    project_key TEXT NOT NULL,
    order_key TEXT NOT NULL DEFAULT '',
    session_id TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    inode INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    n_messages INTEGER NOT NULL DEFAULT 0,
    n_turns INTEGER NOT NULL DEFAULT 0,
    meta TEXT,
    state BLOB,
    summaries TEXT,
    uuid_hashes BLOB,
    replay_of INTEGER
);
CREATE INDEX IF NOT EXISTS files_session ON files(session_id);
CREATE TABLE IF NOT EXISTS sessions(
    session_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    project_key TEXT NOT NULL,
    cwd TEXT,
    git_branch TEXT,
    slug TEXT,
    summary TEXT,
    title TEXT,
    first_prompt TEXT,
    first_ts TEXT,
    last_ts TEXT,
    turn_count INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0,
    file_ids TEXT NOT NULL,
    skipped INTEGER NOT NULL DEFAULT 0,
    continues TEXT,
    aliases TEXT,
    user TEXT,
    mtime_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_slug ON sessions(slug);
CREATE TABLE IF NOT EXISTS docs(
    doc_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    part INTEGER NOT NULL DEFAULT 0,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    ts TEXT,
    side INTEGER NOT NULL DEFAULT 0,
    body TEXT
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file_id, turn, part);
CREATE TABLE IF NOT EXISTS tombstones(doc_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS segments(name TEXT PRIMARY KEY, n_docs INTEGER NOT NULL);
""" + USAGE_SCHEMA

FILE_COLUMNS = (
    "file_id", "path", "agent", "kind", "project_key", "order_key", "session_id", "size",
    "mtime_ns", "inode", "offset", "skipped", "error", "n_messages", "n_turns", "meta", "state",
    "summaries", "uuid_hashes", "replay_of",
)
SESSION_COLUMNS = (
    "session_id", "agent", "project_key", "cwd", "git_branch", "slug", "summary", "title",
    "first_prompt", "first_ts", "last_ts", "turn_count", "message_count", "file_ids", "skipped",
    "continues", "aliases", "user", "mtime_ns",
)


class CatalogError(Exception):
    """The catalog is unreadable or from another version: rebuild it."""


class Catalog:
    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._conns: list[sqlite3.Connection] = []
        if not readonly:
            try:
                self.db.executescript(SCHEMA)
            except sqlite3.DatabaseError as exc:
                raise CatalogError(f"the catalog is corrupt: {exc}") from exc
        self.check_version()

    # --- connections: one per thread (sqlite3 objects are not shareable) ----------

    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self.readonly:
                    conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=10)
                else:
                    conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=10000")
            except sqlite3.DatabaseError as exc:
                raise CatalogError(f"cannot open the catalog: {exc}") from exc
            self._local.conn = conn
            self._conns.append(conn)
        return conn

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._conns.clear()
        self._local = threading.local()

    class _Tx:
        def __init__(self, catalog: Catalog) -> None:
            self.catalog = catalog

        def __enter__(self) -> sqlite3.Connection:
            self.catalog._write_lock.acquire()
            db = self.catalog.db
            db.execute("BEGIN IMMEDIATE")
            return db

        def __exit__(self, exc_type, exc, tb) -> None:
            db = self.catalog.db
            try:
                if exc_type is None:
                    db.execute("COMMIT")
                else:
                    db.execute("ROLLBACK")
            finally:
                self.catalog._write_lock.release()

    def write(self) -> Catalog._Tx:
        """A write transaction (serialized within the process)."""
        return Catalog._Tx(self)

    # --- meta ----------------------------------------------------------------------

    def check_version(self) -> None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                if self.readonly:
                    raise CatalogError("the catalog is empty")
                with self.write() as db:
                    db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                return
            if row[0] != str(SCHEMA_VERSION):
                raise CatalogError(f"the cache is from another version (schema {row[0]}, this is {SCHEMA_VERSION})")
            self.db.execute("SELECT count(*) FROM files").fetchone()
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"the catalog is corrupt: {exc}") from exc

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    @staticmethod
    def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    # --- reads ---------------------------------------------------------------------

    def files(self, columns: Sequence[str] = FILE_COLUMNS, where: str = "", args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(columns)} FROM files {where}"
        return [dict(zip(columns, row)) for row in self.db.execute(sql, tuple(args))]

    def sessions(self, where: str = "", args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions {where}"
        return [dict(zip(SESSION_COLUMNS, row)) for row in self.db.execute(sql, tuple(args))]

    def docs(self, doc_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        cols = ("doc_id", "file_id", "turn", "first_seq", "last_seq", "ts", "side", "body")
        rows = self.db.execute(f"SELECT {', '.join(cols)} FROM docs WHERE doc_id IN ({marks})", tuple(doc_ids))
        return {row[0]: dict(zip(cols, row)) for row in rows}

    def segment_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM segments ORDER BY name")]

    def tombstones(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT doc_id FROM tombstones")]
