"""An OTLP/gRPC endpoint of our own: the ``TraceService`` a collector serves, keeping every
span the services export (the tracing tests, ``bench/load.py --trace-ratio``).

``OtlpSink()`` listens on a free port of 127.0.0.1 (``endpoint`` is what
``OTEL_EXPORTER_OTLP_ENDPOINT`` takes) until ``stop``; ``spans()`` is what came so far, each
with the ``service.name`` of the process that sent it.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

__all__ = ["OtlpSink", "Received"]


@dataclass(frozen=True)
class Received:
    """One exported span, and the ``service.name`` of the process that exported it."""

    service: str
    span: trace_pb2.Span

    @property
    def trace_id(self) -> str:
        return self.span.trace_id.hex()

    @property
    def span_id(self) -> str:
        return self.span.span_id.hex()

    @property
    def parent_id(self) -> str:
        return self.span.parent_span_id.hex()

    @property
    def attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kv in self.span.attributes:
            value = kv.value
            kind = value.WhichOneof("value")
            out[kv.key] = getattr(value, kind) if kind else None
        return out


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, keep: bool) -> None:
        self.lock = threading.Lock()
        self.keep = keep
        self.received: list[Received] = []
        self.count = 0

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        spans = []
        for resource_spans in request.resource_spans:
            service = next(
                (
                    kv.value.string_value
                    for kv in resource_spans.resource.attributes
                    if kv.key == "service.name"
                ),
                "",
            )
            for scope_spans in resource_spans.scope_spans:
                spans.extend(Received(service, span) for span in scope_spans.spans)
        with self.lock:
            self.count += len(spans)
            if self.keep:
                self.received.extend(spans)
        return trace_service_pb2.ExportTraceServiceResponse()


class OtlpSink:
    def __init__(self, *, keep: bool = True) -> None:
        """Serve at once. ``keep=False`` counts spans without keeping them (a long bench)."""
        self._service = _TraceService(keep)
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self._service, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, ratio: float = 1.0) -> dict[str, str]:
        """The ``OTEL_*`` settings that trace a service at ``ratio`` into this sink, quickly
        (a batch every 200 ms)."""
        return {
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": str(ratio),
            "OTEL_BSP_SCHEDULE_DELAY": "200",
        }

    def spans(self) -> list[Received]:
        """The spans received so far (none kept with ``keep=False``)."""
        with self._service.lock:
            return list(self._service.received)

    def count(self) -> int:
        """How many spans were received so far."""
        with self._service.lock:
            return self._service.count

    def stop(self) -> None:
        self._server.stop(None)
