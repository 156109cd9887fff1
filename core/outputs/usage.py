"""Token usage reports: sums by group with an estimated cost.

Reports are plain sums over the catalog's usage records
(:mod:`core.archive.usage_records`: each API response once) with an estimated cost from
:mod:`core.outputs.pricing`; a model the price table does not know shows its tokens and no
cost. The embedded archive and the team store feed the same functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from core.archive.usage_records import Record, catalog_file_records
from core.errors import BadInput
from core.model import SessionInfo
from core.timeutil import parse_ts, parse_user_time

from .pricing import PRICES_AS_OF, cost

GROUPS = ("day", "week", "month", "project", "model", "session", "agent")
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
        self.input += r.input
        self.output += r.output
        self.cache_creation += r.cache_creation
        self.cache_read += r.cache_read
        self.responses += 1
        got = cost(r.model, r.input, r.output, r.cache_creation, r.cache_read)
        if got is None:
            if r.input or r.output or r.cache_creation or r.cache_read:
                self.unpriced_models.add(r.model or "unknown")
        else:
            self.cost_usd = (self.cost_usd or 0.0) + got

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_creation_tokens": self.cache_creation,
            "cache_read_tokens": self.cache_read,
            "total_tokens": self.total,
            "responses": self.responses,
            "estimated_cost_usd": None if self.cost_usd is None else round(self.cost_usd, 4),
            "unpriced_models": sorted(self.unpriced_models),
        }

    def short(self) -> str:
        """One line for a header: tokens and the estimate."""
        if not self.responses:
            return "no token usage recorded"
        line = f"{human(self.total)} tokens (in {human(self.input)} · out {human(self.output)} · cache {human(self.cache_creation + self.cache_read)})"
        if self.cost_usd is not None:
            line += f" · ≈${self.cost_usd:,.2f} est."
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "note": ESTIMATE_NOTE,
            "prices_as_of": PRICES_AS_OF,
            "rows": [{"group": g, **t.to_dict()} for g, t in self.rows],
            "total": self.total.to_dict(),
        }


def human(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


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
    out: dict[int, Owner] = {}
    for f in files:
        info = sessions.get(f["session_id"] or "")
        out[f["file_id"]] = Owner(
            agent=f["agent"],
            session_id=f["session_id"],
            project=info.project if info else f["project_key"],
            ref=(info.ref or info.session_id) if info else f["session_id"],
        )
    return out


def report(
    records: Iterable[Record],
    files: Mapping[int, Owner],
    *,
    by: str = "day",
    date_from: str | None = None,
    date_to: str | None = None,
    project: str | None = None,
    agent: str | None = None,
) -> UsageReport:
    """Totals per group (``files``: :func:`owners`)."""
    if by not in GROUPS:
        raise BadInput(f"--by must be one of {', '.join(GROUPS)}")
    ts_from = parse_user_time(date_from, name="date_from")
    ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
    groups: dict[str, Totals] = {}
    total = Totals()
    for r in records:
        owner = files.get(r.file_id)
        if owner is None:
            continue  # removed since the records were read
        if project and not (owner.project == project or owner.project.endswith("/" + project)):
            continue
        if agent and owner.agent != agent:
            continue
        when = parse_ts(r.timestamp) or None
        if (ts_from is not None or ts_to is not None) and when is None:
            continue
        if when is not None and (ts_from is not None and when < ts_from or ts_to is not None and when > ts_to):
            continue
        label = _label(by, r, owner, when)
        groups.setdefault(label, Totals()).add(r)
        total.add(r)
    if by in ("day", "week", "month"):
        rows = sorted(groups.items())
    else:
        rows = sorted(groups.items(), key=lambda kv: (-(kv[1].cost_usd or 0.0), -kv[1].total, kv[0]))
    return UsageReport(by=by, rows=tuple(rows), total=total)


def _label(by: str, r: Record, owner: Owner, when: float | None) -> str:
    if by == "project":
        return owner.project
    if by == "model":
        return r.model or "unknown"
    if by == "session":
        return owner.ref or "unknown"
    if by == "agent":
        return owner.agent
    if when is None:
        return "unknown"
    day = datetime.fromtimestamp(when, tz=timezone.utc)
    if by == "day":
        return day.strftime("%Y-%m-%d")
    if by == "month":
        return day.strftime("%Y-%m")
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
