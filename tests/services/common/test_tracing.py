"""services/common/tracing.py: off unless the standard ``OTEL_*`` variables say otlp; on, it
exports to the endpoint they name, sampled as they say, named for the service."""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import Iterator

import grpc
import pytest

from services.common import tracing
from services.common.errors import ServiceError
from services.common.logs import JsonFormatter
from tests.system.otlp import OtlpSink


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    receiver = OtlpSink()
    try:
        yield receiver
    finally:
        receiver.stop()


@contextlib.contextmanager
def traced(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, service: str = "test", **env: str
) -> Iterator[tracing.Tracing]:
    """Tracing on for ``service`` into ``sink`` (every span sampled unless ``env`` says
    otherwise), shut down (its spans flushed) on the way out."""
    for key, value in {**sink.env(1.0), **env}.items():
        monkeypatch.setenv(key, value)
    traces = tracing.configure(service)
    try:
        yield traces
    finally:
        traces.shutdown()


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": ""},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"},  # an endpoint alone
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"},
    ],
)
def test_tracing_is_off_unless_an_exporter_is_named_and_the_sdk_enabled(
    environ: dict[str, str],
) -> None:
    assert not tracing.wanted(environ)


@pytest.mark.parametrize(
    "environ",
    [
        {"OTEL_TRACES_EXPORTER": "otlp"},
        {"OTEL_TRACES_EXPORTER": " OTLP "},
        {"OTEL_TRACES_EXPORTER": "otlp,none", "OTEL_SDK_DISABLED": "false"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
    ],
)
def test_otlp_turns_tracing_on(environ: dict[str, str]) -> None:
    assert tracing.wanted(environ)


@pytest.mark.parametrize(
    "environ",
    [
        {"OTEL_TRACES_EXPORTER": "console"},
        {"OTEL_TRACES_EXPORTER": "otlp,zipkin"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
    ],
)
def test_an_exporter_or_protocol_not_shipped_is_refused_at_start(
    environ: dict[str, str],
) -> None:
    with pytest.raises(ValueError, match="only"):
        tracing.wanted(environ)


def test_off_installs_nothing_and_every_span_is_one_shared_no_op() -> None:
    server, channel = grpc.aio.server, grpc.aio.insecure_channel
    traces = tracing.configure("gateway", environ={})
    assert not traces.on
    assert (grpc.aio.server, grpc.aio.insecure_channel) == (server, channel)
    first, second = tracing.span("move"), tracing.child("redis append")
    assert first is second
    with first as current:
        assert current is None
        assert tracing.traceparent() == ""
        assert tracing.current_ids() is None
    traces.shutdown()  # nothing to do


def test_on_spans_go_to_the_endpoint_named_for_the_service(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    with traced(monkeypatch, sink, "table") as traces:
        assert traces.on
        with tracing.span("apply move", tracing.SERVER, {"rackem.seat": 1}):
            pass
    with (
        traced(monkeypatch, sink, "table", OTEL_SERVICE_NAME="replica-a"),
        tracing.span("bot move"),
    ):
        pass
    named = {(r.service, r.span.name) for r in sink.spans()}
    assert named == {("rackem-table", "apply move"), ("replica-a", "bot move")}
    [apply] = [r for r in sink.spans() if r.span.name == "apply move"]
    assert apply.attributes == {"rackem.seat": 1, "rackem.result": "ok"}


def test_the_sampler_is_the_environments(monkeypatch: pytest.MonkeyPatch, sink: OtlpSink) -> None:
    ratio = {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}
    with traced(monkeypatch, sink, **ratio):
        for _ in range(50):
            with tracing.span("move") as current:
                assert current is not None and not current.is_recording()
                assert tracing.traceparent() == ""  # nothing to carry for a move not sampled
                with tracing.child("redis append") as inner:
                    assert inner is None  # no span under a span that does not record
    assert sink.count() == 0


def test_a_child_continues_the_current_trace_and_a_parent_crosses_as_traceparent(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    with traced(monkeypatch, sink):
        with tracing.child("outside") as nothing:
            assert nothing is None
        with tracing.span("move") as move:
            assert move is not None
            header = tracing.traceparent()
            with tracing.child("redis append"):
                pass
        # Another process: the header alone continues the trace.
        with tracing.span("apply move", parent=tracing.extract({"traceparent": header})):
            pass
    spans = {r.span.name: r for r in sink.spans()}
    assert set(spans) == {"move", "redis append", "apply move"}
    assert header.split("-")[1] == spans["move"].trace_id
    assert spans["redis append"].parent_id == spans["move"].span_id
    assert spans["apply move"].parent_id == spans["move"].span_id
    assert spans["apply move"].trace_id == spans["move"].trace_id


def test_a_failure_is_recorded_by_its_code_never_its_text(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    with traced(monkeypatch, sink):
        with pytest.raises(ServiceError), tracing.span("move"):
            raise ServiceError("bad_token", "no seat for Planted Petronella")
        with pytest.raises(KeyError), tracing.span("move"):
            raise KeyError("Planted Petronella")
    results = sorted(r.attributes["rackem.result"] for r in sink.spans())
    assert results == ["KeyError", "bad_token"]
    for received in sink.spans():
        assert received.span.status.code == received.span.status.STATUS_CODE_ERROR
        assert "Petronella" not in str(received.span)


def test_a_log_line_in_a_sampled_span_carries_its_ids(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("test"))
    logger = logging.getLogger("rackem.test_tracing")
    logger.addHandler(handler)
    try:
        logger.warning("before")
        with traced(monkeypatch, sink):
            with tracing.span("move") as move:
                assert move is not None
                logger.warning("inside")
            logger.warning("after")
    finally:
        logger.removeHandler(handler)
    before, inside, after = (json.loads(line) for line in stream.getvalue().splitlines())
    context = move.get_span_context()
    assert inside["trace_id"] == f"{context.trace_id:032x}"
    assert inside["span_id"] == f"{context.span_id:016x}"
    assert "trace_id" not in before and "trace_id" not in after
