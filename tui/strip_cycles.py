"""Textual's strips kept out of reference cycles, so they are freed as soon as they are dropped.

A :class:`textual.strip.Strip` memoizes what it is cut into. Where the cut is the whole
strip, Textual stores the strip itself in its own cache (``divide`` at the strip's width,
``crop_extend`` from 0 to its width): the strip then points at itself and only a full
garbage collection frees it, with its seven caches and its segments. The compositor
divides every line of every frame, so nearly every strip of every repaint took that path.

The app makes full collections rare, at idle moments (``tui/heap.py``: one walks the whole
heap, 120-150 ms), so these strips piled up: the app bench's 132 keys left ~184,000 objects
(~22 MB of Python memory, most of them strips, their caches and segments) for the next full
collection, and the malloc arenas they grew stayed. Here the whole-strip cases answer before
the cache: the same strips Textual would return, never stored in themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textual.strip import Strip

_divide = Strip.divide
_crop_extend = Strip.crop_extend


def _divide_whole_first(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cuts = [cut for cut in cuts if cut <= self.cell_length]  # (as Textual's divide filters them)
    if cuts == [self.cell_length]:
        return [self]  # what Textual returns here, without keeping [self] in self
    return _divide(self, cuts)


def _crop_extend_whole_first(self: Strip, start: int, end: int, style: Any) -> Strip:
    if start <= 0 and end == self.cell_length:
        return self  # (extended to its own width and cropped to all of it: itself)
    return _crop_extend(self, start, end, style)


def keep_strips_out_of_cycles() -> None:
    """Patch :class:`Strip` (once; the app calls it when it is built)."""
    Strip.divide = _divide_whole_first  # type: ignore[method-assign]
    Strip.crop_extend = _crop_extend_whole_first  # type: ignore[method-assign]
