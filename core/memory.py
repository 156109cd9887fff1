"""Handing freed memory back to the system (glibc's ``malloc_trim``), for the phases that
free a lot at once: a model run's activations, a cold index's committed chunks.

glibc keeps freed chunks below its (growing) mmap threshold, fragmented, so a process
that built and dropped hundreds of megabytes of small objects keeps its resident set
near its peak. Elsewhere (macOS, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import cast


def _malloc_trim() -> Callable[[int], int] | None:
    try:  # glibc only
        return cast("Callable[[int], int]", ctypes.CDLL(None).malloc_trim)
    except (AttributeError, OSError, TypeError):
        return None


_trim = _malloc_trim()


def release_freed_memory() -> None:
    """Give the pages malloc holds free back to the system (a few ms)."""
    if _trim is not None:
        _trim(0)
