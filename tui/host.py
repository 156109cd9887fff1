"""What the app's screens and widgets may ask of the app (for the type checker only).

Textual types ``widget.app`` as ``App[Any]``; the panes use what :class:`tui.app.RelayApp`
adds (the archive, the worker pool, the filters, the clock). ``RelayHost`` names those
attributes, and each pane narrows ``app`` to it under ``TYPE_CHECKING``, so nothing changes
at run time and the panes need not import the app module (which imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.app import App

if TYPE_CHECKING:
    from textual.message import Message
    from textual.message_pump import MessagePump
    from textual.worker import Worker

    from .filters import Filters
    from .heap import IdleCollector

    class RelayHost(App[Any]):
        config: Any
        archive: Any
        filters: Filters
        syncing: bool
        last_copy: str
        heap: IdleCollector  # garbage collection at harmless moments (tui/heap.py)
        main: Any  # the MainScreen (typed loosely: naming it here would be an import circle)

        def now(self) -> datetime: ...
        def start(self) -> None: ...
        def rescan(self) -> None: ...
        def submit(
            self,
            fn: Callable[..., Message | None],
            *args: Any,
            reply_to: MessagePump | None = None,
            group: str = "default",
            exclusive: bool = False,
            name: str = "",
            **kwargs: Any,
        ) -> Worker: ...
        def set_filter(self, kind: str, value: str | None) -> None: ...
        def clear_filters(self) -> None: ...
        def copy_reference(self, ref: str) -> None: ...
        def copy_content(self, ref: str) -> None: ...
        def show_held_notices(self) -> None: ...
        def tag_session(self, session_id: str, label: str | None = None) -> None: ...
