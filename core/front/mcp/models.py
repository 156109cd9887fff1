"""The MCP tools' result models: output schemas for the core's ``to_dict()`` shapes.

The core owns the shapes (so ``--json``, HTTP and MCP print the same JSON); these
pydantic models only give MCP clients an output schema, so each tool returns
``Model.model_validate(answer.to_dict())``. Kept apart from the tool groups because
several groups return the same models (``Session`` sits in listings and in
conversations), and apart from the server because none of it is behaviour.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    # extra="allow": a field the core adds later reaches clients without a change here.
    model_config = ConfigDict(extra="allow")


class SearchResult(_Out):
    session_id: str
    slug: str | None = None
    session_number: int | None = Field(None, description="1-based position in the slug chain.")
    project: str
    agent: str
    turn_number: int | None = None
    sequence: int = Field(description="The message the snippet came from; pass to get_message_context.")
    score: float
    snippet: str = Field(description="Matching text, at most 300 characters.")
    timestamp: str | None = None
    ref: str = Field(description="Reference to the hit's turn; pass to read_turn.")
    user: str | None = None
    by_meaning: bool = Field(False, description="Found by meaning alone: none of the query's words ranked it.")


class MeaningMissing(_Out):
    missing: int = Field(description="Passages not yet embedded: a prose query finds those by words only.")
    passages: int
    note: str


class SearchResults(_Out):
    results: list[SearchResult]
    note: str | None = Field(
        None, description="Set when no turn holds a quoted phrase exactly: the results hold its words apart."
    )
    meaning_missing: MeaningMissing | None = Field(
        None, description="Set when a prose query ran while some passages had no vectors yet (being made in the background)."
    )


class Session(_Out):
    session_id: str
    agent: str
    project: str
    cwd: str | None = None
    git_branch: str | None = None
    slug: str | None = None
    summary: str
    title: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    turn_count: int
    message_count: int
    files: list[str] = []
    user: str | None = None
    tags: list[str] = []
    is_live: bool = False
    # session_number (the N of slug#N) is present only when list_sessions lists one
    # chain (SPEC §5): declared here it would appear as null in every other listing.
    chain_length: int | None = None
    chain_name: str | None = Field(
        None, description="The chain's name in references: its slug, or a slug-less chain's first id prefix."
    )
    ref: str | None = None


class SessionList(_Out):
    sessions: list[Session]
    next_offset: int | None = Field(None, description="Set when the size budget cut this page: pass as offset.")
    cut: str | None = Field(None, description="What the size budget left out, and how to get it.")


class ToolUse(_Out):
    """Compact tool call: {tool, file} for Read/Edit, {tool, command} for Bash, …"""

    tool: str


class TurnResult(_Out):
    ref: str | None = Field(None, description="Reference of exactly this turn.")
    session_id: str
    turn_number: int
    user_text: str
    assistant_text: str
    timestamp: str | None = None
    tools_used: list[ToolUse] = []


class ConversationResult(_Out):
    session_id: str | None = None
    slug: str | None = None
    project: str | None = None
    agent: str | None = None
    chain_name: str | None = None
    ref: str = Field(description="Reference of exactly the sessions (or turn) this answer covers.")
    sessions: list[Session]
    total_turns: int = Field(description="Turns after the filters, over all pages.")
    offset: int
    limit: int | None = None
    next_offset: int | None = Field(None, description="Pass as offset for the next page; null on the last page.")
    cut: str | None = Field(None, description="What was left out to stay within the size budget, and how to get it.")
    turns: list[TurnResult]


class Message(_Out):
    session_id: str
    agent: str
    sequence: int
    role: str = Field(description="user, assistant or system; tool traffic says so in `type`.")
    type: str = Field(description="text, tool_use, tool_result, thinking, compaction or summary.")
    text: str
    timestamp: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    file_index: int
    entry_index: int
    turn: int | None = None


class MessageContextResult(_Out):
    ref: str = Field(description="Reference of the session read.")
    session_id: str
    project: str
    target_sequence: int
    total_messages: int = Field(description="Messages returned: previous + current + following.")
    cut: str | None = None
    previous: list[Message]
    current: Message
    following: list[Message]
    has_more_before: bool
    has_more_after: bool
    first_sequence: int
    last_sequence: int


class SessionMessage(_Out):
    role: str = Field(description="user, assistant or system.")
    type: str = Field(description="text, tool_use, tool_result, thinking, compaction, summary, or session_boundary.")
    text: str
    timestamp: str | None = None
    entry_index: int | None = None
    file_index: int | None = None
    sequence: int | None = None
    is_sidechain: bool = Field(False, description="A subagent's message, placed where it happened.")
    session_id: str | None = Field(None, description="The message's session (a marker: the session that follows).")


class SessionMessages(_Out):
    ref: str = Field(description="Reference of exactly what this answer covers.")
    session_id: str
    agent: str
    session_ids: list[str]
    offset: int = 0
    next_offset: int | None = Field(None, description="Pass as offset (same since) for the rest; null when complete.")
    cut: str | None = None
    messages: list[SessionMessage]


class ProjectList(_Out):
    projects: list[str]


class UserList(_Out):
    users: list[str]


class TokenUsage(_Out):
    """Tokens the API responses of the sessions used (each response counted once)."""

    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    total_tokens: int
    responses: int
    estimated_cost_usd: float | None = Field(
        default=None, description="An estimate from list API prices (core/outputs/pricing.py), not a bill; null when no model was priced."
    )
    unpriced_models: list[str] = Field(default_factory=list, description="Models without a price: their tokens are counted, not costed.")


class SessionStatistics(_Out):
    """Counts over the sessions a reference names (one session, a range or a chain)."""

    ref: str = Field(description="Reference of exactly the sessions counted.")
    session_id: str = Field(description="The first session counted.")
    session_ids: list[str]
    turns: int
    messages: int
    tool_calls: int
    tool_calls_by_name: dict[str, int]
    first_activity: str | None = None
    last_activity: str | None = None
    usage: TokenUsage | None = Field(default=None, description="Token usage of the sessions counted, with an estimated cost.")
