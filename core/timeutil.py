"""Timestamps: transcripts carry ISO 8601 strings; the index keeps epoch seconds."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from functools import lru_cache



@lru_cache(maxsize=65536)
def parse_ts(value: str | None) -> float:
    """Epoch seconds of an ISO timestamp; 0.0 when missing or unreadable."""
    if not value:
        return 0.0
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


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
