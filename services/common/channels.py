"""The gRPC channel every client of ours dials with: one that owns its connections and
spreads its calls over every address its target resolves to.

By default gRPC keeps one process-wide pool of subchannels (a connection to one address
and its reconnect state), shared by every channel to that address with the same
arguments. A channel kept open to a server that went away leaves its subchannel in
reconnect backoff; a new channel to a new server that came up on the same address (a
replica restarted on its port, a pod's IP given to the next pod, a test's port 0 that
the kernel hands out again) then joins that subchannel and fails its first calls with
``UNAVAILABLE: Connection refused`` although the server is up. A local pool gives each
channel its own subchannels, so a new channel dials afresh.

By default, too, a channel uses ``pick_first``: one connection, to the first address
that answers. Behind a Kubernetes ClusterIP Service that is one pod for the channel's
whole life, whatever the autoscaler adds. So every channel balances ``round_robin``: a
connection to each address the name resolves to (a headless Service's name: every ready
pod, ``dns:///bot:50053``), each call to the next ready one. The resolver asks the DNS
again when a connection ends, which the servers make happen now and then (their
``max_connection_age``, services/common/grpc_server.py), so pods added later get calls
too. For a single address (a table replica's own, ``127.0.0.1:…``) it is one connection
as before.

``tests/services/common/test_channels.py`` and ``test_balancing.py`` show both cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import grpc

__all__ = ["BALANCED", "OWN_CONNECTIONS", "open_channel"]

OWN_CONNECTIONS: tuple[tuple[str, Any], ...] = (("grpc.use_local_subchannel_pool", 1),)
BALANCED: tuple[tuple[str, Any], ...] = (
    ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})),
)


def open_channel(
    addr: str,
    options: Sequence[tuple[str, Any]] = (),
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
) -> grpc.aio.Channel:
    """An insecure aio channel to ``addr`` with connections of its own, balanced
    ``round_robin`` over the addresses ``addr`` resolves to, with ``options`` and
    ``interceptors``. Those two are always in force: gRPC takes the first of a repeated
    option, and they come before ``options``."""
    return grpc.aio.insecure_channel(
        addr,
        options=[*OWN_CONNECTIONS, *BALANCED, *options],
        interceptors=list(interceptors) or None,
    )
