"""Ash context trees are built in linear time (issue 25), counted, not timed.

A 1 MB ``context.jsonl`` took seconds: splitting the tree into branch segments
checked each node against the path walked so far with a list's ``in``, so a long
conversation cost the square of its length. Here the message ids are a ``str``
subclass that counts every comparison and hash the tree rules make; four times the
conversation (branches and compactions included) must cost at most five times the
operations (the quadratic walk cost ~16x). ``bench/ash_growth.py`` times the same
through the indexer.
"""

from __future__ import annotations

from typing import Any

from core.sources.ash_tree import _Tree


class _Counted(str):
    """A message id that counts the comparisons and hashes made with it."""

    ops = 0

    def __eq__(self, other: object) -> bool:
        _Counted.ops += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _Counted.ops += 1
        return str.__ne__(self, other)

    def __hash__(self) -> int:
        _Counted.ops += 1
        return str.__hash__(self)


def _conversation(turns: int, fork_every: int = 25) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[str, str]]]:
    """Records of an Ash context as core.fixtures.ash writes them, and the branch heads."""
    records: list[tuple[int, dict[str, Any]]] = [(0, {"type": "session", "id": "s", "version": 2})]
    heads: dict[str, str] = {}
    head: str | None = None
    n = 0

    def message(role: str, text: str, parent: str | None) -> str:
        nonlocal n
        n += 1
        mid = _Counted(f"m{n:06d}")
        rec: dict[str, Any] = {"type": "message", "id": mid, "role": role, "content": text,
                               "created_at": f"2026-02-01T10:{n // 60 % 60:02d}:{n % 60:02d}+00:00"}
        if parent:
            rec["parent_id"] = _Counted(parent)
        records.append((len(records), rec))
        return mid

    for turn in range(turns):
        prompt = message("user", f"turn {turn}: fix invoice {turn}", head)
        answer = message("assistant", f"looking at invoice {turn}", prompt)
        tool = _Counted(f"toolu_{turn:06d}")
        records.append((len(records), {"type": "tool_use", "id": tool, "message_id": answer, "name": "bash",
                                       "input": {"command": "pytest"}}))
        records.append((len(records), {"type": "tool_result", "tool_use_id": tool, "output": "1 failed"}))
        head = message("assistant", f"fixed invoice {turn}", answer)
        if turn and turn % fork_every == 0:  # a regenerated answer on a branch
            heads[f"branch-{turn}"] = message("assistant", f"another take on {turn}", prompt)
        if turn and turn % (4 * fork_every) == 0:
            records.append((len(records), {"type": "compaction", "id": f"c{turn}", "summary": "so far"}))
    heads["main"] = head or ""
    return records, list(heads.items())


def _operations(turns: int) -> tuple[int, int]:
    """(operations, segments) of building the tree of ``turns`` turns and ordering it."""
    records, heads = _conversation(turns)
    _Counted.ops = 0
    tree = _Tree(records, heads)
    ordered = tree.ordered()
    return _Counted.ops, len(ordered)


def test_four_times_the_conversation_costs_at_most_five_times_the_operations() -> None:
    small, small_segments = _operations(300)
    big, big_segments = _operations(1200)
    assert small_segments > 5 and big_segments > 4 * small_segments - 8  # branches are in it
    assert big <= 5 * small, (small, big)
