"""A new channel to a server that came up where another went away dials it afresh.

The case CI met: a test's server was stopped with a channel still open to it, the kernel
gave its port to the next test's server, and that test's first call failed at once with
``UNAVAILABLE: Connection refused`` (the new channel had joined the old one's
subchannel, in reconnect backoff) although its server was up.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import open_channel
from services.common.grpc_server import add_health, bind, new_server, set_serving


async def _start(port: int = 0) -> tuple[grpc.aio.Server, int]:
    server = new_server()
    health = add_health(server, [])
    bound = bind(server, "127.0.0.1", port)
    await server.start()
    await set_serving(health, [], True)
    return server, bound


async def _check(channel: grpc.aio.Channel) -> int:
    """One call, not waiting for a connection: as a service's first call after a start."""
    stub = health_pb2_grpc.HealthStub(channel)
    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return reply.status


def _shared_pool(addr: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(addr)


@pytest.fixture
async def port_of_a_gone_server() -> AsyncIterator[int]:
    """The port of a server now stopped, with a channel still open to it in reconnect
    backoff (its last call failed after the stop): the channel of ours and one of gRPC's
    shared pool, as any other client in the process might hold."""
    server, port = await _start()
    left = [open_channel(f"127.0.0.1:{port}"), _shared_pool(f"127.0.0.1:{port}")]
    for channel in left:
        assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
    await server.stop(None)
    for channel in left:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await _check(channel)
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    yield port
    for channel in left:
        await channel.close()


async def _first_call_on_a_new_server(
    port: int, channel_to: Callable[[str], grpc.aio.Channel]
) -> int:
    server, _ = await _start(port)
    try:
        async with channel_to(f"127.0.0.1:{port}") as channel:
            return await _check(channel)
    finally:
        await server.stop(None)


async def test_a_new_channel_of_ours_reaches_the_server_now_on_that_port(
    port_of_a_gone_server: int,
) -> None:
    status = await _first_call_on_a_new_server(port_of_a_gone_server, open_channel)
    assert status == health_pb2.HealthCheckResponse.SERVING


async def test_the_case_is_real_a_channel_of_the_shared_pool_is_refused_there(
    port_of_a_gone_server: int,
) -> None:
    """Why ``open_channel`` exists: the same first call on a shared-pool channel fails."""
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _first_call_on_a_new_server(port_of_a_gone_server, _shared_pool)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_options_given_are_kept_beside_the_pool_of_its_own() -> None:
    server, port = await _start()
    try:
        # A reply of two bytes, a limit of one: the option is in force.
        async with open_channel(
            f"127.0.0.1:{port}", [("grpc.max_receive_message_length", 1)]
        ) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as too_big:
                await _check(channel)
            assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        await server.stop(None)
