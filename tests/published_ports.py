"""Host ports for containers to publish: below the kernel's ephemeral range.

Podman publishes a container's port with a NAT rule, not a listening socket, so the
host port looks free to the kernel, and a server of ours that binds port 0 can be given
it. Its clients' connections then go to the container instead (a Redis answering gRPC)
or, once the container is gone and its rule not, nowhere: ``Connection refused`` from a
server that is up. A port below ``ip_local_port_range`` is never given to a port-0 bind.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

__all__ = ["published_port"]

RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
SPAN = 8_000  # how far below the ephemeral range to look


def _ephemeral_low() -> int:
    try:
        return int(RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def published_port() -> int:
    """A host port free on every address, below the ephemeral range."""
    low = _ephemeral_low()
    for port in random.sample(range(max(1024, low - SPAN), low), 200):
        try:
            with socket.socket() as probe:
                probe.bind(("0.0.0.0", port))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no free port below {low} to publish a container on")
