"""Textual's strips make their caches when first used, not each of seven when built.

A :class:`textual.strip.Strip` is one line of a widget, and its constructor makes seven
memo caches (a small ``FIFOCache`` object with a dict each) for the cuts, crops and
styles it may be asked for. Most strips are asked for one or none, yet every strip
carries all seven: ~900 bytes beside its segments. The app's reader and lists hold many
lines, and the cached cuts of those lines are strips too: tracemalloc counted ~16,000
strips live after the app bench's reader phase, ~14 MB of them empty caches.

Here a strip is built with its segments and nothing else, and a cache comes into being
the first time Textual reads it (an unset slot of a slotted class falls through to
``__getattr__``): the same caches of the same sizes, made when needed, as Textual's own
``Content`` does. The patch checks that a strip built by Textual's constructor has just
these caches and attributes; a Textual whose ``Strip`` differs is left as it is.

Cost: with ``__getattr__`` on the class, Python no longer specializes attribute reads of
strips, yet building them is what cost: three repaints of 3,000 lines (built, crop-extended,
divided, cropped, styled) ran in ~100 ms instead of ~250, and held 9.5 MB instead of 23.6.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.segment import Segment
from textual.cache import FIFOCache
from textual.strip import Strip

_textual_init = Strip.__init__


def made_by(init: Callable[..., None]) -> dict[str, int] | None:
    """Each cache a strip's constructor ``init`` makes (name → size); None when the strip it builds
    is not what :func:`_lean_init` can stand in for (seven empty caches; the rest empty but the segments)."""
    probe = Strip.__new__(Strip)
    init(probe, [])
    caches: dict[str, int] = {}
    empty: set[str] = set()
    for name in Strip.__slots__:
        value = getattr(probe, name, AttributeError)
        if name in ("_segments", "_cell_length"):
            continue
        if type(value) is FIFOCache and not len(value):
            caches[name] = value._maxsize
        elif value is None:
            empty.add(name)
        else:
            return None
    if len(caches) != 7 or empty != {"_render_cache", "_link_ids", "_cell_count"}:
        return None  # (what _lean_init sets)
    return caches


_CACHE_SIZES = made_by(_textual_init)


def _lean_init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _cache_when_first_used(self: Strip, name: str) -> FIFOCache:
    """The cache ``name`` on its first use (only then is its slot read while unset)."""
    size = _CACHE_SIZES.get(name) if _CACHE_SIZES is not None else None
    if size is None:
        raise AttributeError(name)
    cache: FIFOCache = FIFOCache(size)
    setattr(self, name, cache)
    return cache


def make_strip_caches_when_used() -> bool:
    """Patch :class:`Strip` (once; the app calls it when it is built). False: Textual's strips
    are not as this module expects, and are left alone."""
    if _CACHE_SIZES is None:
        return False
    Strip.__init__ = _lean_init  # type: ignore[method-assign]
    Strip.__getattr__ = _cache_when_first_used  # type: ignore[attr-defined]
    return True
