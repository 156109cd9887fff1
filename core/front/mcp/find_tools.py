"""MCP tools that find where something is: full-text search and the session listing.

``search_history`` finds content; ``list_sessions`` browses what exists (a chain
oldest first with ``slug``). Both answer with references the reading tools
(:mod:`.read_tools`) open. Registered first: their order is the order of tools/list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from core.arguments import search_query
from core.budget import RESULT_BUDGET
from core.query.syntax import search_results
from core.views import session_list_dict

from .common import Date, Limit, Offset, OptStr, Project, _readable_errors, tool_adder
from .models import SearchResults, SessionList

if TYPE_CHECKING:
    from core.api import Archive


def register(server: MCPServer, archive: Archive) -> None:
    """Add this group's tools to ``server``, answering from ``archive``."""
    tool = tool_adder(server)

    @tool
    def search_history(
        query: Annotated[str, Field(min_length=1, description="Words to find, or a description in prose (found by meaning too).")],
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
        mode: Annotated[
            Literal["auto", "hybrid", "lexical"],
            Field(description="auto: prose by words and meaning, identifiers/commands/quotes by words; or force one."),
        ] = "auto",
    ) -> SearchResults:
        """Full-text search over past conversations, best matches first.

        Use this first when you do not know where something was discussed: an error
        message, a command, a file name, a decision. Each result is one turn with a
        snippet, its `ref` (pass to read_turn for the whole turn) and `sequence`: the
        message the snippet came from (pass with session_id to get_message_context).
        Query syntax: "exact phrase" (words adjacent; `note` says when no turn has it),
        -exclude (a plain word; --flags and -x are searched as typed), prefix*; turns
        holding every word rank first. A prose query is also matched by meaning (hits
        found that way alone say by_meaning: true). Page on with `offset`.
        """
        with _readable_errors(archive):
            hits = archive.search(
                search_query(query), limit=limit, project=project, slug=slug, session_id=session_id,
                agent=agent, user=user, date_from=date_from, date_to=date_to,
                sort=sort, offset=offset, group=group, mode=mode,
            )  # fmt: skip
            return SearchResults.model_validate(search_results(query, hits, archive.meaning_gap(search_query(query), mode or "auto", sort)))

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
