"""What every MCP tool group shares: argument types, error mapping, reference scoping.

The tool groups (:mod:`.find_tools`, :mod:`.read_tools`, :mod:`.overview_tools`)
declare their parameters with the annotated types here so one parameter reads the
same in every tool, run each call inside :func:`_readable_errors` so a RelayError
reaches the model as text, limit references to a user with :func:`_scoped` (the HTTP
API uses it too), and register through :func:`tool_adder`, which gives every tool
the same description clean-up and read-only annotations.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from core.budget import DEFAULT_TURNS, RESULT_BUDGET
from core.errors import NotFound, RelayError

if TYPE_CHECKING:
    from core.api import Archive

T = TypeVar("T")

REF = (
    "A reference: a slug (whole chain), slug#N or slug#N-M (sessions of the chain), "
    "slug#N:T (one turn), a session id or a unique id prefix of >= 8 characters, or id:T."
)
DATE = "ISO 8601 date or date-time (e.g. 2025-06-01 or 2025-06-01T14:00:00Z); inclusive."
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


def tool_adder(server: MCPServer) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """The ``@tool`` decorator a group registers its tools on ``server`` with."""

    def tool(fn: Callable[..., T]) -> Callable[..., T]:
        # cleandoc: Python 3.11 keeps docstring indentation, which models would read.
        description = inspect.cleandoc(fn.__doc__ or "")
        description = description.replace("{turns}", str(DEFAULT_TURNS)).replace("{budget}", f"{RESULT_BUDGET:,}")
        server.add_tool(fn, description=description, annotations=READ_ONLY, structured_output=True)
        return fn

    return tool
