"""The normalized model every source adapter produces (SPEC §2).

Adapters turn an agent's own records into :class:`Entry` values, one per message,
in file order. The :class:`~core.archive.turns.TurnBuilder` numbers them into a session's
stitched stream and groups them into turns. Everything downstream (catalog, index,
query API, front ends) only ever sees these types.
"""

from __future__ import annotations

from typing import Any

import msgspec

# Roles and types are plain strings so the values print and serialize as-is.
ROLES = ("user", "assistant", "system", "tool")
TYPES = ("text", "tool_use", "tool_result", "thinking", "compaction", "summary")

COMPACTION_TEXT = "Context compacted"


def public_role(role: str, type_: str) -> str:
    """The role a front end shows: ``user | assistant | system`` (SPEC §5).

    Adapters mark tool traffic with role ``tool``; answers keep that in ``type``
    and give the role of the side that sent it, as the messages APIs do: a call is
    the assistant's, its result comes back on the user's side.
    """
    if role != "tool":
        return role
    return "assistant" if type_ == "tool_use" else "user"


class Entry(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One message as an adapter read it, before it is numbered into a session.

    ``starts_turn`` is the adapter's verdict that a person typed this (SPEC §2 turn
    rules); the turn builder trusts it. ``tool_name``/``tool_input`` are kept for
    compact rendering of tool calls (``read_turn``'s ``tools_used``). A msgspec
    Struct rather than a dataclass: adapters create one per message on the hot
    path of indexing, and a Struct is built in C.
    """

    role: str
    type: str
    text: str
    timestamp: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    entry_index: int = 0
    starts_turn: bool = False
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    branch: str | None = None
    record_key: str | None = None  # its record's uuid and content: what a replay repeats
    call_id: str | None = None  # a tool call's id, or the id of the call a tool result answers
    # what the agent showed besides the conversation (hook output, errors, command output,
    # summaries): it opens no turn of its own, so before a session's first prompt it
    # belongs to that prompt's turn (core.archive.turns.TurnCounter)
    notice: bool = False


class Usage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The tokens one API response used, as the agent recorded them.

    One per response, not per message: Claude Code writes a response's usage on
    every record it split the response into (with ``output_tokens`` growing as it
    streamed), so records sharing a ``key`` are one response and merge field-wise
    by maximum (:func:`core.archive.usage_records.merge`). ``input_tokens`` excludes cached input
    for every agent (Codex and Gemini count cached input inside their input
    figure; adapters subtract it), so the four fields add up to what was billed.
    """

    key: str  # the response's identity across records and files (dedupe)
    model: str | None = None
    timestamp: str | None = None
    uuid: str | None = None  # the record that carried it (replay exclusion)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0


class Message(msgspec.Struct, frozen=True, gc=False):
    """A message in a session's stitched stream (SPEC §2).

    A msgspec Struct like :class:`Entry`: reading a long session builds thousands.
    Neither is tracked by the cyclic GC (``gc=False``: they hold plain values, never
    a cycle); a reader holding a 2,000-turn session made each full collection scan
    its ~8,000 messages, and those pauses landed on the app's keystrokes.
    """

    session_id: str
    agent: str
    sequence: int
    role: str
    type: str
    text: str
    timestamp: str | None
    uuid: str | None
    parent_uuid: str | None
    is_sidechain: bool
    file_index: int
    entry_index: int
    turn: int | None
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    branch: str | None = None
    call_id: str | None = None  # pairs a tool result with its call (Entry.call_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "sequence": self.sequence,
            "role": public_role(self.role, self.type),
            "type": self.type,
            "text": self.text,
            "timestamp": self.timestamp,
            "uuid": self.uuid,
            "parent_uuid": self.parent_uuid,
            "is_sidechain": self.is_sidechain,
            "file_index": self.file_index,
            "entry_index": self.entry_index,
            "turn": self.turn,
            **({"tool_name": self.tool_name} if self.tool_name else {}),
        }


class Turn(msgspec.Struct, frozen=True):
    """A user–assistant exchange: the prompt, the answer text and the tools used."""

    session_id: str
    number: int
    user_text: str
    assistant_text: str
    timestamp: str | None
    tools_used: tuple[dict[str, Any], ...]
    first_sequence: int
    last_sequence: int
    is_sidechain: bool = False
    ref: str | None = None  # set when read_turn answers with it: the reference of this turn
    notes: tuple[str, ...] = ()  # what the agent showed besides (system messages: hook output, summaries, …)


class FileMeta(msgspec.Struct, frozen=True):
    """What an adapter learned about a session from one file's records."""

    session_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    slug: str | None = None
    title: str | None = None
    first_prompt: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    version: str | None = None
    aliases: tuple[str, ...] = ()


class SessionInfo(msgspec.Struct, frozen=True):
    """A session as the catalog lists it (SPEC §2 Session, §5 list_sessions)."""

    session_id: str
    agent: str
    project: str
    cwd: str | None
    git_branch: str | None
    slug: str | None
    summary: str
    title: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    turn_count: int
    message_count: int
    files: tuple[str, ...]
    user: str | None = None
    tags: tuple[str, ...] = ()
    is_live: bool = False
    session_number: int | None = None
    chain_length: int | None = None
    ref: str | None = None
    skipped_lines: int = 0
    first_prompt: str | None = None
    chain_name: str | None = None  # what references call its chain: the slug, or the first id's prefix

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "project": self.project,
            "cwd": self.cwd,
            "git_branch": self.git_branch,
            "slug": self.slug,
            "summary": self.summary,
            "title": self.title,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "turn_count": self.turn_count,
            "message_count": self.message_count,
            "files": list(self.files),
            "user": self.user,
            "tags": list(self.tags),
            "is_live": self.is_live,
            "session_number": self.session_number,
            "chain_length": self.chain_length,
            "chain_name": self.chain_name,
            "ref": self.ref,
            "first_prompt": self.first_prompt,
        }


class SearchHit(msgspec.Struct, frozen=True):
    """One ranked turn (SPEC §5 search_history)."""

    session_id: str
    slug: str | None
    session_number: int | None
    project: str
    agent: str
    turn_number: int | None
    sequence: int
    score: float
    snippet: str
    timestamp: str | None
    ref: str
    user: str | None = None
    is_sidechain: bool = False
    match_terms: tuple[str, ...] = ()
    more_in_session: int | None = None  # with group="session": other matching turns of the session
    exact_phrase: bool | None = None  # a query with a quoted phrase: the turn shows it (False: only its words)
    by_meaning: bool = False  # found by hybrid recall's vectors alone (none of the query's words ranked it)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "session_id": self.session_id,
            "slug": self.slug,
            "session_number": self.session_number,
            "project": self.project,
            "agent": self.agent,
            "turn_number": self.turn_number,
            "sequence": self.sequence,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "timestamp": self.timestamp,
            "ref": self.ref,
            "user": self.user,
        }
        if self.more_in_session is not None:
            out["more_in_session"] = self.more_in_session
        if self.exact_phrase is not None:
            out["exact_phrase"] = self.exact_phrase
        if self.by_meaning:
            out["by_meaning"] = True
        return out
