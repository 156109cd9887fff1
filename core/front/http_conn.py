"""Connection-level hardening of the HTTP server: deadlines for a request's headers
and for an MCP request's body, and a client that goes away is not an error.

uvicorn closes an idle keep-alive connection, but a client that connects and sends
its headers a byte at a time (slowloris) held a connection open for ever; enough of
them hold every connection the process can take. Each connection here must deliver
a complete request head within :data:`HEADER_TIMEOUT` seconds of connecting, or of
the first byte of its next request; otherwise it is closed.

The body of a request to ``/mcp`` (the only route that reads one) is read here,
whole, before the MCP SDK sees it (:class:`McpBody`, issue 37 items 10 and 11): one
that has not arrived within :data:`BODY_TIMEOUT` seconds is answered 408 and the
connection closed (a body sent a byte a minute held its connection for ever); a client
that goes away mid-body is dropped quietly (the SDK logged a ``ClientDisconnect``
traceback for each one: 1,000 such clients, 1,002 tracebacks on ``serve``'s stderr);
and a request whose ``params`` is not an object gets the JSON-RPC error owed to its id.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import anyio
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from .mcp.wire import bad_params

log = logging.getLogger(__name__)

HEADER_TIMEOUT = 10.0  # seconds; a real client sends its headers in one packet
BODY_TIMEOUT = 30.0  # seconds for an MCP request's whole body (at most 4 MB: the SDK's limit)


def header_deadline_protocol(seconds: float = HEADER_TIMEOUT) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline of ``seconds`` for each request head."""

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._between_requests():
                self._arm()  # (the first byte of the next request starts its clock)
            super().data_received(data)
            if not self._between_requests():
                self._disarm()  # a whole request head arrived: it is being answered

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _between_requests(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self._between_requests() and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


class McpBody:
    """Read a ``/mcp`` request's whole body within ``seconds``, then hand it on (see above)."""

    def __init__(self, app: ASGIApp, *, path: str = "/mcp", seconds: float = BODY_TIMEOUT,
                 limit: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app, self.path, self.seconds, self.limit = app, path, seconds, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        body = bytearray()
        with anyio.move_on_after(self.seconds) as deadline:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    log.debug("an MCP client went away before its request arrived")  # (not an error)
                    return
                body += message.get("body", b"")
                if len(body) > self.limit:  # (the SDK's own limit, answered as it would)
                    await Response("Request body too large", status_code=413, headers=_CLOSE)(scope, receive, send)
                    return
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            log.debug("an MCP request's body did not arrive within %g s: closed", self.seconds)
            error = {"error": f"the request body did not arrive within {self.seconds:g} seconds"}
            await JSONResponse(error, status_code=408, headers=_CLOSE)(scope, receive, send)
            return
        owed = _owed_error(bytes(body)) if scope["method"] == "POST" else None
        if owed is not None:
            await JSONResponse(owed, status_code=400)(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


_CLOSE = {"connection": "close"}


def _owed_error(body: bytes) -> dict[str, Any] | None:
    try:
        return bad_params(json.loads(body))
    except ValueError:  # (not JSON: the SDK answers its parse error)
        return None
