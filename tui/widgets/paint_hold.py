"""A keystroke's echo and its hits painted in one screen update (issue 35.1).

A key typed into the search box asked for two paints: its echo in the box, at once, and
its hits 10–20 ms later. The echo's paint (2–3 ms) ran before the search's thread could
start, so every keystroke's hits came that much later. :class:`PaintHold` holds the app's
paints (Textual's ``batch_update``) from the key until its hits are in the list, for at
most ``longest`` seconds: a slow search still shows the typed letter that soon.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

LONGEST = 0.03  # seconds the echo may wait for the hits (a key's hits take 15-50 ms)


class PaintHold:
    """Paints held for ``owner``'s next update, released by :meth:`release` or after ``longest``."""

    def __init__(self, owner: Widget, longest: float = LONGEST) -> None:
        self.owner = owner
        self.longest = longest
        self._batch: AbstractContextManager[None] | None = None
        self._timer: Timer | None = None

    @property
    def holding(self) -> bool:
        return self._batch is not None

    def hold(self) -> None:
        """Hold paints until :meth:`release`, at most ``longest`` (a hold already on keeps its end:
        someone typing fast sees a paint at least every ``longest``)."""
        if self._batch is not None:
            return
        self._batch = self.owner.app.batch_update()
        self._batch.__enter__()
        self._timer = self.owner.set_timer(self.longest, self._expire)

    def _expire(self) -> None:
        self._timer = None  # (its own callback: nothing to stop)
        self.release()

    def release(self) -> None:
        """Let the held paints through (the screen paints at its next idle moment)."""
        batch, self._batch = self._batch, None
        if batch is None:
            return
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        batch.__exit__(None, None, None)
        if self.owner.is_attached:
            # what changed while held is waiting: a screen paints when it next goes idle
            self.owner.screen.check_idle()
