"""The reader's pane: a status line that keeps its facts, the reader, and a find bar.

The status line leads with what must stay visible at 80 columns: which session
(slug or short id), where you are among the matches (``3/17``) and how many turns;
anything after those may be cut. The find bar (``/`` or ctrl+f in the reader) takes
a word, highlights it with the query's highlight and steps through it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Input, Static

from core.words import plural

from .. import tasks
from ..messages import ConversationLoaded, MatchesCounted
from .reader import Reader

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost

_UUID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def short_ref(ref: str) -> str:
    """A reference with any full session id cut to its first 8 characters (still a valid prefix)."""
    return _UUID.sub(r"\1", ref)


def status_line(ref: str, position: str, turns: str, extras: list[str], width: int) -> Content:
    """``slug#2 · 3/17 (n/N) · 40 turns · …``: the position and the turn count always fit
    (the ``(n/N)`` hint goes first, then the ref is cut in its middle); extras may be cut."""
    sep = " · "
    hint = f"{position} (n/N)" if position else ""
    fixed = [p for p in (hint, turns) if p]
    if len(ref) + sum(len(sep) + len(p) for p in fixed) > width and position:
        hint = position
        fixed = [hint, turns]
    room = width - sum(len(sep) + len(p) for p in fixed)
    if len(ref) > room:
        keep = max(room - 1, 4)
        tail = ref[ref.rfind("#"):] if "#" in ref else ""
        head = ref[: max(keep - len(tail), 1)]
        ref = f"{head}…{tail}" if len(head) + 1 + len(tail) < len(ref) else ref
    parts: list[tuple[str, str]] = [(ref, "bold $text-accent")]
    if hint:
        parts.append((hint, "$text-warning"))
    parts.append((turns, "$text-muted"))
    parts += [(e, "bold $text-success" if e.startswith("●") else "$text-muted") for e in extras if e]
    pieces: list[tuple[str, str]] = []
    for n, part in enumerate(parts):
        if n:
            pieces.append((sep, "$text-muted"))
        pieces.append(part)
    return Content.assemble(*pieces)


class FindBar(Horizontal):
    """``find: word  3/17`` under the reader; enter goes to the next, esc closes."""

    DEFAULT_CSS = """
    FindBar { height: 1; display: none; padding: 0 1; }
    FindBar.-open { display: block; }
    FindBar > .find-label { width: auto; color: $text-warning; }
    FindBar > Input { width: 1fr; height: 1; border: none; padding: 0 1; background: $boost; }
    FindBar > Input:focus { border: none; }
    FindBar > .find-count { width: auto; color: $text-muted; padding: 0 0 0 1; }
    """
    BINDINGS = [Binding("escape", "close", "Close find", show=False)]

    def compose(self) -> ComposeResult:
        yield Static("find:", classes="find-label")
        yield Input(placeholder="a word in this session", id="find-input")
        yield Static("", classes="find-count")

    @property
    def input(self) -> Input:
        return self.query_one("#find-input", Input)

    def action_close(self) -> None:
        pane = self.parent
        if isinstance(pane, ReaderPane):
            pane.close_find()


class ReaderPane(Vertical):
    """Status line (what is open, match position, turns, follow state) above the :class:`Reader`."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    _turns: tuple[object, int] = (None, 0)

    def compose(self) -> ComposeResult:
        yield Static("Reader", id="reader-status", classes="pane-status")
        yield Reader(id="reader")
        yield FindBar(id="find-bar")

    @property
    def reader(self) -> Reader:
        return self.query_one(Reader)

    def on_mount(self) -> None:
        self.update_status()

    def update_status(self) -> None:
        reader = self.reader
        status = self.query_one("#reader-status", Static)
        status.display = reader.is_open
        if not reader.is_open:
            return
        if self._turns[0] is not reader.blocks:  # counted once per conversation (n / N update this line)
            self._turns = (reader.blocks, len({(b.session_id, b.turn) for b in reader.blocks if b.kind == "turn"}))
        turns = self._turns[1]
        position = reader.hit_position()
        if position and reader.marks.find:
            position = f"“{reader.marks.find}” {position}"
        extras = [f"{len(reader.sessions)} sessions" if len(reader.sessions) > 1 else ""]
        if reader.follow:
            extras.append("● following (f to stop)")
        width = status.size.width or max(self.size.width - 4, 20)
        # one fixed-height line: a new text never resizes it, so no layout of the
        # whole screen (it ran on every n / N)
        status.update(status_line(short_ref(reader.view_ref() or ""), position, plural(turns, "turn"), extras, width),
                      layout=False)
        count = self.query_one(FindBar).query_one(".find-count", Static)
        text = reader.hit_position() if reader.marks.find else ""
        if str(count.content) != text:  # (its width is auto: a change lays out, so only on a change)
            count.update(text)

    # --- find ----------------------------------------------------------------

    def open_find(self) -> None:
        bar = self.query_one(FindBar)
        bar.add_class("-open")
        box = bar.input
        box.focus()
        box.select_all()

    def close_find(self) -> None:
        self.query_one(FindBar).remove_class("-open")
        self.reader.set_find("")
        self.reader.focus()

    @on(Input.Changed, "#find-input")
    def _find_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.reader.set_find(event.value)

    @on(Input.Submitted, "#find-input")
    async def _find_submitted(self, event: Input.Submitted) -> None:
        """Enter: the next occurrence; focus goes to the reader, where n / N go on."""
        event.stop()
        reader = self.reader
        reader.focus()
        if not await reader.next_hit(1) and reader.marks.find:
            self.notify(f"“{reader.marks.find}” is not in this conversation.", severity="warning")
        self.update_status()

    @on(ConversationLoaded)
    async def _loaded(self, message: ConversationLoaded) -> None:
        message.stop()
        self.query_one(FindBar).remove_class("-open")
        await self.reader.show(message)
        self.update_status()
        self.screen.refresh_bindings()
        if not message.matches_complete:
            self.app.submit(tasks.count_matches, self.reader.ref, message.blocks, message.marks, reply_to=self,
                            group="reader-matches", exclusive=True, name="count matches")

    @on(MatchesCounted)
    def _counted(self, message: MatchesCounted) -> None:
        message.stop()
        if self.reader.counted(message.ref, message.marks, message.matches):
            self.update_status()
            self.screen.refresh_bindings()
