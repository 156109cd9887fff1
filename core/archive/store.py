"""The cache directory: its writer lock, and detecting a cache that must be rebuilt.

One process writes (holds ``writer.lock``); any other opens the cache read-only
and follows the writer's commits. A cache from another version, or one left
corrupt by a process killed mid-write, is removed and rebuilt with one line
saying why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import stat
import sys
import time
from pathlib import Path

from core.errors import StoreError
from core.index.tokenize import TOKENIZER_VERSION
from core.semantic import VECTORS_DIR
from core.sources import PARSER_VERSION

from .catalog import Catalog, CatalogError, not_damage, unwritable

# What the cached index was made with; any difference means a rebuild. ("every
# project": older caches held only the projects their writer's --pattern selected;
# segments 2: with manifests.)
INDEX_FORMAT = f"tokenizer {TOKENIZER_VERSION}, parser {PARSER_VERSION}, segments 2, every project"

CATALOG_FILE = "catalog.sqlite"
SEGMENTS_DIR = "segments"


class WriterLock:
    """An advisory lock on the cache; released when the process exits.

    The holder writes its pid and command into the lock file, so a process that
    finds the lock taken can say who holds it.
    """

    def __init__(self, cache: Path) -> None:
        self.path = cache / "writer.lock"
        self._fd: int | None = None

    def acquire(self, wait: float = 0.0) -> bool:
        """Take the lock, polling for at most ``wait`` seconds if it is held."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # (OSError: a read-only cache, the caller's to say)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.1)
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {_command()}\n".encode())
        except OSError:
            pass  # who holds it is only for messages
        return True

    def held_by_other(self) -> str | None:
        """Who holds the lock ("pid 123: relay-search serve"), or None if it is free."""
        if self._fd is not None:
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return None
            except OSError:
                pass
            text = os.read(fd, 512).decode(errors="replace").strip()
        finally:
            os.close(fd)
        pid, _, command = text.partition(" ")
        return f"pid {pid}: {command}" if pid.isdigit() else "another process"

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _command() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    if name in ("-c", "__main__.py", ""):
        name = "relay-search"
    words = [name, *(a for a in sys.argv[1:2] if not a.startswith("-"))]
    return " ".join(words)[:200]


def open_catalog(cache: Path, *, writer: bool, verify: bool = False) -> tuple[Catalog, str | None]:
    """The catalog, and a one-line reason if it had to be rebuilt.

    ``verify``: read every page of it too (``relay-search index`` does). A full
    disk is never taken for damage: it raises :class:`OutOfSpace`, cache kept.
    """
    path = cache / CATALOG_FILE
    if not writer:
        return Catalog(path, readonly=True), None
    cache.mkdir(parents=True, exist_ok=True)
    reason = None
    try:
        try:
            if path.exists() and not path.is_file():
                raise CatalogError(f"{path.name} is not a file")
            for name in (SEGMENTS_DIR, VECTORS_DIR):  # (a file in a dir's place: ours, so rebuilt)
                if os.path.lexists(cache / name) and not (cache / name).is_dir():
                    raise CatalogError(f"{name} is not a directory")
            catalog = Catalog(path)
            made_with = catalog.get_meta("index_format")
            if made_with != INDEX_FORMAT and catalog.files(("file_id",), "LIMIT 1"):
                raise CatalogError(f"the cache was made with {made_with}; this is {INDEX_FORMAT}")
            if verify:
                catalog.check_integrity()
        except (sqlite3.DatabaseError, OSError) as exc:
            if not_damage(exc) or unwritable(exc):
                raise  # (a full disk, a read-only cache: kept, and read)
            raise CatalogError(f"the catalog is unreadable: {exc}") from exc
    except CatalogError as exc:
        reason = f"relay-search: rebuilding the cache ({exc})"
        wipe_cache(cache)
        catalog = Catalog(path)
    if catalog.get_meta("index_format") != INDEX_FORMAT:  # (no write on every open: a full disk still opens)
        with catalog.write() as db:
            Catalog.set_meta(db, "index_format", INDEX_FORMAT)
    return catalog, reason


def wipe_cache(cache: Path) -> None:
    """Remove the catalog and segments, whatever they have become (a dir, a link)."""
    for name in (CATALOG_FILE, CATALOG_FILE + "-wal", CATALOG_FILE + "-shm", SEGMENTS_DIR, VECTORS_DIR):
        _remove(cache / name)  # (vectors: keyed by doc ids, which a new catalog reuses)


def _remove(target: Path) -> None:
    """``target`` gone, whatever it is (a file, a dir, a link)."""
    try:
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink()
    except FileNotFoundError:
        pass
    except (IsADirectoryError, PermissionError):  # (PermissionError: unlink of a dir on macOS)
        shutil.rmtree(target, ignore_errors=True)


# --- a cache path that is not a directory -------------------------------------------------
#
# The cache dir is named by relay-search, but a file found in its place (or in place of
# a dir above it) may be someone's: it is never deleted. Every command says so in one
# line and exits 1; `relay-search index --rebuild` moves a file at the cache path aside
# (renamed, kept) and builds the cache. What is inside the cache dir is ours: a file
# where segments/ or vectors/ belongs, or a dir where a lock file belongs, is removed.


class CacheLayoutError(StoreError):
    """The cache path cannot be a directory; the message says which path and what to do."""


def _kind(path: Path) -> str | None:
    """What ``path`` is when it is not a directory ("a file"), None if it is one or is absent."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a link to nothing" if os.path.islink(path) else None
    except NotADirectoryError:
        return None  # (a dir above it is the one that is not)
    if stat.S_ISDIR(mode):
        return None
    return "a file" if stat.S_ISREG(mode) else "not a directory"


def check_layout(cache: Path) -> None:
    """Raise :class:`CacheLayoutError` if ``cache`` or a dir above it is something else
    than a directory; mend lock files that became directories (ours, and empty of
    anything that matters)."""
    for path in (cache, *cache.parents):
        kind = _kind(path)
        if kind is not None:
            if path == cache:
                raise CacheLayoutError(
                    f"the cache path {cache} is {kind}, not a directory: move it away or remove it "
                    "(`relay-search index --rebuild` moves it aside and builds the cache)")  # fmt: skip
            raise CacheLayoutError(f"cannot make the cache directory {cache}: {path} is {kind}, not a directory; move it away or remove it")
        if os.path.isdir(path):
            break
    for name in ("writer.lock", "readers.lock"):
        if (cache / name).is_dir() and not (cache / name).is_symlink():
            shutil.rmtree(cache / name, ignore_errors=True)


def move_aside(cache: Path) -> str | None:
    """A file (or link) where the cache dir belongs renamed aside; the line that says so."""
    kind = _kind(cache)
    if kind is None:
        return None
    aside = cache.with_name(cache.name + ".moved-aside")
    n = 1
    while os.path.lexists(aside):
        aside = cache.with_name(f"{cache.name}.moved-aside.{n}")
        n += 1
    try:
        os.rename(cache, aside)
    except OSError as exc:
        raise CacheLayoutError(f"the cache path {cache} is {kind}, not a directory, and moving it aside failed ({exc.strerror}): move it away or remove it") from exc
    return f"relay-search: the cache path {cache} was {kind}, not a directory: moved it to {aside}; building the cache"


def cache_error_line(cache: Path, exc: BaseException) -> str | None:
    """One line for an error of the file system inside the cache (unreadable, not a
    directory): which path, and what to do. None when ``exc`` is not one."""
    name = getattr(exc, "filename", None)
    if not isinstance(exc, OSError) or not isinstance(name, str):
        return None
    path = Path(name)
    if path != cache and cache not in path.parents:
        return None
    what = exc.strerror or type(exc).__name__
    if isinstance(exc, PermissionError):
        todo = f"give this user read and write access to {cache}, or remove it (it is rebuilt on demand)"
    else:
        todo = f"remove {cache} (it is rebuilt on demand) or run `relay-search index --rebuild`"
    return f"relay-search: cannot use the cache: {path}: {what}; {todo}"


def discard_damaged_cache(cache: Path, exc: BaseException) -> str:
    """Throw away a cache found damaged mid-command; the one line that says so.

    (Garbage in the middle of the catalog is only seen by the query that reads
    that page.) Only while no other process writes the cache: that one would keep
    using the damaged file, so the line says how to repair it instead.
    """
    lock = WriterLock(cache)
    if not lock.acquire(wait=5.0):
        holder = lock.held_by_other() or "another process"
        return f"relay-search: the cache is damaged ({exc}); {holder} is using it: stop it and run `relay-search index --rebuild`"
    try:
        wipe_cache(cache)
    finally:
        lock.release()
    return f"relay-search: rebuilding the cache (it is damaged: {exc})"
