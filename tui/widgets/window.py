"""Which of a conversation's blocks the reader mounts: the window's arithmetic, no widgets.

The reader mounts a window of blocks (a page around the turn opened, or the last
page when following), grows it a page at a time toward either end, and on a live
update keeps the blocks that did not change. Inside the window a turn with many
steps mounts only a page of them at first (:func:`step_limits`).
"""

from __future__ import annotations

from ..blocks import Block
from .turn_view import ITEM_PAGE

PAGE = 8  # blocks mounted per page (a screenful: first paint stays fast)
BEFORE = 2  # blocks mounted above the target turn


def opening(n: int, center: int, *, at_end: bool) -> tuple[int, int]:
    """The window (lo, hi) a reader of ``n`` blocks mounts around ``center``, or at the end."""
    if at_end:
        return max(0, n - PAGE), n
    lo = max(0, center - BEFORE)
    return lo, min(n, lo + PAGE)


def step_limits(blocks: list[Block], lo: int, hi: int, center: int | None) -> dict[int, int | None]:
    """How many steps each block of ``lo..hi`` mounts now (None: all).

    A turn of up to :data:`ITEM_PAGE` steps is mounted whole (most turns: cheap).
    Of the big ones, only the first at or after ``center`` (the one being opened)
    gets a page; the others show their head and "more steps" line and fill in as
    that line scrolls into view. First paint is then a screenful, not a session.
    """
    limits: dict[int, int | None] = {}
    paged = center is None
    for i in range(lo, hi):
        if len(blocks[i].items) <= ITEM_PAGE:
            limits[i] = None
        elif not paged and i >= (center or 0):
            limits[i] = ITEM_PAGE
            paged = True
        else:
            limits[i] = 0
    return limits


def unchanged(old: list[Block], new: list[Block]) -> int:
    """How many leading blocks a live update left as they were (same key, same last message)."""
    d = 0
    while d < min(len(old), len(new)) and old[d].key == new[d].key and old[d].last_sequence == new[d].last_sequence:
        d += 1
    return d


def updated_end(hi: int, keep: int, n: int, *, grow: bool) -> int:
    """A live update's new window end: to the new end when ``grow`` (the end was shown,
    or following), else where it was; at most two pages past the ``keep`` unchanged blocks."""
    new_hi = n if grow else min(hi, n)
    return min(new_hi, keep + 2 * PAGE)
