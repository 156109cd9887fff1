"""An Ash context file as a message tree, split into branch segments: the tree rules
of :mod:`.ash` (what each line hangs on, which tip is the default view, which branch
owns shared history).

Separate from :mod:`.ash_entries` so the shape of the conversation is decided in
one place, before any entry is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ash_records import _str, _ts, message_text


@dataclass(slots=True)
class _Item:
    """One context line with the message it hangs on and the branch it ends up in."""

    index: int
    rec: dict[str, Any]
    kind: str
    anchor: str | None = None
    sidechain: bool = False
    branch: str | None = None  # explicit branch scope (compaction)


class _Tree:
    """Builds the message tree of one context file and splits it into branch segments."""

    def __init__(
        self, records: list[tuple[int, dict[str, Any]]], heads: list[tuple[str, str]]
    ) -> None:
        self.items: list[_Item] = []
        self.parent: dict[str, str | None] = {}
        self.line: dict[str, int] = {}
        self.stamp: dict[str, str] = {}
        self.header: dict[str, Any] = {}
        self.labels: dict[str, str | None] = {}  # branch id -> segment label (None = default)
        self.owner: dict[str, str | None] = {}  # message id -> segment label
        self.nodes: dict[str, _Item] = {}
        self._build(records)
        self.segments = self._segments(heads)

    def _build(self, records: list[tuple[int, dict[str, Any]]]) -> None:
        ids = {
            r.get("id")
            for _, r in records
            if r.get("type") == "message" and not r.get("agent_session_id")
        }
        tool_anchor: dict[str, str | None] = {}
        agent_anchor: dict[str, str | None] = {}
        previous: str | None = None
        for index, rec in records:
            kind = rec.get("type")
            if kind == "session":
                self.header = self.header or rec
                continue
            if not isinstance(kind, str):
                continue
            sub = _str(rec.get("agent_session_id"))
            explicit = _str(rec.get("parent_id"))
            item = _Item(index, rec, kind, sidechain=bool(sub))
            if kind == "message" and not sub:
                mid = _str(rec.get("id"))
                mid = mid if mid and mid not in self.parent else f"line-{index}"
                rec = item.rec = {**rec, "id": mid}
                # (``explicit`` first: a message without an id puts None in ``ids``)
                self.parent[mid] = explicit if explicit and explicit in ids and explicit != mid else previous
                self.line[mid] = index
                self.nodes[mid] = item
                if _ts(rec):
                    self.stamp[mid] = _ts(rec) or ""
                item.anchor = previous = mid
            elif sub:
                item.anchor = agent_anchor.get(sub, previous)
            elif kind == "tool_use":
                owner = _str(rec.get("message_id")) or explicit
                item.anchor = owner if owner in self.parent else previous
            elif kind == "tool_result":
                item.anchor = tool_anchor.get(_str(rec.get("tool_use_id")) or "", previous)
            elif kind == "agent_session":
                item.anchor = tool_anchor.get(_str(rec.get("parent_tool_use_id")) or "", previous)
                agent_anchor[_str(rec.get("id")) or ""] = item.anchor
            elif kind == "agent_session_complete":
                item.anchor = agent_anchor.get(_str(rec.get("agent_session_id")) or "", previous)
            elif kind == "compaction":
                item.anchor, item.branch = previous, _str(rec.get("branch_id"))
            else:
                item.anchor = explicit if explicit in self.parent else previous
            if kind == "tool_use" and _str(rec.get("id")):
                tool_anchor[rec["id"]] = item.anchor
            if kind == "message" and isinstance(rec.get("content"), list):
                for block in rec["content"]:
                    if (
                        isinstance(block, dict)
                        and block.get("type") == "tool_use"
                        and _str(block.get("id"))
                    ):
                        tool_anchor[block["id"]] = item.anchor
            self.items.append(item)

    def _segments(
        self, heads: list[tuple[str, str]]
    ) -> list[tuple[str | None, str | None, list[str]]]:
        """[(label, fork point, node ids)] — the default path first (label None)."""
        children: dict[str, list[str]] = {}
        for child, parent in self.parent.items():
            if parent:
                children.setdefault(parent, []).append(child)
        named = {head for _, head in heads}
        tips: list[tuple[str, str]] = []
        seen: set[str] = set()
        for label, head in heads:
            # state.json can lag behind context.jsonl: a head with one unnamed chain below
            # it has simply moved on
            while len(children.get(head, ())) == 1 and children[head][0] not in named:
                head = children[head][0]
            if head in self.parent and head not in seen:
                tips.append((label, head))
                seen.add(head)
        tips += [(f"leaf:{n}", n) for n in self.parent if n not in children and n not in seen]
        tips.sort(key=lambda t: (self.stamp.get(t[1], ""), self.line[t[1]]), reverse=True)
        owner = self.owner
        segments: list[tuple[str | None, str | None, list[str]]] = []
        for rank, (label, head) in enumerate(tips):
            name = None if rank == 0 else label
            path: list[str] = []
            on_path: set[str] = set()  # (a list's `in` made a long chain quadratic: 4x the lines, 7x the time)
            node: str | None = head
            while node is not None and node not in owner and node not in on_path:
                path.append(node)
                on_path.add(node)
                node = self.parent.get(node)
            for n in path:
                owner[n] = name
            if path:
                segments.append((name, node, path[::-1]))
            self.labels[label] = name
        return segments

    def prompt_above(self, node: str | None) -> _Item | None:
        """The nearest prompt at or above ``node`` (what a regenerated answer answers)."""
        seen: set[str] = set()
        while node is not None and node not in seen:
            seen.add(node)
            item = self.nodes.get(node)
            if item is not None and is_prompt(item):
                return item
            node = self.parent.get(node)
        return None

    def ordered(self) -> list[tuple[str | None, str | None, list[_Item]]]:
        """Segments with their items, default first, the others by first line."""
        by_label: dict[str | None, list[_Item]] = {name: [] for name, _, _ in self.segments}
        by_label.setdefault(None, [])
        for item in self.items:
            if item.kind == "compaction" and item.branch in self.labels:
                label = self.labels[item.branch]
            else:
                label = self.owner.get(item.anchor) if item.anchor else None
            by_label.setdefault(label, []).append(item)
        forks = {name: fork for name, fork, _ in self.segments}
        order = sorted(
            (k for k in by_label if k is not None),
            key=lambda k: min((i.index for i in by_label[k]), default=0),
        )
        return [
            (k, forks.get(k), sorted(by_label[k], key=lambda i: i.index)) for k in [None, *order]
        ]


def is_prompt(item: _Item) -> bool:
    """A message a person typed into the main conversation."""
    return (
        item.kind == "message"
        and not item.sidechain
        and item.rec.get("role") == "user"
        and bool(message_text(item.rec))
    )
