"""The protocol's WebSocket (``/ws``) straight from the port, not down Starlette's stack.

A WebSocket's handler runs for the connection's whole life, and every ASGI layer the
handshake came through stays suspended under it: Starlette's error and exception
middleware, the Host check, gzip, the router, the route's wrappers and their closures
held ~4 KB of every open connection (docs/performance.md, *Memory*). ``SocketFirst``
hands a WebSocket handshake for ``path`` to its endpoint behind the same Host check
(``hosts.py``) alone, with ``scope["app"]`` set as Starlette sets it (the endpoint finds
the hub there). Everything else — HTTP, any other path, the lifespan — goes to the app
as before; none of the skipped layers acts on a WebSocket the endpoint accepts (gzip and
the error middleware pass it through; the endpoint raises no HTTP exceptions).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from services.gateway.hosts import HostCheck

__all__ = ["SocketFirst"]


class SocketFirst:
    """WebSocket handshakes for ``path`` to ``endpoint`` behind ``HostCheck(allowed)``; the
    rest to ``app``."""

    def __init__(
        self,
        app: Starlette,
        path: str,
        endpoint: Callable[[WebSocket], Awaitable[None]],
        allowed: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.path = path
        self._endpoint = endpoint
        self._checked = HostCheck(self._serve, allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == self.path:
            scope["app"] = self.app
            await self._checked(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._endpoint(WebSocket(scope, receive, send))
