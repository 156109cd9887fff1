"""An export as JSON in the shape of the Messages API.

Each session's ``messages`` is a list a client could send back to a model:
``{"role": "user"|"assistant", "content": [blocks]}``, roles alternating, blocks
``text``, ``thinking`` (with ``--thinking``), ``tool_use`` (``id``, ``name``,
``input``) and ``tool_result`` (``tool_use_id``, ``content``) in a user message,
as the API wants them. Tool ids are the export's own (``toolu_<session>_<n>``):
the transcripts do not all keep the API's ids. The document already put each
result right after its call (paired by the transcript's ids,
:func:`.document.pair_results`), so several calls made at once come out as call,
result, call, result — each result with its own call's id. What the API has no
place for sits beside ``messages``: ``events`` (compactions and notes, each with
the index of the message it precedes) and ``subagents`` (each a nested conversation of the same shape, with the turn and
message index where it ran), plus the session's metadata and token usage.
"""

from __future__ import annotations

import json
from typing import Any

from core.model import Message

from .document import Block, ExportDoc, SessionDoc, Subagent


def render(doc: ExportDoc, *, thinking: bool = False) -> str:
    data = {
        "ref": doc.ref,
        "title": doc.title,
        "turn": doc.turn,
        "first_timestamp": doc.first_timestamp,
        "last_timestamp": doc.last_timestamp,
        "exported_at": doc.exported_at,
        "exported_by": "relay-search",
        "sessions": [_session(s, thinking) for s in doc.sessions],
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def _session(session: SessionDoc, thinking: bool) -> dict[str, Any]:
    info = session.info
    conv = _Conversation(f"s{session.number}", thinking)
    conv.feed(session.preface, None)
    for turn in session.turns:
        conv.feed(turn.blocks, turn.number)
    return {
        "session_id": info.session_id,
        "session_number": info.session_number,
        "agent": info.agent,
        "project": info.project,
        "cwd": info.cwd,
        "git_branch": info.git_branch,
        "first_timestamp": info.first_timestamp,
        "last_timestamp": info.last_timestamp,
        "usage": session.usage.to_dict() if session.usage is not None else None,
        **conv.result(),
    }


class _Conversation:
    def __init__(self, prefix: str, thinking: bool) -> None:
        self.prefix = prefix
        self.thinking = thinking
        self.messages: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.subagents: list[dict[str, Any]] = []
        self.pending: list[str] = []  # tool ids waiting for their result, in call order
        self.count = 0

    def result(self) -> dict[str, Any]:
        return {"messages": self.messages, "events": self.events, "subagents": self.subagents}

    def feed(self, blocks: list[Block], turn: int | None) -> None:
        for block in blocks:
            if isinstance(block, Subagent):
                inner = _Conversation(f"{self.prefix}_a{len(self.subagents) + 1}", self.thinking)
                inner.feed(block.blocks, None)
                self.subagents.append({"label": block.label, "turn": turn, "at_message": len(self.messages),
                                       **inner.result()})
            else:
                self._message(block, turn)

    def _message(self, m: Message, turn: int | None) -> None:
        if m.type == "tool_use":
            self.count += 1
            tool_id = f"toolu_{self.prefix}_{self.count}"
            self.pending.append(tool_id)
            self._add("assistant", {"type": "tool_use", "id": tool_id, "name": m.tool_name or "tool",
                                    "input": m.tool_input or {}})
        elif m.type == "tool_result":
            tool_id = self.pending.pop(0) if self.pending else f"toolu_{self.prefix}_orphan_{m.sequence}"
            self._add("user", {"type": "tool_result", "tool_use_id": tool_id, "content": m.text})
        elif m.type == "thinking":
            if self.thinking:
                self._add("assistant", {"type": "thinking", "thinking": m.text})
        elif m.role in ("user", "assistant") and m.type == "text":
            self._add(m.role, {"type": "text", "text": m.text})
        else:
            self.events.append({"type": m.type, "role": m.role, "text": m.text, "timestamp": m.timestamp, "turn": turn,
                                "before_message": len(self.messages)})

    def _add(self, role: str, block: dict[str, Any]) -> None:
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].append(block)
        else:
            self.messages.append({"role": role, "content": [block]})
