"""The gRPC server every service starts from: it owns its port alone."""

from __future__ import annotations

import grpc
import pytest

from services.common.grpc_server import bind, new_server


async def test_a_second_server_on_a_port_in_use_fails_to_bind() -> None:
    first = new_server()
    port = bind(first, "127.0.0.1", 0)
    await first.start()
    try:
        second = new_server()
        with pytest.raises(OSError, match=f"cannot bind 127.0.0.1:{port}"):
            bind(second, "127.0.0.1", port)
        await second.stop(None)
    finally:
        await first.stop(None)


async def test_grpc_s_default_would_let_two_servers_share_a_port() -> None:
    """Why ``new_server`` exists: with gRPC's default options the second bind succeeds."""
    first, second = grpc.aio.server(), grpc.aio.server()
    port = bind(first, "127.0.0.1", 0)
    try:
        assert bind(second, "127.0.0.1", port) == port
    finally:
        await first.stop(None)
        await second.stop(None)


async def test_a_port_is_free_again_once_its_server_stops() -> None:
    first = new_server()
    port = bind(first, "127.0.0.1", 0)
    await first.start()
    await first.stop(None)
    again = new_server()
    assert bind(again, "127.0.0.1", port) == port
    await again.stop(None)
