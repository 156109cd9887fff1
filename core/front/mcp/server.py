"""The MCP server: the core query API as read-only tools (SPEC §5).

Every tool is one call into :class:`core.api.Archive` plus ``to_dict()``; the
pydantic models only give clients an output schema (the core owns the shapes, so
``--json``, HTTP and MCP print the same JSON). A RelayError becomes a ToolError since
mcp 2.3 hides any other exception's text, and the model needs ``Unknown session_id``.
Tools are sync: the SDK runs them on a worker thread, so queries never stall the loop.

This module is the factory: the server class, its instructions and version, and
:func:`build_server`, which registers the tool groups in a fixed order (tools/list
shows that order): :mod:`.find_tools`, :mod:`.read_tools`, :mod:`.overview_tools`.
What the groups share is in :mod:`.common`; the output schemas in :mod:`.models`.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from core.arguments import validation_line
from core.budget import RESULT_BUDGET
from core.errors import RelayError

from . import find_tools, overview_tools, read_tools
from .wire import unreadable_request

if TYPE_CHECKING:
    from core.api import Archive

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

try:
    VERSION = metadata.version("relay-search")
except metadata.PackageNotFoundError:  # a source tree, not installed
    VERSION = "0+unknown"


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

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, with an answer for a request it cannot read
        (``"params": "x"``), which it dropped: the client waited for ever (:mod:`.wire`)."""
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        async with stdio_server() as (read_stream, write_stream):
            checked_in, checked = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def check() -> None:
                async with checked_in:
                    async for item in read_stream:
                        reply = unreadable_request(item)
                        if reply is None:
                            await checked_in.send(item)
                        else:
                            await write_stream.send(reply)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(check)
                lowlevel = self._lowlevel_server
                await lowlevel.run(checked, write_stream, lowlevel.create_initialization_options())
                tasks.cancel_scope.cancel()


def build_server(archive: Archive) -> MCPServer:
    """An MCP server exposing ``archive`` (SPEC §5); transport-agnostic (stdio or HTTP)."""
    server: MCPServer = _Server("relay-search", instructions=INSTRUCTIONS, version=VERSION)
    find_tools.register(server, archive)
    read_tools.register(server, archive)
    overview_tools.register(server, archive)
    return server
