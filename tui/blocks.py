"""Turn a session's stitched message stream into reader blocks (off the UI thread).

The reader paints blocks, not messages: a session header, a turn (prompt, answer
text, tool calls with their results, thinking, subagent work), or a compaction
separator. Building them is pure and runs in a worker, so opening a 2,000-turn
session costs the UI only the few blocks it mounts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from core.words import visible

from .formatting import parse_time, tool_summary


class Item(msgspec.Struct, kw_only=True, gc=False):
    """One thing inside a turn, in stream order.

    Items and blocks are msgspec structs, built in C and not tracked by the cyclic GC
    (they form a tree, never a cycle): a 2,000-turn session makes ~8,000 of them, as
    dataclasses a tenth of the time to open it, and the GC walked them all.
    """

    kind: str  # text | tool | thinking | subagent | note
    role: str = "assistant"
    text: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    summary: str = ""  # one-liner for tools
    result: str | None = None  # tool output, attached when it arrives
    result_sequence: int = -1  # the tool output's own message (a hit may point at it)
    is_error: bool = False
    children: list[Item] = []  # subagent work (a new list per item)
    sequence: int = 0
    timestamp: str | None = None


class Block(msgspec.Struct, kw_only=True, gc=False):
    """A unit the reader mounts as one widget."""

    kind: str  # session | compaction | turn | preamble
    key: str
    session: Any  # core.model.SessionInfo
    session_index: int  # position in the view (0-based)
    session_count: int  # sessions in the view
    turn: int | None = None
    timestamp: str | None = None
    prompt: str = ""
    items: list[Item] = []  # (a new list per block)
    first_sequence: int = 0
    last_sequence: int = 0
    continued: bool = False  # a turn resumed after a compaction separator
    usage: str = ""  # session header: tokens and estimated cost (one line)

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def size(self) -> int:
        """Rough message count, for progress lines."""
        return len(self.items) + (1 if self.prompt else 0)


_FAILED = re.compile(r"^\s*(error\b|<tool_use_error>|exit code [1-9]|traceback \(most recent)", re.IGNORECASE)


def looks_failed(output: str) -> bool:
    """Whether a tool output reads as a failure (the model has no is_error flag)."""
    return bool(_FAILED.match(output))


def _is_result(message: Any) -> bool:
    return message.type == "tool_result"


class _Builder:
    def __init__(self, session: Any, index: int, count: int) -> None:
        self.session = session
        self.index = index
        self.count = count
        self.blocks: list[Block] = []
        self.current: Block | None = None
        self.pending: list[Item] = []  # tool calls waiting for their result
        self.turns_seen: set[int] = set()  # turns that already have a block

    def _block(self, kind: str, message: Any, turn: int | None, **extra: Any) -> Block:
        block = Block(
            kind=kind,
            key=f"{self.session.session_id}:{kind}:{message.sequence}",
            session=self.session,
            session_index=self.index,
            session_count=self.count,
            turn=turn,
            timestamp=message.timestamp,
            first_sequence=message.sequence,
            last_sequence=message.sequence,
            **extra,
        )
        self.blocks.append(block)
        if kind == "turn" and turn is not None:
            self.turns_seen.add(turn)
        return block

    def feed(self, message: Any) -> None:
        """Add one main-stream (non-sidechain) message."""
        if message.type == "compaction":
            self.current = None
            self._block("compaction", message, message.turn, prompt=visible(message.text))
            return
        turn = message.turn
        current = self.current
        if message.role == "user" and message.type == "text" and turn is not None and (current is None or current.turn != turn):
            # a prompt: a new turn (or, after a compaction, the rest of one)
            self.current = self._block("turn", message, turn, prompt=visible(message.text), continued=turn in self.turns_seen)
            self.pending = []
            return
        if (message.role == "user" and message.type == "text" and current is not None and current.kind == "turn"
                and not current.prompt and all(i.kind == "note" for i in current.items)):
            # the prompt of a turn that notices opened (a SessionStart hook's output before it)
            current.prompt = visible(message.text)
            current.last_sequence = message.sequence
            return
        if current is None or (turn is not None and current.turn != turn):
            kind = "turn" if turn is not None else "preamble"
            self.current = self._block(kind, message, turn, continued=turn is not None and turn in self.turns_seen)
            self.pending = []
        block = self.current
        assert block is not None  # (the branches above always open one)
        block.last_sequence = message.sequence
        self._add(block.items, self.pending, message)

    def _add(self, items: list[Item], pending: list[Item], message: Any) -> None:
        text = visible(message.text)  # a transcript's escapes shown, never sent (offsets are the shown text's)
        if message.type == "tool_use":
            item = Item(
                kind="tool",
                role=message.role,
                tool_name=message.tool_name,
                tool_input=message.tool_input,
                summary=tool_summary(message.tool_name, message.tool_input, self.session.cwd),
                text=text,
                sequence=message.sequence,
                timestamp=message.timestamp,
            )
            items.append(item)
            pending.append(item)
        elif _is_result(message):
            if pending:
                item = pending.pop(0)
                item.result = text
                item.result_sequence = message.sequence
                item.is_error = looks_failed(text)
            else:
                items.append(
                    Item(kind="tool", role="tool", summary="(result)", result=text, sequence=message.sequence,
                         result_sequence=message.sequence)
                )
        elif message.type == "thinking":
            items.append(Item(kind="thinking", text=text, sequence=message.sequence))
        elif message.type in ("summary",) or message.role == "system":
            items.append(Item(kind="note", role=message.role, text=text, sequence=message.sequence))
        else:
            items.append(Item(kind="text", role=message.role, text=text, sequence=message.sequence))


def _subagent(builder: _Builder, messages: Sequence[Any]) -> Item:
    """One subagent run (one sidechain file) as a fold with its own items."""
    item = Item(kind="subagent", sequence=messages[0].sequence, timestamp=messages[0].timestamp)
    pending: list[Item] = []
    for message in messages:
        if not item.text and message.role == "user" and message.type == "text":
            item.text = visible(message.text)
            continue
        builder._add(item.children, pending, message)
    return item


def _attach(blocks: list[Block], sub: Item) -> None:
    """Put a subagent run after the Task call that started it (same prompt, else the
    latest one before it), else at the end of the turn it ran in."""
    calls = [
        (block, index, item)
        for block in blocks
        if block.kind == "turn"
        for index, item in enumerate(block.items)
        if item.kind == "tool" and (item.tool_name or "") in ("Task", "Agent")
    ]
    prompt = " ".join(sub.text.split())
    when = parse_time(sub.timestamp)
    chosen = next(
        (c for c in calls if prompt and " ".join(str((c[2].tool_input or {}).get("prompt", "")).split()) == prompt), None
    )
    if chosen is None and when is not None:
        before = [c for c in calls if (parse_time(c[2].timestamp) or when) <= when]
        chosen = before[-1] if before else None
    if chosen is not None:
        block, index, _ = chosen
        block.items.insert(index + 1, sub)
        return
    turns = [b for b in blocks if b.kind == "turn"]
    if when is not None:
        earlier = [b for b in turns if (parse_time(b.timestamp) or when) <= when]
        if earlier:
            earlier[-1].items.append(sub)
            return
    if turns:
        turns[-1].items.append(sub)


def build_blocks(sessions: Sequence[Any], messages: Sequence[Sequence[Any]]) -> list[Block]:
    """Blocks for ``sessions`` (chain order), each preceded by a session header.

    Subagent (sidechain) messages come from their own files, after the main stream;
    each file's run is folded into the turn whose Task call started it.
    """
    blocks: list[Block] = []
    count = len(sessions)
    for index, (session, stream) in enumerate(zip(sessions, messages, strict=True)):
        header = Block(
            kind="session",
            key=f"{session.session_id}:session",
            session=session,
            session_index=index,
            session_count=count,
            timestamp=session.first_timestamp,
        )
        blocks.append(header)
        builder = _Builder(session, index, count)
        runs: dict[int, list[Any]] = {}
        for message in stream:
            if message.is_sidechain:
                runs.setdefault(message.file_index, []).append(message)
            else:
                builder.feed(message)
        for run in runs.values():
            _attach(builder.blocks, _subagent(builder, run))
        blocks.extend(builder.blocks)
    return blocks


def find_turn(blocks: Sequence[Block], session_id: str, turn: int | None) -> int | None:
    """Index of the (first) block of ``turn`` in ``session_id``."""
    for index, block in enumerate(blocks):
        if block.session_id == session_id and block.kind == "turn" and block.turn == turn:
            return index
    return None


def hit_blocks(blocks: Sequence[Block], hits: Sequence[Any]) -> list[int]:
    """Indexes of the blocks holding ``hits`` (ordered as in the conversation)."""
    wanted = {(h.session_id, h.turn_number) for h in hits if h.turn_number is not None}
    found = []
    seen = set()
    for index, block in enumerate(blocks):
        key = (block.session_id, block.turn)
        if block.kind == "turn" and key in wanted and key not in seen:
            seen.add(key)
            found.append(index)
    return found
