"""Which address to dial a server at, given the host it was told to listen on.

A server bound to a wildcard (every address: ``""``, ``0.0.0.0``, ``::``, ``[::]``) is
dialled on the loopback from this machine; a server bound to one address is dialled
there. ``host_port`` writes ``host:port`` as gRPC and URLs take it, an IPv6 address in
brackets (``services.common.grpc_server.bind`` listens there, ``dial_addr`` dials);
``socket_host`` writes it as a socket binds it, without. So ``HOST`` means the same to
every service, IPv6 in brackets or not.
"""

from __future__ import annotations

__all__ = [
    "LOOPBACK",
    "WILDCARDS",
    "dial_addr",
    "dial_host",
    "host_port",
    "is_wildcard",
    "socket_host",
]

LOOPBACK = "127.0.0.1"
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def is_wildcard(host: str) -> bool:
    """Whether listening on ``host`` listens on every address of the machine."""
    return host in WILDCARDS


def dial_host(host: str) -> str:
    """The host to dial a server listening on ``host`` at: the loopback for a wildcard."""
    return LOOPBACK if is_wildcard(host) else host


def socket_host(host: str) -> str:
    """``host`` as a socket binds it: an IPv6 address without brackets (``[::]`` → ``::``)."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def host_port(host: str, port: int) -> str:
    """``host:port``, an IPv6 address in brackets (``::1`` → ``[::1]:port``)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def dial_addr(host: str, port: int) -> str:
    """``host:port`` to dial a server listening on ``host``, an IPv6 address in brackets."""
    return host_port(dial_host(host), port)
