"""The hit list: the ranked hits of the search pane, drawn for a keystroke's paint (issue 35.1).

A row that shows what a row of the previous keystroke showed is reused whole, at whatever
place it lands; a new row is drawn a line at a time (:mod:`tui.widgets.row_lines`). The
mouse finds its row by the line under it. ``up`` on the first row goes back to the search
box, and :class:`HitList.NearEnd` asks the pane for the next page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content, Span
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.reactive import Reactive
from textual.strip import Strip
from textual.style import Style
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from .hit_rows import Rows
from .row_lines import LineDrawer

NEAR_END = 3  # rows from the end of the list at which the next page is fetched
ROWS_DRAWN_KEPT = 256  # drawn hit rows remembered across keystrokes (a screen shows ~20)


class HitList(OptionList):
    """The ranked hits; ``up`` on the first one goes back to the input. Posts
    :class:`HitList.NearEnd` when the highlight or the scroll nears the last row."""

    class NearEnd(Message):
        pass

    # its height is the pane's, never its rows': a new count of lines needs a repaint and the
    # scrollbar's update (OptionList's _update_lines does both), not the whole screen laid out
    # again (25-37 ms of a keystroke whose hit count changed; the app keeps the scrollbar's column)
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    BINDINGS = [
        Binding("up", "cursor_up_or_input", "Up", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pass_lines: list[tuple[int, int]] | None = None  # see render_lines
        self._pass_shape: tuple[Spacing, int] | None = None  # a row's padding and width, in a pass
        self._rows_drawn: LRUCache[tuple[str, tuple[Span, ...], Style, Spacing, int], list[Strip]] = LRUCache(ROWS_DRAWN_KEPT)
        self._line_drawer = LineDrawer()  # (a row not drawn before may share a line with one that was)

    def render_lines(self, crop: Region) -> list[Strip]:
        # OptionList brings its lines up to date once a pass, then again for each line it draws
        # (~60 us a line: the content region, the gutter, the options' count); a pass changes no
        # option, so each line reads the lines of the pass
        self._update_lines()
        self._pass_lines = self._line_cache.lines
        self._pass_shape = self._row_shape()  # (and each row's padding and width, read once a pass too)
        try:
            return super().render_lines(crop)
        finally:
            self._pass_lines = self._pass_shape = None

    def _row_shape(self) -> tuple[Spacing, int]:
        """A row's padding and width (OptionList's, as it draws an option)."""
        padding = self.get_component_styles("option-list--option").padding
        return padding, self.scrollable_content_region.width - self._get_left_gutter_width()

    @property
    def _lines(self) -> Sequence[tuple[int, int]]:
        lines = self._pass_lines
        return super()._lines if lines is None else lines

    def _get_option_render(self, option: Option, style: Style) -> list[Strip]:
        """A row as OptionList draws it, remembered across lists by what it shows: the next
        keystroke's list keeps about half of the rows on screen, and drawing rows was most
        of a keystroke's paint. The same strips serve the row wherever it lands: the mouse finds
        its row by the line (:meth:`_option_at`), not by the option index OptionList marks each
        segment with (the compact rows carry none; a roomy row drawn by OptionList keeps the
        index it was first drawn at, never read)."""
        prompt = option.prompt
        drawn_rows = getattr(self, "_option_render_cache", None)  # (OptionList's own: drawn as it draws, were they renamed)
        if drawn_rows is None or not isinstance(prompt, Content) or getattr(option, "_divider", True):
            return super()._get_option_render(option, style)
        padding, width = self._pass_shape or self._row_shape()
        if (strips := drawn_rows.get((option, style, padding))) is not None:
            return strips  # the row's other lines, or a repaint: drawn for this list already
        key = (prompt.plain, tuple(prompt.spans), style, padding, width)
        strips = self._rows_drawn.get(key)
        if strips is None:
            strips = self._line_drawer.draw(self, prompt.lines, style, width, padding) if isinstance(prompt, Rows) else None
            if strips is None:  # (a roomy row, or one the line drawer does not draw the same: OptionList's drawing)
                strips = super()._get_option_render(option, style)
                if self.text_selection is not None:
                    return strips  # (drawn with the selection on it: not one to keep)
            self._rows_drawn[key] = strips
        drawn_rows[(option, style, padding)] = strips  # its other lines: OptionList's own cache
        return strips

    def _option_at(self, event: events.MouseEvent) -> int | None:
        """The option under the mouse, found by its line in the list."""
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        lines = self._lines
        line = self.scroll_offset.y + offset.y
        return lines[line][0] if 0 <= line < len(lines) else None

    async def _on_click(self, event: events.Click) -> None:
        event.prevent_default()  # (OptionList's own reads the place a segment carries: ours carry none)
        clicked = self._option_at(event)
        if clicked is not None and not self.get_option_at_index(clicked).disabled:
            self.highlighted = clicked
            self.action_select()

    def _on_mouse_move(self, event: events.MouseMove) -> None:
        event.prevent_default()  # (as for clicks: the row under the mouse is found by its line)
        self._mouse_hovering_over = self._option_at(event)

    def notify_style_update(self) -> None:
        self._rows_drawn.clear()  # a new theme: the same text is drawn in other colours
        self._line_drawer.clear()
        super().notify_style_update()

    def action_cursor_up_or_input(self) -> None:
        if self.highlighted in (None, 0):
            self.screen.query_one("#query", Input).focus()
        else:
            self.action_cursor_up()

    @property
    def near_end(self) -> bool:
        """The person is at the end of the list: its last rows highlighted or scrolled
        into view (mouse wheel, page down). Only while they are in the list, so a list
        that shrinks or resets under a keystroke in the search box loads nothing."""
        if not (self.has_focus or self.is_mouse_over):
            return False
        highlighted = self.highlighted
        if highlighted is not None and highlighted >= self.option_count - NEAR_END:
            return True
        return self.max_scroll_y > 0 and self.scroll_y >= self.max_scroll_y - 1

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if self.near_end:
            self.post_message(self.NearEnd())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.near_end:
            self.post_message(self.NearEnd())
