"""Handing freed memory back to the system (glibc's ``malloc_trim``), for the phases that
free a lot at once: a model run's activations, a cold index's committed chunks; and, for
the long-lived processes that allocate on several threads (the app, ``mcp``, ``serve``),
fewer malloc arenas and a fixed mmap threshold.

glibc keeps freed chunks below its (growing) mmap threshold, fragmented, so a process
that built and dropped hundreds of megabytes of small objects keeps its resident set
near its peak. Elsewhere (macOS, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import cast


def _glibc(name: str) -> Callable[..., int] | None:
    try:  # glibc only
        return cast("Callable[..., int]", getattr(ctypes.CDLL(None), name))
    except (AttributeError, OSError, TypeError):
        return None


_trim = _glibc("malloc_trim")
_mallopt = _glibc("mallopt")
M_ARENA_MAX = -8  # mallopt's parameter number (glibc's malloc.h)
# Arenas the app keeps: glibc gives a thread that finds the arena it would use
# locked one of its own, up to 8 per core, and each keeps what was freed in it. The
# app allocates on several threads (searches, the sync, the watcher, the model);
# with two arenas its peak over the bench's app phase went from 233–249 to 236–238 MB
# words only, from 354–374 to 338–348 MB with the model on (three runs each, alternating).
LONG_LIVED_ARENAS = 2
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
# Blocks from this size up are mmapped, so freeing one hands it back at once. glibc starts
# at 128 KiB but raises the threshold to the size of each mmapped block freed (up to 32 MB):
# after a decoded block or the model file's bytes, blocks that size came from the heap and
# stayed there, fragmented. Capped at 2 MB, the server bench's peak (model on, a backlog
# embedding; two arenas) went from 233-241 to 228-234 MB for `mcp`, 231 to 224-230 MB for `serve`;
# the app's (its bench with the model on and a backlog) from 292 / 297 to 284 / 286 MB, keystroke
# p95 86 / 88 -> 72 / 73 ms (two runs each, alternating).
# Not lower: at 128 KiB the peaks were 222-226 / 219-220 MB, but a search's arrays (a few
# hundred KB to a MB each) were mmapped and faulted in anew every time: ~1,200 page faults a
# search against ~250, +2.5 ms CPU of a ~7 ms search, p95 +10-17 ms.
LONG_LIVED_MMAP_THRESHOLD = 2 << 20
# What glibc itself sets beside a 2 MB threshold (twice it): with its 128 KiB default the heap's
# top was given back and faulted in again around each search (~520 faults a search, not ~260).
LONG_LIVED_TRIM_THRESHOLD = 4 << 20


def release_freed_memory() -> None:
    """Give the pages malloc holds free back to the system (a few ms)."""
    if _trim is not None:
        _trim(0)


def fewer_malloc_arenas(arenas: int = LONG_LIVED_ARENAS) -> bool:
    """At most ``arenas`` malloc arenas from now on (before threads start, to matter);
    False where that cannot be set, or when ``MALLOC_ARENA_MAX`` says otherwise."""
    if _mallopt is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(_mallopt(M_ARENA_MAX, arenas))


def fixed_mmap_threshold(size: int = LONG_LIVED_MMAP_THRESHOLD, trim: int = LONG_LIVED_TRIM_THRESHOLD) -> bool:
    """Blocks of ``size`` bytes and up mmapped from now on, whatever was freed before (glibc then
    stops adjusting the threshold), and the heap's top given back past ``trim`` free bytes; False
    where that cannot be set, or when ``MALLOC_MMAP_THRESHOLD_`` says otherwise (and
    ``MALLOC_TRIM_THRESHOLD_`` set by the user keeps its own)."""
    if _mallopt is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        _mallopt(M_TRIM_THRESHOLD, trim)
    return bool(_mallopt(M_MMAP_THRESHOLD, size))


_long_lived = False


def is_long_lived() -> bool:
    """Whether :func:`long_lived_process` was called (the model then loads leaner)."""
    return _long_lived


def long_lived_process() -> None:
    """The app, ``mcp`` and ``serve``: a process that runs for days, with threads (searches or
    requests, the sync, the watcher, the embedding job), keeps only what it uses. Call before
    threads start."""
    global _long_lived
    _long_lived = True
    fewer_malloc_arenas()
    fixed_mmap_threshold()
