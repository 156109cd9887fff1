"""What the person narrowed the panes to (keys p, a, d, T; x clears), and how a choice changes it.

The panes read one :class:`Filters` value; a choice in a filter dialog makes a new
one (:func:`chosen`): a project, an agent or a tag as picked, a date choice as the
days back from now, a custom range (``7d``, ``yesterday``, ``FROM..TO``) as its bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from .screens.dialogs import DATE_CHOICES


@dataclass(frozen=True, slots=True)
class Filters:
    """What the person narrowed the panes to (keys p, a, d and g)."""

    project: str | None = None
    agent: str | None = None
    date_from: str | None = None
    date_label: str | None = None
    tag: str | None = None
    date_to: str | None = None  # a custom range's end (ISO)

    def describe(self) -> str:
        parts = []
        if self.project:
            parts.append(f"project={self.project}")
        if self.agent:
            parts.append(f"agent={self.agent}")
        if self.date_label:
            parts.append(self.date_label)
        if self.tag:
            parts.append(f"tag={self.tag}")
        return " ".join(parts)

    @property
    def active(self) -> bool:
        return bool(self.project or self.agent or self.date_from or self.date_to or self.tag)


def chosen(filters: Filters, kind: str, value: str | None, now: datetime) -> Filters:
    """``filters`` with one choice made: ``kind`` is project, agent, tag, date or range
    (a custom range the dialog has already checked); None clears that filter."""
    if kind in ("project", "agent", "tag"):
        return replace(filters, **{kind: value})
    if kind == "date":
        days = dict(DATE_CHOICES).get(value or "")
        date_from = (now - timedelta(days=days)).date().isoformat() if days else None
        return replace(filters, date_from=date_from, date_label=value if days else None, date_to=None)
    if kind == "range":
        from core.timeutil import parse_range, to_iso

        lo, hi = parse_range(value or "", now=now.timestamp())
        return replace(
            filters,
            date_from=to_iso(lo) if lo is not None else None,
            date_to=to_iso(hi) if hi is not None else None,
            date_label=value,
        )
    return filters
