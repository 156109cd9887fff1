"""Connection-level hardening of the HTTP server: a deadline for a request's headers.

uvicorn closes an idle keep-alive connection, but a client that connects and sends
its headers a byte at a time (slowloris) held a connection open for ever; enough of
them hold every connection the process can take. Each connection here must deliver
a complete request head within :data:`HEADER_TIMEOUT` seconds of connecting, or of
the first byte of its next request; otherwise it is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0  # seconds; a real client sends its headers in one packet


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
