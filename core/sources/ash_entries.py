"""Ash context items to entries: one record can yield several (thinking, text, tool
use, tool result), and every branch but the default opens its own turn with a
note that says where it forks.

Separate from :mod:`.ash_tree` (which decides the segments and their order) and
:mod:`.ash` (finding and reading files): this is the part that writes entries.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from core.model import COMPACTION_TEXT, Entry

from .ash_records import _encode, _str, _text, _ts, bound, message_text
from .ash_tree import _Item, _Tree, is_prompt


class _Emitter:
    """Context items -> entries (one record can yield several: thinking, text, tools)."""

    def __init__(self, full: bool, sidechain_file: bool, items: list[_Item]) -> None:
        self.full = full
        self.sidechain_file = sidechain_file
        self.entries: list[Entry] = []
        self.tool_names: dict[str, str] = {}
        self.explicit_uses = {i.rec.get("id") for i in items if i.kind == "tool_use"}
        self.explicit_results = {i.rec.get("tool_use_id") for i in items if i.kind == "tool_result"}
        self.agents_prompted: set[str] = set()
        self.unreadable = 0

    def segment(self, label: str | None, fork: str | None, items: list[_Item], tree: _Tree) -> None:
        """One branch segment. A non-default branch opens its own turn with a note that
        says where it forks, then its own first prompt, or, when it starts with a
        regenerated answer, the question it answers repeated (``uuid=None``). The note
        opens the turn (so a reader meets it before the branch, not inside it); the
        prompt after it is still the turn's prompt."""
        if label is None or not items:
            for item in items:
                self.item(item, label)
            return
        first = next(
            (i for i, it in enumerate(items) if it.kind == "message" and not it.sidechain), None
        )
        opens = first is not None and is_prompt(items[first])
        head = items[: first + 1] if opens and first is not None else []
        where = f"message {fork}" if fork else "the start"
        self._add("system", "text", f"Branch {label} forks from {where}", items[0], label,
                  parent=fork, starts=True)  # fmt: skip
        note = len(self.entries)
        for item in head:
            self.item(item, label)
        asked = None if opens else tree.prompt_above(fork)
        if asked is not None:
            self._add("user", "text", message_text(asked.rec), asked, label,
                      parent=_str(asked.rec.get("id")))  # fmt: skip
        # (one turn: the prompt after the note does not start another)
        self.entries[note:] = [replace(e, starts_turn=False) if e.starts_turn else e for e in self.entries[note:]]
        for item in items[len(head) :]:
            self.item(item, label)

    def item(self, item: _Item, label: str | None) -> None:
        """One context item; a failure on a shape nobody foresaw costs this item only."""
        kept = len(self.entries)
        try:
            self._item(item, label)
        except Exception:
            del self.entries[kept:]
            self.unreadable += 1

    def _item(self, item: _Item, label: str | None) -> None:
        rec, kind = item.rec, item.kind
        if kind == "message":
            self._message(item, label)
        elif kind == "tool_use":
            name = _str(rec.get("name"))
            self._tool_use(item, label, _str(rec.get("id")), name, rec.get("input"))
        elif kind == "tool_result":
            call = _str(rec.get("tool_use_id"))
            self._add(
                "tool",
                "tool_result",
                bound(_text(rec.get("output")), self.full),
                item,
                label,
                parent=call,
                tool=self.tool_names.get(call or ""),
            )
        elif kind == "compaction":
            self._add("system", "compaction", COMPACTION_TEXT, item, label, uid=_str(rec.get("id")))
        elif kind == "agent_session":
            name = ":".join(
                s for s in (_str(rec.get("agent_type")), _str(rec.get("agent_name"))) if s
            )
            self._add(
                "system",
                "text",
                f"Subagent {name or '?'} started",
                item,
                label,
                uid=_str(rec.get("id")),
                parent=_str(rec.get("parent_tool_use_id")),
                side=True,
            )
        elif kind == "agent_session_complete":
            status = "failed" if rec.get("is_error") else "finished"
            self._add(
                "system",
                "text",
                f"Subagent {status}",
                item,
                label,
                parent=_str(rec.get("agent_session_id")),
                side=True,
            )

    def _message(self, item: _Item, label: str | None) -> None:
        rec = item.rec
        role = rec.get("role")
        uid = _str(rec.get("id"))
        content = rec.get("content")
        blocks = (
            content if isinstance(content, list) else [{"type": "text", "text": _text(content)}]
        )
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "thinking" and _str(block.get("thinking")):
                self._add("assistant", "thinking", block["thinking"], item, label, uid=uid)
            elif btype == "tool_use" and block.get("id") not in self.explicit_uses:
                self._tool_use(
                    item, label, _str(block.get("id")), _str(block.get("name")), block.get("input")
                )
            elif btype == "tool_result" and block.get("tool_use_id") not in self.explicit_results:
                call = _str(block.get("tool_use_id"))
                self._add(
                    "tool",
                    "tool_result",
                    bound(_text(block.get("content")), self.full),
                    item,
                    label,
                    parent=call,
                    tool=self.tool_names.get(call or ""),
                )
        text = message_text(rec)
        if not text:
            return
        parent = _str(rec.get("parent_id"))
        if role == "user":
            agent = _str(rec.get("agent_session_id"))
            # a subagent's first user message is its task, not something a person typed
            typed = agent is None or agent in self.agents_prompted
            if agent:
                self.agents_prompted.add(agent)
            self._add("user", "text", text, item, label, uid=uid, parent=parent, starts=typed)
        elif role == "assistant":
            self._add("assistant", "text", text, item, label, uid=uid, parent=parent)
        else:
            self._add("system", "text", text, item, label, uid=uid, parent=parent)

    def _tool_use(
        self, item: _Item, label: str | None, call: str | None, name: str | None, args: Any
    ) -> None:
        if call and name:
            self.tool_names[call] = name
        raw = _encode(args).decode() if args is not None else ""
        self._add(
            "assistant",
            "tool_use",
            bound(raw, self.full),
            item,
            label,
            uid=call,
            tool=name,
            tool_input=args if isinstance(args, dict) else None,
        )

    def _add(
        self,
        role: str,
        type_: str,
        text: str,
        item: _Item | None,
        label: str | None,
        *,
        uid: str | None = None,
        parent: str | None = None,
        tool: str | None = None,
        tool_input: dict[str, Any] | None = None,
        starts: bool = False,
        side: bool = False,
    ) -> None:
        self.entries.append(
            Entry(
                role=role,
                type=type_,
                text=text,
                timestamp=_ts(item.rec) if item else None,
                uuid=uid,
                parent_uuid=parent,
                is_sidechain=self.sidechain_file or side or bool(item and item.sidechain),
                entry_index=item.index if item else 0,
                starts_turn=starts,
                tool_name=tool,
                tool_input=tool_input,
                branch=label,
            )
        )
