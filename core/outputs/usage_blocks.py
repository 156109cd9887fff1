"""5-hour billing blocks: ``relay-search usage --by block`` (what ``ccusage blocks`` shows).

Claude's subscription limits count usage in windows of five hours that open with the
first message after the previous window closed. The blocks are rebuilt from the
responses' times as ccusage does: a block starts at its first response's time
floored to the hour and lasts :data:`BLOCK_SECONDS`; the first response at or after
its end, or after a gap of a whole block, opens the next one. Blocks with nothing in
them (the gaps) are not rows. Responses of unknown time cannot be placed: they are
one row of their own, last, so the total still covers every response.

The **active** block (its end is still ahead and its last response less than a
block ago) has a burn rate — tokens per minute and estimated dollars per hour,
from its first response to its last — and a projection: what it holds at its end if
that rate goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.archive.usage_records import Record
from core.timeutil import iso as _iso

from .pricing import PRICES_AS_OF
from .usage import ESTIMATE_NOTE, UNKNOWN_DATE, Owner, Totals, select

BLOCK_SECONDS = 5 * 3600
HOUR = 3600


@dataclass(slots=True)
class Block:
    """One 5-hour window: its bounds, its responses' totals and the models they used."""

    start: float | None  # None: the row of responses of unknown time
    totals: Totals = field(default_factory=Totals)
    first: float | None = None
    last: float | None = None
    models: set[str] = field(default_factory=set)

    @property
    def end(self) -> float | None:
        return None if self.start is None else self.start + BLOCK_SECONDS

    @property
    def label(self) -> str:
        at = None if self.start is None else iso(self.start)
        return UNKNOWN_DATE if at is None else at[:16].replace("T", " ")

    def is_active(self, now: float) -> bool:
        return self.end is not None and self.last is not None and now < self.end and now - self.last < BLOCK_SECONDS

    def burn(self) -> tuple[float, float | None] | None:
        """Tokens per minute and estimated dollars per hour, first response to last (None: no span yet)."""
        if self.first is None or self.last is None or self.last <= self.first:
            return None
        minutes = (self.last - self.first) / 60
        dollars = None if self.totals.cost_usd is None else self.totals.cost_usd / minutes * 60
        return self.totals.total / minutes, dollars

    def projection(self, now: float) -> tuple[int, float | None] | None:
        """Tokens and estimated cost at the block's end if the burn rate holds (None: no rate)."""
        rate = self.burn()
        if rate is None or self.end is None:
            return None
        left = max(0.0, self.end - now) / 60
        cost = None if rate[1] is None or self.totals.cost_usd is None else self.totals.cost_usd + rate[1] * left / 60
        return self.totals.total + int(rate[0] * left), cost

    def to_dict(self, now: float) -> dict[str, Any]:
        active = self.is_active(now)
        out: dict[str, Any] = {
            "block": self.label,
            "start": None if self.start is None else iso(self.start),
            "end": None if self.end is None else iso(self.end),
            "first_response": None if self.first is None else iso(self.first),
            "last_response": None if self.last is None else iso(self.last),
            "active": active,
            "models": sorted(self.models),
            **self.totals.to_dict(),
        }
        if active:
            rate, projected = self.burn(), self.projection(now)
            out["burn_rate"] = None if rate is None else {
                "tokens_per_minute": round(rate[0], 1),
                "estimated_cost_usd_per_hour": None if rate[1] is None else round(rate[1], 4),
            }
            out["projected"] = None if projected is None else {
                "total_tokens": projected[0],
                "estimated_cost_usd": None if projected[1] is None else round(projected[1], 4),
            }
            out["minutes_left"] = round(max(0.0, (self.end or now) - now) / 60)
        return out


@dataclass(frozen=True, slots=True)
class BlockReport:
    blocks: tuple[Block, ...]
    total: Totals
    now: float
    by: str = "block"

    @property
    def active(self) -> Block | None:
        return next((b for b in self.blocks if b.is_active(self.now)), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "block_hours": BLOCK_SECONDS // HOUR,
            "note": ESTIMATE_NOTE,
            "prices_as_of": PRICES_AS_OF,
            "blocks": [b.to_dict(self.now) for b in self.blocks],
            "total": self.total.to_dict(),
        }


def iso(ts: float) -> str | None:
    """ISO time, None past what a datetime holds (a block opened in the year 9999 ends after it)."""
    try:
        return _iso(ts)
    except (OverflowError, OSError, ValueError):
        return None


def blocks(
    records: Iterable[Record],
    files: Mapping[int, Owner],
    *,
    now: float,
    date_from: str | None = None,
    date_to: str | None = None,
    project: str | None = None,
    agent: str | None = None,
) -> BlockReport:
    """The 5-hour blocks of the responses the filters keep, oldest first."""
    timed: list[tuple[float, Record]] = []
    unknown = Block(start=None)
    total = Totals()
    for r, _owner, when in select(records, files, date_from=date_from, date_to=date_to, project=project, agent=agent):
        total.add(r)
        if when is None:
            unknown.totals.add(r)
            _note_model(unknown, r)
        else:
            timed.append((when, r))
    timed.sort(key=lambda pair: pair[0])
    out: list[Block] = []
    for when, r in timed:
        block = out[-1] if out else None
        gap = block is not None and block.last is not None and when - block.last >= BLOCK_SECONDS
        if block is None or block.end is None or when >= block.end or gap:
            block = Block(start=when - when % HOUR)
            out.append(block)
        block.totals.add(r)
        block.first = when if block.first is None else block.first
        block.last = when
        _note_model(block, r)
    kept = [b for b in out if b.totals.total]
    if unknown.totals.total:
        kept.append(unknown)
    return BlockReport(blocks=tuple(kept), total=total, now=now)


def _note_model(block: Block, r: Record) -> None:
    if isinstance(r.model, str) and r.model and (r.input or r.output or r.cache_creation or r.cache_read):
        block.models.add(r.model)
