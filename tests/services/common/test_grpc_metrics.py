"""The gRPC metrics interceptors on a real aio server and channel: each call counted once
when it starts and once when it ends, with its status code, on both sides."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry

from services.common.channels import open_channel
from services.common.grpc_metrics import client_interceptors, server_interceptors
from services.common.grpc_server import bind, new_server

SERVICE = "test.Probe"


async def _echo(request: bytes, context: Any) -> bytes:
    return request


async def _refuse(request: bytes, context: Any) -> bytes:
    await context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")
    raise AssertionError("abort returned")


async def _fail(request: bytes, context: Any) -> bytes:
    raise RuntimeError("a bug")


async def _count(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for n in range(int(request)):
        yield str(n).encode()


async def _chat(requests: AsyncIterator[bytes], context: Any) -> None:
    async for request in requests:
        await context.write(request)


def _handlers() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(_echo),
            "Refuse": grpc.unary_unary_rpc_method_handler(_refuse),
            "Fail": grpc.unary_unary_rpc_method_handler(_fail),
            "Count": grpc.unary_stream_rpc_method_handler(_count),
            "Chat": grpc.stream_stream_rpc_method_handler(_chat),
        },
    )


@pytest.fixture
async def probe() -> AsyncIterator[tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry]]:
    """A server and a channel to it, each counting into a registry of its own."""
    served, calling = CollectorRegistry(), CollectorRegistry()
    server = new_server(server_interceptors(served))
    server.add_generic_rpc_handlers((_handlers(),))
    port = bind(server, "127.0.0.1", 0)
    await server.start()
    channel = open_channel(f"127.0.0.1:{port}", interceptors=client_interceptors(calling))
    try:
        yield channel, served, calling
    finally:
        await channel.close()
        await server.stop(None)


def _value(registry: CollectorRegistry, name: str, method: str, kind: str, **labels: str) -> float:
    found = registry.get_sample_value(
        name, {"grpc_service": SERVICE, "grpc_method": method, "grpc_type": kind, **labels}
    )
    return found or 0.0


def _counted(registry: CollectorRegistry, side: str, method: str, kind: str, code: str) -> bool:
    """One call of ``method`` started, one ended with ``code``, and it was timed once."""
    return (
        _value(registry, f"grpc_{side}_started_total", method, kind) == 1
        and _value(registry, f"grpc_{side}_handled_total", method, kind, grpc_code=code) == 1
        and _value(registry, f"grpc_{side}_handling_seconds_count", method, kind) == 1
    )


async def test_a_handled_call_counts_with_its_code_on_both_sides(
    probe: tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry],
) -> None:
    channel, served, calling = probe
    assert await channel.unary_unary(f"/{SERVICE}/Echo")(b"hi", timeout=5) == b"hi"
    assert _counted(served, "server", "Echo", "unary", "OK")
    assert _counted(calling, "client", "Echo", "unary", "OK")


@pytest.mark.parametrize(("method", "code"), [("Refuse", "NOT_FOUND"), ("Fail", "UNKNOWN")])
async def test_an_aborted_or_failed_call_counts_with_its_error_code(
    probe: tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry], method: str, code: str
) -> None:
    channel, served, calling = probe
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await channel.unary_unary(f"/{SERVICE}/{method}")(b"", timeout=5)
    assert refused.value.code().name == code  # the caller still reads the call's own error
    assert _counted(served, "server", method, "unary", code)
    assert _counted(calling, "client", method, "unary", code)
    assert _value(served, "grpc_server_handled_total", method, "unary", grpc_code="OK") == 0


async def test_a_server_stream_counts_once_started_and_once_handled(
    probe: tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry],
) -> None:
    channel, served, calling = probe
    replies = [reply async for reply in channel.unary_stream(f"/{SERVICE}/Count")(b"3")]
    assert replies == [b"0", b"1", b"2"]
    assert _counted(served, "server", "Count", "server_stream", "OK")
    for _ in range(50):  # the client's end is counted by the call's done-callback
        if _counted(calling, "client", "Count", "server_stream", "OK"):
            break
        await asyncio.sleep(0.01)
    assert _counted(calling, "client", "Count", "server_stream", "OK")


async def test_a_bidi_stream_counts_at_the_server_and_is_left_alone_by_the_client(
    probe: tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry],
) -> None:
    channel, served, calling = probe
    call = channel.stream_stream(f"/{SERVICE}/Chat")()
    assert _value(served, "grpc_server_started_total", "Chat", "bidi_stream") == 0
    for word in (b"a", b"b"):
        await call.write(word)
        assert await call.read() == word
    assert _value(served, "grpc_server_started_total", "Chat", "bidi_stream") == 1
    assert _value(served, "grpc_server_handled_total", "Chat", "bidi_stream", grpc_code="OK") == 0
    await call.done_writing()
    assert await call.code() == grpc.StatusCode.OK
    assert _counted(served, "server", "Chat", "bidi_stream", "OK")
    # Not intercepted on the client: grpc.aio would queue every write of it through tasks.
    assert type(call).__name__ == "StreamStreamCall"
    assert calling.get_sample_value("grpc_client_started_total", {"grpc_method": "Chat"}) is None


async def test_an_unknown_method_is_not_counted(
    probe: tuple[grpc.aio.Channel, CollectorRegistry, CollectorRegistry],
) -> None:
    channel, served, _ = probe
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await channel.unary_unary(f"/{SERVICE}/Nothing")(b"", timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "Nothing" not in "".join(
        str(sample.labels) for family in served.collect() for sample in family.samples
    )
