"""The relay-search terminal app: lifecycle, workers, clipboard, filters.

Start-up never waits on disk: the archive opens as cached (``sync=False``) and the
panes fill at once; a thread worker then syncs with the transcripts (progress in
the status bar) and starts the watcher, whose callbacks (on the watcher's thread)
become :class:`~tui.messages.ArchiveChanged` messages. Every blocking call runs
through :meth:`RelayApp.submit`, and every worker failure lands in one handler.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from core.memory import long_lived_process
from core.words import plural

from . import tasks
from .changes import PendingChanges
from .clipboard import last_copy_text, toast_text_width
from .clipboard import notice as clipboard_notice
from .controls import show_controls
from .filters import Filters, chosen
from .heap import IdleCollector
from .keys import MAIN_KEYS
from .messages import ArchiveChanged, ArchiveOpened, Copied, SessionCount, StatsUpdated, SyncFinished, SyncProgress, TagsLoaded, TagsSaved
from .notices import HoldsNotices
from .screens.dialogs import TagScreen
from .screens.empty import EmptyScreen
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .strip_caches import make_strip_caches_when_used
from .strip_cycles import keep_strips_out_of_cycles
from .widgets.turn_view import warm_up_rendering

REFRESH_DELAY = 0.25  # seconds: live changes within this window refresh once
IDLE_CHECK = 0.5  # seconds between looks for an idle moment to collect garbage in
PARTIAL_REFRESH = 0.5  # seconds between refreshes of the panes while a cold index lands
TAGS_CHECK = 0.5  # seconds between looks at the tag store (another process may tag)
# Embedding the passages without vectors (a model load, then minutes of work on a
# fresh archive) waits this long after the first sync, so it is not competing with the
# first paint and keys (demo, vectors missing: first key painted 112-235 ms with it
# started at once, 110-132 ms deferred; a 2.5 s figure measured before was Pilot's
# own idle wait around the key, not the app).
EMBED_AFTER = 2.0  # seconds
BACKLOG_STATUS_EVERY = 5.0  # seconds between status refreshes while passages wait for vectors


class RelayApp(HoldsNotices, App[None]):
    """Three panes on one :class:`core.api.Archive`; see :func:`make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "relay-search"
    NOTIFICATION_TIMEOUT = 4  # notices are short (≤ 3 lines) and go quickly
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True)]

    def __init__(self, config: Any, *, now: datetime | None = None, archive: Any = None) -> None:
        show_controls()  # a transcript's escapes are shown, never sent (before any text is built)
        keep_strips_out_of_cycles()  # so each repaint's strips are freed when dropped (see there)
        make_strip_caches_when_used()  # a line's seven memo caches only when asked for (see there)
        super().__init__()
        _start_resource_tracker()  # before Textual captures sys.stderr (see there)
        self.config = config
        self._now = now
        self.archive = archive
        self._owns_archive = archive is None
        self.filters = Filters()
        self.stats: Any = None
        self.syncing = False
        self.watching = False
        self.sync_result: Any = None
        self._pending = PendingChanges()  # filled on the watcher's thread
        self._refresh_pending = False
        self._empty_shown = False
        self._tag_label: str | None = None
        self.heap = IdleCollector()  # (started at mount)
        self._tags_seen: Any = None
        self._partial_at = 0.0  # when the panes last showed results so far
        self.last_copy = ""  # the last copy in full (what, how, where, a preview): the help screen shows it

    # --- basics ------------------------------------------------------------------

    def now(self) -> datetime:
        """The clock relative times use (fixed in tests and screenshots)."""
        return self._now or datetime.now(UTC)

    def on_mount(self) -> None:
        self.heap.start()
        self.set_interval(IDLE_CHECK, self._collect_when_idle)
        self.set_interval(TAGS_CHECK, self._check_tags)

    def _check_tags(self) -> None:
        """Tags set by another process (``relay-search tag``) show within a second.

        The check is one ``PRAGMA data_version`` on an open SQLite connection
        (microseconds), so it runs here rather than in a worker.
        """
        if self.archive is None or self.syncing:
            return
        version = self._tags_version()
        if version is None:
            return
        if self._tags_seen is not None and version != self._tags_seen:
            self.main.refresh_all(refresh=True)
        self._tags_seen = version

    def _tags_version(self) -> Any:
        try:
            return self.archive.tags_version() if self.archive is not None else None
        except Exception as error:  # a locked or vanished store: look again next time
            self.log.warning(f"reading the tag store: {error!r}")
            return None

    def _collect_when_idle(self) -> None:
        # (a running worker is a load or search someone is waiting for)
        busy = self.syncing or any(w.is_running for w in self.workers)
        self.heap.tick(ready=self.sync_result is not None and not busy)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseEvent)):
            self.heap.touch()
        await super().on_event(event)

    def get_default_screen(self) -> Screen:
        return MainScreen()

    @property
    def main(self) -> MainScreen:
        return self.screen_stack[0]  # type: ignore[return-value]

    def submit(
        self,
        fn: Callable[..., Message | None],
        *args: Any,
        reply_to: MessagePump | None = None,
        group: str = "default",
        exclusive: bool = False,
        name: str = "",
        **kwargs: Any,
    ) -> Worker:
        """Run ``fn(archive, *args, **kwargs)`` in a thread; post its message to ``reply_to``.

        The message is dropped if the worker was cancelled meanwhile (an exclusive
        group started a newer one), which is how stale searches disappear.
        """
        target = reply_to or self
        # Popped when it runs, and the message not returned: a finished worker lives on in a
        # reference cycle until a full collection (rare here, tui/heap.py), and with it what its
        # work held. A conversation's blocks (~4 MB for 2,000 turns) piled up open after open.
        work = [partial(fn, self.archive, *args, **kwargs)]

        def run() -> None:
            message = work.pop()()
            if message is not None and not get_current_worker().is_cancelled:
                target.post_message(message)

        return self.run_worker(
            run, name=name or fn.__name__, group=group, exclusive=exclusive, thread=True, exit_on_error=False
        )

    # --- start-up: open, sync, watch -----------------------------------------

    def start(self) -> None:
        """Called by the main screen once its panes exist: open, then sync."""
        if self.archive is not None:
            self.post_message(ArchiveOpened())
        else:
            self.submit(self._open, name="open index", group="lifecycle")

    def _open(self, _archive: Any) -> ArchiveOpened:
        from core.api import Archive

        now = self._now
        clock = (lambda: now.timestamp()) if now is not None else None
        self.archive = Archive.open(self.config, sync=False, now=clock)
        return ArchiveOpened()

    @on(ArchiveOpened)
    def _opened(self) -> None:
        self._tags_seen = self._tags_version()  # before the panes read them: a later change refreshes
        self.main.refresh_all()
        self.main.set_status("Indexing…")
        self.syncing = True
        self.submit(self._sync, name="index", group="lifecycle")
        self.run_worker(warm_up_rendering, name="warm up", thread=True, exit_on_error=False)

    def _sync(self, archive: Any) -> SyncFinished:
        def progress(p: Any) -> None:
            self.post_message(SyncProgress(p.done_files, p.total_files, p.phase))

        return SyncFinished(archive.sync(progress=progress))

    @on(SyncProgress)
    def _progress(self, message: SyncProgress) -> None:
        """Segments are published as they land: show what is searchable so far."""
        done, total = message.done_files, message.total_files
        self.main.show_progress(done, total)
        if 0 < done < total:
            self.main.set_status(f"{message.phase.capitalize()} {done:,}/{total:,} files — results so far")
            now = time.monotonic()
            if now - self._partial_at >= PARTIAL_REFRESH:
                self._partial_at = now
                self.main.refresh_all(refresh=True)
        else:
            self.main.set_status(f"{message.phase.capitalize()} {done:,}/{total:,} files…")

    @on(SyncFinished)
    def _synced(self, message: SyncFinished) -> None:
        self.syncing = False
        self.sync_result = message.result
        self.main.hide_progress()
        self.main.refresh_all(refresh=True)
        self.submit(tasks.stats, group="stats", exclusive=True)
        self.submit(tasks.session_count, group="count", exclusive=True)
        if not self.watching:
            self.watching = True
            self.submit(self._watch, name="watch", group="lifecycle")
            self.set_timer(EMBED_AFTER, lambda: self.submit(tasks.embed, name="embed", group="lifecycle"))
            self.heap.settled()
        if message.result is not None and getattr(message.result, "rebuilt", None):
            self.notify(f"Index rebuilt: {message.result.rebuilt}")

    def _watch(self, archive: Any) -> None:
        archive.start_watching(on_change=self._on_change, embed=False)  # (embedding: EMBED_AFTER)

    def _on_change(self, result: Any) -> None:
        """Watcher thread: remember what changed, then wake the UI (bursts collapse)."""
        self._pending.add(result)
        self.post_message(ArchiveChanged())

    @on(ArchiveChanged)
    def _archive_changed(self) -> None:
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(REFRESH_DELAY, self._apply_changes)

    def _apply_changes(self) -> None:
        self._refresh_pending = False
        self.main.archive_changed(*self._pending.take())
        self.submit(tasks.stats, group="stats", exclusive=True)
        if self._empty_shown:
            self.submit(tasks.session_count, group="count", exclusive=True)

    def rescan(self) -> None:
        if self.archive is not None and not self.syncing:
            self.syncing = True
            self.submit(self._sync, name="index", group="lifecycle")

    @on(SessionCount)
    def _counted(self, message: SessionCount) -> None:
        if message.count == 0 and not self._empty_shown and not self.filters.active:
            self._empty_shown = True
            skipped = self.stats.skipped_lines if self.stats is not None else 0
            self.push_screen(EmptyScreen(self.config, skipped))
        elif message.count > 0 and self._empty_shown:
            self._empty_shown = False
            if isinstance(self.screen, EmptyScreen):
                self.pop_screen()
            self.main.refresh_all(refresh=True)
            self.notify("Sessions found.")

    @on(StatsUpdated)
    def _stats(self, message: StatsUpdated) -> None:
        self.stats = stats = message.stats
        parts = [plural(stats.sessions, "session"), plural(stats.turns, "turn"), plural(stats.files, "file")]
        if stats.skipped_lines:
            parts.append(f"⚠ {plural(stats.skipped_lines, 'unreadable line')} in {plural(len(stats.files_with_skips), 'file')}")
        if stats.errors:
            parts.append(f"⚠ {plural(len(stats.errors), 'unreadable file')}")
        semantic = stats.semantic
        if semantic and not semantic.get("on"):
            parts.append(f"semantic recall off: {semantic.get('reason')}")
        elif semantic and semantic.get("embedded", 0) < semantic.get("passages", 0):  # the backlog, newest first
            parts.append(f"meaning: {semantic['embedded']:,}/{semantic['passages']:,} passages embedded")
            self.set_timer(BACKLOG_STATUS_EVERY, lambda: self.submit(tasks.meaning_progress, self.stats, group="stats", exclusive=True))
        if self.watching:
            parts.append("watching for changes")
        self.main.set_status(" · ".join(parts))

    def on_unmount(self) -> None:
        self.heap.close()
        archive = self.archive
        if archive is None:
            return
        try:
            archive.stop_watching()
            if self._owns_archive and self.syncing:
                archive.stop_syncing()  # (its thread ends it; quitting waited for the whole archive)
            elif self._owns_archive:
                archive.close()
        except Exception as error:  # shutting down: report, never raise
            self.log.error(f"closing the archive: {error!r}")

    # --- errors: one place ---------------------------------------------------

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        error = worker.error
        from core.errors import RelayError

        if worker.group == "lifecycle":
            self.syncing = False
            if self.screen_stack:
                self.main.hide_progress()
                self.main.set_status(f"⚠ {worker.name} failed: {error}")
        if isinstance(error, RelayError):
            self.notify(str(error), title="relay-search", severity="error")
        else:
            self.log.error(f"worker {worker.name!r} failed", error)
            self.notify(f"{worker.name} failed: {type(error).__name__}: {error}", title="Unexpected error", severity="error")

    # --- filters -------------------------------------------------------------

    def set_filter(self, kind: str, value: str | None) -> None:
        self.filters = chosen(self.filters, kind, value, self.now())
        self.notify(f"Filter: {self.filters.describe() or 'none'}")
        self.main.refresh_all()

    def clear_filters(self) -> None:
        self.filters = Filters()
        self.notify("Filters cleared.")
        self.main.refresh_all()

    # --- handoff -----------------------------------------------------------------

    def copy_reference(self, ref: str) -> None:
        self.submit(tasks.copy_reference, ref, self, group="clipboard", name=f"copy {ref}")

    def copy_content(self, ref: str) -> None:
        self.submit(tasks.copy_content, ref, self, group="clipboard", name=f"copy content {ref}")

    @on(Copied)
    def _copied(self, message: Copied) -> None:
        path = Path(message.path) if message.path else None
        self.last_copy = last_copy_text(message.what, message.text, message.how, path)
        if isinstance(self.screen, HelpScreen):  # open already: its "last copy" says it at once
            self.screen.query_one("#help-last-copy", Static).update(self.screen.last_copy())
        self.notify(clipboard_notice(message.what, message.how, path, toast_text_width(self.size.width)), markup=False)

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """A dialog (help, a picker, usage, the palette) clears the notices: none sits over it."""
        if isinstance(screen, ModalScreen):
            self.clear_notifications()
        return super().push_screen(screen, *args, **kwargs)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: an SVG in the data dir (made if missing), its path shown."""
        directory = Path(path) if path else self.config.data_path / "screenshots"
        target = directory / (filename or datetime.now().strftime("relay-search-%Y%m%d-%H%M%S.svg"))
        try:
            directory.mkdir(parents=True, exist_ok=True)
            target.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as error:
            self.notify(f"Screenshot not saved: {error.strerror or error}", severity="error", markup=False)
            return None
        home = str(Path.home())
        shown = "~" + str(target)[len(home) :] if str(target).startswith(home + "/") else str(target)
        self.notify(f"Screenshot saved to {shown}", markup=False)
        return str(target)

    # --- tags ----------------------------------------------------------------------

    def tag_session(self, session_id: str, label: str | None = None) -> None:
        """Ask for ``session_id``'s tags (``label`` names it in the dialog)."""
        self._tag_label = label or session_id[:8]
        self.submit(tasks.get_tags, session_id, group="tags", name="read tags")

    @on(TagsLoaded)
    def _tags_loaded(self, message: TagsLoaded) -> None:
        def save(tags: list[str] | None) -> None:
            if tags is not None:
                self.submit(tasks.set_tags, message.session_id, tags, group="tags", name="save tags")

        self.push_screen(TagScreen(self._tag_label or message.session_id[:8], message.tags), save)

    @on(TagsSaved)
    def _tags_saved(self, message: TagsSaved) -> None:
        shown = " ".join(f"#{t}" for t in message.tags) or "no tags"
        self.notify(f"Session {message.session_id[:8]}: {shown}")
        self._tags_seen = self._tags_version()  # our own change: refreshed here, not again by the poll
        self.main.refresh_all(refresh=True)

    # --- command palette -----------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            for key in MAIN_KEYS:
                if key.palette:
                    yield SystemCommand(f"{key.description} ({key.display})", key.help, partial(screen.run_action, key.action))


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker while ``sys.stderr`` is still real.

    The indexer's process pool starts it on first use and hands it
    ``sys.stderr.fileno()``; inside a running Textual app that is a capture object
    whose ``fileno()`` is -1, and the spawn fails ("bad value(s) in fds_to_keep").
    Started here, before Textual takes over the terminal, it is simply reused.
    """
    try:
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    except Exception:  # no multiprocessing support here: the indexer copes or reports
        pass


def make_app(
    home: Path | None = None,
    *,
    config: Any = None,
    now: datetime | None = None,
    archive: Any = None,
) -> RelayApp:
    """The app for ``home`` (only that tree: ``HOME=home``), or for ``config``.

    Shared by the CLI, ``--demo``, the tests and the screenshot script. ``now``
    pins relative times; ``archive`` reuses an open :class:`core.api.Archive`
    (the app then leaves closing it to the caller).
    """
    long_lived_process()  # (threads allocate at once in the app: see core/memory.py)
    if config is None:
        from core.config import Config

        config = Config.from_env({"HOME": str(home)}) if home is not None else Config.from_env()
    if now is not None and now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return RelayApp(config, now=now, archive=archive)
