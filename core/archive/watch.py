"""Watch the transcript roots and sync the changed paths, bursts collapsed.

watchdog reports every write of an agent appending to its transcript; the
debouncer waits until events pause for ``QUIET`` seconds (at most ``MAX_DELAY``
after the first one) and then syncs just those paths. A root that does not exist
yet (no ``~/.codex`` on this machine) is looked for again every few seconds, so an
agent used for the first time shows up without a restart. A watched root that
is deleted, moved away or replaced (``rm -rf ~/.claude``, restoring a backup)
is noticed by the same poll (its path no longer names the directory watched, or
watchdog said the directory itself was deleted: a new one may get the old inode
back): its watch is dropped, the root is synced (its files gone: its sessions leave
the index) and watched again once it exists again.

Events the kernel dropped are not lost for good. inotify queues a process's events
(``fs.inotify.max_queued_events``, 16,384 by default); a flood of changes (50,000
new session files at once) fills the queue faster than it drains and the kernel
drops what follows, saying only "overflow". watchdog then rebuilds its watches and
logs a warning, but no handler hears of it: that warning is the sign (watched for
here). A watch whose emitter thread died (any watcher error) is the other. Either
way every root is synced whole at the next poll, as at start: the files written
during the flood are found by listing the roots (a full sync: ~5 s at 100,000
files, once per overflow however many events were lost).
"""

from __future__ import annotations

import logging
import stat
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

from core.errors import RelayError

QUIET = 0.08
MAX_DELAY = 0.25
ROOT_POLL = 1.0  # seconds; one stat per root

log = logging.getLogger(__name__)


class _Handler(FileSystemEventHandler):
    def __init__(self, sink: Callable[[Path], None], root: Path, gone: Callable[[Path], None]) -> None:
        self.sink = sink
        self.root = root
        self.gone = gone

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.event_type == "deleted" and event.is_directory and Path(str(event.src_path)) == self.root:
            self.gone(self.root)  # (its watch ends with it: watchdog stops the emitter)
        if event.is_directory and event.event_type == "modified":
            return  # a file inside changed: that file's own event says which
        self.sink(Path(str(event.src_path)))
        dest = getattr(event, "dest_path", "")
        if dest:
            self.sink(Path(str(dest)))


# watchdog's inotify modules, whose warning on an overflow is the only sign of one
OVERFLOW_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")
_live: weakref.WeakSet[Watcher] = weakref.WeakSet()
_hooked = threading.Lock()


class _OverflowSignal(logging.Handler):
    """Marks every live watcher as having lost events when watchdog logs an overflow.

    (It only sets a flag: it runs on watchdog's thread, inside watchdog's locks, which
    a watcher's own thread may be waiting for while it schedules a root.)
    """

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in str(record.msg).lower():
            for watcher in list(_live):
                watcher.events_lost = True


def _watch_for_overflows() -> None:
    if not _hooked.acquire(blocking=False):
        return  # (once per process)
    for name in OVERFLOW_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(_OverflowSignal(logging.WARNING))
        if logger.getEffectiveLevel() > logging.WARNING:  # (a quieter logging setup must not hide it)
            logger.setLevel(logging.WARNING)


class Watcher:
    def __init__(self, roots: list[Path], on_paths: Callable[[set[Path]], object]) -> None:
        self.roots = roots
        self.on_paths = on_paths
        self._observer = Observer()
        self._watched: dict[Path, tuple[ObservedWatch, tuple[int, int]]] = {}  # root → (watch, (dev, inode))
        self._gone: set[Path] = set()  # watched roots deleted (a new dir there can reuse the inode)
        self._pending: set[Path] = set()
        self._first_event = 0.0
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stop = False
        self.events_lost = False  # set from watchdog's thread (an overflow): every root is synced whole
        self._thread = threading.Thread(target=self._loop, name="relay-search-watch", daemon=True)

    def start(self) -> None:
        """Watch the roots; returns once every existing root is watched (watchdog's
        emitters add their inotify/kqueue watches in ``start``, not on their thread),
        so a change made after it is seen: callers await nothing more."""
        _watch_for_overflows()
        _live.add(self)
        self._add_roots()
        self._observer.start()
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        try:
            self._observer.stop()
            self._observer.join(timeout=2)
        except RuntimeError:
            pass
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def _add_roots(self) -> bool:
        added = False
        for root in self.roots:
            if root in self._watched:
                continue
            identity = _identity(root)
            if identity is None:
                continue
            try:
                watch = self._observer.schedule(_Handler(self._event, root, self._root_gone), str(root), recursive=True)
            except OSError as exc:
                log.warning("cannot watch %s: %s", root, exc)
                continue
            self._watched[root] = (watch, identity)
            added = True
        return added

    def _dropped_roots(self) -> list[Path]:
        """Watched roots whose path no longer names the watched dir, reported deleted, or
        whose emitter died (an error in watchdog's thread): unwatched."""
        dropped = []
        alive = self._live_watches()
        for root, (watch, identity) in list(self._watched.items()):
            moved = _identity(root) != identity or root in self._gone
            if not moved and (alive is None or watch in alive):
                continue
            if not moved:
                log.warning("relay-search: the watch on %s stopped; syncing it whole and watching it again", root)
            del self._watched[root]
            self._gone.discard(root)
            try:
                self._observer.unschedule(watch)
            except (KeyError, OSError, RuntimeError):
                pass  # its emitter may have stopped itself already
            dropped.append(root)
        return dropped

    def _live_watches(self) -> set[ObservedWatch] | None:
        try:
            return {emitter.watch for emitter in list(self._observer.emitters) if emitter.is_alive()}
        except RuntimeError:  # (the set changed while copied: ask again at the next poll)
            return None

    def _poll_roots(self) -> set[Path]:
        """Roots gone, replaced, new or that lost events since the last poll: the paths to sync."""
        changed = set(self._dropped_roots())
        if self.events_lost:
            self.events_lost = False
            lost = [r for r in self.roots if r in self._watched]
            log.warning("relay-search: file events were lost (a flood of changes); syncing %s whole",
                        ", ".join(map(str, lost)) or "nothing")  # fmt: skip
            changed.update(lost)
        new_roots = [r for r in self.roots if r not in self._watched and r.is_dir()]
        if new_roots and self._add_roots():
            changed.update(r for r in new_roots if r in self._watched)
        return changed

    def _root_gone(self, root: Path) -> None:
        with self._cond:
            self._gone.add(root)

    def _event(self, path: Path) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first_event = now
            self._pending.add(path)
            self._last_event = now
            self._cond.notify_all()

    def _loop(self) -> None:
        next_root_poll = time.monotonic() + ROOT_POLL
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    timeout = max(0.0, next_root_poll - time.monotonic())
                    self._cond.wait(timeout=timeout)
                    if time.monotonic() >= next_root_poll:
                        break
                if self._stop:
                    return
                if time.monotonic() >= next_root_poll:
                    next_root_poll = time.monotonic() + ROOT_POLL
                    changed = self._poll_roots()
                    if changed and not self._pending:
                        self._first_event = self._last_event = time.monotonic()
                    self._pending.update(changed)
                if not self._pending:
                    continue
                # Collapse a burst: wait for a quiet gap, but never past MAX_DELAY.
                while not self._stop:
                    now = time.monotonic()
                    deadline = min(self._last_event + QUIET, self._first_event + MAX_DELAY)
                    if now >= deadline:
                        break
                    self._cond.wait(timeout=deadline - now)
                paths, self._pending = self._pending, set()
            try:
                self.on_paths(paths)
            except RelayError as exc:  # a full disk: one line, and the next change retries
                log.warning("relay-search: %s", exc)
            except Exception:  # a failed sync must not kill the watcher
                log.exception("sync after a change failed")


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a directory, None if ``path`` is not one now."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
