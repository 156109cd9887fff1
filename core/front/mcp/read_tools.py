"""MCP tools that open a reference: a conversation, one turn, messages around one, all messages.

Each takes a reference (any form: chain, range, session, turn) plus ``user`` on a team
store, scoped with :func:`.common._scoped`, and pages within the result budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, cast

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from core.budget import DEFAULT_TURNS
from core.views import turn_to_dict

from .common import OptStr, Ref, User, _readable_errors, _scoped, tool_adder
from .models import ConversationResult, MessageContextResult, SessionMessages, TurnResult

if TYPE_CHECKING:
    from core.api import Archive


def register(server: MCPServer, archive: Archive) -> None:
    """Add this group's tools to ``server``, answering from ``archive``."""
    tool = tool_adder(server)

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
                roles=cast("list[str] | None", roles), offset=offset, limit=limit,
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
