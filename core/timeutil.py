"""Timestamps: transcripts carry ISO 8601 strings; the index keeps epoch seconds.

One rule for every agent and every front end: a time is *known* when it is an ISO
8601 string :func:`parse_datetime` reads; anything else (``zzz-garbage``, ``NaN``,
``[trimmed for fixture]``, a number, an empty string) is *unknown*. Adapters keep
only known times (:func:`clean_ts`), so an unknown one is ``None`` in the model and
``null`` in JSON; in the index it is NaN, which compares false with every bound, so
it never passes a date filter, and :func:`newest_first` sorts it last.

Dates as people type them: ``7d``, ``2w``, ``12h``, ``yesterday``, ``last week``, ISO.
One parser (:func:`parse_date`) for every front end (CLI ``--from/--to``, MCP/HTTP
``date_from``/``date_to``, the app's custom date range), so a date that works in one
works in all. Relative forms count back from ``now`` (the archive's clock, pinned in
tests). Named days (``today``, ``yesterday``) and bare ISO dates are whole UTC days: as
an upper bound they mean the end of that day. Durations (``7d``, ``last week``) are instants.
"""

from __future__ import annotations

import math
import re
import time
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from .errors import BadInput

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
    """A date filter as the user gave it: ISO, or relative (``7d``, ``yesterday``; see :mod:`core.timeutil`)."""
    if value is None or value == "":
        return None
    return parse_date(str(value), now=time.time() if now is None else now, end_of_day=end_of_day, name=name)


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")


# Dates as people type them
DAY = 86400.0
_UNITS = {"h": 3600.0, "d": DAY, "w": 7 * DAY}
_WORDS = {"hour": "h", "hours": "h", "day": "d", "days": "d", "week": "w", "weeks": "w"}
_DURATION = re.compile(r"^(\d+)\s*([hdw])$")
_SPELLED = re.compile(r"^(\d+)\s+(hours?|days?|weeks?)(?:\s+ago)?$")
_NAMED_SPANS = {"last week": 7 * DAY, "past week": 7 * DAY, "last month": 30 * DAY, "last year": 365 * DAY}
HINT = "use 7d, 2w, 12h, today, yesterday, last week, or an ISO date such as 2026-11-02"


def parse_date(value: str, *, now: float, end_of_day: bool = False, name: str = "date") -> float:
    """Epoch seconds for ``value``; :class:`BadInput` (naming ``name``) when unreadable."""
    text = " ".join(str(value).strip().lower().split())
    if text in ("today", "yesterday"):
        start = _start_of_day(now) - (DAY if text == "yesterday" else 0.0)
        return start + DAY - 0.001 if end_of_day else start
    if text in _NAMED_SPANS:
        return now - _NAMED_SPANS[text]
    match = _DURATION.match(text) or _SPELLED.match(text)
    if match:
        unit = match.group(2)
        return now - int(match.group(1)) * _UNITS[_WORDS.get(unit, unit)]
    return _iso(str(value).strip(), end_of_day=end_of_day, name=name)


def _start_of_day(ts: float) -> float:
    day = datetime.fromtimestamp(ts, tz=timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


def _iso(text: str, *, end_of_day: bool, name: str) -> float:
    try:
        if len(text) == 10:
            dt = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
            return dt.timestamp() + (DAY - 0.001 if end_of_day else 0.0)
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"Bad {name} {text!r}: {HINT}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def parse_range(text: str, *, now: float) -> tuple[float | None, float | None]:
    """``"2w"``, ``"2026-11-01..2026-11-10"``, ``"yesterday..today"``: (from, to) epoch seconds."""
    raw = text.strip()
    if ".." in raw:
        lo, _, hi = raw.partition("..")
    else:
        lo, hi = raw, ""
    start = parse_date(lo, now=now, name="start") if lo.strip() else None
    end = parse_date(hi, now=now, end_of_day=True, name="end") if hi.strip() else None
    if start is None and end is None:
        raise BadInput(f"Empty date range: {HINT} (a range: FROM..TO)")
    if start is not None and end is not None and end < start:
        raise BadInput(f"Bad date range {raw!r}: the end is before the start")
    return start, end


def to_iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")

