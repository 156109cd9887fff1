"""Entry points for ``relay-search mcp`` and ``relay-search serve``.

Kept apart from ``cli.py`` so the CLI imports the MCP SDK, Starlette and uvicorn
only when one of these two commands runs. Both keep the archive live (watching the
transcript dirs) for as long as they serve, so a turn a running agent writes is
searchable through the server moments later.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.api import Archive

log = logging.getLogger(__name__)


def log_to_stderr(level: int = logging.INFO) -> None:
    """Route every log record to stderr: on stdio, stdout carries only the protocol."""
    root = logging.getLogger()
    if not any(getattr(h, "_relay_stderr", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._relay_stderr = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)


def go_live(archive: Archive) -> None:
    """Watch the transcript dirs, then catch up in the background.

    The catch-up sync closes the gap between the caller's last sync and the watcher
    starting, and lets a caller open the archive with ``sync=False`` so a client
    (Claude Code waits only so long for an MCP server) is answered at once from the
    cache while a cold index builds.
    """
    archive.start_watching()
    archive.sync_in_background()


def run_mcp_stdio(archive: Archive) -> None:
    """Serve the MCP tools over stdin/stdout until the client closes the pipe."""
    from .mcp import build_server

    log_to_stderr(logging.WARNING)
    server = build_server(archive)
    go_live(archive)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        archive.stop_watching()


def run_http(archive: Archive, host: str = "127.0.0.1", port: int = 8765, token: str | None = None) -> None:
    """Serve the JSON API and MCP at ``/mcp`` until interrupted.

    The bind check runs before watching starts so a refused ``--host`` fails fast
    with the one-line BadInput the CLI prints.
    """
    from .http_api import check_bind, serve

    check_bind(host, token)
    log_to_stderr(logging.INFO)
    go_live(archive)
    try:
        serve(archive, host=host, port=port, token=token)
    finally:
        archive.stop_watching()
