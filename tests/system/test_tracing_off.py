"""Tracing off, the default: a stack whose services are each told of an OTLP endpoint but
not to trace (no exporter, ``none``, the SDK disabled) sends it nothing, and no log line
carries a trace id (docs/tracing.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from redis_engines import Engines

from rackem.client import Client, play_match

from .conftest import SETTINGS
from .otlp import OtlpSink
from .stack import Stack


@pytest.fixture(scope="module")
def untraced(
    redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory, sink: OtlpSink
) -> Iterator[Stack]:
    engine = redis_engines.get("single")
    engine.flush()
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    system = Stack(tmp_path_factory.mktemp("untraced"), engine.url, {**SETTINGS, **endpoint})
    system.build(tables=1)
    # Each service off another way: no exporter named (bot, matchmaker), ``none``
    # (gateway), the SDK disabled whatever the exporter says (table).
    system.services["gateway"].env["OTEL_TRACES_EXPORTER"] = "none"
    system.services["table0"].env.update(OTEL_TRACES_EXPORTER="otlp", OTEL_SDK_DISABLED="true")
    try:
        system.start()
        yield system
    finally:
        system.stop()


async def test_without_otel_settings_nothing_is_exported_and_logs_carry_no_trace(
    untraced: Stack, sink: OtlpSink
) -> None:
    async with Client(untraced.ws) as solo:
        await solo.create_table("Solo", rules={"players": 2, "target": 150}, start_now=True)
        await play_match(solo, timeout=240)
    await asyncio.sleep(0.5)  # a batch would have gone out by now (every 100 ms)
    assert sink.count() == 0
    lines = [r for service in untraced.services.values() for r in service.records()]
    assert any(r.get("event") == "table_created" for r in lines)
    assert not [r for r in lines if "trace_id" in r or "span_id" in r]
