"""``relay-search usage`` as text: the table per group, per model (``--breakdown``) and per
5-hour block (``--by block``), wide or compact.

The wide table has a column per kind of token; under 100 columns (or with
``--compact``) cache writes and reads share one column so a row fits 80. Every table
ends with the total and what the cost means (an estimate at dated list prices).
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.outputs.usage import Totals, UsageReport
    from core.outputs.usage_blocks import BlockReport

COMPACT_BELOW = 100  # terminal columns


def is_compact(forced: bool) -> bool:
    return forced or shutil.get_terminal_size((120, 24)).columns < COMPACT_BELOW


def format_report(report: UsageReport, *, compact: bool = False) -> str:
    """One row per group (and its models with ``--breakdown``), then the total and the note."""
    rows: list[list[str]] = []
    for label, t in report.rows:
        rows.append(_cells(label, t, compact))
        for model, mt in (report.models or {}).get(label, ()):
            rows.append(_cells(f"  └ {model}", mt, compact))
    out = _table(_head(report.by, compact), rows, _cells("TOTAL", report.total, compact))
    if not report.rows:
        out.insert(0, "No token usage recorded in the selected sessions.")
    return "\n".join(out + _notes(report.total))


def format_blocks(report: BlockReport, *, compact: bool = False) -> str:
    """One row per 5-hour block (the active one marked), its burn rate and projection below."""
    from core.outputs.usage import human, money

    rows: list[list[str]] = []
    for block in report.blocks:
        label = block.label + (" ●" if block.is_active(report.now) else "")
        rows.append(_cells(label, block.totals, compact))
    out = _table(_head("block (UTC, 5 h)", compact), rows, _cells("TOTAL", report.total, compact))
    if not report.blocks:
        out.insert(0, "No token usage recorded in the selected sessions.")
    active = report.active
    if active is not None and active.end is not None:
        left = max(0, round((active.end - report.now) / 60))
        out += ["", f"● active block: {left // 60} h {left % 60:02d} min left"]
        rate, projected = active.burn(), active.projection(report.now)
        if rate is None or projected is None:
            out.append("  burn rate: not yet (one response so far)")
        else:
            per_hour = "" if rate[1] is None else f" · ≈{money(rate[1])}/h est."
            out.append(f"  burn rate: {human(int(rate[0]))} tokens/min{per_hour}")
            cost = "" if projected[1] is None else f" · ≈{money(projected[1])} est."
            out.append(f"  projected at the block's end: {human(projected[0])} tokens{cost}")
    return "\n".join(out + _notes(report.total))


def _head(first: str, compact: bool) -> list[str]:
    if compact:
        return [first, "input", "output", "cache", "total", "est. cost"]
    return [first, "input", "output", "cache write", "cache read", "total", "est. cost"]


def _cells(label: str, t: Totals, compact: bool) -> list[str]:
    from core.outputs.usage import human, money

    cost = money(t.cost_usd, bool(t.unpriced_models))
    if compact:
        return [label, human(t.input), human(t.output), human(t.cache_creation + t.cache_read), human(t.total), cost]
    return [label, human(t.input), human(t.output), human(t.cache_creation), human(t.cache_read), human(t.total), cost]


def _table(head: list[str], rows: list[list[str]], total: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, total, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join([cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)])

    rule = line(["─" * w for w in widths])
    return [line(head), rule, *(line(r) for r in rows), rule, line(total)]


def _notes(total: Totals) -> list[str]:
    from core.outputs.usage import ESTIMATE_NOTE

    out = ["", f"Cost: {ESTIMATE_NOTE}."]
    if total.unpriced_models:
        out.append("No price known for: " + ", ".join(sorted(total.unpriced_models)) + " (tokens counted, no cost).")
    return out
