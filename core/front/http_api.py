"""HTTP front end: a small JSON API plus the MCP server at ``/mcp`` (SPEC §6).

The JSON shapes are the core's ``to_dict()`` output, identical to the MCP tools.
The messages endpoint streams: it pulls messages from
``Archive.iter_session_messages`` (lazy: one session's files merged in time order,
session after session for a chain) in small batches on a worker thread and writes
the JSON array incrementally, so memory stays bounded by one session however long
the chain is. Status and error are decided before the first byte by pulling
the first batch eagerly, because the core's iterator reports a bad ``since`` or an
unknown session only when it is first advanced.
"""

from __future__ import annotations

import copy
import hmac
import ipaddress
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from core.arguments import not_boolean, not_integer, out_of_bounds, search_query
from core.errors import BadInput, RelayError
from core.query.syntax import search_results
from core.views import session_list_dict, session_message_dict

from .http_conn import BODY_TIMEOUT, McpBody
from .mcp import build_server
from .mcp.common import _scoped

if TYPE_CHECKING:
    from core.api import Archive

log = logging.getLogger(__name__)

BATCH = 256  # messages per worker-thread hop: few hops, bounded memory
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_encode = msgspec.json.Encoder().encode


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (what may run without a token)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to expose someone's conversation history to the network unguarded."""
    if token is not None and not token.strip():  # (a server nobody could log in to)
        raise BadInput("--token must not be blank: pass a secret clients can send ('Authorization: Bearer SECRET')")
    if not is_loopback(host) and not token:
        raise BadInput(
            f"Refusing to listen on {host} without --token: anyone on the network could read "
            "your conversations. Pass --token SECRET (clients send 'Authorization: Bearer "
            "SECRET') or bind to 127.0.0.1."
        )


# --- parameters ----------------------------------------------------------------------


def _flag(params: QueryParams, name: str) -> bool:
    value = params.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadInput(not_boolean(name, params[name]))


def _int(params: QueryParams, name: str, default: int, lo: int, hi: int | None = None) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadInput(not_integer(name, raw)) from None
    if value < lo or (hi is not None and value > hi):
        raise BadInput(out_of_bounds(name, value, lo, hi))
    return value


def _opt(params: QueryParams, name: str) -> str | None:
    return params.get(name) or None


def _tags(params: QueryParams) -> list[str] | None:
    """``tags=a&tags=b`` or ``tags=a,b``."""
    tags = [t.strip() for raw in params.getlist("tags") for t in raw.split(",") if t.strip()]
    return tags or None


def _error(err: RelayError) -> JSONResponse:
    return JSONResponse({"error": str(err)}, status_code=err.status)


# --- endpoints -----------------------------------------------------------------------


def _handlers(archive: Archive) -> list[Route]:
    async def call(fn: Callable[[], Any]) -> Response:
        """Run a blocking query off the event loop; RelayError becomes its status."""
        try:
            return JSONResponse(await run_in_threadpool(fn))
        except RelayError as err:
            return _error(err)

    async def list_sessions(request: Request) -> Response:
        p = request.query_params

        def query() -> dict[str, Any]:
            sessions = archive.list_sessions(
                project=_opt(p, "project"), slug=_opt(p, "slug"), agent=_opt(p, "agent"),
                user=_opt(p, "user"), date_from=_opt(p, "date_from"), date_to=_opt(p, "date_to"),
                tags=_tags(p), limit=_int(p, "limit", 50, 1, 500), offset=_int(p, "offset", 0, 0),
            )  # fmt: skip
            return session_list_dict(sessions, slug=_opt(p, "slug"))

        return await call(query)

    async def search(request: Request) -> Response:
        p = request.query_params

        def query() -> dict[str, Any]:
            q = search_query(p.get("q") or p.get("query") or "")  # (?q=WORDS)
            hits = archive.search(
                q, limit=_int(p, "limit", 10, 1, 500), project=_opt(p, "project"),
                slug=_opt(p, "slug"), session_id=_opt(p, "session_id"), agent=_opt(p, "agent"),
                user=_opt(p, "user"), date_from=_opt(p, "date_from"), date_to=_opt(p, "date_to"),
                sort=_opt(p, "sort") or "relevance", offset=_int(p, "offset", 0, 0), group=_opt(p, "group"),
                mode=_opt(p, "mode") or "auto",
            )  # fmt: skip
            return search_results(q, hits, archive.meaning_gap(q, _opt(p, "mode") or "auto", _opt(p, "sort") or "relevance"))

        return await call(query)

    async def stats(request: Request) -> Response:
        return await call(lambda: archive.stats().to_dict())

    async def session_messages(request: Request) -> Response:
        p = request.query_params

        def start() -> tuple[bytes, Iterator[Any], list[Any]]:
            ref = _scoped(archive, request.path_params["session_id"], _opt(p, "user"))
            options: dict[str, Any] = {
                "since": _opt(p, "since"),
                "include_tools": _flag(p, "include_tools"),
                "include_thinking": _flag(p, "include_thinking"),
            }
            covered, sessions = archive.message_sessions(ref)
            messages = archive.iter_session_messages(ref, **options)
            first = list(islice(messages, BATCH))  # raises here for a bad since
            prefix = b'{"ref":%s,"session_id":%s,"agent":%s,"session_ids":%s,"messages":[' % (
                _encode(covered),
                _encode(sessions[0].session_id),
                _encode(sessions[0].agent),
                _encode([s.session_id for s in sessions]),
            )
            return prefix, messages, first

        try:
            prefix, messages, first = await run_in_threadpool(start)
        except RelayError as err:
            return _error(err)
        return StreamingResponse(_stream(prefix, messages, first), media_type="application/json")

    return [
        Route("/sessions", list_sessions, methods=["GET"]),
        # (:path: a team reference holds a slash, ``dana/slug``)
        Route("/sessions/{session_id:path}/messages", session_messages, methods=["GET"]),
        Route("/search", search, methods=["GET"]),
        Route("/stats", stats, methods=["GET"]),
    ]


async def _stream(prefix: bytes, messages: Iterator[Any], batch: list[Any]) -> AsyncIterator[bytes]:
    """Write ``prefix``, the messages as a JSON array body, and the closing brackets."""
    yield prefix
    separator = b""
    while batch:
        chunk = bytearray()
        for message in batch:
            chunk += separator + _encode(session_message_dict(message))
            separator = b","
        yield bytes(chunk)
        batch = await run_in_threadpool(lambda: list(islice(messages, BATCH)))
    yield b"]}"


# --- guard ---------------------------------------------------------------------------


class Guard:
    """Bearer token check, plus a Host check on loopback (DNS rebinding).

    A web page could otherwise point a hostname at 127.0.0.1 and read the history
    through the visitor's browser; a Host header naming loopback proves the request
    was addressed to this machine.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app = app
        self.expected = token.encode() if token else None
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.loopback and not _loopback_host(headers.get(b"host", b"").decode("latin-1")):
            await JSONResponse({"error": "Invalid Host header"}, status_code=421)(scope, receive, send)
            return
        if self.expected is not None:
            scheme, _, given = headers.get(b"authorization", b"").strip().partition(b" ")
            # RFC 9110: the auth scheme is case-insensitive ("bearer x" is valid).
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.expected):
                response = JSONResponse(
                    {"error": "Missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _loopback_host(host_header: str) -> bool:
    """Whether a Host header names this machine: ``name`` or ``name:port`` exactly
    (``[::1].evil.example`` is not ``[::1]``)."""
    if host_header.startswith("["):
        end = host_header.find("]")
        name, rest = host_header[1:end], host_header[end + 1 :]
        if end < 0 or not (rest == "" or (rest.startswith(":") and _port(rest[1:]))):
            return False
    else:
        name, colon, port = host_header.partition(":")
        if colon and not _port(port):
            return False
    return is_loopback(name)


# --- app -----------------------------------------------------------------------------


def build_http_app(archive: Archive, *, token: str | None = None, host: str = "127.0.0.1",
                   body_timeout: float = BODY_TIMEOUT) -> Starlette:
    """The JSON API and the MCP streamable-HTTP endpoint on one Starlette app.

    The MCP route is lifted out of the SDK's own app (rather than mounted) so it
    answers at ``/mcp`` exactly, without a redirect to ``/mcp/``; its session
    manager then has to run in this app's lifespan. Its request bodies are read
    first by :class:`~core.front.http_conn.McpBody` (a deadline; a client gone is
    no error), inside the token check.
    """
    server = build_server(archive)
    mcp_app = server.streamable_http_app(streamable_http_path="/mcp", host=host)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    app = Starlette(
        routes=[*_handlers(archive), *mcp_app.routes], lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},  # (an unknown path gets the JSON error body too)
    )  # fmt: skip
    app.add_middleware(McpBody, seconds=body_timeout)
    app.add_middleware(Guard, token=token, loopback=is_loopback(host))  # (added last: runs first)
    return app


def _port(text: str) -> bool:
    return text.isascii() and text.isdigit()


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    return JSONResponse({"error": getattr(exc, "detail", None) or "Not Found"}, status_code=status)


def uvicorn_log_config() -> dict[str, Any]:
    """Uvicorn's logging with access lines on stderr too: stdout stays for the user."""
    import uvicorn.config

    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return config


def serve(archive: Archive, host: str = "127.0.0.1", port: int = 8765, token: str | None = None) -> None:
    """Run the HTTP server until interrupted (blocking)."""
    import uvicorn

    from .http_conn import header_deadline_protocol

    check_bind(host, token)
    app = build_http_app(archive, token=token, host=host)
    log.info("relay-search serving on http://%s:%d (MCP at /mcp)", host, port)
    uvicorn.run(app, host=host, port=port, log_config=uvicorn_log_config(), http=header_deadline_protocol())
