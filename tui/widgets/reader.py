"""Reader: a conversation painted turn by turn, lazily.

Blocks are built off-thread (:mod:`tui.blocks`); the reader mounts only a window
of them (a page around the turn you opened) and grows the window as you scroll
toward either end, letting go of the far end (:mod:`.reader_window`). A 2,000-turn
session therefore paints as fast as a short one, and holds as little.
Inside a turn the same holds for its steps: each turn mounts :data:`ITEM_PAGE`
steps and the rest as its "more steps" line scrolls into view, so a real session
with hundreds of tool calls in one turn paints as fast too. Which blocks and steps
to mount is :mod:`tui.widgets.window`'s arithmetic; this module mounts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.events import Click
from textual.widget import Widget
from textual.widgets import Static

from ..blocks import Block
from ..formatting import compress_numbers
from ..marks import Marks, Match, find_matches
from ..messages import ConversationLoaded
from .marked import highlight_style
from .reader_matches import MatchNavigation
from .reader_window import WindowMoves
from .turn_view import Fold, SessionHeader, TurnView, block_widget
from .window import BEFORE, PAGE, jump_page, opening, step_limits, unchanged, updated_end

if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost


class Edge(Static):
    """``▲ 120 more above`` / ``▼ 40 more below``; click (or scroll) to load."""

    async def on_click(self, event: Click) -> None:
        event.stop()
        reader = self.parent
        if isinstance(reader, Reader):
            await reader.extend(-1 if self.id == "edge-top" else 1)


class Reader(MatchNavigation, WindowMoves, VerticalScroll, can_focus=True):
    """The scrolling conversation. State: blocks, mounted window, current turn, hits."""

    if TYPE_CHECKING:  # (what this pane asks of the app: tui/host.py)
        app = getters.app(RelayHost)

    BINDINGS = [
        Binding("right_square_bracket", "turn(1)", "Next turn", show=False),
        Binding("left_square_bracket", "turn(-1)", "Prev turn", show=False),
        Binding("e", "toggle_folds", "Expand", show=False),
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
        Binding("home", "top", "Top", show=False),
        Binding("end", "bottom", "Bottom", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("slash", "find", "Find", show=False),  # (ctrl+f: the screen's, from any pane)
        Binding("escape", "close_find", "Close find", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks: list[Block] = []
        self.sessions: list[Any] = []
        self.ref: str | None = None
        self.query_text = ""
        self.hits: list[int] = []
        self.current: int | None = None
        self.lo = 0
        self.hi = 0
        self.follow = False
        self._busy = False
        self._extend_queued = False
        self.marks = Marks()  # what MarkedStatic lines highlight (see tui.marks)
        self.highlight = Style(reverse=True, bold=True)  # the theme's, once mounted
        self.matches: list[Match] = []  # what n / N step through: the query's, or the found word's
        self.match_index: int | None = None
        self._query_matches: list[Match] = []  # kept while a find replaces them

    def on_mount(self) -> None:
        self.highlight = highlight_style(self.app)

    def compose(self) -> ComposeResult:
        yield Static("Open a hit or a session to read it here.", classes="reader-empty")

    # --- what is shown -------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self.ref is not None

    def view_ref(self) -> str | None:
        """The reference of everything shown (a chain, a range or one session)."""
        if not self.sessions:
            return self.ref
        if len(self.sessions) == 1:
            s = self.sessions[0]
            return s.ref or (f"{s.slug}#{s.session_number}" if s.slug and s.session_number else s.session_id)
        slug = self.sessions[0].slug
        numbers = [s.session_number for s in self.sessions]
        if slug and all(numbers):
            if len(numbers) == (self.sessions[0].chain_length or 0):
                return slug
            return f"{slug}#{compress_numbers(numbers)}"
        return self.ref

    def current_ref(self) -> str | None:
        """The current turn's reference (``slug#4:12``), else :meth:`view_ref`."""
        block = self.current_block
        if block is None or block.turn is None:
            return self.view_ref()
        s = block.session
        base = s.ref or (f"{s.slug}#{s.session_number}" if s.slug and s.session_number else s.session_id)
        return f"{base.split(':')[0]}:{block.turn}"

    @property
    def current_block(self) -> Block | None:
        if self.current is None or not (0 <= self.current < len(self.blocks)):
            return None
        return self.blocks[self.current]

    @property
    def current_session(self) -> Any | None:
        block = self.current_block
        if block is not None:
            return block.session
        return self.sessions[-1] if self.sessions else None

    # --- painting ------------------------------------------------------------

    def _make(self, index: int, limit: int | None = None) -> Widget:
        widget = block_widget(self.blocks[index], self.app.now(), limit)
        widget.id = f"block-{index}"
        # (update=False: not mounted yet, mounting styles it; updating here restyled it twice)
        widget.set_class(index in self.hits, "-hit", update=False)
        widget.set_class(index == self.current, "-current", update=False)
        return widget

    def _edges(self) -> None:
        top = self.query("#edge-top")
        bottom = self.query("#edge-bottom")
        above, below = self.lo, len(self.blocks) - self.hi
        if top:
            top.first(Edge).update(Content.styled(f"▲ {above} more above (scroll up or click)", "$text-muted"))
            top.first().display = above > 0
        if bottom:
            bottom.first(Edge).update(Content.styled(f"▼ {below} more below (scroll down or click)", "$text-muted"))
            bottom.first().display = below > 0

    async def show(self, loaded: ConversationLoaded) -> None:
        """Paint a freshly loaded conversation (or update the open one in place)."""
        if loaded.refresh and self.ref == loaded.ref and self.blocks:
            await self._update(loaded)  # (no use: a session written every second would hold off idle collections)
            self._collect_after_paint()
            return
        self.app.heap.touch()  # (an open is use: an idle collection here would hold back its paint)
        self.ref = loaded.ref
        self.sessions = loaded.sessions
        self.blocks = loaded.blocks
        self.hits = loaded.hit_blocks
        self.query_text = loaded.query
        self.follow = loaded.follow
        self.current = loaded.target
        self.marks = loaded.marks or Marks()
        self.matches = self._query_matches = loaded.matches
        self.matches_complete = loaded.matches_complete
        self.match_index = loaded.target_match
        if self.match_index is not None and not self.follow:
            match = self.matches[self.match_index]
            self.current = match.block
            await self._window(match.block, reveal=match)
        else:
            center = self.current if self.current is not None else 0
            await self._window(center, at_end=self.follow)
        target = self._widget(self.current) if self.current is not None else None
        if loaded.unfold_subagents and isinstance(target, TurnView):
            for fold in target.query(".subagent").results(Fold):
                fold.expanded = True

    async def _window(self, center: int, *, at_end: bool = False, reveal: Match | None = None, page: int = PAGE) -> None:
        lo, hi = opening(len(self.blocks), center, at_end=at_end, page=page)
        self.lo, self.hi = lo, hi
        # Made before the first await: the reader may be cleared or given another
        # conversation while the old children go (a fast second open).
        # following: the newest steps must show, so the window is mounted whole
        limits = {} if at_end else step_limits(self.blocks, lo, hi, center)
        widgets = [self._make(i, limits.get(i)) for i in range(lo, hi)]
        if at_end:  # placed at the bottom as it is laid out, so the first frame shows the end
            self.anchor()  # (scroll_end after the mount painted a frame at the old offset first)
        with self.app.batch_update():
            self._discarding(self.children)
            await self.remove_children()
            await self.mount(Edge(id="edge-top", classes="edge"), *widgets, Edge(id="edge-bottom", classes="edge"))
            self._edges()
        if at_end:
            self.call_after_refresh(self.anchor, False)  # (after the batch: callbacks run inside one)
            self.call_after_refresh(self.scroll_end, animate=False)
        elif reveal is not None:
            await self._reveal(reveal)
        elif self.current is not None:
            self.call_after_refresh(self._scroll_to_block, self.current)
        else:
            self.call_after_refresh(self.scroll_home, animate=False)
        self.call_after_refresh(self._check_edges)
        self.call_after_refresh(self._check_more)  # a "more steps" line already in view (no scroll to come)
        self._collect_after_paint()

    def _scroll_to_block(self, index: int) -> None:
        widget = self._widget(index)
        if widget is not None:
            self.scroll_to_widget(widget, animate=False, top=True)

    def _widget(self, index: int) -> Widget | None:
        # (by the children's id index: a CSS query walked and matched the whole
        # mounted window, ~4 ms a call, three calls an n)
        try:
            return self.get_child_by_id(f"block-{index}")
        except NoMatches:
            return None

    def _mark_current(self, widget: Widget, on: bool) -> None:
        """Add or remove ``-current`` restyling the turn alone, not its subtree.

        ``add_class`` re-applies the stylesheet to every descendant (~10 ms a turn,
        twice an n). No rule selects below ``.-current``, so the descendants only
        drop their cached visual style (it holds the turn's background) and repaint.
        """
        if widget.has_class("-current") == on:
            return
        widget.set_class(on, "-current", update=False)
        self.app.stylesheet.update_nodes([widget], animate=False)
        for child in widget.walk_children():
            child.notify_style_update()
            child.refresh()

    async def _update(self, loaded: ConversationLoaded) -> None:
        """Live update: keep what is unchanged, replace the changed tail."""
        old = self.blocks
        new = loaded.blocks
        d = unchanged(old, new)
        at_end = self.hi >= len(old)
        self.sessions = loaded.sessions
        self.hits = loaded.hit_blocks
        if self.marks.find:  # a find goes on over the grown conversation
            self.matches = find_matches(new, self.marks)
            self.match_index = None
        elif loaded.marks is not None:  # the query's: kept until MatchesCounted brings the new ones
            self.marks = loaded.marks
        if d < self.lo:
            self.blocks = new
            await self._window(len(new) - 1 if self.follow else self.lo + BEFORE, at_end=self.follow)
            return
        for index in range(self.lo, min(self.hi, d)):
            widget = self._widget(index)
            if isinstance(widget, SessionHeader):
                widget.set_block(new[index])
        for index in range(d, self.hi):
            widget = self._widget(index)
            if widget is not None:
                self._discarding([widget])
                await widget.remove()
        self.blocks = new
        keep = min(self.hi, d)
        new_hi = updated_end(self.hi, keep, len(new), grow=at_end or self.follow)
        if self.follow and len(new) - new_hi > 0:
            await self._window(len(new) - 1, at_end=True)
            return
        bottom = self.query_one("#edge-bottom")
        widgets = [self._make(i) for i in range(keep, new_hi)]
        if widgets:
            await self.mount_all(widgets, before=bottom)
        self.hi = new_hi
        self._edges()
        await self._let_go(above=True)  # (following a session as it grows for hours)
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False)

    # --- moving around -------------------------------------------------------

    async def go_to(self, index: int, reveal: Match | None = None) -> None:
        """Make block ``index`` current, mounting around it if needed (and show ``reveal``)."""
        old = self._widget(self.current) if self.current is not None else None
        if old is not None:
            self._mark_current(old, False)
        self.current = index
        if not (self.lo <= index < self.hi):
            await self._window(index, reveal=reveal)
            self._status()
            return
        widget = self._widget(index)
        if widget is not None:
            self._mark_current(widget, True)
            if reveal is not None:
                await self._reveal(reveal)
            else:
                self.scroll_to_widget(widget, animate=False, top=True)
        self._status()

    async def action_turn(self, step: int) -> None:
        turns = [i for i, b in enumerate(self.blocks) if b.kind == "turn"]
        if not turns:
            return
        if self.current is None:
            target = turns[0] if step > 0 else turns[-1]
        else:
            later = [i for i in turns if (i > self.current if step > 0 else i < self.current)]
            if not later:
                self.app.bell()
                return
            target = later[0] if step > 0 else later[-1]
        await self.go_to(target)

    def action_toggle_folds(self) -> None:
        block = self._widget(self.current) if self.current is not None else None
        targets = [block] if isinstance(block, TurnView) else list(self.query(TurnView))
        expand = not any(t.folds_expanded for t in targets)
        for turn in targets:
            turn.set_folds(expand)

    async def action_top(self) -> None:
        self.leave_place()
        if self.lo > 0:
            await self._window(0, page=jump_page(self.blocks, at_end=False, rows=self.size.height))
        self.scroll_home(animate=False, immediate=True)

    async def action_bottom(self) -> None:
        self.leave_place()
        if self.hi < len(self.blocks):
            page = jump_page(self.blocks, at_end=True, rows=self.size.height)
            await self._window(len(self.blocks) - 1, at_end=True, page=page)
        self.scroll_end(animate=False, immediate=True)

    def action_page(self, step: int) -> None:
        """PageDown / PageUp without the animation (the next page paints at once)."""
        self.scroll_to(y=self.scroll_y + step * self.scrollable_content_region.height, animate=False, immediate=True)

    def clear(self) -> None:
        self.blocks, self.sessions, self.hits = [], [], []
        self.matches, self._query_matches, self.match_index = [], [], None
        self.marks, self.current_place = Marks(), None
        self.ref, self.current, self.follow = None, None, False
        self._discarding(self.children)
        self.remove_children()
        self.mount(Static("Open a hit or a session to read it here.", classes="reader-empty"))
