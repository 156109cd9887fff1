"""Full garbage collections at idle moments, not in the middle of a keystroke.

CPython's generation-2 collection walks every tracked object. With the app's heap
after a few opened conversations (~220,000 objects: Textual's strips and caches,
widgets, session lists) one took 120–150 ms, and the app benchmark caught them
landing inside keystrokes and session opens. So:

* the start-up heap (imports, Textual's tables, the first session list) lives as
  long as the app: it is frozen (``gc.freeze``, which costs nothing) at mount and
  again once the first sync is in, so no collection walks it again;
* automatic full collections are made rare (a high generation-2 threshold; the
  young generations collect as usual, they are small and cheap), and
  :meth:`IdleCollector.tick` (on a timer) runs one once no key or mouse event came
  for :data:`IDLE_SECONDS` and the old generation has grown.

Only start-up objects are frozen: frozen objects are never collected as cycles,
and widgets (which hold cycles) come and go as conversations are opened.
"""

from __future__ import annotations

import gc
import time

IDLE_SECONDS = 1.5
# Generation 2 is collected automatically only after this many generation-1
# collections (CPython's default is 10): a safety net when the app is never idle.
# (Typing 130 keys without a pause made ~90 generation-1 collections: Textual
# builds a few thousand strips and caches per repaint.)
OLD_THRESHOLD = 1000


class IdleCollector:
    """One per app, from mount to unmount (:meth:`close` puts the GC back)."""

    def __init__(self) -> None:
        self.last_input = time.monotonic()
        self.collections = 0
        self._thresholds = gc.get_threshold()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, OLD_THRESHOLD)
        gc.freeze()

    def settled(self) -> None:
        """Start-up is done (first sync in, panes filled): freeze what it built."""
        gc.freeze()

    def close(self) -> None:
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()

    def touch(self) -> None:
        """A key or mouse event: the person is using the app."""
        self.last_input = time.monotonic()

    def tick(self, ready: bool = True) -> bool:
        """Collect if idle and ``ready`` (nothing being loaded); True when it did."""
        if not ready or time.monotonic() - self.last_input < IDLE_SECONDS:
            return False
        if gc.get_count()[2] == 0:
            return False  # nothing reached the old generation since the last one
        gc.collect()
        self.collections += 1
        return True
