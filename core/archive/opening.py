"""Opening an archive's cache: its catalog, the first snapshot it publishes, the first sync.

:class:`core.api.Archive` opens its cache with these steps, so that ``Archive``
delegates rather than grows: a reader that finds no catalog waits briefly for the
writer creating it; then the index snapshot is loaded, and a cache that cannot be
read is rebuilt by the writer (with one line saying why) and refused by a reader;
last, :meth:`Archive.open <core.api.Archive.open>` catches up with the disk.
The archive is an :class:`OpenedArchive` here, as it is a ``KeptArchive`` to
:mod:`core.archive.upkeep`: this layer sits below the query API and must not import it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from core.errors import OutOfSpace, StoreError
from core.index.bm25 import Snapshot
from core.index.segment import SegmentError
from core.views import Progress, UpdateResult

from .catalog import Catalog, CatalogError, disk_full_is_an_error, is_damage, out_of_space, unwritable
from .indexer import Indexer
from .store import WriterLock, check_layout, open_catalog
from .upkeep import Upkeep


class OpenedArchive(Protocol):
    """What :func:`first_sync` needs of the archive it opened (:class:`core.api.Archive` is one)."""

    writer: bool
    catalog: Catalog
    _upkeep: Upkeep

    def sync(self, paths: Iterable[Path] | None = None, progress: Callable[[Progress], None] | None = None) -> UpdateResult: ...

    def close(self) -> None: ...


def open_cache(cache: Path, *, writer: bool, verify: bool) -> tuple[Catalog, str | None]:
    """The cache's catalog, and the line saying why it was rebuilt (None: it was not)."""
    if not writer and not (cache / "catalog.sqlite").exists():
        wait_for_writer(cache)
    with disk_full_is_an_error():
        return open_catalog(cache, writer=writer, verify=verify)


# --- a cache that cannot be written: answer from it, read-only, and say so once -------------


def cannot_update(cache: Path, exc: BaseException) -> str:
    """The one line a front end prints when the cache answers but cannot be updated."""
    why = "the disk is full" if out_of_space(exc) else "it is read-only"
    detail = getattr(exc, "strerror", None) or str(exc).split(" (", 1)[0]
    return (f"relay-search: the cache at {cache} could not be updated ({why}: {detail}); "
            "answering from what it already holds")  # fmt: skip


def take_writer_lock(lock: WriterLock, want: bool, wait: float) -> tuple[bool, str | None]:
    """Whether this process writes the cache, and the line saying why not when it
    wanted to but the cache directory cannot be written (read-only, full). A file where
    the cache dir belongs raises :class:`~core.archive.store.CacheLayoutError` (one line)."""
    check_layout(lock.path.parent)
    if not want:
        return False, None
    try:
        return lock.acquire(wait), None
    except OSError as exc:
        if not (unwritable(exc) or out_of_space(exc)):
            raise
        return False, cannot_update(lock.path.parent, exc)


def open_cache_for(
    cache: Path, lock: WriterLock, *, writer: bool, verify: bool, note: str | None
) -> tuple[Catalog, str | None, bool, str | None]:
    """(catalog, rebuilt line, writer, cannot-update line): a writer that cannot open the
    catalog for writing (a full disk, a read-only file) gives the lock back and reads it."""
    if writer:
        try:
            catalog, rebuilt = open_cache(cache, writer=True, verify=verify)
            return catalog, rebuilt, True, None
        except (OutOfSpace, OSError, sqlite3.OperationalError) as exc:
            cause = exc.__cause__ if isinstance(exc, OutOfSpace) and exc.__cause__ else exc
            if not (isinstance(exc, OutOfSpace) or unwritable(cause)):
                raise
            lock.release()
            note = cannot_update(cache, cause)
    if note is not None and not (cache / "catalog.sqlite").is_file():
        reason = note.removeprefix("relay-search: ").removesuffix("; answering from what it already holds")
        raise StoreError(f"{reason}, and it holds no index yet")
    catalog, rebuilt = open_cache(cache, writer=False, verify=verify)
    return catalog, rebuilt, False, note


def wait_for_writer(cache: Path) -> None:
    """Another process is creating the cache right now: wait briefly for it."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not (cache / "catalog.sqlite").exists():
        time.sleep(0.05)


def publish_first_snapshot(
    indexer: Indexer, publish: Callable[[Snapshot], None], wipe: Callable[[], None], *, writer: bool, verify: bool
) -> str | None:
    """Publish the cache's snapshot; a cache that cannot be read the writer wipes (the line saying why)."""
    if writer:
        indexer.remove_orphan_segments()
    try:
        publish(indexer.load_snapshot(verify=verify))
    except (OSError, ValueError, CatalogError, SegmentError, sqlite3.DatabaseError) as exc:
        if isinstance(exc, sqlite3.DatabaseError) and not is_damage(exc):
            raise  # (locked, or a full disk: not a reason to throw the cache away)
        if not writer:
            raise CatalogError(f"cannot read the cache another relay-search process writes: {exc}") from exc
        rebuilt = f"relay-search: rebuilding the cache ({exc})"
        wipe()
        return rebuilt
    return None


def first_sync(archive: OpenedArchive, *, sync: bool, progress: Callable[[Progress], None] | None) -> None:
    """Catch a just-opened archive up with the disk (or note the index it has); close it if that fails."""
    try:
        if sync:
            archive.sync(progress=progress)
        elif not archive.writer or archive.catalog.files(("file_id",), "LIMIT 1"):
            archive._upkeep.first_index.set()
    except BaseException:
        archive.close()  # (the writer lock with it: a retry must be able to take it)
        raise
