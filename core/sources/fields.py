"""One decode rule per kind of field read from a transcript (every adapter uses these).

A transcript is untrusted input: any field may hold any JSON value. Whatever an
adapter hands on (to the model, and so to the catalog, the index and every front
end) is typed and bounded here, once per kind of field, not at each place that
reads one:

* :func:`count` — a token count or any other tally: an ``int`` from 0 to
  :data:`MAX_COUNT`; anything else (a string, a float, a bool, a negative number,
  ``2**64``) counts 0. SQLite stores 64-bit integers; one response never spends
  anything near a trillion tokens, and sums of bounded counts stay far below 2**63
  for any archive (a million responses at the bound still fit).
* :func:`label` — an id, a model name, a role: a non-empty ``str`` or None,
  at most :data:`MAX_LABEL` characters (a longer one is not an id an agent wrote).
* :func:`timestamp` — a time: a known ISO 8601 string (see
  :func:`core.timeutil.clean_ts`) in UTC, ending in ``Z``, or None.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from core.timeutil import clean_ts

MAX_COUNT = 10**12
MAX_LABEL = 1000


def count(value: Any) -> int:
    """A non-negative tally no larger than :data:`MAX_COUNT`; 0 for anything else."""
    if type(value) is int and 0 < value <= MAX_COUNT:  # (type, not isinstance: bool is an int)
        return value
    return 0


def label(value: Any) -> str | None:
    """A non-empty string of at most :data:`MAX_LABEL` characters, else None."""
    if isinstance(value, str) and value and len(value) <= MAX_LABEL:
        return value
    return None


def timestamp(value: Any) -> str | None:
    """A known ISO 8601 time as a UTC string ending in ``Z`` (so string order is time
    order, and a ``since`` in UTC compares with it), else None.

    What agents write in UTC (``…Z``) is kept as written; an offset (``+02:00``) is
    converted, and a time without one is taken as UTC.
    """
    known = clean_ts(value)
    if known is None or known.endswith(("Z", "z")):
        return known
    try:
        moment = datetime.fromisoformat(known)
        moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # (0001-01-01T00:00+14:00 has no UTC time)
        return None
    micro = moment.microsecond
    fraction = f".{micro // 1000:03d}" if micro % 1000 == 0 else f".{micro:06d}"
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"
