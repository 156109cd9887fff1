"""What the watcher reported since the panes last refreshed, gathered across threads.

The archive calls back on the watcher's thread, once per synced batch; the app
refreshes at most once per :data:`tui.app.REFRESH_DELAY` on its own thread. In
between, the sessions changed, new and removed pile up here, so a burst of writes
becomes one refresh that covers all of them.
"""

from __future__ import annotations

import threading
from typing import Any


class PendingChanges:
    """Session ids changed, new and removed since the last :meth:`take` (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed: set[str] = set()
        self._new: set[str] = set()
        self._removed: set[str] = set()

    def add(self, result: Any) -> None:
        """One sync's :class:`~core.views.UpdateResult` (a new session counts as changed too)."""
        with self._lock:
            self._changed.update(getattr(result, "changed_sessions", ()) or ())
            self._changed.update(getattr(result, "new_sessions", ()) or ())
            self._new.update(getattr(result, "new_sessions", ()) or ())
            self._removed.update(getattr(result, "removed_sessions", ()) or ())

    def take(self) -> tuple[set[str], set[str], set[str]]:
        """(changed, new, removed) so far, and start afresh."""
        with self._lock:
            taken = self._changed, self._new, self._removed
            self._changed, self._new, self._removed = set(), set(), set()
        return taken
