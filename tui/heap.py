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
  for :data:`IDLE_SECONDS` and the old generation has grown (opening a conversation
  counts as use too, so none lands between a load and its paint; a live update of
  the open one does not, or a session written every second would hold it off);
* widgets the reader lets go of (a window replaced or trimmed) are garbage in
  cycles (a widget and its styles point at each other), ~200 objects each, that
  only a full collection frees. Someone paging or jumping without a pause never
  gives the idle collection its moment, and the pile grew until the automatic one
  met it: 1.5 s freeing 914,000 objects inside a session open. So they are
  counted (:meth:`IdleCollector.discarded`), and once :data:`DISCARDED_DUE` were,
  the reader has one run (:meth:`IdleCollector.collect_due`, ~0.1-0.25 s) just
  after its new window painted: between keys rather than inside one, and never
  while a conversation loads (the window it replaced is let go of first).

After each full collection the pages it freed go back to the system (glibc keeps
them otherwise), and so after each paint of the reader that did not collect: what a
conversation's load built and dropped in its thread's malloc arena. Only start-up
objects are frozen: frozen objects are never collected as cycles, and widgets (which hold cycles) come and go as conversations
are opened.
"""

from __future__ import annotations

import gc
import time

from core.memory import release_freed_memory

IDLE_SECONDS = 1.5
# Generation 2 is collected automatically only after this many generation-1
# collections (CPython's default is 10): a safety net when the app is never idle.
# (Typing 130 keys without a pause made ~90 generation-1 collections: Textual
# builds a few thousand strips and caches per repaint.)
OLD_THRESHOLD = 1000
# Widgets let go of before a full collection is due after the next paint: four or five
# windows of the reader, or a few pages read on past its bounded window.
DISCARDED_DUE = 400


class IdleCollector:
    """One per app, started at mount (:meth:`close` puts the GC back at unmount)."""

    def __init__(self) -> None:
        self.last_input = time.monotonic()
        self.collections = 0
        self.trims = 0  # freed pages handed back after a reader's paint, without a collection
        self.discarded_widgets = 0  # let go of since the last full collection
        self._thresholds: tuple[int, int, int] | None = None  # the GC's own, while started

    def start(self) -> None:
        """The app is mounted: freeze the start-up heap and make full collections rare."""
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            young, middle, _ = self._thresholds
            gc.set_threshold(young, middle, OLD_THRESHOLD)
        gc.freeze()

    def settled(self) -> None:
        """Start-up is done (first sync in, panes filled): freeze what it built."""
        gc.freeze()

    def close(self) -> None:
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
            gc.unfreeze()

    def touch(self) -> None:
        """A key or mouse event: the person is using the app."""
        self.last_input = time.monotonic()

    def tick(self, ready: bool = True) -> bool:
        """Collect if idle and ``ready`` (nothing being loaded); True when it did."""
        if not ready or time.monotonic() - self.last_input < IDLE_SECONDS:
            return False
        if gc.get_count()[2] == 0 and not self.discarded_widgets:
            return False  # nothing reached the old generation since the last one
        self._collect()
        return True

    def discarded(self, widgets: int) -> bool:
        """``widgets`` were let go of; True when a collection is now due (see :meth:`collect_due`)."""
        self.discarded_widgets += widgets
        return self.discarded_widgets >= DISCARDED_DUE

    def collect_due(self) -> bool:
        """After the reader painted: collect if enough widgets were let go of since the last
        collection (True when it did); otherwise hand freed pages back to the system.

        A conversation opened (or a page mounted) freed what its load built and dropped in the
        loading thread's malloc arena, which glibc keeps: the app bench's ten opens of the
        2,000-turn session in a row grew it ~45 MB, ~8 MB less with a trim after each paint
        (0.2-10 ms there, after the frame is out)."""
        if self.discarded_widgets < DISCARDED_DUE:
            release_freed_memory()
            self.trims += 1
            return False  # (another paint's call, or the idle collection, came first)
        self._collect()
        return True

    def _collect(self) -> None:
        gc.collect()
        release_freed_memory()  # (what was freed, handed back: glibc kept ~30 MB after typing)
        self.collections += 1
        self.discarded_widgets = 0
