"""uvicorn's HTTP/1.1 protocol (h11) with a deadline for each request's head (slowloris).

uvicorn has no request-start timeout: ``timeout_keep_alive`` runs only between requests
and any byte received cancels it, so a client that trickles a header line every few
seconds holds its connection (and its memory) for ever. Here each request's head, a
WebSocket handshake included, must arrive in full within ``header_timeout_s`` of the
connection (or of the previous response); past it the connection is dropped. The
deadline ends once the head is in: slow downloads and open WebSockets are untouched.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["bounded_http"]


def bounded_http(header_timeout_s: float) -> type[H11Protocol]:
    """An ``H11Protocol`` class whose requests' heads must arrive within ``header_timeout_s``
    (0: no deadline, uvicorn as it is)."""

    class BoundedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline: asyncio.TimerHandle | None = None
            self._awaited: object = None  # the cycle that was current when it was armed

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            upgraded = self.transport.get_protocol() is not self
            if self._deadline is not None and (upgraded or self.cycle is not self._awaited):
                self._disarm()  # the head is in (a new cycle began), or it became a WebSocket

        def on_response_complete(self) -> None:
            super().on_response_complete()
            done = self.cycle is not None and self.cycle.response_complete
            if done and not self.transport.is_closing() and self.transport.get_protocol() is self:
                self._arm()  # the next request on this keep-alive connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if header_timeout_s > 0:
                self._awaited = self.cycle
                self._deadline = self.loop.call_later(header_timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol
