"""The MCP server: the core query API as read-only tools (SPEC §5).

Every tool is one call into :class:`core.api.Archive` plus ``to_dict()``; the
pydantic models only give clients an output schema (the core owns the shapes, so
``--json``, HTTP and MCP print the same JSON). A RelayError becomes a ToolError since
mcp 2.3 hides any other exception's text, and the model needs ``Unknown session_id``.
Tools are sync: the SDK runs them on a worker thread, so queries never stall the loop.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.arguments import validation_line
from core.budget import DEFAULT_TURNS, RESULT_BUDGET
from core.errors import NotFound, RelayError
from core.views import session_list_dict, turn_to_dict

if TYPE_CHECKING:
    from core.api import Archive
    from core.model import SessionInfo

T = TypeVar("T")

INSTRUCTIONS = """\
relay-search is a read-only archive of past AI coding-agent conversations (Claude Code,
Codex, Gemini CLI, Ash) on this machine. Use it to recall how something was done before,
find an earlier error or decision, or open a conversation another agent handed over.

A *reference* names a conversation or part of it; every tool that takes a session id
accepts any form:
  velvet-puzzling-eclipse        the whole chain of sessions sharing that slug
  velvet-puzzling-eclipse#4      session 4 of the chain (also #4-5, #1,3,5)
  velvet-puzzling-eclipse#4:12   turn 12 of session 4
  a378da2b-...  or a unique id prefix of >= 8 chars   one session;  a378da2b:12  one turn
  0fae0449#1-2                   a chain without a slug, named by its first session's id prefix
Every answer names the reference it covers (`ref`). A call never answers for less than
its reference names: get_conversation, get_session_messages and get_session_statistics
take a chain or range; read_turn and get_message_context need one session and refuse more.
One tool result stays within {budget} characters; a longer answer says what was
cut (`cut`) and where the next page starts (`next_offset`).
Typical flow: search_history -> read_turn / get_message_context on a hit's `ref` or
`sequence` -> get_conversation for the whole exchange."""
INSTRUCTIONS = INSTRUCTIONS.replace("{budget}", f"{RESULT_BUDGET:,}")

REF = (
    "A reference: a slug (whole chain), slug#N or slug#N-M (sessions of the chain), "
    "slug#N:T (one turn), a session id or a unique id prefix of >= 8 characters, or id:T."
)
DATE = "ISO 8601 date or date-time (e.g. 2025-06-01 or 2025-06-01T14:00:00Z); inclusive."
try:
    VERSION = metadata.version("relay-search")
except metadata.PackageNotFoundError:  # a source tree, not installed
    VERSION = "0+unknown"
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

Limit = Annotated[int, Field(ge=1, le=500, description="Maximum number of results (1-500).")]
Project = Annotated[
    str | None,
    Field(description="Only projects whose name or dir name contains this (case-insensitive; see list_projects)."),
]
Offset = Annotated[int, Field(ge=0, description="Number of results to skip, for paging.")]
Ref = Annotated[str, Field(min_length=1, description=REF)]
OptStr = str | None
Date = Annotated[str | None, Field(description=DATE)]
User = Annotated[
    str | None,
    Field(description="Whose session (team store); needed only when two users share the reference."),
]


# --- result models: output schemas for the core's to_dict() shapes ---------------


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
    sequence: int = Field(description="Message position; pass to get_message_context.")
    score: float
    snippet: str = Field(description="Matching text, at most 300 characters.")
    timestamp: str | None = None
    ref: str = Field(description="Reference to the hit's turn; pass to read_turn.")
    user: str | None = None


class SearchResults(_Out):
    results: list[SearchResult]


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
    total_messages: int = Field(description="Messages in the session.")
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


# --- server ------------------------------------------------------------------------


FIRST_INDEX_WAIT = 20.0  # seconds a call may wait while an empty cache gets its first index


class _Server(MCPServer):
    """The SDK's server, with argument errors as the one line HTTP and the CLI give.

    The SDK reports a rejected argument as pydantic's multi-line dump with a docs
    URL, and prefixes a tool's own error with "Error executing tool X"; a model
    reads the same line an HTTP client gets instead.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                tool = self._tool_manager.get_tool(name)
                raise ToolError(validation_line(cause.errors(), tool.parameters if tool else {})) from cause
            if isinstance(cause, ToolError) and isinstance(cause.__cause__, RelayError):
                raise ToolError(str(cause.__cause__)) from cause.__cause__
            raise


@contextmanager
def _readable_errors(archive: Archive) -> Iterator[None]:
    """Turn the core's one-line errors into text the model reads.

    On a never-indexed cache the first calls wait (bounded) for the first index
    instead of answering "nothing found" from an empty one.
    """
    wait = getattr(archive, "wait_for_first_index", None)
    if wait is not None:
        wait(FIRST_INDEX_WAIT)
    try:
        yield
    except RelayError as err:
        raise ToolError(str(err)) from err


def _scoped(archive: Archive, ref: str, user: str | None) -> str:
    """``ref`` limited to ``user``'s sessions: ``user/ref`` on a team store; on the
    embedded store (one user) only a check that the user is this archive's."""
    if not user:
        return ref
    scope = getattr(archive, "scope_ref", None)
    if scope is not None:
        return scope(ref, user)
    if user not in archive.list_users():
        raise NotFound(f"Unknown user: {user}")
    return ref


def build_server(archive: Archive) -> MCPServer:
    """An MCP server exposing ``archive`` (SPEC §5); transport-agnostic (stdio or HTTP)."""
    server: MCPServer = _Server("relay-search", instructions=INSTRUCTIONS, version=VERSION)

    def tool(fn: Callable[..., T]) -> Callable[..., T]:
        # cleandoc: Python 3.11 keeps docstring indentation, which models would read.
        description = inspect.cleandoc(fn.__doc__ or "")
        description = description.replace("{turns}", str(DEFAULT_TURNS)).replace("{budget}", f"{RESULT_BUDGET:,}")
        server.add_tool(fn, description=description, annotations=READ_ONLY, structured_output=True)
        return fn

    @tool
    def search_history(
        query: Annotated[str, Field(min_length=1, description="Words to find (BM25 ranked).")],
        limit: Limit = 10,
        project: Project = None,
        slug: Annotated[OptStr, Field(description="Only this chain (a slug or a chain name).")] = None,
        session_id: Annotated[OptStr, Field(description="Only this session (any reference).")] = None,
        agent: Annotated[OptStr, Field(description="claude, codex, gemini or ash.")] = None,
        date_from: Date = None,
        date_to: Date = None,
        user: Annotated[OptStr, Field(description="Only this user (team store).")] = None,
        sort: Annotated[
            Literal["relevance", "recent"], Field(description="recent: newest first among the best matches.")
        ] = "relevance",
        offset: Offset = 0,
        group: Annotated[
            Literal["session"] | None,
            Field(description="session: one hit per session (its best), with more_in_session."),
        ] = None,
    ) -> SearchResults:
        """Full-text search over past conversations, best matches first.

        Use this first when you do not know where something was discussed: an error
        message, a command, a file name, a decision. Each result is one turn with a
        snippet, its `ref` (pass to read_turn for the whole turn) and `sequence` (pass
        with session_id to get_message_context for the surrounding messages).
        Query syntax: "exact phrase", -exclude, prefix*; turns holding every word
        rank first. Page on with `offset`.
        """
        with _readable_errors(archive):
            hits = archive.search(
                query, limit=limit, project=project, slug=slug, session_id=session_id,
                agent=agent, user=user, date_from=date_from, date_to=date_to,
                sort=sort, offset=offset, group=group,
            )  # fmt: skip
            return SearchResults.model_validate({"results": [h.to_dict() for h in hits]})

    @tool
    def list_sessions(
        project: Project = None,
        slug: Annotated[
            OptStr, Field(description="List this chain (a slug or a slug-less chain's name), oldest first, numbered.")
        ] = None,
        agent: Annotated[OptStr, Field(description="claude, codex, gemini or ash.")] = None,
        user: Annotated[OptStr, Field(description="Only this user (team store).")] = None,
        date_from: Date = None,
        date_to: Date = None,
        tags: Annotated[list[str] | None, Field(description="Sessions carrying any of these tags.")] = None,
        limit: Limit = 50,
        offset: Offset = 0,
    ) -> SessionList:
        """Browse sessions, newest activity first, with summary, project, turn count.

        With `slug`, returns that conversation's chain oldest first, each session with
        its `session_number` (the N of slug#N); `slug` takes precedence over `project`.
        A chain without a slug is listed by its `chain_name` (its first session's id
        prefix). Use it to see what exists before reading; use search_history to find content.
        """
        with _readable_errors(archive):
            sessions = archive.list_sessions(
                project=project, slug=slug, agent=agent, user=user, date_from=date_from,
                date_to=date_to, tags=tags, limit=limit, offset=offset,
            )  # fmt: skip
            return SessionList.model_validate(session_list_dict(sessions, slug=slug, offset=offset, budget=RESULT_BUDGET))

    @tool
    def get_conversation(
        session_id_or_slug: Ref,
        session: Annotated[
            OptStr,
            Field(
                description='Sessions of a chain: "4", "4-5", "1,3,5". Ignored for one session id; '
                "refused when the reference already names other sessions."
            ),
        ] = None,
        around_timestamp: Annotated[
            OptStr, Field(description="ISO 8601 time; keep only turns within a few hours of it.")
        ] = None,
        roles: Annotated[
            list[Literal["user", "assistant", "tool"]] | None,
            Field(description='Parts of each turn to keep: "user", "assistant", "tool" (default all).'),
        ] = None,
        offset: Annotated[int, Field(ge=0, description="First turn to return (a previous answer's next_offset).")] = 0,
        limit: Annotated[int, Field(ge=1, le=500, description="Maximum turns in this page (1-500).")] = DEFAULT_TURNS,
        user: User = None,
    ) -> ConversationResult:
        """Read a conversation: session metadata plus a page of its turns (prompt, answer, tools).

        Use this to open a reference someone handed you, or to read the exchange around
        a search hit. Filters apply in order: `session` range (after the slug is
        resolved), then the `around_timestamp` window, then roles, offset and limit.
        Pages hold {turns} turns by default and stay within {budget} characters:
        `total_turns` counts them all, `next_offset` is where the next page starts, and
        `cut` says what was left out. For one turn only, read_turn is cheaper.
        """
        with _readable_errors(archive):
            conv = archive.get_conversation(
                _scoped(archive, session_id_or_slug, user), session=session, around_timestamp=around_timestamp,
                roles=roles, offset=offset, limit=limit,
            )  # fmt: skip
            return ConversationResult.model_validate(conv.to_dict())

    @tool
    def read_turn(
        session_id: Ref,
        turn_number: Annotated[
            int | None, Field(ge=0, description="0-based turn; omit when the reference carries it.")
        ] = None,
        user: User = None,
    ) -> TurnResult:
        """One user–assistant exchange: the prompt, the answer text and the tools used.

        Pass a search hit's `ref` as is (it names the turn), or a one-session reference
        plus `turn_number` (a chain or range, or a turn_number other than the ref's, is refused). Tool calls are compact: {tool, file} for Read/Edit, {tool, file,
        chars} for Write, {tool, command} for Bash, {tool, pattern} for Grep/Glob.
        """
        with _readable_errors(archive):
            turn = archive.read_turn(_scoped(archive, session_id, user), turn_number)
            return TurnResult.model_validate(turn_to_dict(turn))

    @tool
    def get_message_context(
        session_id: Ref,
        sequence: Annotated[int, Field(ge=0, description="Message position (a hit's `sequence`).")],
        before: Annotated[int, Field(ge=0, le=200, description="Messages before.")] = 5,
        after: Annotated[int, Field(ge=0, le=200, description="Messages after.")] = 5,
        include_tool_outputs: Annotated[
            bool, Field(description="Keep tool results (command output, file contents) among the neighbours.")
        ] = True,
        user: User = None,
    ) -> MessageContextResult:
        """The raw messages around one message, including tool calls and results.

        Use it after search_history to see exactly what happened near a hit (the
        command and its error output, say), also where a message belongs to no turn.
        Messages are in time order (a subagent's where they happened). Needs one
        session: a chain or range is refused. `has_more_before`/`has_more_after` tell
        you whether to page further.
        """
        with _readable_errors(archive):
            ctx = archive.get_message_context(
                _scoped(archive, session_id, user), sequence, before=before, after=after,
                include_tool_outputs=include_tool_outputs,
            )  # fmt: skip
            return MessageContextResult.model_validate(ctx.to_dict())

    @tool
    def get_session_messages(
        session_id: Ref,
        since: Annotated[OptStr, Field(description="ISO 8601; only messages strictly after this time.")] = None,
        include_tools: Annotated[bool, Field(description="Include tool calls and tool results.")] = False,
        include_thinking: Annotated[bool, Field(description="Include the model's thinking blocks.")] = False,
        offset: Annotated[int, Field(ge=0, description="Skip this many messages (a previous answer's next_offset).")] = 0,
        user: User = None,
    ) -> SessionMessages:
        """Every message of a session in one time order, across all of its transcript files.

        A subagent's messages sit where they happened (is_sidechain true). Use `since`
        with the last timestamp you saw to fetch only what was added (to follow a live
        session). A chain or range reference streams its sessions one after another,
        each after a `session_boundary` marker. Compactions appear in place as role
        system, type compaction. Tool calls/results and thinking are left out unless
        asked for. An answer stays within the size budget: `next_offset` continues it.
        """
        with _readable_errors(archive):
            page = archive.session_messages_page(
                _scoped(archive, session_id, user), since=since, include_tools=include_tools,
                include_thinking=include_thinking, offset=offset,
            )  # fmt: skip
            return SessionMessages.model_validate(page.to_dict())

    @tool
    def list_projects(
        user: Annotated[OptStr, Field(description="Only this user's projects.")] = None,
        date_from: Date = None,
        date_to: Date = None,
    ) -> ProjectList:
        """Project names that have sessions (for the `project` filter of other tools).

        A project is the directory a session ran in, named by its path below the
        directory all sessions share (a worktree is a project of its own). The
        `project` filter of other tools matches a case-insensitive substring of this
        name or of the agent's project dir name (e.g. -home-me-work-billing-api).
        """
        with _readable_errors(archive):
            return ProjectList(projects=archive.list_projects(user=user, date_from=date_from, date_to=date_to))

    @tool
    def list_users(
        project: Project = None,
        date_from: Date = None,
        date_to: Date = None,
    ) -> UserList:
        """User names in the archive (one user locally; several in a team store)."""
        with _readable_errors(archive):
            return UserList(users=archive.list_users(project=project, date_from=date_from, date_to=date_to))

    @tool
    def get_session_statistics(session_id: Ref, user: User = None) -> SessionStatistics:
        """Counts (turns, messages, tool calls by name, first/last activity) and token usage
        with an estimated cost (list API prices; an estimate, not a bill) over the sessions
        a reference names: one session, a range (slug#2-3) or a whole chain."""
        with _readable_errors(archive):
            return SessionStatistics.model_validate(archive.session_statistics(_scoped(archive, session_id, user)))

    return server
