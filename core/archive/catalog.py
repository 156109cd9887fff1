"""The SQLite catalog: files read so far, sessions, turn documents, segments.

One writer process at a time (a lock file held by :class:`~core.archive.store.CacheLock`);
readers in other processes see committed state only (WAL mode). The catalog and
the segment files together are the cache: derived data, rebuilt when missing, of
another schema version, or corrupt.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.errors import OutOfSpace
from core.sources.fspath import path_from_db

from .usage_records import CATALOG_SCHEMA as USAGE_SCHEMA

# 6: opening turns, salient tool output, per-segment vocabularies (issue 14); record
# hashes (replays by uuid and content), skip reasons, non-UTF-8 paths (issue 11);
# token usage per API response (core.outputs.usage). 7: link_keys, the narrow table of
# what relinking reads of each main file (issue 25)
SCHEMA_VERSION = 9

# SQLite's temporary files (the sub-journal a SAVEPOINT keeps, sorts too big for the
# cache) go to /var/tmp or $TMPDIR by default, outside our folders (issue 35 #6), and a
# cold index wrote ~130 MB there (for the 446 MB bench, a 26 MB catalog: each file's
# savepoint journals the pages it touches) in ~65,000 small writes. In memory they are
# a copy of the pages a chunk's commit touches, a few MB.
TEMP_IN_MEMORY = "PRAGMA temp_store=MEMORY"
# Each thread has a connection of its own (below), and each connection a page cache of its
# own: SQLite's default of 2,000 KiB each held 17 MB in the app after the bench's app phase
# (its worker threads, the sync, the watcher, the embedding job), mostly the same hot pages
# many times over. The OS keeps the file's pages anyway; a miss is a read from it. At 512 KiB
# the app held 8 MB, and its searches and opens were no slower. (A big sync raises the
# writer's own: BULK_CACHE_KB.)
PAGE_CACHE_KIB = 512

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
    skip_reasons TEXT,
    error TEXT,
    n_messages INTEGER NOT NULL DEFAULT 0,
    n_turns INTEGER NOT NULL DEFAULT 0,
    meta TEXT,
    state BLOB,
    summaries TEXT,
    uuid_hashes BLOB,
    record_hashes BLOB,
    replay_of INTEGER
);
CREATE INDEX IF NOT EXISTS files_session ON files(session_id);
-- What linking continued sessions reads of each main file (core/archive/links.py), kept
-- apart from the wide files rows: a scan of files reads every row's page (their parser
-- state fills it), ~500 MB at 100,000 files; this table is a few MB. The writer keeps
-- it in step with files (core/archive/writing.py).
CREATE TABLE IF NOT EXISTS link_keys(
    file_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    session_id TEXT,
    summaries TEXT,
    uuid_hashes BLOB,
    record_hashes BLOB,
    replay_of INTEGER
);
-- The first three record hashes of each main file, indexed: whether a new file holds
-- another's first records is then a lookup (core/archive/links.py: links_may_change).
CREATE TABLE IF NOT EXISTS first_records(hash INTEGER NOT NULL, file_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS first_records_hash ON first_records(hash);
CREATE INDEX IF NOT EXISTS first_records_file ON first_records(file_id);
CREATE INDEX IF NOT EXISTS link_keys_summaries ON link_keys(file_id) WHERE summaries IS NOT NULL;
CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime_ns);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL);
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
CREATE INDEX IF NOT EXISTS sessions_continues ON sessions(continues);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd, agent, project_key);
CREATE TABLE IF NOT EXISTS docs(
    doc_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    part INTEGER NOT NULL DEFAULT 0,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    ts TEXT,
    side INTEGER NOT NULL DEFAULT 0,
    body TEXT,
    marks TEXT,  -- "seq start …" of each answer message in body (core.index.document.encode_marks)
    seen TEXT  -- each tool call's one-line input and the compaction summaries: checked for phrases
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file_id, turn, part);
CREATE TABLE IF NOT EXISTS tombstones(doc_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS segments(name TEXT PRIMARY KEY, n_docs INTEGER NOT NULL);
-- segments a merge replaced, deleted once no reader can be opening them (core/index/retire.py)
CREATE TABLE IF NOT EXISTS retired(name TEXT PRIMARY KEY);
""" + USAGE_SCHEMA

FILE_COLUMNS = (
    "file_id", "path", "agent", "kind", "project_key", "order_key", "session_id", "size",
    "mtime_ns", "inode", "offset", "skipped", "skip_reasons", "error", "n_messages", "n_turns", "meta", "state",
    "summaries", "uuid_hashes", "record_hashes", "replay_of",
)
LINK_COLUMNS = ("file_id", "path", "session_id", "uuid_hashes", "record_hashes", "summaries", "replay_of")
_LINK_INDEX = {name: i for i, name in enumerate(LINK_COLUMNS)}


class LinkRow(tuple):
    """A ``link_keys`` row read by column name (``row["path"]``, ``row.get(...)``) as a dict
    is: a tuple underneath, a third of a dict's size (relinking reads every main file's)."""

    __slots__ = ()

    def __getitem__(self, key):
        return tuple.__getitem__(self, _LINK_INDEX[key] if isinstance(key, str) else key)

    def get(self, key: str, default: Any = None) -> Any:
        index = _LINK_INDEX.get(key)
        return default if index is None else tuple.__getitem__(self, index)


SESSION_COLUMNS = (
    "session_id", "agent", "project_key", "cwd", "git_branch", "slug", "summary", "title",
    "first_prompt", "first_ts", "last_ts", "turn_count", "message_count", "file_ids", "skipped",
    "continues", "aliases", "user", "mtime_ns",
)

# A passage's header (what grouping hits by session reads for hundreds of candidates), then its text
DOC_HEADER_COLUMNS = ("doc_id", "file_id", "turn", "first_seq", "last_seq", "ts", "side")
DOC_COLUMNS = (*DOC_HEADER_COLUMNS, "body", "marks", "seen")


class CatalogError(Exception):
    """The catalog is unreadable or from another version: rebuild it."""


def out_of_space(exc: BaseException) -> bool:
    """Whether an error means a full disk or quota (never a reason to rebuild)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return True
    if isinstance(exc, sqlite3.Error):
        # SQLITE_FULL; SQLITE_IOERR_SHMSIZE (the WAL index could not grow: a full disk)
        return getattr(exc, "sqlite_errorcode", None) in (13, 4874) or "disk is full" in str(exc)
    return False


def not_damage(exc: BaseException) -> bool:
    """A full disk, or a database busy or locked by another connection: keep the cache."""
    code = getattr(exc, "sqlite_errorcode", None)
    return out_of_space(exc) or (code is not None and code & 0xFF in (5, 6))  # SQLITE_BUSY, SQLITE_LOCKED


def _rollback(db: sqlite3.Connection) -> None:
    """Roll back what is open (SQLite itself already rolled back after some errors, a
    full disk among them: a second ROLLBACK would hide the first error)."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def unwritable(exc: BaseException) -> bool:
    """Whether an error means the cache directory cannot be written (read-only, no permission)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == 8  # SQLITE_READONLY and its kinds


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; where SQLite cannot make or grow the WAL's shared-memory
    file (a directory this process cannot write, a full disk), one that reads the
    file as it is."""
    if not path.is_file():
        raise sqlite3.OperationalError(f"unable to open database file: {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=10)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        if not out_of_space(exc) and os.access(path.parent, os.W_OK) and not _read_only_mount(path.parent):
            raise
    # (immutable: no locks, no -shm; what a writer never checkpointed into the file is not seen)
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False, timeout=10)


def _read_only_mount(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def is_damage(exc: BaseException) -> bool:
    """Whether a SQLite error means a damaged file (not a lock, not a full disk)."""
    if not isinstance(exc, sqlite3.DatabaseError) or out_of_space(exc):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
    text = str(exc)
    return "malformed" in text or "not a database" in text


@contextmanager
def disk_full_is_an_error() -> Iterator[None]:
    """A full disk or quota surfaces as :class:`OutOfSpace`, the cache untouched.

    (Every write is a transaction or an atomically renamed segment, so what was
    committed before stays good; the next update retries.)
    """
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        if not out_of_space(exc):
            raise
        raise OutOfSpace(
            f"the disk is full ({exc}): the index was not updated; the last good cache is kept and the update is retried next time"
        ) from exc


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
                if not_damage(exc):
                    raise
                raise CatalogError(f"the catalog is corrupt: {exc}") from exc
        self.check_version()

    # --- connections: one per thread (sqlite3 objects are not shareable) ----------

    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self.readonly:
                    conn = _connect_read_only(self.path)
                else:
                    conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=10000")
                conn.execute(TEMP_IN_MEMORY)
                conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
            except sqlite3.DatabaseError as exc:
                if not_damage(exc) or unwritable(exc):
                    raise  # (a full disk, a read-only directory: the cache is fine)
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
                    try:
                        db.execute("COMMIT")
                    except sqlite3.Error:
                        _rollback(db)  # (a commit a full disk refused: leave no transaction open)
                        raise
                else:
                    _rollback(db)
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
            if not_damage(exc):
                raise
            raise CatalogError(f"the catalog is corrupt: {exc}") from exc

    def check_integrity(self) -> None:
        """Read every page (``PRAGMA quick_check``): garbage mid-file is found here,
        not by the query that happens to touch it."""
        try:
            rows = [r[0] for r in self.db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"the catalog is corrupt: {exc}") from exc
        if rows != ["ok"]:
            found = " ".join("; ".join(rows).split())  # one line (sqlite's rows hold newlines)
            raise CatalogError(f"the catalog is corrupt: {found[:200]}")

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
        rows = [dict(zip(columns, row)) for row in self.db.execute(sql, tuple(args))]
        if "path" in columns:
            for row in rows:
                if isinstance(row["path"], bytes):  # a name that is not UTF-8 (core.sources.fspath)
                    row["path"] = path_from_db(row["path"])
        return rows

    def link_rows(self) -> list[LinkRow]:
        """Every main file's row of ``link_keys``: what relinking reads."""
        path = _LINK_INDEX["path"]
        rows = [LinkRow(row) for row in self.db.execute(f"SELECT {', '.join(LINK_COLUMNS)} FROM link_keys")]
        for i, row in enumerate(rows):
            if isinstance(row[path], bytes):  # a name that is not UTF-8 (core.sources.fspath)
                rows[i] = LinkRow((*row[:path], path_from_db(row[path]), *row[path + 1 :]))
        return rows

    def sessions(self, where: str = "", args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions {where}"
        return [dict(zip(SESSION_COLUMNS, row)) for row in self.db.execute(sql, tuple(args))]

    def docs(self, doc_ids: Sequence[int], columns: Sequence[str] = DOC_COLUMNS) -> dict[int, dict[str, Any]]:
        """These passages' rows (``columns``, the first being ``doc_id``), by doc id."""
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        rows = self.db.execute(f"SELECT {', '.join(columns)} FROM docs WHERE doc_id IN ({marks})", tuple(doc_ids))
        return {row[0]: dict(zip(columns, row)) for row in rows}

    def segment_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM segments ORDER BY name")]

    def tombstones(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT doc_id FROM tombstones")]

    def snapshot_rows(self) -> tuple[list[str], list[int], int]:
        """Segment names, tombstones and generation read in one transaction.

        (Read one by one, a merge committing in between would pair the old
        segments with the new tombstones, and dead documents would come back.)
        """
        db = self.db
        own = not db.in_transaction
        if own:
            db.execute("BEGIN")
        try:
            return self.segment_names(), self.tombstones(), self.generation()
        finally:
            if own:
                db.execute("COMMIT")

    def retired_names(self) -> list[str]:
        try:
            return [r[0] for r in self.db.execute("SELECT name FROM retired")]
        except sqlite3.OperationalError:  # a cache older than the table, opened read-only
            return []
