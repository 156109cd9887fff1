"""Which of a conversation's blocks the reader mounts: the window's arithmetic, no widgets.

The reader mounts a window of blocks (a page around the turn opened, or the last
page when following), grows it a page at a time toward either end while letting go
of the far end past :data:`MOUNTED_MAX`, and on a live update keeps the blocks that
did not change. Inside the window a turn with many
steps mounts only a page of them at first (:func:`step_limits`).
"""

from __future__ import annotations

import re

from ..blocks import Block
from .turn_view import ITEM_PAGE

PAGE = 8  # blocks mounted per page (a screenful: first paint stays fast)
BEFORE = 2  # blocks mounted above the target turn
# Blocks kept mounted at most. Reading on grows the window a page at a time, and the far
# end lets go of what passes this: every mounted widget holds its rendered lines, and
# paging through 632 turns of the 2,000-turn bench session held 473 MB and made each full
# garbage collection walk 1.2 million objects (0.7 s, paid inside whatever key it met).
MOUNTED_MAX = 5 * PAGE


def opening(n: int, center: int, *, at_end: bool, page: int = PAGE) -> tuple[int, int]:
    """The window (lo, hi) of ``page`` blocks a reader of ``n`` mounts around ``center``, or at the end."""
    if at_end:
        return max(0, n - page), n
    lo = max(0, center - BEFORE)
    return lo, min(n, lo + page)


def jump_page(blocks: list[Block], *, at_end: bool, rows: int) -> int:
    """How many blocks Home (or End, ``at_end``) mounts: enough to fill ``rows``.

    The rest follows a page at a time after the paint, below the view (Home) or
    above it (End): composing a whole page for the jump took 53-56 ms p95 in the
    2,000-turn bench session, over the 50 ms a key may take. Filled by a lower bound
    of each block's height (a row for the prompt and for each step or paragraph,
    before any wrapping), so the first frame is a full screen, not one that fills
    in or, at the end, shifts down as turns arrive above.
    """
    order = reversed(blocks) if at_end else iter(blocks)
    count = filled = 0
    for block in order:
        count += 1
        filled += min_rows(block)
        # (two rows over: a window that scrolls by one row or none at the end would also be
        # at its top, and grow upward at once; however many blocks: short ones are quick)
        if filled >= rows + 2:
            break
    return max(1, count)


def min_rows(block: Block) -> int:
    """A lower bound of the rows ``block`` paints (unwrapped), margins included."""
    if block.kind != "turn":
        return 2
    # the turn's margin and header, its prompt's lines; then a blank row and a row a step
    # (folded, or more)
    prompt_lines = sum(1 for line in block.prompt.splitlines() if line.strip())
    rows = 2 + max(1, prompt_lines) + (1 + len(block.items) if block.items else 0)
    for item in block.items:
        if item.kind == "text":
            rows += _min_markdown_rows(item.text) - 1
    return rows


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)


def _min_markdown_rows(text: str) -> int:
    # a paragraph is a row at least (its lines may join); a list, a row an item; one
    # blank row between them
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    if not paragraphs:
        return 1
    return sum(max(1, len(_LIST_ITEM.findall(p))) for p in paragraphs) + len(paragraphs) - 1


def surplus(lo: int, hi: int, most: int = MOUNTED_MAX) -> int:
    """How many blocks a window ``lo..hi`` holds past ``most`` (let go of at its far end)."""
    return max(0, hi - lo - most)


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
