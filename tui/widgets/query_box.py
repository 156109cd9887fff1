"""The search box: an Input where ``/`` on an empty box is the focus key, not a slash.

Focus starts here, so ``/`` pressed out of habit (as in less, vim, lazygit) must not
search for "/": on an empty box it types nothing. A slash inside a query (a path such
as ``core/index/bm25.py``) is typed as usual.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class QueryBox(Input):
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "slash" and not self.value:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)
