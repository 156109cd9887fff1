"""The search box: an Input where ``/`` on an empty box is the focus key, not a slash.

Focus starts here, so ``/`` pressed out of habit (as in less, vim, lazygit) must not
search for "/": on an empty box it types nothing. A slash inside a query (a path such
as ``core/index/bm25.py``) is typed as usual.

A keystroke repaints the box, never the screen's layout: Input keeps its text's width
as its virtual size, a layout reactive, so each key re-laid out every widget on screen
(the reader's blocks too) while the search for it ran. The box's own size never depends
on its text (width 100%, height 3), so the new width is set as a plain value; scrolling
a long query to the cursor reads it as before.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.widgets import Input


class QueryBox(Input):
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "slash" and not self.value:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _watch_value(self, value: str) -> None:
        if not self.styles.auto_dimensions:  # (an auto-sized box does need the layout)
            # set first, so Input's own assignment of the same size finds nothing changed
            self.set_reactive(Input.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)
