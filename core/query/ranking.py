"""The one total order of search hits: the ranked order, ties broken by a stable id.

BM25 scores tie often (the same prompt pasted into two sessions, short turns of the
same length), and float sums differ in their last digits with the layout of the
index segments. An order that stopped at the index's own keys (score, time, doc id)
would leave those ties to the layout, so the same query could list equal hits in
another order after an incremental update than after a fresh build. Here the
ranked order (tiers, phrases, score or time — see core/index/bm25.py and
core/query/execute.py) is kept, and within each run of hits that tie on it (scores
equal to SCORE_DIGITS digits; for ``sort="recent"``, equal times) the hits are
ordered by what is the same on every build: newer first, then the session's id and
the message's place in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import TypeVar

from core.model import SearchHit
from core.timeutil import newest_first

SCORE_DIGITS = 5  # scores equal to this many digits tie (float sums differ by segment layout)

T = TypeVar("T", bound=tuple)


def hit_order(hit: SearchHit) -> tuple:
    """Sort key: higher score first, newer first (unknown times last), then the stable id."""
    known, ts = newest_first(hit.timestamp)
    return (-round(hit.score, SCORE_DIGITS), not known, -ts, hit.session_id, hit.sequence)


def _stable_key(hit: SearchHit, recent: bool) -> tuple:
    known, ts = newest_first(hit.timestamp)
    if recent:  # a run of equal times: higher score first
        return (-round(hit.score, SCORE_DIGITS), hit.session_id, hit.sequence)
    return (not known, -ts, hit.session_id, hit.sequence)


def in_total_order(ranked: Iterable[T], *, recent: bool = False) -> Iterator[T]:
    """Items ``(hit, …)`` in their ranked order, each run of ties in the stable order.

    Runs are consecutive items whose rounded score (or, ``recent``, whose time) is
    equal; rounding is monotonic, so the ranked order keeps equal keys together.
    """

    def run_key(item: T):
        hit = item[0]  # a turn showing a quoted phrase never ties with one that does not (it is listed first)
        return hit.exact_phrase, newest_first(hit.timestamp) if recent else round(hit.score, SCORE_DIGITS)

    for _, run in groupby(ranked, key=run_key):
        yield from sorted(run, key=lambda item: _stable_key(item[0], recent))
