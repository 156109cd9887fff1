"""The reader's matches: open at the match, ``n``/``N`` through them, find in the session.

A mixin of :class:`tui.widgets.reader.Reader` (kept apart so the reader stays a
module of painting and windowing). The matches themselves are :mod:`tui.marks`'
arithmetic; here they are revealed: the step holding one is mounted and unfolded,
and once laid out the row its occurrence painted on is scrolled a third down the
view, at any terminal size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.actions import SkipAction
from textual.containers import VerticalScroll
from textual.widget import Widget

from core.words import plural

from ..marks import Marks, Match, find_matches, next_match
from .marked import MarkedStatic, match_places
from .turn_view import TurnView

# (for the type checker the mixin is the reader's VerticalScroll; at run time the reader
# supplies it, so the mixin adds no base of its own)
if TYPE_CHECKING:
    _ReaderBase = VerticalScroll
else:
    _ReaderBase = object


class MatchNavigation(_ReaderBase):
    """Reader state and moves for matches (mixed into the reader, a ``VerticalScroll``)."""

    marks: Marks
    matches: list[Match]
    match_index: int | None
    _query_matches: list[Match]
    hits: list[int]
    current: int | None
    blocks: list[Any]
    ref: str | None
    matches_complete: bool = True
    # the current match as painted: (marked widget, its line, the match's index in the line), styled apart
    current_place: tuple[MarkedStatic, int, int] | None = None
    if TYPE_CHECKING:  # the reader's own, which the moves use

        @property
        def is_open(self) -> bool: ...

        def _widget(self, index: int) -> Widget | None: ...
        def _mark_current(self, widget: Widget, on: bool) -> None: ...
        async def go_to(self, index: int, reveal: Match | None = None) -> None: ...

    async def _reveal(self, match: Match) -> None:
        """Mount (and unfold) the step holding ``match``; once laid out, scroll its line into view."""
        widget = self._widget(match.block)
        if widget is None:
            return
        target, occurrence, settled = None, match.occurrence, True
        if isinstance(widget, TurnView):
            target, occurrence, settled = await widget.reveal(match.item, self.marks, match.occurrence)
        target = target or widget
        if settled and target.region.height:  # laid out as it will paint: scrolled in the key's own frame
            self._scroll_to_match(target, occurrence)
        else:  # rows known once the new steps are laid out (an n's second frame)
            self.call_after_refresh(self._scroll_to_match, target, occurrence)

    def _scroll_to_match(self, target: Widget, occurrence: int, check: bool = True) -> None:
        """Scroll so the row of ``target``'s ``occurrence``-th match sits a third down the view."""
        if not target.is_attached:
            return
        origin = self.content_region.y - self.scroll_offset.y
        places = match_places(target, self.marks, origin)
        if places:
            place = places[min(occurrence, len(places) - 1)]
            self._set_current_place(place[1:])
            y = place[0] - self.size.height // 3
        else:  # not painted as text (cut from a long output): the step's top
            self._set_current_place(None)
            y = target.region.y - origin - 1
        if round(self.scroll_y) != max(0, min(y, round(self.max_scroll_y))):
            self.scroll_to(y=max(0, y), animate=False, immediate=True)
        if check:  # a turn just composed may lay out once more (markdown heights): look again after it
            self.call_after_refresh(self._scroll_to_match, target, occurrence, False)
        self._status()

    def _set_current_place(self, place: tuple[MarkedStatic, int, int] | None) -> None:
        """Paint the current match apart (and the one before as the others again)."""
        old, self.current_place = self.current_place, place
        for part in {old[0] if old else None, place[0] if place else None} - {None}:
            if part is not None and part.is_attached:
                part.refresh()

    def _status(self) -> None:
        update = getattr(self.parent, "update_status", None)
        if update is not None:
            update()

    @property
    def navigable(self) -> bool:
        """Whether ``n``/``N`` have somewhere to go (a query's or a find's matches, or hit turns)."""
        return bool(self.matches or self.hits)

    def counted(self, ref: str | None, marks: Marks, matches: list[Match]) -> bool:
        """Every match of the query arrived (after the first paint): the count, and n/N beyond this turn."""
        if ref != self.ref or marks.terms != self.marks.terms:
            return False  # another conversation (or query) opened meanwhile
        current = self.matches[self.match_index] if self.match_index is not None and self.matches else None
        self._query_matches = matches
        self.matches_complete = True
        if not self.marks.find:
            self.matches = matches
            self.match_index = matches.index(current) if current is not None and current in matches else None
        return True

    async def show_current_match(self) -> None:
        """Scroll the current match back into view (after the width changed its wrapping)."""
        if self.match_index is not None and self.match_index < len(self.matches):
            await self._reveal(self.matches[self.match_index])

    def leave_place(self) -> None:
        """Home and End leave the current turn and match, so ``n`` then finds from the top
        and ``N`` from the bottom (as ``less`` after ``g``/``G``), not from the match before."""
        old = self._widget(self.current) if self.current is not None else None
        if old is not None:
            self._mark_current(old, False)
        self.current = self.match_index = None
        self._set_current_place(None)
        self._status()

    async def go_to_match(self, index: int) -> None:
        self.match_index = index
        match = self.matches[index]
        await self.go_to(match.block, reveal=match)

    async def next_hit(self, step: int) -> bool:
        """Go to the next (``1``) or previous (``-1``) match (else hit turn); False when there is none."""
        if self.matches:
            here = (self.current, -2) if self.current is not None else None
            target = next_match(self.matches, self.match_index, here, step)
            if target is not None:
                await self.go_to_match(target)
                return True
        if not self.hits:
            return False
        if self.current is None:
            target = self.hits[0] if step > 0 else self.hits[-1]
        else:
            later = [i for i in self.hits if (i > self.current if step > 0 else i < self.current)]
            target = (later[0] if step > 0 else later[-1]) if later else (self.hits[0] if step > 0 else self.hits[-1])
        await self.go_to(target)
        return True

    def hit_position(self) -> str:
        if self.matches:
            if not self.matches_complete and not self.marks.find:  # counting the rest (a moment)
                return f"{(self.match_index or 0) + 1}/…"
            if self.match_index is None:
                return f"{len(self.matches):,} match{'' if len(self.matches) == 1 else 'es'}"
            return f"{self.match_index + 1}/{len(self.matches)}"
        if not self.hits:
            return ""
        if self.current in self.hits:
            return f"hit {self.hits.index(self.current) + 1}/{len(self.hits)}"
        return plural(len(self.hits), "hit")

    # --- find in the session -------------------------------------------------

    def action_find(self) -> None:
        open_find = getattr(self.parent, "open_find", None)
        if not self.is_open or open_find is None:
            raise SkipAction()  # nothing to find in: / means search, as in the other panes
        open_find()

    def action_close_find(self) -> None:
        if not self.marks.find:
            raise SkipAction()  # not finding: esc means what it means on the screen
        close = getattr(self.parent, "close_find", None)
        if close is not None:
            close()  # the find bar goes too
        else:
            self.set_find("")

    def set_find(self, text: str) -> None:
        """Highlight and step through ``text`` ("": back to the query's matches)."""
        self.marks.set_find(text)
        self.matches = find_matches(self.blocks, self.marks) if self.marks.find else self._query_matches
        self.match_index = None
        self.current_place = None
        for widget in self.query(MarkedStatic):
            widget.refresh()
        self._status()
