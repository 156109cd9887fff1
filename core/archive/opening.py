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

from core.index.bm25 import Snapshot
from core.index.segment import SegmentError
from core.views import Progress, UpdateResult

from .catalog import Catalog, CatalogError, disk_full_is_an_error, is_damage
from .indexer import Indexer
from .store import open_catalog
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
