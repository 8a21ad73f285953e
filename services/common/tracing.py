"""Traces: OpenTelemetry, off unless the standard ``OTEL_*`` variables turn it on.

``configure(service)`` runs once at a process's start (``rackem serve``). It reads the
environment the way every OpenTelemetry SDK does (``docs/tracing.md``):
``OTEL_TRACES_EXPORTER=otlp`` turns tracing on, unset or ``none`` leaves it off, and
``OTEL_SDK_DISABLED=true`` keeps it off whatever else is set. When it is off nothing is
installed and the move path pays one function call per span it would have made
(``span`` and ``child`` hand back a shared ``nullcontext``). When it is on, spans go
through a ``BatchSpanProcessor`` to the OTLP/gRPC exporter, which reads its endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT``) itself, as the ``TracerProvider`` reads its sampler
(``OTEL_TRACES_SAMPLER``, ``OTEL_TRACES_SAMPLER_ARG``) and the ``BatchSpanProcessor`` its
queue (``OTEL_BSP_*``); the service is named ``OTEL_SERVICE_NAME`` or ``rackem-<service>``.

The tracer is this module's, not OpenTelemetry's global provider: OpenTelemetry keeps
one provider per process and refuses a second, while ``configure`` and ``Tracing.shutdown``
may run more than once in one process (tests). It is held in one module variable, set
only by ``configure``; every span of ours starts from it.

Context crosses processes as W3C trace context: a ``traceparent`` in a unary gRPC call's
metadata (``grpc_spans.py`` installs the interceptors) and, for a move on a gateway's
``Table.Link`` stream, in the call's own ``traceparent`` field, set only for a sampled move.

A span's attributes hold the move's kind, a seat number, a result code and an RPC method;
never a name, a token, a room code, a table id or an address. An exception's text is never
recorded (``services/common/logs.py`` says why): a failed span holds its code or its type.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.environment_variables import OTEL_TRACES_EXPORTER
from opentelemetry.sdk.environment_variables import (  # names only: the SDK is not loaded
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    OTEL_SDK_DISABLED,
    OTEL_SERVICE_NAME,
)
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = [
    "CLIENT",
    "INTERNAL",
    "SERVER",
    "Attributes",
    "Tracing",
    "annotate",
    "child",
    "configure",
    "current_ids",
    "extract",
    "inject",
    "outcome",
    "span",
    "traceparent",
    "wanted",
]

SERVER = SpanKind.SERVER
CLIENT = SpanKind.CLIENT
INTERNAL = SpanKind.INTERNAL

Attributes = Mapping[str, str | int]

_W3C = TraceContextTextMapPropagator()
_OFF: contextlib.nullcontext[None] = contextlib.nullcontext()
_tracer: trace.Tracer | None = None  # set by ``configure`` when tracing is on


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` turns tracing on: ``OTEL_TRACES_EXPORTER=otlp`` and the SDK not
    disabled. Raises ``ValueError`` for an exporter or protocol this service does not ship."""
    if environ.get(OTEL_SDK_DISABLED, "").strip().lower() == "true":
        return False
    exporters = {
        name.strip().lower()
        for name in environ.get(OTEL_TRACES_EXPORTER, "").split(",")
        if name.strip()
    }
    exporters.discard("none")
    if not exporters:
        return False
    if exporters != {"otlp"}:
        raise ValueError(f"OTEL_TRACES_EXPORTER={environ[OTEL_TRACES_EXPORTER]!r}: only otlp")
    for key in (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL):
        protocol = environ.get(key, "grpc").strip().lower()
        if protocol != "grpc":
            raise ValueError(f"{key}={protocol!r}: only grpc (OTLP over gRPC)")
    return True


class Tracing:
    """What ``configure`` installed: ``shutdown()`` flushes the spans still queued and
    removes it (nothing to do when tracing is off)."""

    def __init__(self, provider: TracerProvider | None = None) -> None:
        self._provider = provider

    @property
    def on(self) -> bool:
        return self._provider is not None

    def shutdown(self) -> None:
        global _tracer
        provider, self._provider = self._provider, None
        if provider is None:
            return
        from services.common import grpc_spans

        grpc_spans.uninstall()
        _tracer = None
        provider.shutdown()  # the batch processor exports what it holds, then stops


def configure(service: str, environ: Mapping[str, str] | None = None) -> Tracing:
    """Turn tracing on for ``service`` if the environment asks (``wanted``); the SDK reads
    the rest of it (``os.environ``) itself. Call once, before any channel or server opens."""
    global _tracer
    environ = os.environ if environ is None else environ
    if not wanted(environ):
        return Tracing()
    # Imported only when tracing is on: a process with it off never loads the SDK's tracer.
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from services.common import grpc_spans

    name = environ.get(OTEL_SERVICE_NAME) or f"rackem-{service}"
    provider = TracerProvider(  # the sampler: OTEL_TRACES_SAMPLER(_ARG), read by the SDK
        resource=Resource.create({SERVICE_NAME: name}), shutdown_on_exit=False
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _tracer = provider.get_tracer("rackem")
    grpc_spans.install()
    return Tracing(provider)


def span(
    name: str,
    kind: SpanKind = INTERNAL,
    attributes: Attributes | None = None,
    parent: Context | None = None,
    *,
    result: bool = True,
) -> contextlib.AbstractContextManager[trace.Span | None]:
    """A new current span (a new trace unless one is current, or ``parent`` given); the
    sampler decides whether it records. It ends with ``rackem.result``, ``ok`` or the
    failure's code (``outcome``), unless ``result`` is false (the caller sets its own).
    With tracing off: nothing, at once."""
    tracer = _tracer
    if tracer is None:
        return _OFF
    return _recorded(tracer, name, kind, attributes, parent, result)


def child(
    name: str, kind: SpanKind = INTERNAL, attributes: Attributes | None = None
) -> contextlib.AbstractContextManager[trace.Span | None]:
    """A span under the current one if that one records (a sampled trace), else nothing:
    a store call makes no trace of its own."""
    if _tracer is None or not trace.get_current_span().is_recording():
        return _OFF
    return _recorded(_tracer, name, kind, attributes, None, True)


@contextlib.contextmanager
def _recorded(
    tracer: trace.Tracer,
    name: str,
    kind: SpanKind,
    attributes: Attributes | None,
    parent: Context | None,
    result: bool,
) -> Iterator[trace.Span]:
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=kind,
        attributes=attributes,
        record_exception=False,  # an exception's text may hold anything (logs.py)
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if result:
                outcome(current, exc)
            raise
        if result and current.is_recording():
            current.set_attribute("rackem.result", "ok")


def outcome(current: trace.Span, exc: BaseException) -> None:
    """Mark ``current`` failed with ``exc``'s code (a ``ServiceError``'s, a ``RackError``'s)
    or its type's name; never its text."""
    code = getattr(exc, "code", None)
    current.set_attribute("rackem.result", code if isinstance(code, str) else type(exc).__name__)
    current.set_status(Status(StatusCode.ERROR))


def annotate(key: str, value: str | int) -> None:
    """Set ``key`` on the current span if it records (a seat found, a move chosen)."""
    if _tracer is not None:
        current = trace.get_current_span()
        if current.is_recording():
            current.set_attribute(key, value)


def traceparent() -> str:
    """The current span's W3C ``traceparent`` if it records, else ``""`` (nothing to carry)."""
    if _tracer is None:
        return ""
    current = trace.get_current_span()
    if not current.is_recording():
        return ""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent", "")


def inject(carrier: dict[str, str]) -> None:
    """The current span's W3C trace context into ``carrier`` (``traceparent``, ``tracestate``)."""
    _W3C.inject(carrier)


def extract(carrier: Mapping[str, str]) -> Context:
    """The context a W3C ``traceparent`` in ``carrier`` names (an empty one if none does)."""
    return _W3C.extract(carrier)


def current_ids() -> tuple[str, str] | None:
    """The current span's trace and span ids (hex) if tracing is on and it records, for a
    log line to carry; else None."""
    if _tracer is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not (context.is_valid and context.trace_flags.sampled):
        return None
    return trace.format_trace_id(context.trace_id), trace.format_span_id(context.span_id)
