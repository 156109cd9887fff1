"""The MCP server: the core query API as read-only tools (SPEC §5).

A package so that no module holds every tool: :mod:`.server` builds the server and
registers the tool groups (:mod:`.find_tools`, :mod:`.read_tools`,
:mod:`.overview_tools`), :mod:`.common` holds what they share and :mod:`.models`
the output schemas. Importers need only :func:`build_server`.
"""

from __future__ import annotations

from .server import build_server

__all__ = ["build_server"]
