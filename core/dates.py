"""Dates as people type them: ``7d``, ``2w``, ``12h``, ``yesterday``, ``last week``, ISO.

One parser for every front end (CLI ``--from/--to``, MCP/HTTP ``date_from``/``date_to``,
the app's custom date range), so a date that works in one works in all. Relative
forms count back from ``now`` (the archive's clock, pinned in tests). Named days
(``today``, ``yesterday``) and bare ISO dates are whole UTC days: as an upper bound
they mean the end of that day. Durations (``7d``, ``last week``) are instants.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from .errors import BadInput

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

