"""services/common/grpc_spans.py: with tracing on, a unary call over a real channel to a real
server is a client span and a server span in one trace, the W3C ``traceparent`` in the
call's metadata; streams and health checks pass untouched; off, grpc is grpc's own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common import tracing
from services.common.channels import open_channel
from services.common.grpc_server import add_health, bind, new_server
from tests.system.otlp import OtlpSink

SERVICE = "test.Echo"


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    receiver = OtlpSink()
    try:
        yield receiver
    finally:
        receiver.stop()


@pytest.fixture
def traces(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink) -> Iterator[tracing.Tracing]:
    for key, value in sink.env(1.0).items():
        monkeypatch.setenv(key, value)
    on = tracing.configure("test")
    try:
        yield on
    finally:
        on.shutdown()


async def _say(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    """The ``traceparent`` the call came with, and the trace id of the span serving it."""
    if request == b"refuse":
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "Planted Petronella")
    sent = dict(context.invocation_metadata() or ()).get("traceparent", "")
    ids = tracing.current_ids()
    return f"{sent}|{ids[0] if ids else ''}".encode()


async def _count(
    request: bytes, context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[bytes]:
    yield str(tracing.current_ids() is not None).encode()


async def _spans(sink: OtlpSink, count: int, timeout: float = 10.0) -> None:
    """Until ``count`` spans have come (a batch leaves every 200 ms)."""
    deadline = time.monotonic() + timeout
    while sink.count() < count and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _served() -> AsyncIterator[grpc.aio.Channel]:
    server = new_server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Say": grpc.unary_unary_rpc_method_handler(_say),
                    "Count": grpc.unary_stream_rpc_method_handler(_count),
                },
            ),
        )
    )
    add_health(server, [])
    port = bind(server, "127.0.0.1", 0)
    await server.start()
    channel = open_channel(f"127.0.0.1:{port}")
    try:
        yield channel
    finally:
        await channel.close()
        await server.stop(None)


async def test_a_unary_call_is_a_client_span_and_a_server_span_of_one_trace(
    traces: tracing.Tracing, sink: OtlpSink
) -> None:
    async with _served() as channel:
        say = channel.unary_unary(f"/{SERVICE}/Say")
        with tracing.span("bot move") as outer:
            assert outer is not None
            answer: bytes = await say(b"hello")
        with pytest.raises(grpc.aio.AioRpcError):
            await say(b"refuse")
        # The server's span of the refused call may end just after its caller has its answer.
        await _spans(sink, 5)
    sent, served_in = answer.decode().split("|")
    by_name: dict[tuple[str, int], Any] = {}
    for received in sink.spans():
        by_name.setdefault((received.span.name, received.span.kind), []).append(received)
    client_kind, server_kind = 3, 2  # Span.SPAN_KIND_CLIENT, SPAN_KIND_SERVER
    outer_span = by_name[("bot move", 1)][0]
    asked, refused_ask = by_name[(f"{SERVICE}/Say", client_kind)]
    answered, refused = by_name[(f"{SERVICE}/Say", server_kind)]
    assert asked.parent_id == outer_span.span_id
    assert answered.parent_id == asked.span_id
    assert sent.split("-")[1:3] == [asked.trace_id, asked.span_id]  # W3C, in the metadata
    assert served_in == outer_span.trace_id  # the server's handler runs in the trace
    assert answered.attributes == {
        "rpc.system": "grpc",
        "rpc.service": SERVICE,
        "rpc.method": "Say",
        "rpc.grpc.status_code": 0,
    }
    # A refused call: its status code, never its details.
    assert (
        refused.attributes["rpc.grpc.status_code"] == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    )
    assert (
        refused_ask.attributes["rpc.grpc.status_code"] == refused.attributes["rpc.grpc.status_code"]
    )
    assert "Petronella" not in str(refused.span) + str(refused_ask.span)


async def test_streams_and_health_checks_are_not_traced(
    traces: tracing.Tracing, sink: OtlpSink
) -> None:
    async with _served() as channel:
        [served_in_trace] = [m async for m in channel.unary_stream(f"/{SERVICE}/Count")(b"")]
        health = health_pb2_grpc.HealthStub(channel)
        await health.Check(health_pb2.HealthCheckRequest())
    traces.shutdown()
    assert served_in_trace == b"False"
    assert sink.count() == 0


async def test_off_servers_and_channels_have_no_interceptor_of_ours() -> None:
    tracing.configure("test", environ={})
    async with _served() as channel:
        answer: bytes = await channel.unary_unary(f"/{SERVICE}/Say")(b"hello")
    assert answer == b"|"  # no traceparent sent, no span served in
