"""Traces across the process stack: every service traced at 100% into an OTLP endpoint of
the test's own (``otlp.OtlpSink``, a real gRPC ``TraceService``), a match played, then the
spans read back (docs/tracing.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from redis_engines import Engines

from rackem.client import Client, play_match

from .conftest import SETTINGS
from .otlp import OtlpSink, Received
from .stack import Stack

SHORT = {"players": 2, "target": 150}  # a match of a few rounds


@pytest.fixture(scope="module")
def traced(
    redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory, sink: OtlpSink
) -> Iterator[Stack]:
    engine = redis_engines.get("single")
    engine.flush()
    system = Stack(tmp_path_factory.mktemp("traced"), engine.url, {**SETTINGS, **sink.env(1.0)})
    system.build(tables=1)
    try:
        system.start()
        yield system
    finally:
        system.stop()


def _by_trace(spans: list[Received]) -> dict[str, list[Received]]:
    traces: dict[str, list[Received]] = {}
    for received in spans:
        traces.setdefault(received.trace_id, []).append(received)
    return traces


def _one(trace: list[Received], service: str, name: str) -> Received | None:
    found = [r for r in trace if r.service == service and r.span.name == name]
    return found[0] if found else None


def _wait_for(sink: OtlpSink, ready: object, timeout: float = 15.0) -> list[Received]:
    """The sink's spans once ``ready(spans)`` holds (the services export every 200 ms)."""
    deadline = time.monotonic() + timeout
    while True:
        spans = sink.spans()
        if ready(spans) or time.monotonic() > deadline:  # type: ignore[operator]
            return spans
        time.sleep(0.2)


def _human_move_traces(spans: list[Received]) -> list[list[Received]]:
    """Traces holding a gateway ``move`` (the frame in to the answer written), its ``link
    submit`` under it, the table's ``apply move`` under that and a ``redis append`` under
    that."""
    out = []
    for trace in _by_trace(spans).values():
        move = _one(trace, "rackem-gateway", "move")
        submit = _one(trace, "rackem-gateway", "link submit")
        apply = _one(trace, "rackem-table", "apply move")
        append = _one(trace, "rackem-table", "redis append")
        if (
            move is not None
            and submit is not None
            and apply is not None
            and append is not None
            and submit.parent_id == move.span_id
            and apply.parent_id == submit.span_id
            and append.parent_id == apply.span_id
        ):
            out.append(trace)
    return out


def _bot_move_traces(spans: list[Received]) -> list[list[Received]]:
    """Traces holding the table's ``bot move``, its ``ChooseMove`` client span, the bot
    service's server span under that, and the move's ``redis append``."""
    out = []
    for trace in _by_trace(spans).values():
        bot_move = _one(trace, "rackem-table", "bot move")
        asked = _one(trace, "rackem-table", "rackem.v1.Bot/ChooseMove")
        answered = _one(trace, "rackem-bot", "rackem.v1.Bot/ChooseMove")
        append = _one(trace, "rackem-table", "redis append")
        if (
            bot_move is not None
            and asked is not None
            and answered is not None
            and append is not None
            and asked.parent_id == bot_move.span_id
            and answered.parent_id == asked.span_id
            and append.parent_id == bot_move.span_id
        ):
            out.append(trace)
    return out


async def test_a_human_move_is_one_trace_from_gateway_to_table_to_redis(
    traced: Stack, sink: OtlpSink
) -> None:
    async with Client(traced.ws) as ann, Client(traced.ws) as bob:
        await ann.create_table("Ann", rules=SHORT)
        assert ann.code is not None
        await bob.join(ann.code, "Bob")  # full: it starts
        await asyncio.gather(play_match(ann, timeout=240), play_match(bob, timeout=240))
    spans = await asyncio.to_thread(_wait_for, sink, lambda s: len(_human_move_traces(s)) > 10)
    traces = _human_move_traces(spans)
    assert traces, sorted({(r.service, r.span.name) for r in spans})
    for trace in traces:
        move = _one(trace, "rackem-gateway", "move")
        apply = _one(trace, "rackem-table", "apply move")
        assert move is not None and apply is not None
        assert move.parent_id == ""  # the trace starts at the gateway
        assert move.attributes["rackem.move.act"] in ("draw", "place", "throw", "repair")
        assert apply.attributes["rackem.seat"] in (0, 1)
        assert {move.attributes["rackem.result"], apply.attributes["rackem.result"]} == {"ok"}


async def test_a_bot_move_is_one_trace_from_table_to_bot_service(
    traced: Stack, sink: OtlpSink
) -> None:
    async with Client(traced.ws) as solo:
        await solo.create_table("Solo", rules=SHORT, start_now=True)
        await play_match(solo, timeout=240)
    spans = await asyncio.to_thread(_wait_for, sink, lambda s: len(_bot_move_traces(s)) > 5)
    traces = _bot_move_traces(spans)
    assert traces, sorted({(r.service, r.span.name) for r in spans})
    for trace in traces:
        answered = _one(trace, "rackem-bot", "rackem.v1.Bot/ChooseMove")
        assert answered is not None
        assert answered.attributes["rpc.grpc.status_code"] == 0
        assert answered.attributes["rpc.method"] == "ChooseMove"


async def test_log_lines_of_a_traced_request_carry_its_trace_id(
    traced: Stack, sink: OtlpSink
) -> None:
    async with Client(traced.ws) as solo:
        await solo.create_table("Lone", start_now=True)
        table_id = solo.table_id
        await solo.leave()
    table = traced.services["table0"]

    def created() -> list[dict[str, object]]:
        return [
            r
            for r in table.records()
            if r.get("event") == "table_created" and r.get("table") == table_id
        ]

    deadline = time.monotonic() + 10
    while not created() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    [line] = created()
    trace_id, span_id = line["trace_id"], line["span_id"]
    spans = await asyncio.to_thread(_wait_for, sink, lambda s: any(r.span_id == span_id for r in s))
    [span] = [r for r in spans if r.span_id == span_id]
    assert span.trace_id == trace_id
    assert (span.service, span.span.name) == ("rackem-table", "rackem.v1.Table/CreateTable")
    # The table's span continues the matchmaker's, which continues the gateway's.
    services = {r.service for r in spans if r.trace_id == trace_id}
    assert {"rackem-gateway", "rackem-matchmaker", "rackem-table"} <= services


async def test_no_span_attribute_holds_a_name_token_or_room_code(
    traced: Stack, sink: OtlpSink
) -> None:
    async with Client(traced.ws) as host, Client(traced.ws) as guest:
        await host.create_table("Zelda-Secret-Name", rules=SHORT)
        assert host.code is not None
        await guest.join(host.code, "Yorick-Secret-Name")
        await asyncio.gather(play_match(host, timeout=240), play_match(guest, timeout=240))
        secrets = {
            "Zelda-Secret-Name",
            "Yorick-Secret-Name",
            host.code,
            host.token,
            guest.token,
            host.table_id,
        }
    spans = await asyncio.to_thread(_wait_for, sink, lambda s: False, 2.0)
    assert spans
    for received in spans:
        for key, value in received.attributes.items():
            text = str(value)
            assert not any(s and s in text for s in secrets), (received.span.name, key)
            assert "127.0.0.1" not in text, (received.span.name, key)
