"""Timestamps: transcripts carry ISO 8601 strings; the index keeps epoch seconds."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

from .errors import BadInput


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


def parse_user_time(value: str | None, *, end_of_day: bool = False, name: str = "date") -> float | None:
    """A date filter as the user gave it (``2026-11-02`` or a full ISO time)."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        if len(text) == 10:
            dt = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
            if end_of_day:
                return dt.timestamp() + 86400 - 0.001
            return dt.timestamp()
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"Bad {name} {value!r}: use an ISO 8601 date or time, e.g. 2026-11-02 or 2026-11-02T14:00:00Z") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")
