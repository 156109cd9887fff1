"""What an export contains, built once and rendered by each format.

A document is the sessions a reference names, each as its turns in order; a turn
holds its messages in stream order (prompt, thinking, text, tool calls and their
outputs, compactions) — except that each tool output follows the call it answers
(:func:`arrange`: several calls in one message come before their outputs) — and
the work of any subagent it started, nested where the call that started it sits.
Renderers only walk this structure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from core.errors import NotFound
from core.model import Message, SessionInfo
from core.outputs.usage import Totals

SPAWNING_TOOLS = ("Task", "Agent", "spawn_agent")


@dataclass(slots=True)
class Subagent:
    label: str
    blocks: list[Block]


Block = Message | Subagent


@dataclass(slots=True)
class TurnDoc:
    number: int
    timestamp: str | None
    blocks: list[Block] = field(default_factory=list)


@dataclass(slots=True)
class SessionDoc:
    info: SessionInfo
    preface: list[Block]  # messages before the first prompt (a continuation's notes, …)
    turns: list[TurnDoc]
    usage: Totals | None = None

    @property
    def number(self) -> int:
        return self.info.session_number or 1


@dataclass(slots=True)
class ExportDoc:
    ref: str
    title: str
    sessions: list[SessionDoc]
    turn: int | None  # one turn only
    exported_at: str

    @property
    def first_timestamp(self) -> str | None:
        stamps = [s.info.first_timestamp for s in self.sessions if s.info.first_timestamp]
        return min(stamps) if stamps else None

    @property
    def last_timestamp(self) -> str | None:
        stamps = [s.info.last_timestamp for s in self.sessions if s.info.last_timestamp]
        return max(stamps) if stamps else None

    def anchor(self, session: SessionDoc, turn: int) -> str:
        """``turn-12``; with several sessions in one file, ``s2-turn-12``."""
        return f"turn-{turn}" if len(self.sessions) == 1 else f"s{session.number}-turn-{turn}"


class Reader(Protocol):
    """What building a document needs from a store (Archive and TeamArchive both)."""

    def resolve(self, ref: str) -> Any: ...
    def session_messages(self, ref: str) -> list[Message]: ...
    def session_usage(self, ref: str) -> Totals: ...


def build(archive: Reader, ref: str, sessions: tuple[SessionInfo, ...] | None = None,
          turn: int | None = None) -> ExportDoc:
    """The document for ``ref`` (or for the given ``sessions`` of it)."""
    if sessions is None:
        resolved = archive.resolve(ref)
        sessions, turn = resolved.sessions, resolved.turn
    docs = []
    for info in sessions:
        doc = session_doc(info, archive.session_messages(info.session_id))
        doc.usage = archive.session_usage(info.session_id)
        if turn is not None:
            doc.turns = [t for t in doc.turns if t.number == turn]
            if not doc.turns:
                raise NotFound(f"Turn {turn} out of range (session has {info.turn_count} turns)")
            doc.preface = []
        docs.append(doc)
    first = sessions[0]
    title = first.title or first.summary or first.session_id
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    return ExportDoc(ref=ref, title=title, sessions=docs, turn=turn, exported_at=now)


def session_doc(info: SessionInfo, messages: list[Message]) -> SessionDoc:
    """Turns of one session with each subagent's work nested in the turn that ran it."""
    preface: list[Block] = []
    turns: list[TurnDoc] = []
    subagents: list[tuple[str | None, list[Message]]] = []
    current_file = None
    for m in messages:
        if m.turn is None and m.is_sidechain:
            if not subagents or current_file != m.file_index:
                subagents.append((m.timestamp, []))
                current_file = m.file_index
            subagents[-1][1].append(m)
            continue
        current_file = None
        if m.turn is None:
            preface.append(m)
        else:
            if not turns or turns[-1].number != m.turn:
                turns.append(TurnDoc(m.turn, m.timestamp))
            turns[-1].blocks.append(m)
    # each output under its own call (before the subagents go after their calls' results)
    preface = arrange(preface)
    for turn in turns:
        turn.blocks = arrange(turn.blocks)
    for started, group in subagents:
        _place(turns, preface, started, arrange(list(group)))
    return SessionDoc(info=info, preface=preface, turns=turns)


def _place(turns: list[TurnDoc], preface: list[Block], started: str | None, group: list[Block]) -> None:
    """Put a subagent's messages after the call that spawned it (the first one not yet
    followed by its work, in the last turn that began before it); else at that turn's end."""
    host = None
    if started:
        for turn in turns:
            if turn.timestamp and turn.timestamp <= started:
                host = turn
    if host is None:
        host = turns[-1] if turns else None
    prompt = next((m.text for m in group if isinstance(m, Message) and m.role == "user" and m.type == "text"), "")
    if host is None:
        preface.append(Subagent(_label(None, prompt), list(group)))
        return
    for i, block in enumerate(host.blocks):
        if isinstance(block, Message) and block.type == "tool_use" and block.tool_name in SPAWNING_TOOLS:
            # after the call's result when it comes next, so the call reads whole
            at = i + 2 if i + 1 < len(host.blocks) and _is_result(host.blocks[i + 1]) else i + 1
            if at < len(host.blocks) and isinstance(host.blocks[at], Subagent):
                continue  # this call's work is placed already (checked after its result, where it goes)
            host.blocks.insert(at, Subagent(_label(block, prompt), list(group)))
            return
    host.blocks.append(Subagent(_label(None, prompt), list(group)))


def _is_result(block: Block) -> bool:
    return isinstance(block, Message) and block.type == "tool_result"


def _label(call: Message | None, prompt: str) -> str:
    data = (call.tool_input or {}) if call is not None else {}
    kind = data.get("subagent_type") if isinstance(data.get("subagent_type"), str) else None
    what = data.get("description") if isinstance(data.get("description"), str) else None
    what = what or " ".join(prompt.split())[:80] or "subagent"
    return f"{kind}: {what}" if kind else what


def pair_results(blocks: list[Block]) -> dict[int, int]:
    """Each tool result's sequence → the sequence of the call it answers.

    When the assistant runs several tools in one message the calls come first and
    the results after them, so a result is paired by the call's id
    (``Message.call_id``); without ids, by the record it answers (a Codex output's
    parent is its call, a Claude result's parent the record that made the call),
    else with the oldest call still waiting. A result no call waits for stays
    unpaired, where it is.
    """
    calls = [b for b in blocks if isinstance(b, Message) and b.type == "tool_use"]
    by_id = {c.call_id: c for c in calls if c.call_id}
    answered: set[int] = set()
    waiting: list[Message] = []
    out: dict[int, int] = {}
    for b in blocks:
        if not isinstance(b, Message):
            continue
        if b.type == "tool_use":
            waiting.append(b)
            continue
        if b.type != "tool_result":
            continue
        call = by_id.get(b.call_id) if b.call_id else None
        if call is None or call.sequence in answered:
            open_calls = [c for c in waiting if c.sequence not in answered]
            call = next((c for c in open_calls if b.parent_uuid and c.uuid == b.parent_uuid), None)
            call = call or (open_calls[0] if open_calls and not (b.call_id and by_id) else None)
        if call is not None:
            answered.add(call.sequence)
            out[b.sequence] = call.sequence
    return out


def arrange(blocks: list[Block]) -> list[Block]:
    """The blocks with each tool result right after the call it answers (Markdown, HTML)."""
    pairs = pair_results(blocks)
    if not pairs:
        return blocks
    results: dict[int, list[Message]] = {}
    for b in blocks:
        if isinstance(b, Message) and b.sequence in pairs and b.type == "tool_result":
            results.setdefault(pairs[b.sequence], []).append(b)
    out: list[Block] = []
    for b in blocks:
        if isinstance(b, Message) and b.type == "tool_result" and b.sequence in pairs:
            continue
        out.append(b)
        if isinstance(b, Message) and b.type == "tool_use":
            out.extend(results.get(b.sequence, ()))
    return out


def tool_line(m: Message) -> str:
    """A tool call folded to one line (its message text says what it did)."""
    return " ".join((m.text or m.tool_name or "tool").split())[:300]


def when(ts: str | None) -> str:
    """``2026-11-01 09:00 UTC`` for a header."""
    if not ts:
        return "?"
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%d %H:%M UTC")
