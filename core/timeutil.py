"""Timestamps: transcripts carry ISO 8601 strings; the index keeps epoch seconds.

One rule for every agent and every front end: a time is *known* when it is an ISO
8601 string :func:`parse_datetime` reads; anything else (``zzz-garbage``, ``NaN``,
``[trimmed for fixture]``, a number, an empty string) is *unknown*. Adapters keep
only known times (:func:`clean_ts`), so an unknown one is ``None`` in the model and
``null`` in JSON; in the index it is NaN, which compares false with every bound, so
it never passes a date filter, and :func:`newest_first` sorts it last.
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any


UNKNOWN = math.nan  # the epoch seconds of an unknown time


def parse_datetime(value: Any) -> datetime | None:
    """The aware datetime of a transcript's timestamp, or None when it is unknown."""
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value)  # (3.11+ reads a trailing "Z" too)
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def clean_ts(value: Any) -> str | None:
    """``value`` when it is a known time, else None (what adapters store).

    On every record of every file: one C call, no cache (transcript times are
    all different).
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def parse_ts(value: Any) -> float:
    """Epoch seconds of a timestamp; NaN (:data:`UNKNOWN`) when missing or unreadable."""
    return _epoch(value) if isinstance(value, str) and value else UNKNOWN


@lru_cache(maxsize=65536)
def _epoch(value: str) -> float:
    dt = parse_datetime(value)
    if dt is None:
        return UNKNOWN
    try:
        return dt.timestamp()
    except (OverflowError, OSError, ValueError):
        return UNKNOWN


def is_known(ts: float) -> bool:
    return not math.isnan(ts)


def newest_first(value: Any) -> tuple[bool, float]:
    """Sort key (with ``reverse=True``) putting newer times first, unknown ones last."""
    ts = parse_ts(value)
    return (True, ts) if is_known(ts) else (False, 0.0)


def parse_user_time(
    value: str | None, *, end_of_day: bool = False, name: str = "date", now: float | None = None
) -> float | None:
    """A date filter as the user gave it: ISO, or relative (``7d``, ``yesterday``; see :mod:`core.dates`)."""
    if value is None or value == "":
        return None
    from .dates import parse_date

    return parse_date(str(value), now=time.time() if now is None else now, end_of_day=end_of_day, name=name)


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")
