"""The one total order of search hits: score, then time, then a stable id.

BM25 scores tie often (the same prompt pasted into two sessions, short turns of the
same length). An order that stopped at score and time would leave those ties to
the layout of the index segments, so the same query could list equal hits in
another order after an incremental update than after a fresh build. The last key
is a session's id and the message's place in it: the same on every build.
"""

from __future__ import annotations

from .model import SearchHit
from .timeutil import newest_first

SCORE_DIGITS = 5  # scores equal to this many digits tie (float sums differ by segment layout)


def hit_order(hit: SearchHit) -> tuple:
    """Sort key: higher score first, newer first (unknown times last), then the stable id."""
    known, ts = newest_first(hit.timestamp)
    return (-round(hit.score, SCORE_DIGITS), not known, -ts, hit.session_id, hit.sequence)
