"""The Host names the gateway answers for (against DNS rebinding): Starlette's
``TrustedHostMiddleware``, except for the health probes, which come by address."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["PROBES", "HostCheck"]

PROBES = frozenset({"/healthz", "/readyz"})  # kubelet and compose probe by IP: any Host


class HostCheck:
    """A request whose Host is not in ``allowed`` (empty: any) is refused with 400,
    a WebSocket handshake included; ``PROBES`` paths are answered whatever the Host."""

    def __init__(self, app: ASGIApp, allowed: Sequence[str] = ()) -> None:
        self.app = app
        self.checked = TrustedHostMiddleware(app, list(allowed) or ["*"], www_redirect=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in PROBES:
            await self.app(scope, receive, send)
        else:
            await self.checked(scope, receive, send)
