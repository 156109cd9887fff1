"""Result shapes of the query API that are not domain objects of their own.

Each has ``to_dict()`` giving exactly the JSON shape of the matching MCP tool
(SPEC §5), which the CLI's ``--json``, the HTTP API and the MCP server all print.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .budget import RESULT_BUDGET, take_within
from .model import Message, SessionInfo, Turn, public_role

BOUNDARY = "session_boundary"  # core.query.streams.BOUNDARY (views import nothing of the core's logic)


def turn_to_dict(turn: Turn) -> dict[str, Any]:
    """A turn in ``read_turn`` format (with its ``ref`` when read_turn set it)."""
    return {
        **({"ref": turn.ref} if turn.ref else {}),
        "session_id": turn.session_id,
        "turn_number": turn.number,
        "user_text": turn.user_text,
        "assistant_text": turn.assistant_text,
        "timestamp": turn.timestamp,
        "tools_used": [dict(t) for t in turn.tools_used],
        # what the agent showed besides (hook output, errors, command output, summaries), each bounded
        **({"notes": [_bounded(n, NOTE_CHARS) for n in turn.notes]} if turn.notes else {}),
    }


NOTE_CHARS = 2_000  # of each note in a turn's answer (get_session_messages has every character)


def _bounded(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


class Conversation(msgspec.Struct, frozen=True):
    """``get_conversation``: the selected sessions' metadata and their turns."""

    sessions: tuple[SessionInfo, ...]
    turns: tuple[Turn, ...]
    total_turns: int
    ref: str
    offset: int = 0
    limit: int | None = None
    next_offset: int | None = None  # where the next page starts; None when this is the last
    cut: str | None = None  # what was left out to stay within the size budget, and how to get it

    def to_dict(self) -> dict[str, Any]:
        first = self.sessions[0] if self.sessions else None
        return {
            "session_id": first.session_id if first else None,
            "slug": first.slug if first else None,
            "chain_name": first.chain_name if first else None,
            "project": first.project if first else None,
            "agent": first.agent if first else None,
            "ref": self.ref,
            "sessions": [s.to_dict() for s in self.sessions],
            "total_turns": self.total_turns,
            "offset": self.offset,
            "limit": self.limit,
            "next_offset": self.next_offset,
            "cut": self.cut,
            "turns": [turn_to_dict(t) for t in self.turns],
        }


class MessageContext(msgspec.Struct, frozen=True):
    """``get_message_context``: a message with its neighbours."""

    previous: tuple[Message, ...]
    current: Message
    following: tuple[Message, ...]
    has_more_before: bool
    has_more_after: bool
    first_sequence: int
    last_sequence: int
    session_id: str = ""
    project: str = ""
    ref: str = ""
    total_messages: int = 0
    cut: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "session_id": self.session_id,
            "project": self.project,
            "target_sequence": self.current.sequence,
            "total_messages": self.total_messages,
            "cut": self.cut,
            "previous": [m.to_dict() for m in self.previous],
            "current": self.current.to_dict(),
            "following": [m.to_dict() for m in self.following],
            "has_more_before": self.has_more_before,
            "has_more_after": self.has_more_after,
            "first_sequence": self.first_sequence,
            "last_sequence": self.last_sequence,
        }


def session_message_dict(message: Message) -> dict[str, Any]:
    """A message as ``get_session_messages`` and the HTTP messages API give it."""
    marker = message.type == BOUNDARY  # a stitched stream's marker: the session that follows
    return {
        "role": public_role(message.role, message.type),
        "type": message.type,
        "text": message.text,
        "timestamp": message.timestamp,
        "session_id": message.session_id,
        "entry_index": None if marker else message.entry_index,
        "file_index": None if marker else message.file_index,
        "sequence": None if marker else message.sequence,
        "is_sidechain": message.is_sidechain,
        **({"tool_name": message.tool_name} if message.tool_name else {}),
    }


def session_list_dict(
    sessions: list[SessionInfo], *, slug: str | None, offset: int = 0, budget: int | None = None,
    usage: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``list_sessions``: ``session_number`` only in a chain's listing (SPEC §5).

    In a global listing a session's number is meaningless on its own; its ``ref``
    (``slug#4``) still says where it sits in its chain. With a ``budget`` (the MCP
    tool) the page is cut to fit; ``cut`` and ``next_offset`` then say so. ``usage``
    (session id → token usage, ``list --json``) adds each session's ``usage``.
    """
    rows = []
    for info in sessions:
        row = info.to_dict()
        if not slug:
            row.pop("session_number", None)
        if usage is not None:
            row["usage"] = usage.get(info.session_id)
        rows.append(row)
    n = take_within(rows, lambda kept: {"sessions": list(kept)}, budget)
    if n == len(rows):
        return {"sessions": rows}
    cut = (f"{len(rows) - n} of {len(rows)} sessions left out to stay within the {RESULT_BUDGET:,}-character "
           f"result budget; call again with offset={offset + n}")  # fmt: skip
    return {"sessions": rows[:n], "next_offset": offset + n, "cut": cut}


class MessagesPage(msgspec.Struct, frozen=True):
    """``get_session_messages``: the stream of a session, chain or range, one page of it.

    ``messages`` may hold boundary markers (type ``session_boundary``) before each
    session when the reference names several.
    """

    ref: str
    sessions: tuple[SessionInfo, ...]
    messages: tuple[Message, ...]
    offset: int = 0
    next_offset: int | None = None
    cut: str | None = None

    def to_dict(self) -> dict[str, Any]:
        head = self.sessions[0]
        return {
            "ref": self.ref,
            "session_id": head.session_id,
            "agent": head.agent,
            "session_ids": [s.session_id for s in self.sessions],
            "offset": self.offset,
            "next_offset": self.next_offset,
            "cut": self.cut,
            "messages": [session_message_dict(m) for m in self.messages],
        }


class Resolved(msgspec.Struct, frozen=True):
    """A reference resolved to sessions (and maybe a turn) — SPEC §4."""

    ref: str
    sessions: tuple[SessionInfo, ...]  # chain order
    chain: tuple[SessionInfo, ...]  # the whole chain the sessions belong to
    turn: int | None = None
    single: bool = False  # the reference named one session by id


class IndexStats(msgspec.Struct, frozen=True):
    """What ``index --stats`` reports: counts, sizes and each file's skipped lines."""

    files: int
    sessions: int
    turns: int
    documents: int
    segments: int
    transcript_bytes: int
    index_bytes: int
    skipped_lines: int
    files_with_skips: tuple[tuple[str, int], ...]
    errors: tuple[tuple[str, str], ...]
    agents: dict[str, int]
    skip_reasons: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)  # path -> reason -> lines
    semantic: dict[str, Any] = msgspec.field(default_factory=dict)  # hybrid recall: on, reason, model, embedded, passages, vector_bytes

    def reasons_text(self, path: str) -> str:
        """``3 skipped: 2 invalid JSON, 1 wrong shape`` for one file."""
        reasons = self.skip_reasons.get(path, {})
        total = dict(self.files_with_skips).get(path, sum(reasons.values()))
        detail = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
        return f"{total} skipped: {detail}" if detail else f"{total} skipped"

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sessions": self.sessions,
            "turns": self.turns,
            "documents": self.documents,
            "segments": self.segments,
            "transcript_bytes": self.transcript_bytes,
            "index_bytes": self.index_bytes,
            "skipped_lines": self.skipped_lines,
            "files_with_skips": [
                {"path": p, "skipped": n, "reasons": dict(sorted(self.skip_reasons.get(p, {}).items()))}
                for p, n in self.files_with_skips
            ],
            "errors": [{"path": p, "error": e} for p, e in self.errors],
            "agents": self.agents,
            "semantic": self.semantic,
        }


class Progress(msgspec.Struct, frozen=True):
    """Indexing progress, for a progress bar (CLI) or indicator (app)."""

    done_files: int
    total_files: int
    done_bytes: int
    total_bytes: int
    phase: str = "indexing"


class UpdateResult(msgspec.Struct, frozen=True):
    """What one sync with the disk changed."""

    changed_sessions: tuple[str, ...] = ()
    removed_sessions: tuple[str, ...] = ()
    new_sessions: tuple[str, ...] = ()
    files_read: int = 0
    bytes_read: int = 0
    skipped_lines: int = 0
    rebuilt: str | None = None  # a one-line reason when the cache was rebuilt

    @property
    def changed(self) -> bool:
        return bool(self.changed_sessions or self.removed_sessions)
