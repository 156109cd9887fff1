"""Notices never sit over a dialog: one that lands while a dialog is open waits under it.

A dialog opening clears the notices shown (``RelayApp.push_screen``); a notice that
arrives while one is open (a copy finishing after ``?`` was pressed) is held and shown,
for its whole time, when the main screen is back on top.
"""

from __future__ import annotations

from textual.notifications import Notification, Notify
from textual.screen import ModalScreen


class HoldsNotices:
    """Mixed into the app, before ``App``: Textual calls each class's ``_on_notify`` in turn,
    so holding one stops the default (``prevent_default``), which would show it."""

    _held_notices: list[Notification]

    def _on_notify(self, event: Notify) -> None:
        if isinstance(self.screen, ModalScreen):  # type: ignore[attr-defined]
            if not hasattr(self, "_held_notices"):
                self._held_notices = []
            self._held_notices.append(event.notification)
            event.prevent_default()

    def show_held_notices(self) -> None:
        """The main screen is back on top: show what came while a dialog was open."""
        held, self._held_notices = getattr(self, "_held_notices", []), []
        for notice in held:
            self.notify(  # type: ignore[attr-defined]
                notice.message, title=notice.title, severity=notice.severity, timeout=notice.timeout, markup=notice.markup
            )
