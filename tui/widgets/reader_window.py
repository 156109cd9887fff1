"""The reader's window moving with the reading: a page mounted ahead, the far end let go of.

A mixin of :class:`tui.widgets.reader.Reader` (kept apart so the reader stays a
module of opening and painting). As the view nears either end of the mounted window
the next page is mounted there, after the paint; once the window holds more than
:data:`~tui.widgets.window.MOUNTED_MAX` blocks, the blocks at the other end that
are well out of view are removed. So reading through a session of any length keeps
a bounded number of widgets (their memory, and what each garbage collection walks),
and scrolling back mounts them again like any page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.widget import Widget

from .turn_view import MoreSteps, TurnView
from .window import PAGE, step_limits, surplus

# (for the type checker the mixin is the reader's VerticalScroll; at run time the reader
# supplies it, so the mixin adds no base of its own)
if TYPE_CHECKING:
    from textual import getters

    from ..host import RelayHost

    _ReaderBase = VerticalScroll
else:
    _ReaderBase = object


class WindowMoves(_ReaderBase):
    """Growing and trimming the mounted window (mixed into the reader, a ``VerticalScroll``)."""

    blocks: list[Any]
    lo: int
    hi: int
    _busy: bool
    _extend_queued: bool
    if TYPE_CHECKING:  # the reader's own
        app = getters.app(RelayHost)

        def _make(self, index: int, limit: int | None = None) -> Widget: ...
        def _widget(self, index: int) -> Widget | None: ...
        def _edges(self) -> None: ...

    async def extend(self, direction: int) -> None:
        """Mount one more page above (``-1``) or below (``1``) the window."""
        if self._busy or not self.blocks:
            return
        self._busy = True
        try:
            await self._extend(direction)
            await self._let_go(above=direction > 0)
        except NoMatches:
            pass  # the reader was cleared or reopened meanwhile: nothing to extend
        finally:
            self._busy = False
        self.call_after_refresh(self._check_edges)  # short turns: a page may not reach two screens ahead
        self._collect_after_paint()  # (what _let_go removed)

    async def _extend(self, direction: int) -> None:
        if direction > 0 and self.hi < len(self.blocks):
            new_hi = min(len(self.blocks), self.hi + PAGE)
            limits = step_limits(self.blocks, self.hi, new_hi, None)
            widgets = [self._make(i, limits[i]) for i in range(self.hi, new_hi)]
            await self.mount_all(widgets, before=self.query_one("#edge-bottom"))
            self.hi = new_hi
        elif direction < 0 and self.lo > 0:
            anchor = self._widget(self.lo)
            anchor_y = anchor.virtual_region.y if anchor is not None else 0
            new_lo = max(0, self.lo - PAGE)
            limits = step_limits(self.blocks, new_lo, self.lo, None)
            widgets = [self._make(i, limits[i]) for i in range(new_lo, self.lo)]
            await self.mount_all(widgets, after=self.query_one("#edge-top"))
            self.lo = new_lo
            if anchor is not None:
                self.call_after_refresh(self._keep_anchor, anchor, anchor_y)
        self._edges()

    async def _let_go(self, *, above: bool) -> None:
        """Remove the blocks past :data:`MOUNTED_MAX` at the far end (``above`` the view,
        or below it) that lie more than a screen out of view; the view does not move."""
        far = self._far_blocks(above=above)
        if not far:
            return
        if not above:
            self._discarding(far)
            await self.remove_children(far)
            self.hi -= len(far)
            self._edges()
            return
        anchor = self._widget(self.lo + len(far))
        if anchor is None:
            return
        # What is on screen moves up by the height let go of: scrolled back by as much
        # in the same update, so no frame shows the jump (and checked once laid out).
        old_y = anchor.virtual_region.y
        shift = old_y - far[0].virtual_region.y
        self._discarding(far)
        with self.app.batch_update():
            self.scroll_to(y=self.scroll_y - shift, animate=False, immediate=True)
            await self.remove_children(far)
            self.lo += len(far)
            self._edges()
        self.call_after_refresh(self._keep_anchor, anchor, old_y - shift)

    def _discarding(self, widgets: Iterable[Widget]) -> None:
        """``widgets`` are about to be removed: the app counts them toward a collection."""
        self.app.heap.discarded(sum(1 + len(widget.walk_children()) for widget in widgets))

    def _collect_after_paint(self) -> None:
        """Once the next paint is sent, collect what was let go of if enough was (tui/heap.py)."""
        self.call_after_refresh(self.call_later, self.app.heap.collect_due)

    def _far_blocks(self, *, above: bool) -> list[Widget]:
        """The window's surplus blocks at one end, as far as they lie more than a screen
        from the view (a long page of short turns may not reach that far)."""
        extra = surplus(self.lo, self.hi)
        top, height = self.scroll_y, self.size.height
        indices = range(self.lo, self.lo + extra) if above else range(self.hi - 1, self.hi - 1 - extra, -1)
        far: list[Widget] = []
        for index in indices:
            widget = self._widget(index)
            if widget is None:
                break
            region = widget.virtual_region
            if not (region.bottom < top - height if above else region.y > top + 2 * height):
                break
            far.append(widget)
        return far

    def _keep_anchor(self, anchor: Widget, old_y: int) -> None:
        shift = anchor.virtual_region.y - old_y
        if shift:
            self.scroll_to(y=self.scroll_y + shift, animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._check_edges()
        self._check_more(up=new_value < old_value)

    def _check_more(self, *, up: bool = False) -> None:
        """A turn's "more steps" line came into view: mount its next steps."""
        if self._busy:
            return
        top, bottom = self.scroll_y, self.scroll_y + self.size.height
        for more in self.query(MoreSteps):
            turn = more.parent
            if not isinstance(turn, TurnView):
                continue
            # (a line's virtual region is relative to its turn; the turn's, to the reader)
            y = turn.virtual_region.y + more.virtual_region.y
            if y < bottom + self.size.height and y + 1 > top:
                self.call_after_refresh(self._more, more, up)  # after what is on screen painted
                return

    async def _more(self, more: MoreSteps, up: bool) -> None:
        turn = more.parent
        if self._busy or not isinstance(turn, TurnView) or not more.is_attached:
            return
        self._busy = True
        try:
            old_y = more.virtual_region.y
            await turn.show_more()
            if up and more.is_attached:  # keep what is on screen still: the new steps went above it
                self.call_after_refresh(self._keep_anchor, more, old_y)
        finally:
            self._busy = False
        self.call_after_refresh(self._check_more)

    def _edge_due(self) -> int:
        """Which way the window should grow now (0: neither).

        Down as soon as the view is within two screens of the mounted end: a page
        (PageDown, j held) then finds the next turns already mounted.
        """
        if not self.blocks:
            return 0
        if self.hi < len(self.blocks) and self.scroll_y >= self.max_scroll_y - 2 * self.size.height:
            return 1
        if self.lo > 0 and self.scroll_y <= 1 and self.max_scroll_y > 0:
            return -1
        return 0

    def _check_edges(self) -> None:
        if self._busy or self._extend_queued or not self._edge_due():
            return
        # After the screen refreshed: mounting a page (~100-200 ms of compose and
        # markdown) must not hold back the paint of the key that scrolled here, nor
        # the other after-refresh callbacks (hence call_later from there).
        self._extend_queued = True
        self.call_after_refresh(self.call_later, self._extend_due)

    async def _extend_due(self) -> None:
        self._extend_queued = False
        direction = self._edge_due()  # (again: the view may have moved, or another conversation opened)
        if direction:
            await self.extend(direction)
