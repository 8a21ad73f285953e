"""Spans for unary gRPC calls, W3C trace context in their metadata: installed only when
tracing is on (``tracing.configure``).

A client span per unary call this process makes (``rackem.v1.Bot/ChooseMove``), its
``traceparent`` in the call's metadata; a server span per unary call it serves, under the
caller's span when the metadata carries one. Streams (``Table.Link``, a health ``Watch``)
pass untouched: a move on the link carries its own context (``tracing.py``), and the
health service's calls (probes, several a second) are not traced.

``install`` puts the interceptors on every aio server and insecure channel made after it,
as OpenTelemetry's own gRPC instrumentation does: it wraps ``grpc.aio.server`` and
``grpc.aio.insecure_channel`` (public functions; ``uninstall`` puts them back), so no call
site changes and a process with tracing off has no interceptor at all. Ours come first,
outside any the call site passes (a metrics interceptor's time is inside the span). The
OTLP exporter dials with the synchronous ``grpc.insecure_channel``: its own calls are
never traced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import grpc
from opentelemetry import trace

from services.common import tracing

__all__ = ["ClientSpans", "ServerSpans", "install", "uninstall"]

if TYPE_CHECKING:  # generic in grpc-stubs, not at run time
    _Client = grpc.aio.UnaryUnaryClientInterceptor[Any, Any]
    _Server = grpc.aio.ServerInterceptor[Any, Any]
else:
    _Client = grpc.aio.UnaryUnaryClientInterceptor
    _Server = grpc.aio.ServerInterceptor

_HEALTH = "/grpc.health.v1.Health/"
_ORIGINAL: dict[str, Any] = {}


def _attributes(method: str) -> dict[str, str | int]:
    service, _, name = method.lstrip("/").partition("/")
    return {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}


def _status(current: trace.Span, code: grpc.StatusCode) -> None:
    current.set_attribute("rpc.grpc.status_code", code.value[0])
    if code is not grpc.StatusCode.OK:
        current.set_status(trace.Status(trace.StatusCode.ERROR))


class ClientSpans(_Client):
    """A client span around each unary call, its context sent as ``traceparent``."""

    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[Any]],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        method = _method(client_call_details.method)
        if method.startswith(_HEALTH):
            return await continuation(client_call_details, request)
        name, attributes = method.lstrip("/"), _attributes(method)
        with tracing.span(name, tracing.CLIENT, attributes, result=False) as current:
            carrier: dict[str, str] = {}
            tracing.inject(carrier)
            metadata = grpc.aio.Metadata(*tuple(client_call_details.metadata or ()))
            for key, value in carrier.items():
                metadata.add(key, value)
            details = grpc.aio.ClientCallDetails(
                client_call_details.method,
                client_call_details.timeout,
                metadata,
                client_call_details.credentials,
                client_call_details.wait_for_ready,
            )
            call = await continuation(details, request)
            try:
                await call
            except grpc.aio.AioRpcError as exc:
                if current is not None:
                    _status(current, exc.code())
            else:
                if current is not None:
                    _status(current, grpc.StatusCode.OK)
            return call


class ServerSpans(_Server):
    """A server span around each unary call served, under the caller's span if its
    metadata names one."""

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or handler.unary_unary is None or method.startswith(_HEALTH):
            return handler
        carrier = {
            key: value
            for key, value in handler_call_details.invocation_metadata or ()
            if key in ("traceparent", "tracestate") and isinstance(value, str)
        }
        behaviour = handler.unary_unary

        async def traced(request: Any, context: Any) -> Any:  # an aio ServicerContext
            parent = tracing.extract(carrier)
            with tracing.span(
                method.lstrip("/"), tracing.SERVER, _attributes(method), parent, result=False
            ) as current:
                try:
                    reply = await behaviour(request, context)
                except BaseException:
                    if current is not None:
                        _status(current, context.code() or grpc.StatusCode.UNKNOWN)
                    raise
                if current is not None:
                    _status(current, context.code() or grpc.StatusCode.OK)
                return reply

        return grpc.unary_unary_rpc_method_handler(
            traced,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def _method(method: str | bytes) -> str:
    return method.decode() if isinstance(method, bytes) else method


def install() -> None:
    """Every aio server and insecure channel made from now on gets our interceptors first."""
    if _ORIGINAL:
        return
    server: Callable[..., Any] = grpc.aio.server
    channel: Callable[..., Any] = grpc.aio.insecure_channel
    _ORIGINAL.update(server=server, insecure_channel=channel)

    def traced_server(*args: Any, interceptors: Sequence[Any] | None = None, **kw: Any) -> Any:
        return server(*args, interceptors=[ServerSpans(), *(interceptors or ())], **kw)

    def traced_channel(*args: Any, interceptors: Sequence[Any] | None = None, **kw: Any) -> Any:
        return channel(*args, interceptors=[ClientSpans(), *(interceptors or ())], **kw)

    grpc.aio.server = traced_server
    grpc.aio.insecure_channel = traced_channel


def uninstall() -> None:
    """Servers and channels made from now on are grpc's own again."""
    if _ORIGINAL:
        grpc.aio.server = _ORIGINAL.pop("server")
        grpc.aio.insecure_channel = _ORIGINAL.pop("insecure_channel")
