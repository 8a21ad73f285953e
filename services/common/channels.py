"""The gRPC channel every client of ours dials with: one that owns its connections.

By default gRPC keeps one process-wide pool of subchannels (a connection to one address
and its reconnect state), shared by every channel to that address with the same
arguments. A channel kept open to a server that went away leaves its subchannel in
reconnect backoff; a new channel to a new server that came up on the same address (a
replica restarted on its port, a pod's IP given to the next pod, a test's port 0 that
the kernel hands out again) then joins that subchannel and fails its first calls with
``UNAVAILABLE: Connection refused`` although the server is up. A local pool gives each
channel its own subchannels, so a new channel dials afresh.

``tests/services/common/test_channels.py`` shows the case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

__all__ = ["OWN_CONNECTIONS", "open_channel"]

OWN_CONNECTIONS: tuple[tuple[str, Any], ...] = (("grpc.use_local_subchannel_pool", 1),)


def open_channel(
    addr: str,
    options: Sequence[tuple[str, Any]] = (),
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
) -> grpc.aio.Channel:
    """An insecure aio channel to ``addr`` with connections of its own, ``options`` and
    ``interceptors``."""
    return grpc.aio.insecure_channel(
        addr, options=[*OWN_CONNECTIONS, *options], interceptors=list(interceptors) or None
    )
