"""Keeping an archive's index in step with the disk, and saying so.

The writer syncs what changed (everything, or the paths the watcher saw), keeps
paths a full disk kept out for the next try, and keeps segments few in a
long-lived process; a reader in another process follows the writer's commits.
Listeners (the app, the servers) hear of every change, and a server started on a
never-indexed cache can wait for its first index instead of answering "no results".

``watchdog`` is imported only when watching starts: a one-shot CLI call never watches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from core.errors import OutOfSpace, SyncStopped
from core.sources import all_sources
from core.views import Progress, UpdateResult

from .catalog import disk_full_is_an_error

if TYPE_CHECKING:
    from core.config import Config

    from .indexer import Indexer
    from .library import Library
    from .semantic_job import SemanticJob
    from .watch import Watcher


class KeptArchive(Protocol):
    """What upkeep needs of the archive it keeps (:class:`core.api.Archive` is one).

    A protocol, not an import: the archive layer sits below the query API and must
    not import it.
    """

    writer: bool
    config: Config
    cache: Path
    indexer: Indexer
    semantic: SemanticJob

    @property
    def generation(self) -> int: ...

    @property
    def library(self) -> Library: ...

    def sync(self, paths: Iterable[Path] | None = None, progress: Callable[[Progress], None] | None = None) -> UpdateResult: ...

    def _refresh_from_disk(self) -> None: ...


class Upkeep:
    """Sync, watch and notify for one archive (its writer flag, indexer and snapshot are the archive's)."""

    def __init__(self, archive: KeptArchive) -> None:
        self._archive = archive
        self._watcher: Watcher | None = None
        self._listeners: list[Callable[[UpdateResult], None]] = []
        self.first_index = threading.Event()  # set once the cache holds a first index
        self._retry_paths: set[Path] = set()  # changed paths a full disk kept from the index
        self.closed = False  # the archive closed: a sync failing under it has nothing to report

    def sync(self, paths: Iterable[Path] | None, progress: Callable[[Progress], None] | None, *, quick: bool) -> UpdateResult:
        archive = self._archive
        if not archive.writer:
            archive._refresh_from_disk()
            return UpdateResult()
        if paths is not None and self._retry_paths:
            paths = {*paths, *self._retry_paths}
        try:
            with disk_full_is_an_error():
                result = archive.indexer.sync(paths, progress, quick=quick)
        except OutOfSpace:
            if paths is not None:  # the watcher's next change retries these too
                self._retry_paths = set(paths)
            raise
        self._retry_paths = set()
        if paths is None:
            self.first_index.set()
        if self._watcher is not None:  # a long-lived process: keep segments few, embed what is new
            archive.indexer.merge_in_background()
            if result.changed:
                archive.semantic.kick()
        if result.changed:
            self._tell(result)
        return result

    def sync_in_background(self, progress: Callable[[Progress], None] | None) -> threading.Thread:
        def run() -> None:
            try:
                self._archive.sync(progress=progress)
            except SyncStopped:  # the archive is closing
                pass
            except Exception as exc:  # the watcher still runs; the next change retries
                if not self.closed:  # (closed under it: nothing to report)
                    import logging  # (here: a one-shot command never loads it)

                    logging.getLogger(__name__).warning("relay-search: background sync failed: %s", exc)
            finally:
                self.first_index.set()

        thread = threading.Thread(target=run, name="relay-search-sync", daemon=True)
        thread.start()
        return thread

    def start_watching(self, on_change: Callable[[UpdateResult], None] | None, *, embed: bool = True) -> None:
        archive = self._archive
        if on_change is not None:
            self._listeners.append(on_change)
        if self._watcher is not None:
            return
        from .watch import Watcher  # (watchdog) only a long-running process watches

        if archive.writer:  # (a reader cannot write the catalog: merging is the writer's)
            archive.indexer.merge_in_background()
        if embed:  # after BM25 is published, at low priority (core/archive/semantic_job.py)
            archive.semantic.kick()
        roots = [root for source in all_sources(archive.config.agents) for root in source.watch_roots(archive.config)]
        if archive.writer:
            self._watcher = Watcher(roots, lambda paths: archive.sync(paths))
        else:
            self._watcher = Watcher([archive.cache], lambda _: self._follow_writer())
        self._watcher.start()

    def remove_listener(self, on_change: Callable[[UpdateResult], None]) -> None:
        if on_change in self._listeners:
            self._listeners.remove(on_change)

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _follow_writer(self) -> None:
        """A reader: the cache changed on disk; tell listeners if the writer committed."""
        archive = self._archive
        before = archive.generation
        archive._refresh_from_disk()
        if archive.generation != before:
            self._tell(UpdateResult(changed_sessions=tuple(archive.library.sessions)))

    def _tell(self, result: UpdateResult) -> None:
        for listener in list(self._listeners):
            listener(result)
