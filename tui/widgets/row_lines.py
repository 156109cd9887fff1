"""Drawing the hit list's rows a line at a time, each line remembered (issue 35.1).

A keystroke's hit list mostly shows rows seen at the keystroke before, or rows one of
whose lines was: a session's line stays while its snippet's marks change, and a snippet
stays while the session's "+N more" moves. OptionList draws a whole row through
Textual's general path (wrapping, links, text selection, a padding visual around it),
which was most of the paint of a keystroke whose rows were new (~1 ms a row; on the 1.8 GB
bench the hits' screen update took 16 ms at p50, 7.5 ms when a probe handed every row back
from a memo).

The hit list's rows (:class:`~tui.widgets.hit_rows.Rows`) need none of that: lines
laid out to the width already, no links, never wrapped. :class:`LineDrawer` draws
such a row line by line with Textual's own line drawing (what ``Content.render_strips``
does for each line) and pads it as OptionList does, so the strips are the same (but for
the option's index, which OptionList puts in every segment for the mouse: the hit list
finds the row under the mouse by its line, so one drawing serves a row wherever it lands),
and remembers each line by what it shows. It declines (returns None) whatever it does not
draw the same: a selection in the list, padding above or below, content not aligned
top left, or a Textual without the line drawing it calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import textual.content
from rich.style import Style as RichStyle
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Spacing
from textual.strip import Strip
from textual.style import Style

# Textual's drawing of one formatted line, what Content.render_strips does per line (private: the
# tests hold this module's rows to OptionList's drawing; a Textual without it draws rows its own way)
FORMATTED_LINE: Any = getattr(textual.content, "_FormattedLine", None)

if TYPE_CHECKING:
    from textual.widget import Widget

LINES_KEPT = 512  # drawn lines remembered across keystrokes (a screen shows ~40)
TAB_SIZE = 8  # (Content.render_strips')

LineKey = tuple[str, tuple[Any, ...], int, Style, Spacing, int]


class LineDrawer:
    """Strips for rows of lines already laid out, each line drawn once while it is remembered."""

    def __init__(self, kept: int = LINES_KEPT) -> None:
        self._lines: LRUCache[LineKey, Strip] = LRUCache(kept)
        self.drawn = 0  # lines drawn (not found remembered): what the tests count

    def clear(self) -> None:
        """Forget every line (a new theme draws the same text in other colours)."""
        self._lines.clear()

    def draw(self, widget: Widget, lines: Sequence[Content], style: Style, width: int, padding: Spacing) -> list[Strip] | None:
        """The row's strips as OptionList draws it ``width`` cells wide (but for the option's index
        OptionList puts in every segment), or None when this row is not one drawn the same way here."""
        if FORMATTED_LINE is None or padding.top or padding.bottom or widget.text_selection is not None:
            return None
        if widget.styles.content_align != ("left", "top"):
            return None
        inner = width - padding.left - padding.right
        if inner <= 0:
            return None
        rich_style = style.rich_style
        strips = []
        for y, line in enumerate(lines):
            key = (line.plain, tuple(line.spans), y, style, padding, width)
            strip = self._lines.get(key)
            if strip is None:
                strip = self._line(widget, line, y, style, rich_style, inner, padding)
                self._lines[key] = strip
                self.drawn += 1
            strips.append(strip)
        return strips

    @staticmethod
    def _line(widget: Widget, line: Content, y: int, style: Style, rich_style: RichStyle, inner: int, padding: Spacing) -> Strip:
        # as Content.render_strips draws a line that never wraps and ends in an ellipsis, then
        # Padding pads it and OptionList fills the row's width
        fitted = line.expand_tabs(TAB_SIZE).truncate(inner, ellipsis=True)
        strip = Strip(*FORMATTED_LINE(widget._get_style, fitted, inner, y=y).to_strip(style))
        if padding:
            strip = strip.crop_pad(inner, padding.left, padding.right, rich_style)
        return strip.extend_cell_length(inner + padding.left + padding.right, rich_style)
