"""Paging and the size budget of one answer (MCP tool results, ``--json``).

An agent pays for every character a tool returns, and the MCP SDK sends a result
twice: as text (the JSON indented) and as structured content (the JSON compact),
as the MCP spec asks of a server with an output schema. :func:`result_size` counts
both, and answers that can grow (a conversation, a session's messages, one huge
turn or message) are cut to :data:`RESULT_BUDGET`: whole items first (the answer
then says where the next page starts), and a single item too big on its own has
its longest texts clipped with a note in place saying how many characters were cut
and where to read them whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

RESULT_BUDGET = 80_000  # characters of one tool result, text and structured copy together
DEFAULT_TURNS = 10  # get_conversation's page, as the conversation-search spec's read_conversation
_SLACK = 1_000  # room for what the MCP layer adds (model defaults) beyond the core's dict

T = TypeVar("T")


def result_size(payload: Any) -> int:
    """Characters the MCP SDK sends for ``payload``: indented text plus compact JSON."""
    text = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
    compact = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text) + len(compact)


def fits(payload: Any, budget: int | None) -> bool:
    return budget is None or result_size(payload) <= budget - _SLACK


def take_within(items: Sequence[T], render: Callable[[Sequence[T]], Any], budget: int | None) -> int:
    """How many leading ``items`` fit in one answer rendered by ``render`` (at least 1
    when there are any: a lone item too big is clipped by :func:`clip_to_fit`)."""
    if budget is None:
        return len(items)
    # An upper bound from each item's own size, so a long stream is never rendered
    # whole: only about a budget's worth of items is looked at.
    base = result_size(render(items[:0]))
    total, bound = base, 0
    for item in items:
        total += result_size(render([item])) - base
        if total > budget:
            break
        bound += 1
    if bound == len(items) and fits(render(items), budget):
        return len(items)
    low, high = 1, max(1, min(len(items), bound + 1))  # the largest n with render(items[:n]) within budget
    while low < high:
        mid = (low + high + 1) // 2
        if fits(render(items[:mid]), budget):
            low = mid
        else:
            high = mid - 1
    return low


def clip(text: str, keep: int, where: str) -> str:
    """``text`` cut to ``keep`` characters, with a note saying what was cut."""
    if len(text) <= keep:
        return text
    cut = len(text) - keep
    return f"{text[:keep]}\n[… {cut:,} more characters cut to stay within the {RESULT_BUDGET:,}-character result budget; {where}]"


def clip_to_fit(
    texts: list[str], render: Callable[[list[str]], Any], budget: int | None, where: str
) -> tuple[list[str], int]:
    """Shorten the longest of ``texts`` until ``render(texts)`` fits; (texts, characters cut)."""
    originals = list(texts)
    kept = [len(t) for t in originals]
    current = originals
    for _ in range(16):
        current = [clip(o, k, where) for o, k in zip(originals, kept)]
        over = 0 if budget is None else result_size(render(current)) - (budget - _SLACK)
        if over <= 0:
            break
        longest = max(range(len(kept)), key=lambda i: kept[i])
        if kept[longest] == 0:
            break
        sample = originals[longest][: kept[longest]]
        encoded = len(json.dumps(sample, ensure_ascii=False)) / max(1, len(sample))
        kept[longest] = max(0, kept[longest] - int(over / (2 * encoded)) - 400)
    return current, sum(len(o) - k for o, k in zip(originals, kept))
