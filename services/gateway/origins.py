"""Which browser origins may open a WebSocket (against cross-site WebSocket hijacking)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["origin_allowed"]


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """True for clients that send no Origin (not browsers), the gateway's own origin, and
    the ``allowed`` origins (``scheme://host[:port]``; ``*`` allows every origin)."""
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if "*" in allowed or origin in (a.strip().lower().rstrip("/") for a in allowed):
        return True
    if origin == "null" or host is None:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc == host.strip().lower()
