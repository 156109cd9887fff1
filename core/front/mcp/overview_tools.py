"""MCP tools about what the archive holds: project and user names, counts for a reference.

``list_projects`` and ``list_users`` give the values the other tools' ``project`` and
``user`` filters take; ``get_session_statistics`` counts turns, messages, tool calls
and token usage over the sessions a reference names. Registered last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from .common import Date, OptStr, Project, Ref, User, _readable_errors, _scoped, tool_adder
from .models import ProjectList, SessionStatistics, UserList

if TYPE_CHECKING:
    from core.api import Archive


def register(server: MCPServer, archive: Archive) -> None:
    """Add this group's tools to ``server``, answering from ``archive``."""
    tool = tool_adder(server)

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
