"""Which address to dial a server at, given the host it was told to listen on.

A server bound to a wildcard (every address: ``""``, ``0.0.0.0``, ``::``, ``[::]``) is
dialled on the loopback from this machine; a server bound to one address is dialled
there. ``dial_addr`` writes ``host:port`` as gRPC and URLs take it, an IPv6 address in
brackets.
"""

from __future__ import annotations

__all__ = ["LOOPBACK", "WILDCARDS", "dial_addr", "dial_host", "is_wildcard"]

LOOPBACK = "127.0.0.1"
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def is_wildcard(host: str) -> bool:
    """Whether listening on ``host`` listens on every address of the machine."""
    return host in WILDCARDS


def dial_host(host: str) -> str:
    """The host to dial a server listening on ``host`` at: the loopback for a wildcard."""
    return LOOPBACK if is_wildcard(host) else host


def dial_addr(host: str, port: int) -> str:
    """``host:port`` to dial a server listening on ``host``, an IPv6 address in brackets."""
    dialled = dial_host(host)
    if ":" in dialled and not dialled.startswith("["):
        dialled = f"[{dialled}]"
    return f"{dialled}:{port}"
