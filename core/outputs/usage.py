"""Token usage reports: sums by group with an estimated cost.

Reports are plain sums over the catalog's usage records
(:mod:`core.archive.usage_records`: each API response once) with an estimated cost from
:mod:`core.outputs.pricing`; a model the price table does not know shows its tokens and no
cost. The embedded archive and the team store feed the same functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from core.archive.usage_records import Record, catalog_file_records
from core.errors import BadInput
from core.model import SessionInfo
from core.timeutil import parse_ts, parse_user_time

from .pricing import PRICES_AS_OF, cost

GROUPS = ("day", "week", "month", "project", "model", "session", "agent")
UNKNOWN_DATE = "unknown date"  # the row of responses whose time is unknown (counted, never dropped)
# One response cannot really bill more; a hostile count above it is taken as this, so a
# sum stays an int and a cost a finite float whatever the records hold.
MAX_TOKENS = 2**63 - 1
ESTIMATE_NOTE = f"estimated cost at list API prices as of {PRICES_AS_OF} (an estimate, not a bill)"


# --- totals and reports ----------------------------------------------------------------------


@dataclass(slots=True)
class Totals:
    """Token sums and their estimated cost (``cost_usd`` None: no priced model in it)."""

    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    responses: int = 0
    cost_usd: float | None = None
    unpriced_models: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_creation + self.cache_read

    def add(self, r: Record) -> None:
        counts = [tokens(r.input), tokens(r.output), tokens(r.cache_creation), tokens(r.cache_read)]
        self.input += counts[0]
        self.output += counts[1]
        self.cache_creation += counts[2]
        self.cache_read += counts[3]
        self.responses += 1
        model = r.model if isinstance(r.model, str) else None
        got = cost(model, *counts)
        if got is None:
            if any(counts):
                self.unpriced_models.add(model or "unknown")
        elif math.isfinite(got):
            self.cost_usd = (self.cost_usd or 0.0) + got

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_creation_tokens": self.cache_creation,
            "cache_read_tokens": self.cache_read,
            "total_tokens": self.total,
            "responses": self.responses,
            "estimated_cost_usd": None if self.cost_usd is None or not math.isfinite(self.cost_usd)
            else round(self.cost_usd, 4),
            "unpriced_models": sorted(self.unpriced_models),
        }

    def short(self) -> str:
        """One line for a header: tokens and the estimate."""
        if not self.responses:
            return "no token usage recorded"
        cache = human(self.cache_creation + self.cache_read)
        line = f"{human(self.total)} tokens (in {human(self.input)} · out {human(self.output)} · cache {cache})"
        if self.cost_usd is not None and math.isfinite(self.cost_usd):
            line += f" · ≈{money(self.cost_usd)} est."
        if self.unpriced_models:
            line += " · no price for " + ", ".join(sorted(self.unpriced_models))
        return line


def combined(parts: Iterable[Totals]) -> Totals:
    """Several sessions' totals as one (a range or chain's statistics)."""
    out = Totals()
    for t in parts:
        out.input += t.input
        out.output += t.output
        out.cache_creation += t.cache_creation
        out.cache_read += t.cache_read
        out.responses += t.responses
        if t.cost_usd is not None:
            out.cost_usd = (out.cost_usd or 0.0) + t.cost_usd
        out.unpriced_models |= t.unpriced_models
    return out


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token totals grouped ``by`` day, week, month, project, model, session or agent."""

    by: str
    rows: tuple[tuple[str, Totals], ...]
    total: Totals
    models: Mapping[str, tuple[tuple[str, Totals], ...]] | None = None  # --breakdown: each row's models

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for group, t in self.rows:
            row = {"group": group, **t.to_dict()}
            if self.models is not None:
                row["models"] = [{"model": m, **mt.to_dict()} for m, mt in self.models.get(group, ())]
            rows.append(row)
        return {
            "by": self.by,
            "note": ESTIMATE_NOTE,
            "prices_as_of": PRICES_AS_OF,
            "rows": rows,
            "total": self.total.to_dict(),
        }


def tokens(value: object) -> int:
    """A record's token count as a sum may take it: an int in ``[0, MAX_TOKENS]``."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return 0
    return min(value, MAX_TOKENS)


def human(n: int) -> str:
    """``1.2M``-style counts; past what a float divides exactly, whole billions (never an overflow)."""
    for unit, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.1f}{unit}" if n < 10**18 else f"{n // size:,}{unit}"
    return str(n)


def money(cost_usd: float | None, unpriced: bool = False) -> str:
    """``$1,234.56`` (``+`` when some of its tokens have no price), ``—`` for no priced model."""
    if cost_usd is None or not math.isfinite(cost_usd):
        return "—"
    return f"${cost_usd:,.2f}" + ("+" if unpriced else "")


def totals_of(records: Iterable[Record]) -> Totals:
    totals = Totals()
    for r in records:
        totals.add(r)
    return totals


def catalog_sessions_totals(catalog, session_ids: Iterable[str]) -> dict[str, Totals]:
    """Tokens and estimated cost per session: every file of its id (subagents, pings)."""
    wanted = list(session_ids)
    files: dict[str, list[int]] = {sid: [] for sid in wanted}
    marks = ",".join("?" * len(wanted))
    for row in catalog.files(("file_id", "session_id"), f"WHERE session_id IN ({marks})", wanted) if wanted else ():
        files[row["session_id"]].append(row["file_id"])
    return {sid: totals_of(catalog_file_records(catalog, ids)) for sid, ids in files.items()}


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose a file's usage is: its agent, session and project.

    A subagent file whose parent session is not listed (Claude Code 2.0's
    "Warmup" agents beside an empty session file) still spent its tokens: it is
    counted under its agent, with its project dir's name and no session ref.
    """

    agent: str
    session_id: str | None
    project: str
    ref: str | None


def owners(files: Iterable[Mapping[str, Any]], sessions: Mapping[str, SessionInfo]) -> dict[int, Owner]:
    """File id → owner, from catalog file rows (file_id, agent, session_id, project_key)."""
    rows = list(files)
    # A file no listed session owns (an orphan subagent) takes the name its project dir
    # has for the listed sessions beside it: one project, one row.
    names: dict[str, str] = {}
    for f in rows:
        info = sessions.get(f["session_id"] or "")
        if info is not None and f["project_key"] not in names:
            names[f["project_key"]] = info.project
    out: dict[int, Owner] = {}
    for f in rows:
        info = sessions.get(f["session_id"] or "")
        key = f["project_key"] or ""
        out[f["file_id"]] = Owner(
            agent=f["agent"],
            session_id=f["session_id"],
            project=info.project if info else names.get(key, key),
            ref=(info.ref or info.session_id) if info else f["session_id"],
        )
    return out


def select(
    records: Iterable[Record],
    files: Mapping[int, Owner],
    *,
    date_from: str | None = None,
    date_to: str | None = None,
    project: str | None = None,
    agent: str | None = None,
) -> Iterator[tuple[Record, Owner, float | None]]:
    """The records the filters keep, each with its owner and time (None: unknown).

    A response of unknown time counts (under :data:`UNKNOWN_DATE`) unless a date
    bound is given, which it cannot be said to meet.
    """
    ts_from = parse_user_time(date_from, name="date_from")
    ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
    for r in records:
        owner = files.get(r.file_id)
        if owner is None:
            continue  # removed since the records were read
        if project and not (owner.project == project or owner.project.endswith("/" + project)):
            continue
        if agent and owner.agent != agent:
            continue
        when = epoch(r.timestamp)
        if (ts_from is not None or ts_to is not None) and when is None:
            continue
        if when is not None and (ts_from is not None and when < ts_from or ts_to is not None and when > ts_to):
            continue
        yield r, owner, when


def report(
    records: Iterable[Record],
    files: Mapping[int, Owner],
    *,
    by: str = "day",
    date_from: str | None = None,
    date_to: str | None = None,
    project: str | None = None,
    agent: str | None = None,
    breakdown: bool = False,
) -> UsageReport:
    """Totals per group (``files``: :func:`owners`); ``breakdown``: each group's models too."""
    if by not in GROUPS:
        raise BadInput(f"--by must be one of {', '.join(GROUPS)}, block")
    groups: dict[str, Totals] = {}
    per_model: dict[str, dict[str, Totals]] = {}
    total = Totals()
    for r, owner, when in select(records, files, date_from=date_from, date_to=date_to, project=project, agent=agent):
        label = _label(by, r, owner, when)
        groups.setdefault(label, Totals()).add(r)
        total.add(r)
        if breakdown:
            per_model.setdefault(label, {}).setdefault(_label("model", r, owner, when), Totals()).add(r)
    if by in ("day", "week", "month"):
        rows = sorted(kept_rows(groups), key=lambda kv: (kv[0] == UNKNOWN_DATE, kv[0]))
    else:
        rows = sorted(kept_rows(groups), key=by_cost)
    models = None
    if breakdown:
        models = {label: tuple(sorted(kept_rows(per_model[label]), key=by_cost)) for label, _ in rows}
    return UsageReport(by=by, rows=tuple(rows), total=total, models=models)


def kept_rows(groups: Mapping[str, Totals]) -> list[tuple[str, Totals]]:
    """The groups worth a row: one of responses that billed no token (``<synthetic>``) is not."""
    return [(label, t) for label, t in groups.items() if t.total]


def by_cost(row: tuple[str, Totals]) -> tuple[float, int, str]:
    return (-(row[1].cost_usd or 0.0), -row[1].total, row[0])


def epoch(timestamp: object) -> float | None:
    """A record's time in epoch seconds, None when unknown (missing, garbage, out of range)."""
    when = parse_ts(timestamp)
    if not math.isfinite(when) or day_of(when) is None:
        return None
    return when


def day_of(when: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(when, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _label(by: str, r: Record, owner: Owner, when: float | None) -> str:
    if by == "project":
        return owner.project
    if by == "model":
        return r.model if isinstance(r.model, str) and r.model else "unknown"
    if by == "session":
        return owner.ref or "unknown"
    if by == "agent":
        return owner.agent
    day = None if when is None else day_of(when)
    if day is None:
        return UNKNOWN_DATE
    if by == "day":
        return day.strftime("%Y-%m-%d")
    if by == "month":
        return day.strftime("%Y-%m")
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
