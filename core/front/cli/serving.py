"""``relay-search mcp | serve``: the same archive as an MCP server (stdio) and an HTTP API.

Both serve at once and sync in the background: Claude Code times out a slow MCP start,
and queries answer from the cache meanwhile.
"""

from __future__ import annotations

import argparse

from core.errors import BadInput

from .common import open_archive


def add_mcp(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("mcp", parents=[common], help="serve the MCP tools over stdio (for Claude Code)")
    p.add_argument("scope", nargs="?", metavar="PATTERN", help="same as --pattern (the original design's form; default *: every project)")


def add_serve(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="HTTP API and MCP over streamable HTTP")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="the port to listen on (default 8765)")
    p.add_argument("--token", default=None, help="bearer token every request must carry (default: none; required off loopback)")


def cmd_mcp(args) -> int:
    from core.front.serve import run_mcp_stdio
    from core.memory import long_lived_process

    if args.scope is not None:
        if getattr(args, "pattern", args.scope) != args.scope:
            raise BadInput(f"two patterns given ({args.scope!r} and --pattern {args.pattern!r}): give one")
        args.pattern = args.scope

    long_lived_process()  # (before the archive's threads start: see core/memory.py)
    # Serve at once: Claude Code times out a slow MCP start; the server syncs in
    # the background and queries answer from the cache meanwhile.
    with open_archive(args, sync=False) as archive:
        run_mcp_stdio(archive)
    return 0


def cmd_serve(args) -> int:
    from core.front.http_api import check_bind
    from core.front.serve import run_http
    from core.memory import long_lived_process

    check_bind(args.host, args.token)
    long_lived_process()  # (before the archive's threads start: see core/memory.py)
    with open_archive(args, sync=False) as archive:
        run_http(archive, args.host, args.port, args.token)
    return 0


COMMANDS = {
    "mcp": (add_mcp, cmd_mcp),
    "serve": (add_serve, cmd_serve),
}
