"""Token usage and its estimated cost: stored per API response, reported by group.

Adapters hand every response's usage to the indexer (:class:`~core.model.Usage`);
the catalog keeps one row per (file, response key), merged field-wise by maximum
(Claude Code writes a response's usage on each record it split the response into,
``output_tokens`` growing as it streamed). A response copied into several files
(a replayed or forked session) is counted once, for the first file that holds it.

Reports are plain sums over those rows with an estimated cost from
:mod:`core.outputs.pricing`; a model the price table does not know shows its tokens and no
cost. The embedded archive and the team store feed the same functions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import msgspec

from core.errors import BadInput
from core.model import SessionInfo, Usage
from core.timeutil import parse_ts, parse_user_time

from .pricing import PRICES_AS_OF, cost

GROUPS = ("day", "week", "month", "project", "model", "session", "agent")
ESTIMATE_NOTE = f"estimated cost at list API prices as of {PRICES_AS_OF} (an estimate, not a bill)"

# SQLite: one row per (file, response); merged across the records of a response.
CATALOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage(
    file_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    ts TEXT,
    model TEXT,
    input INTEGER NOT NULL DEFAULT 0,
    output INTEGER NOT NULL DEFAULT 0,
    cache_creation INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(file_id, key)
);
CREATE INDEX IF NOT EXISTS usage_key ON usage(key);
"""
_UPSERT = (
    "INSERT INTO usage(file_id, key, ts, model, input, output, cache_creation, cache_read) VALUES(?,?,?,?,?,?,?,?) "
    "ON CONFLICT(file_id, key) DO UPDATE SET input=max(input, excluded.input), output=max(output, excluded.output), "
    "cache_creation=max(cache_creation, excluded.cache_creation), cache_read=max(cache_read, excluded.cache_read), "
    "model=coalesce(model, excluded.model), ts=coalesce(ts, excluded.ts)"
)
# Each response once (the grouping is done in Python): it belongs to the first file
# that holds it, a file that replays another session's records coming last.
ORDERED_SQL = (
    "SELECT u.key, u.file_id, u.ts, u.model, u.input, u.output, u.cache_creation, u.cache_read FROM usage u "
    "LEFT JOIN files f ON f.file_id = u.file_id ORDER BY u.key, f.replay_of IS NOT NULL, u.file_id"
)


class Record(msgspec.Struct, frozen=True, gc=False):
    """One API response's usage, deduplicated, with the file that holds it.

    (A struct, not a dataclass: a long session's header sums thousands of them, and
    a frozen dataclass took most of that time just to be built.)
    """

    key: str
    file_id: int
    timestamp: str | None
    model: str | None
    input: int
    output: int
    cache_creation: int
    cache_read: int


def merge(usages: Iterable[Usage]) -> list[Usage]:
    """Usages sharing a key merged as the catalog's upsert merges them, in first-seen order.

    Counts take each field's maximum; model and time the first that is not None
    (SQL ``coalesce``). A parse worker merges a file's records before sending
    them (Claude Code writes a response's usage on each of its records, so half
    the rows of a cold index were repeats): storing the merged rows leaves the
    catalog exactly as storing every record's row would.
    """
    out: dict[str, Usage] = {}
    for u in usages:
        seen = out.get(u.key)
        if seen is None:
            out[u.key] = u
            continue
        out[u.key] = Usage(
            key=u.key, model=u.model if seen.model is None else seen.model,
            timestamp=u.timestamp if seen.timestamp is None else seen.timestamp, uuid=seen.uuid,
            input_tokens=max(seen.input_tokens, u.input_tokens), output_tokens=max(seen.output_tokens, u.output_tokens),
            cache_creation_tokens=max(seen.cache_creation_tokens, u.cache_creation_tokens),
            cache_read_tokens=max(seen.cache_read_tokens, u.cache_read_tokens),
        )
    return list(out.values())


# --- the catalog ---------------------------------------------------------------------------


def store(db, file_id: int, usages: Iterable[Usage], *, replace: bool) -> None:
    """Record a file's usage (inside the indexer's write transaction)."""
    if replace:
        db.execute("DELETE FROM usage WHERE file_id=?", (file_id,))
    db.executemany(
        _UPSERT,
        [(file_id, u.key, u.timestamp, u.model, u.input_tokens, u.output_tokens, u.cache_creation_tokens, u.cache_read_tokens) for u in usages],
    )


def drop(db, file_id: int) -> None:
    db.execute("DELETE FROM usage WHERE file_id=?", (file_id,))


def dedupe(rows: Iterable[tuple]) -> list[Record]:
    """Rows ordered by key (owner first) → one record per key, each field's maximum."""
    out: list[Record] = []
    for row in rows:
        if out and out[-1].key == row[0]:
            last = out[-1]
            out[-1] = Record(
                last.key, last.file_id, last.timestamp or row[2], last.model or row[3],
                max(last.input, row[4]), max(last.output, row[5]), max(last.cache_creation, row[6]), max(last.cache_read, row[7]),
            )
        else:
            out.append(Record(*row))
    return out


def catalog_file_records(catalog, file_ids: list[int]) -> list[Record]:
    """The responses one session's files own, without reading every response.

    The same rule as :func:`catalog_records` (a response belongs to the first file
    holding it, replaying files last), checked only for the few keys another
    file also holds: opening a conversation stays as fast in a huge archive.
    """
    if not file_ids:
        return []
    db = catalog.db
    marks = ",".join("?" * len(file_ids))
    # Ordered by key as catalog_records is (so the sums add up in the same order);
    # a key held twice is rare and only then does the replaying rank matter.
    rows = db.execute(
        f"SELECT key, file_id, ts, model, input, output, cache_creation, cache_read FROM usage "
        f"WHERE file_id IN ({marks}) ORDER BY key, file_id",
        file_ids,
    ).fetchall()
    replaying = {r[0] for r in db.execute(f"SELECT file_id FROM files WHERE file_id IN ({marks}) AND replay_of IS NOT NULL", file_ids)}
    if len({row[0] for row in rows}) == len(rows):
        records = [Record(*row) for row in rows]
    else:
        records = dedupe(sorted(rows, key=lambda row: (row[0], row[1] in replaying, row[1])))
    shared = db.execute(
        f"SELECT o.key, o.file_id, f.replay_of IS NOT NULL FROM usage mine JOIN usage o ON o.key = mine.key "
        f"LEFT JOIN files f ON f.file_id = o.file_id WHERE mine.file_id IN ({marks}) AND o.file_id NOT IN ({marks})",
        [*file_ids, *file_ids],
    ).fetchall()
    if not shared:
        return records
    first_elsewhere: dict[str, tuple[bool, int]] = {}
    for key, file_id, replays in shared:
        rank = (bool(replays), file_id)
        if key not in first_elsewhere or rank < first_elsewhere[key]:
            first_elsewhere[key] = rank
    return [r for r in records if r.key not in first_elsewhere or (r.file_id in replaying, r.file_id) < first_elsewhere[r.key]]


_cache: dict[str, tuple[int, list[Record]]] = {}
_cache_lock = threading.Lock()


def catalog_records(catalog, generation: int) -> list[Record]:
    """Every response once, from the catalog (kept while the generation stays)."""
    key = str(catalog.path)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == generation:
            return hit[1]
    records = dedupe(catalog.db.execute(ORDERED_SQL))
    with _cache_lock:
        _cache[key] = (generation, records)
    return records


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
        if ts_from is not None and when < ts_from or ts_to is not None and when > ts_to:
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
