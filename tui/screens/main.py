"""The main screen: search and sessions on the left, the reader on the right.

It owns the key actions (see :mod:`tui.keys`) and routes what the panes report:
a chosen hit or session opens in the reader; a live change refreshes every pane
without moving anyone's selection.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal, Vertical
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, ProgressBar, Static

from .. import tasks
from ..clipboard import last_copy_text, toast_text_width
from ..clipboard import notice as clipboard_notice
from ..keys import INPUT, bindings, footer_actions
from ..messages import ChoicesLoaded, ResumeReady
from ..widgets.footer import KeysFooter
from ..widgets.hit_list import HitList
from ..widgets.reader import Reader
from ..widgets.reader_pane import ReaderPane
from ..widgets.search_pane import SearchPane
from ..widgets.sessions_pane import SessionsPane, session_ref
from . import selection
from .dialogs import CUSTOM, DATE_CHOICES, PickScreen, RangeScreen, sort_values
from .export_dialog import ExportScreen
from .help import HelpScreen
from .usage import UsageScreen

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost

EXPORT_FORMATS = {"Markdown (.md)": "md", "HTML, one self-contained page (.html)": "html", "JSON, messages API shape (.json)": "json"}

PANES = ("search-pane", "sessions-pane", "reader-pane")
CONTEXTS = {"search-pane": "hits", "sessions-pane": "sessions", "reader-pane": "reader"}
QUIT_ASK = 3.0  # seconds a second q quits after "press q again"


class MainScreen(Screen):
    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)
    BINDINGS = bindings()
    # Textual repaints the whole screen when focus moves (a 160×48 screen: 20–40 ms,
    # inside every open from a list); the widgets whose look depends on focus repaint
    # themselves as their styles change, so the rest need not.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self) -> None:
        super().__init__()
        self.last_pane = "search-pane"
        self.export_directory: str | None = None  # where E last wrote (offered again)
        self._quit_asked = False  # q with a query open asked "q again to quit"

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            with Vertical(id="left"):
                yield SearchPane(id="search-pane", classes="pane")
                yield SessionsPane(id="sessions-pane", classes="pane")
            yield ReaderPane(id="reader-pane", classes="pane")
        with Horizontal(id="statusbar"):
            yield Static("Opening the index…", id="status")
            yield ProgressBar(id="progress", show_eta=False)
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#search-pane").border_title = "Search"
        self.query_one("#sessions-pane").border_title = "Sessions"
        self.query_one("#reader-pane").border_title = "Reader"
        self.query_one("#progress").display = False
        self.query_one("#query", Input).focus()
        self.app.start()

    # --- parts -----------------------------------------------------------------

    @property
    def search_pane(self) -> SearchPane:
        return self.query_one(SearchPane)

    @property
    def sessions_pane(self) -> SessionsPane:
        return self.query_one(SessionsPane)

    @property
    def reader_pane(self) -> ReaderPane:
        return self.query_one(ReaderPane)

    @property
    def reader(self) -> Reader:
        return self.query_one(Reader)

    def pane_of(self, widget: Widget | None) -> str | None:
        while widget is not None:
            if widget.id in PANES:
                return widget.id
            widget = widget.parent  # type: ignore[assignment]
        return None

    def on_screen_resume(self) -> None:
        self.app.show_held_notices()  # (those that came while a dialog was open)

    def on_descendant_focus(self, event: Any) -> None:
        pane = self.pane_of(event.widget)
        if pane:
            self.last_pane = pane
        if pane == "search-pane" and not self.search_pane.has_class("-idle"):
            self.sessions_pane.fold(True)  # back to the hits: they get the column again

    def focus_context(self) -> str:
        """Where the keys apply: ``input`` (letters are typed), or a pane."""
        if isinstance(self.focused, Input):
            return INPUT
        return CONTEXTS.get(self.pane_of(self.focused) or self.last_pane, "hits")

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer shows only the focused pane's keys (all keys still work)."""
        active = super().active_bindings
        shown = footer_actions(self.focus_context())
        for key, item in active.items():
            if item.node is self and item.binding.show and item.binding.action not in shown:
                active[key] = item._replace(binding=replace(item.binding, show=False))
        return active

    # --- refreshing ----------------------------------------------------------

    def refresh_all(self, *, refresh: bool = False) -> None:
        """Re-query every pane (after open, sync, a filter change or a live change)."""
        self.sessions_pane.reload(refresh=refresh)
        self.search_pane.run_search(refresh=refresh)

    def archive_changed(self, changed: set[str], new: set[str], removed: AbstractSet[str] = frozenset()) -> None:
        """The watcher reported changes: refresh lists and, if affected, the reader."""
        self.refresh_all(refresh=True)
        reader = self.reader
        if not reader.is_open:
            return
        shown = {s.session_id for s in reader.sessions}
        if shown and shown <= removed:
            self.notify(f"{reader.view_ref()} was deleted from disk.", severity="warning")
            reader.clear()
            self.reader_pane.update_status()
            return
        chain_view = reader.ref is not None and "#" not in reader.ref and ":" not in reader.ref
        if reader.ref is not None and (shown & changed or (chain_view and new)):
            self.open_ref(reader.ref, query=reader.query_text, refresh=True, follow=reader.follow)

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def show_progress(self, done: int, total: int) -> None:
        bar = self.query_one("#progress", ProgressBar)
        bar.display = True
        bar.update(total=max(total, 1), progress=done)

    def hide_progress(self) -> None:
        self.query_one("#progress", ProgressBar).display = False

    # --- opening -------------------------------------------------------------

    def open_ref(
        self,
        ref: str,
        *,
        query: str = "",
        refresh: bool = False,
        follow: bool = False,
        focus_turn: tuple[str, int] | None = None,
        focus_reader: bool = False,
        unfold_subagents: bool = False,
        focus_sequence: int | None = None,
        focus_snippet: str = "",
    ) -> None:
        self.app.submit(
            tasks.load_conversation,
            ref,
            query,
            refresh=refresh,
            follow=follow,
            focus_turn=focus_turn,
            unfold_subagents=unfold_subagents,
            focus_sequence=focus_sequence,
            focus_snippet=focus_snippet,
            reply_to=self.reader_pane,
            group="reader",
            exclusive=True,
            name=f"open {ref}",
        )
        if focus_reader:
            self.reader.focus()

    @on(SearchPane.HitChosen)
    def _hit_chosen(self, message: SearchPane.HitChosen) -> None:
        hit = message.hit
        ref = hit.ref.rpartition(":")[0] if hit.turn_number is not None and ":" in hit.ref else hit.ref
        focus = (hit.session_id, hit.turn_number) if hit.turn_number is not None else None
        self.open_ref(
            ref, query=message.query, focus_turn=focus, focus_reader=True, unfold_subagents=hit.is_sidechain,
            focus_sequence=hit.sequence, focus_snippet=hit.snippet,  # open at what the list showed
        )

    @on(SearchPane.Active)
    def _search_active(self, message: SearchPane.Active) -> None:
        self.sessions_pane.fold(message.active)

    @on(SearchPane.RefChosen)
    def _ref_chosen(self, message: SearchPane.RefChosen) -> None:
        self.open_ref(message.ref, focus_reader=True)

    @on(SessionsPane.Chosen)
    def _session_chosen(self, message: SessionsPane.Chosen) -> None:
        self.open_ref(message.ref, query=self.search_pane.shown_query, focus_reader=True)

    # --- actions -----------------------------------------------------------------

    def action_focus_search(self) -> None:
        self.query_one("#query", Input).focus()

    def action_escape(self) -> None:
        """Esc: leave the search box (for the hits, else the sessions); again: clear it.
        From the reader: back to the search box, the query kept and selected (typing replaces it)."""
        box = self.query_one("#query", Input)
        if box.has_focus:
            if self.search_pane.hits:
                self.query_one(HitList).focus()
            else:
                self.sessions_pane.show_list()
        elif self.pane_of(self.focused) == "reader-pane":
            if not self.query_one("#left").display:  # zoomed (z): the column comes back
                self.action_maximise_reader()
            box.focus()
            box.select_all()
        elif box.value:
            if isinstance(self.focused, HitList):  # the hit list goes away with the query
                self.sessions_pane.show_list()
            box.value = ""

    def action_quit(self) -> None:
        """q: quit; while a query is in the box it asks first (q again quits, ctrl+q at once)."""
        if self.query_one("#query", Input).value.strip() and not self._quit_asked:
            self._quit_asked = True
            self.set_timer(QUIT_ASK, lambda: setattr(self, "_quit_asked", False))
            self.notify("A search is open: press q again to quit (ctrl+q quits at once).", markup=False)
            return
        self.app.exit()

    def action_hit_layout(self) -> None:
        """v: two lines a hit ↔ the roomy layout."""
        self.search_pane.toggle_compact()

    def action_group_hits(self) -> None:
        """g: one hit row per session ↔ every matching turn."""
        pane = self.search_pane
        pane.toggle_grouped()
        self.app.notify("Hits: one row per session, its best first" if pane.grouped else "Hits: every matching turn")

    def action_cycle_panes(self, step: int) -> None:
        current = self.pane_of(self.focused) or self.last_pane
        index = (PANES.index(current) + step) % len(PANES)
        target = PANES[index]
        if target == "search-pane":
            self.query_one("#query", Input).focus()
        elif target == "sessions-pane":
            self.sessions_pane.show_list()
        else:
            self.reader.focus()

    def action_open(self) -> None:
        pane = self.pane_of(self.focused) or self.last_pane
        if pane == "reader-pane":
            self.reader.action_toggle_folds()
            return
        if pane == "sessions-pane":
            ref = self.sessions_pane.session_list.selection_ref()
            if ref:
                self.open_ref(ref, query=self.search_pane.shown_query, focus_reader=True)
            return
        self.search_pane.choose()

    def selected_ref(self) -> str | None:
        """What ``c``/``C`` act on: the thing selected in the pane you are in."""
        return selection.selected_ref(self)

    def action_copy_ref(self) -> None:
        ref = self.selected_ref()
        if ref is None:
            self.notify("Nothing selected to copy.", severity="warning")
            return
        self.app.copy_reference(ref)

    def action_copy_content(self) -> None:
        """``C``: the text of the session (the reader's view, a marked range, a chain), never one turn."""
        pane = self.pane_of(self.focused) or self.last_pane
        if pane == "reader-pane" and self.reader.is_open:
            ref = self.reader.view_ref()
        else:
            ref = self.selected_ref()
            if ref is not None and ":" in ref.rpartition("#")[2]:
                ref = ref.rpartition(":")[0]  # a hit's turn: its session
        if ref is None:
            self.notify("Nothing selected to copy.", severity="warning")
            return
        self.app.copy_content(ref)

    def action_follow(self) -> None:
        reader = self.reader
        if reader.is_open and reader.follow:
            reader.follow = False
            self.reader_pane.update_status()
            self.notify("Stopped following.")
            return
        if reader.is_open and self.pane_of(self.focused) in ("reader-pane", None, "search-pane"):
            session = reader.sessions[-1] if reader.sessions else None
            ref = reader.ref
        else:
            session = self.sessions_pane.selected_session
            ref = session_ref(session) if session is not None else None
        if ref is None:
            live = [s for s in self.sessions_pane.sessions if s.is_live]
            if not live:
                self.notify("No session selected and none live right now.", severity="warning")
                return
            session = live[0]
            ref = session_ref(session)
        self.open_ref(ref, query=reader.query_text if reader.ref == ref else "", follow=True, focus_reader=True)
        note = "" if session is None or session.is_live else " (not live now: new turns appear when it is written to)"
        self.notify(f"Following {ref}{note}. Press f to stop.")

    async def action_hit(self, step: int) -> None:
        if not self.reader.is_open:
            self.notify("Open a hit first (enter).", severity="warning")
            return
        if not await self.reader.next_hit(step):
            self.notify("No search hits in this conversation.", severity="warning")
        self.reader_pane.update_status()

    def action_find(self) -> None:
        """ctrl+f (or / in the reader): find a word in the open conversation."""
        if not self.reader.is_open:
            self.notify("Open a hit or a session first (enter).", severity="warning")
            return
        self.reader_pane.open_find()

    def action_maximise_reader(self) -> None:
        """z: the reader takes the whole width (the left column hides); again to restore."""
        left = self.query_one("#left")
        left.display = not left.display
        if not left.display:
            self.reader.focus()
        self.call_after_refresh(self.reader.show_current_match)  # the new width rewraps the text

    def action_filter(self, kind: str) -> None:
        if kind == "date":
            labels = [label for label, _ in DATE_CHOICES] + [CUSTOM]
            self.app.push_screen(PickScreen("Filter by date", labels, "date"), self._apply_date)
            return
        self.app.submit(tasks.choices, kind, reply_to=self, group="choices", exclusive=True, name=f"{kind} choices")

    @on(ChoicesLoaded)
    def _choices_loaded(self, message: ChoicesLoaded) -> None:
        titles = {"project": "Filter by project", "agent": "Filter by agent", "tag": "Filter by tag"}
        values = sort_values(message.values)
        self.app.push_screen(PickScreen(titles[message.kind], values, message.kind), self._apply_filter(message.kind))

    def _apply_date(self, value: str | None) -> None:
        if value == CUSTOM:
            self.app.push_screen(RangeScreen(self.app.now().timestamp()), self._apply_filter("range"))
        elif value is not None:
            self.app.set_filter("date", value or None)

    def _apply_filter(self, kind: str):
        def apply(value: str | None) -> None:
            if value is not None:  # (None: cancelled)
                self.app.set_filter(kind, value or None)

        return apply

    def action_clear_filters(self) -> None:
        self.app.clear_filters()

    def selected_session(self) -> tuple[str, str] | None:
        """``(session_id, label)`` of what ``t`` tags (see :mod:`.selection`)."""
        return selection.selected_session(self)

    def action_tag(self) -> None:
        selected = self.selected_session()
        if selected is None:
            self.notify("Select a session to tag.", severity="warning")
            return
        self.app.tag_session(*selected)

    # --- after finding it: resume, export, usage ---------------------------------

    def action_resume(self) -> None:
        ref = self.selected_ref()
        if ref is None:
            self.notify("Select a session or hit to resume.", severity="warning")
            return
        self.app.submit(tasks.resume_command, ref, self.app, reply_to=self, group="clipboard", name=f"resume {ref}")

    @on(ResumeReady)
    def _resume_ready(self, message: ResumeReady) -> None:
        if message.command is None:
            self.notify(message.note or "This session cannot be resumed.", title="Resume", severity="warning")
            return
        # The same short, honest notice as every copy (tui/clipboard.py), the command shown whole.
        path = Path(message.path) if message.path else None
        self.app.last_copy = last_copy_text("The resume command", message.command, message.how, path)
        note = f" ({message.note})" if message.note else ""
        width = toast_text_width(self.app.size.width)
        self.notify(f"{message.command}{note}\n{clipboard_notice('The command', message.how, path, width)}", markup=False)

    def action_export(self) -> None:
        ref = self.selected_ref()
        if ref is None:
            self.notify("Select a session, range or turn to export.", severity="warning")
            return

        def done(result: tuple[str, str] | None) -> None:
            if result:  # where it wrote, whole; that directory is offered next time
                description, self.export_directory = result
                self.notify(f"{description[0].upper()}{description[1:]}.", title="Export", timeout=12)

        self.app.push_screen(ExportScreen(ref, EXPORT_FORMATS, self.export_directory or os.getcwd()), done)

    def action_usage(self) -> None:
        self.app.push_screen(UsageScreen())

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # n / N: only with a query's (or a find's) matches to step through
        return bool(self.reader.navigable) if action == "hit" else True
