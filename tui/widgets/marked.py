"""Highlighting in the reader: a Static that marks matches in its painted lines.

The highlight is applied to each painted line (:meth:`MarkedStatic.render_line`),
not baked into the widget's content, so it works the same on plain text, on
Rich-rendered markdown answers and on tool output, and a new find word re-marks
what is mounted with a refresh instead of a rebuild. The same painted lines tell
:func:`match_places` on which row each occurrence landed, so the reader can scroll
the match's line into view whatever the wrapping at this terminal width.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from ..marks import Marks

NO_MARKS = Marks()


def highlight_style(app: Any) -> Style:
    """The hit list's highlight ($text-warning on $warning-muted, bold) as a Rich style."""
    variables = app.get_css_variables()
    try:
        return Style(
            color=Color.parse(variables["text-warning"]).rich_color,
            bgcolor=Color.parse(variables["warning-muted"]).rich_color,
            bold=True,
        )
    except (KeyError, ValueError):  # a theme without them: still unmistakable
        return Style(reverse=True, bold=True)


def current_style(highlight: Style) -> Style:
    """The current match's style: the highlight reversed and underlined, so among the
    highlighted matches one can tell which ``n``/``N`` stands on (issue #36)."""
    return highlight + Style(reverse=True, underline=True, bold=True)


def _owner(widget: Widget) -> Any:
    """The nearest ancestor holding ``marks`` (the reader), or None."""
    node: Any = widget.parent
    while node is not None and not hasattr(node, "marks"):
        node = node.parent
    return node


def mark_strip(strip: Strip, marks: Marks, style: Style, current: int | None = None) -> Strip:
    """``strip`` with its matches in ``style``; the ``current``-th of them in :func:`current_style`."""
    text = strip.text
    spans = marks.spans(text, painted=True)
    if not spans:
        return strip
    if cell_len(text) != len(text):  # wide characters: cell offsets differ from string offsets
        spans = [(cell_len(text[:a]), cell_len(text[:b])) for a, b in spans]
    cuts = sorted({x for span in spans for x in span if 0 < x < strip.cell_length})
    parts = strip.divide([*cuts, strip.cell_length])
    out: list[Strip] = []
    x = 0
    here = spans[current] if current is not None and 0 <= current < len(spans) else None
    for part in parts:
        end = x + part.cell_length
        if any(a <= x and end <= b for a, b in spans) and part.cell_length:
            own = current_style(style) if here is not None and here[0] <= x and end <= here[1] else style
            # over the text's own style (Strip.apply_style would put it under, and lose)
            part = Strip([Segment(t, (st or Style()) + own, c) for t, st, c in part], part.cell_length)
        out.append(part)
        x = end
    return Strip.join(out)


class MarkedStatic(Static):
    """A Static whose painted lines highlight the reader's marks."""

    item_index: int | None = None  # the step of the turn it shows (marks.PROMPT: the prompt)

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        owner = _owner(self)
        marks = getattr(owner, "marks", NO_MARKS)
        if not marks.active:
            return strip
        place = getattr(owner, "current_place", None)
        current = place[2] if place is not None and place[0] is self and place[1] == y else None
        return mark_strip(strip, marks, owner.highlight, current)


def match_places(widget: Widget, marks: Marks, origin_y: int) -> list[tuple[int, MarkedStatic, int, int]]:
    """(row in ``origin_y``'s coordinates, the marked widget, its line, the match's index in
    the line) of each occurrence painted in ``widget`` and the marked widgets inside it, in order."""
    places: list[tuple[int, MarkedStatic, int, int]] = []
    candidates = [widget, *widget.query(MarkedStatic)] if widget.is_mounted else []
    for part in candidates:
        if not isinstance(part, MarkedStatic) or not part.display or part.size.height == 0:
            continue
        width, height = part.outer_size
        top = part.region.y - origin_y
        for row, strip in enumerate(part.render_lines(Region(0, 0, width, height))):
            places.extend((top + row, part, row, k) for k in range(len(marks.spans(strip.text, painted=True))))
    return places

