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
from pathlib import Path

from .catalog import Catalog, CatalogError
from .sources import PARSER_VERSION
from .tokenize import TOKENIZER_VERSION

# What the cached index was made with; any difference means a rebuild. ("every
# project": older caches held only the projects their writer's --pattern selected.)
INDEX_FORMAT = f"tokenizer {TOKENIZER_VERSION}, parser {PARSER_VERSION}, every project"

CATALOG_FILE = "catalog.sqlite"
SEGMENTS_DIR = "segments"


class WriterLock:
    """An advisory lock on the cache; released when the process exits."""

    def __init__(self, cache: Path) -> None:
        self.path = cache / "writer.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def open_catalog(cache: Path, *, writer: bool) -> tuple[Catalog, str | None]:
    """The catalog, and a one-line reason if it had to be rebuilt."""
    path = cache / CATALOG_FILE
    if not writer:
        return Catalog(path, readonly=True), None
    cache.mkdir(parents=True, exist_ok=True)
    reason = None
    try:
        catalog = Catalog(path)
        made_with = catalog.get_meta("index_format")
        if made_with != INDEX_FORMAT and catalog.files(("file_id",), "LIMIT 1"):
            raise CatalogError(f"the cache was made with {made_with}; this is {INDEX_FORMAT}")
    except CatalogError as exc:
        reason = f"relay-search: rebuilding the cache ({exc})"
        wipe_cache(cache)
        catalog = Catalog(path)
    with catalog.write() as db:
        Catalog.set_meta(db, "index_format", INDEX_FORMAT)
    return catalog, reason


def wipe_cache(cache: Path) -> None:
    for name in (CATALOG_FILE, CATALOG_FILE + "-wal", CATALOG_FILE + "-shm"):
        try:
            (cache / name).unlink()
        except FileNotFoundError:
            pass
    shutil.rmtree(cache / SEGMENTS_DIR, ignore_errors=True)
