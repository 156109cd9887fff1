"""The MCP server: the core query API as read-only tools (SPEC §5).

Every tool is one call into :class:`core.api.Archive` plus ``to_dict()``; the
pydantic models only give clients an output schema (the core owns the shapes, so
``--json``, HTTP and MCP print the same JSON). A RelayError becomes a ToolError since
mcp 2.3 hides any other exception's text, and the model needs ``Unknown session_id``.
Tools are sync: the SDK runs them on a worker thread, so queries never stall the loop.
"""

from __future__ import annotations

import inspect
from importlib import metadata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .errors import NotFound, RelayError
from .views import session_message_dict, turn_to_dict

if TYPE_CHECKING:
    from .api import Archive
    from .model import SessionInfo

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
Typical flow: search_history -> read_turn / get_message_context on a hit's `ref` or
`sequence` -> get_conversation for the whole exchange."""

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
    session_number: int | None = None
    chain_length: int | None = None
    ref: str | None = None


class SessionList(_Out):
    sessions: list[Session]


class ToolUse(_Out):
    """Compact tool call: {tool, file} for Read/Edit, {tool, command} for Bash, …"""

    tool: str


class TurnResult(_Out):
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
    ref: str
    sessions: list[Session]
    total_turns: int
    turns: list[TurnResult]


class Message(_Out):
    session_id: str
    agent: str
    sequence: int
    role: str
    type: str
    text: str
    timestamp: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    file_index: int
    entry_index: int
    turn: int | None = None


class MessageContextResult(_Out):
    previous: list[Message]
    current: Message
    following: list[Message]
    has_more_before: bool
    has_more_after: bool
    first_sequence: int
    last_sequence: int


class SessionMessage(_Out):
    role: str
    type: str
    text: str
    timestamp: str | None = None
    entry_index: int
    file_index: int
    sequence: int


class SessionMessages(_Out):
    session_id: str
    agent: str
    messages: list[SessionMessage]


class ProjectList(_Out):
    projects: list[str]


class UserList(_Out):
    users: list[str]


class SessionStatistics(_Out):
    """Counts and timings of one session; fields as the core reports them."""


# --- server ------------------------------------------------------------------------


FIRST_INDEX_WAIT = 20.0  # seconds a call may wait while an empty cache gets its first index


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
    server: MCPServer = MCPServer("relay-search", instructions=INSTRUCTIONS, version=VERSION)

    def tool(fn: Callable[..., T]) -> Callable[..., T]:
        # cleandoc: Python 3.11 keeps docstring indentation, which models would read.
        description = inspect.cleandoc(fn.__doc__ or "")
        server.add_tool(fn, description=description, annotations=READ_ONLY, structured_output=True)
        return fn

    @tool
    def search_history(
        query: Annotated[str, Field(min_length=1, description="Words to find (BM25 ranked).")],
        limit: Limit = 10,
        project: Annotated[OptStr, Field(description="Only this project (see list_projects).")] = None,
        slug: Annotated[OptStr, Field(description="Only this slug chain.")] = None,
        session_id: Annotated[OptStr, Field(description="Only this session (any reference).")] = None,
        agent: Annotated[OptStr, Field(description="claude, codex, gemini or ash.")] = None,
        date_from: Date = None,
        date_to: Date = None,
        user: Annotated[OptStr, Field(description="Only this user (team store).")] = None,
    ) -> SearchResults:
        """Full-text search over past conversations, best matches first.

        Use this first when you do not know where something was discussed: an error
        message, a command, a file name, a decision. Each result is one turn with a
        snippet, its `ref` (pass to read_turn for the whole turn) and `sequence` (pass
        with session_id to get_message_context for the surrounding messages).
        """
        with _readable_errors(archive):
            hits = archive.search(
                query, limit=limit, project=project, slug=slug, session_id=session_id,
                agent=agent, user=user, date_from=date_from, date_to=date_to,
            )  # fmt: skip
            return SearchResults.model_validate({"results": [h.to_dict() for h in hits]})

    @tool
    def list_sessions(
        project: Annotated[OptStr, Field(description="Only this project.")] = None,
        slug: Annotated[OptStr, Field(description="List this chain, oldest first, numbered.")] = None,
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
        Use it to see what exists before reading; use search_history to find content.
        """
        with _readable_errors(archive):
            sessions = archive.list_sessions(
                project=project, slug=slug, agent=agent, user=user, date_from=date_from,
                date_to=date_to, tags=tags, limit=limit, offset=offset,
            )  # fmt: skip
            return SessionList.model_validate({"sessions": [s.to_dict() for s in sessions]})

    @tool
    def get_conversation(
        session_id_or_slug: Ref,
        session: Annotated[
            OptStr,
            Field(description='Sessions of a slug chain: "4", "4-5", "1,3,5". Ignored for one session id.'),
        ] = None,
        around_timestamp: Annotated[
            OptStr, Field(description="ISO 8601 time; keep only turns within a few hours of it.")
        ] = None,
        roles: Annotated[
            list[str] | None,
            Field(description='Parts of each turn to keep: "user", "assistant", "tool" (default all).'),
        ] = None,
        offset: Offset = 0,
        limit: Annotated[int | None, Field(ge=1, le=500, description="Maximum turns (1-500).")] = None,
        user: User = None,
    ) -> ConversationResult:
        """Read a conversation: session metadata plus its turns (prompt, answer, tools).

        Use this to open a reference someone handed you, or to read the whole exchange
        around a search hit. Filters apply in order: `session` range (after the slug is
        resolved), then the `around_timestamp` window, then roles, offset and limit.
        For one turn only, read_turn is cheaper.
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

        Pass a search hit's `ref` as is (it names the turn), or a session reference plus
        `turn_number`. Tool calls are compact: {tool, file} for Read/Edit, {tool, file,
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
        include_tool_outputs: bool = True,
        user: User = None,
    ) -> MessageContextResult:
        """The raw messages around one message, including tool calls and results.

        Use it after search_history to see exactly what happened near a hit (the
        command and its error output, say), also where a message belongs to no turn.
        `has_more_before`/`has_more_after` tell you whether to page further.
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
        since: Annotated[OptStr, Field(description="ISO 8601; only messages after this time.")] = None,
        include_tools: bool = False,
        include_thinking: bool = False,
        user: User = None,
    ) -> SessionMessages:
        """Every message of a session in order, across all of its transcript files.

        Use `since` to fetch only what was added after a time you already have (e.g. to
        follow a live session). Compactions appear in place as role system, type
        compaction. Tool calls/results and thinking are left out unless asked for.
        A whole-chain reference means its latest session; use slug#N for another.
        """
        with _readable_errors(archive):
            session_id = _scoped(archive, session_id, user)
            head = archive.one_session(session_id)
            messages = [
                session_message_dict(m)
                for m in archive.iter_session_messages(
                    session_id, since=since, include_tools=include_tools,
                    include_thinking=include_thinking,
                )
            ]  # fmt: skip
            return SessionMessages.model_validate(
                {"session_id": head.session_id, "agent": head.agent, "messages": messages}
            )

    @tool
    def list_projects(
        user: Annotated[OptStr, Field(description="Only this user's projects.")] = None,
        date_from: Date = None,
        date_to: Date = None,
    ) -> ProjectList:
        """Project names that have sessions (for the `project` filter of other tools)."""
        with _readable_errors(archive):
            return ProjectList(projects=archive.list_projects(user=user, date_from=date_from, date_to=date_to))

    @tool
    def list_users(
        project: Annotated[OptStr, Field(description="Only users with sessions here.")] = None,
        date_from: Date = None,
        date_to: Date = None,
    ) -> UserList:
        """User names in the archive (one user locally; several in a team store)."""
        with _readable_errors(archive):
            return UserList(users=archive.list_users(project=project, date_from=date_from, date_to=date_to))

    @tool
    def get_session_statistics(session_id: Ref, user: User = None) -> SessionStatistics:
        """Counts for one session (turns, messages, tool calls by name, first/last activity) and its
        token usage with an estimated cost (list API prices; an estimate, not a bill)."""
        with _readable_errors(archive):
            return SessionStatistics.model_validate(archive.session_statistics(_scoped(archive, session_id, user)))

    return server
