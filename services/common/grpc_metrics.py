"""Every gRPC call a service serves or makes, counted and timed: aio interceptors.

The names are go-grpc-prometheus's, which dashboards and alerts expect::

    grpc_server_started_total{grpc_service,grpc_method,grpc_type}
    grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code}
    grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type}   (histogram)

and the same three as ``grpc_client_*``. ``grpc_type`` is ``unary``, ``client_stream``,
``server_stream`` or ``bidi_stream``; ``grpc_code`` the status code's name (``OK``,
``NOT_FOUND``, ``UNAVAILABLE``, ...). A stream is counted when it starts and when it
ends, and its whole life is one observation of the histogram (``Table.Link`` lives as
long as the gateway's link: read stream durations apart from the unary ones).

What this costs: nothing per message, a few counter updates per call. A method's label
children are looked up once, at its first call; a server method's wrapped handler is
made once. On the client, bidi streams are not intercepted at all: grpc.aio passes
every ``write`` of an intercepted stream-stream call through a queue and two tasks of
its own, and ``Table.Link`` carries every move (its calls are counted at the table,
``grpc_server_*``, and by the gateway's own link metrics). Streaming client calls are
counted by a done-callback; unary ones are awaited by their interceptor.

Only methods the server has a handler for are counted (an unknown path from a client
would otherwise make a label value of its own); labels name services, methods and codes,
never a request's contents or a peer's address.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram

if TYPE_CHECKING:  # generic in grpc-stubs only
    _ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
    _UnaryInterceptor = grpc.aio.UnaryUnaryClientInterceptor[Any, Any]
    _StreamInterceptor = grpc.aio.UnaryStreamClientInterceptor[Any, Any]
else:
    _ServerInterceptor = grpc.aio.ServerInterceptor
    _UnaryInterceptor = grpc.aio.UnaryUnaryClientInterceptor
    _StreamInterceptor = grpc.aio.UnaryStreamClientInterceptor

__all__ = [
    "BUCKETS",
    "TYPES",
    "client_interceptors",
    "server_interceptors",
]

TYPES = ("unary", "client_stream", "server_stream", "bidi_stream")
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Prometheus's default buckets, as go-grpc-prometheus's histograms have them."""

_LABELS = ("grpc_service", "grpc_method", "grpc_type")
_CANCELLED = grpc.StatusCode.CANCELLED.name
_UNKNOWN = grpc.StatusCode.UNKNOWN.name
_OK = grpc.StatusCode.OK.name


def _grpc_type(request_streaming: bool, response_streaming: bool) -> str:
    return TYPES[request_streaming + 2 * response_streaming]


class _Method:
    """One method's label children: started, its histogram, handled by code (made at a
    code's first use: at most the 17 status codes)."""

    __slots__ = ("_handled", "_handled_family", "_labels", "seconds", "started")

    def __init__(self, calls: _Calls, path: str, grpc_type: str) -> None:
        service, _, method = path.lstrip("/").rpartition("/")
        self._labels = (service, method, grpc_type)
        self.started = calls.started.labels(*self._labels)
        self.seconds = calls.seconds.labels(*self._labels)
        self._handled_family = calls.handled
        self._handled: dict[str, Any] = {}

    def done(self, code: str, started: float) -> None:
        self.seconds.observe(time.perf_counter() - started)
        handled = self._handled.get(code)
        if handled is None:
            handled = self._handled[code] = self._handled_family.labels(*self._labels, code)
        handled.inc()


class _Calls:
    """The three metrics of one side (``server`` or ``client``), and each method's children."""

    def __init__(self, registry: CollectorRegistry, side: str) -> None:
        self.started = Counter(
            f"grpc_{side}_started",
            f"gRPC calls started ({side} side)",
            _LABELS,
            registry=registry,
        )
        self.handled = Counter(
            f"grpc_{side}_handled",
            f"gRPC calls completed ({side} side), by status code",
            (*_LABELS, "grpc_code"),
            registry=registry,
        )
        self.seconds = Histogram(
            f"grpc_{side}_handling_seconds",
            f"Time from a gRPC call's start to its end ({side} side); a stream's whole life",
            _LABELS,
            buckets=BUCKETS,
            registry=registry,
        )
        self._methods: dict[tuple[str, str], _Method] = {}

    def method(self, path: str | bytes, grpc_type: str) -> _Method:
        name = path.decode() if isinstance(path, bytes) else path
        found = self._methods.get((name, grpc_type))
        if found is None:
            found = self._methods[(name, grpc_type)] = _Method(self, name, grpc_type)
        return found


# -- the server ------------------------------------------------------------------------


def _code_after(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    code = context.code()
    return _OK if code is None else code.name


def _code_raised(exc: BaseException, context: grpc.aio.ServicerContext[Any, Any]) -> str:
    if isinstance(exc, asyncio.CancelledError):
        return _CANCELLED
    code = context.code()  # set by ``abort`` (AbortError) or ``set_code``
    return _UNKNOWN if code is None else code.name


def _unary_response(behavior: Callable[..., Any], method: _Method) -> Callable[..., Any]:
    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        method.started.inc()
        started = time.perf_counter()
        try:
            response = await behavior(request, context)
        except BaseException as exc:
            method.done(_code_raised(exc, context), started)
            raise
        method.done(_code_after(context), started)
        return response

    return handle


def _written_stream(behavior: Callable[..., Any], method: _Method) -> Callable[..., Any]:
    """A streaming handler that writes through its context (``await context.write``)."""

    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        method.started.inc()
        started = time.perf_counter()
        try:
            await behavior(request, context)
        except BaseException as exc:
            method.done(_code_raised(exc, context), started)
            raise
        method.done(_code_after(context), started)

    return handle


def _yielded_stream(behavior: Callable[..., Any], method: _Method) -> Callable[..., Any]:
    """A streaming handler that yields its responses (an async generator)."""

    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        method.started.inc()
        started = time.perf_counter()
        try:
            async for response in behavior(request, context):
                yield response
        except BaseException as exc:
            method.done(_code_raised(exc, context), started)
            raise
        method.done(_code_after(context), started)

    return handle


def _wrapped(handler: Any, method: _Method) -> Any:
    """``handler`` (an ``RpcMethodHandler``) with its behaviour counted and timed; as it
    is if its behaviour is not a coroutine or an async generator (a sync handler, which
    the aio server runs in its executor: we have none)."""
    codec = (handler.request_deserializer, handler.response_serializer)
    if not handler.response_streaming:
        behavior = handler.stream_unary if handler.request_streaming else handler.unary_unary
        if not inspect.iscoroutinefunction(behavior):
            return handler
        make = grpc.stream_unary_rpc_method_handler
        if not handler.request_streaming:
            make = grpc.unary_unary_rpc_method_handler
        return make(_unary_response(behavior, method), *codec)
    behavior = handler.stream_stream if handler.request_streaming else handler.unary_stream
    if inspect.iscoroutinefunction(behavior):
        wrapped = _written_stream(behavior, method)
    elif inspect.isasyncgenfunction(behavior):
        wrapped = _yielded_stream(behavior, method)
    else:
        return handler
    make = grpc.stream_stream_rpc_method_handler
    if not handler.request_streaming:
        make = grpc.unary_stream_rpc_method_handler
    return make(wrapped, *codec)


class _ServerMetrics(_ServerInterceptor):
    def __init__(self, registry: CollectorRegistry) -> None:
        self._calls = _Calls(registry, "server")
        self._handlers: dict[str, tuple[Any, Any]] = {}  # path: (handler, its wrapped one)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None:  # no such method: not counted (its path is the caller's to choose)
            return None
        path: str = handler_call_details.method
        known = self._handlers.get(path)
        if known is not None and known[0] is handler:
            return known[1]
        grpc_type = _grpc_type(handler.request_streaming, handler.response_streaming)
        wrapped = _wrapped(handler, self._calls.method(path, grpc_type))
        self._handlers[path] = (handler, wrapped)
        return wrapped


def server_interceptors(registry: CollectorRegistry) -> tuple[grpc.aio.ServerInterceptor[Any, Any]]:
    """What ``new_server(interceptors=...)`` takes: ``grpc_server_*`` in ``registry``."""
    return (_ServerMetrics(registry),)


# -- the client ------------------------------------------------------------------------


class _ClientUnary(_UnaryInterceptor):
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        method = self._calls.method(client_call_details.method, "unary")
        method.started.inc()
        started = time.perf_counter()
        try:
            call = await continuation(client_call_details, request)
            await call  # its answer or its error: the caller's await of ``call`` reads it again
        except grpc.aio.AioRpcError as err:
            method.done(err.code().name, started)
            raise
        except asyncio.CancelledError:
            method.done(_CANCELLED, started)
            raise
        method.done(_OK, started)
        return call


class _ClientServerStream(_StreamInterceptor):
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls
        self._ending: set[asyncio.Task[None]] = set()

    async def intercept_unary_stream(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        method = self._calls.method(client_call_details.method, "server_stream")
        method.started.inc()
        started = time.perf_counter()
        call = await continuation(client_call_details, request)

        def ended(done: Any) -> None:  # the status is read (at once: it is in) on a task
            task = asyncio.ensure_future(self._count(done, method, started))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

        call.add_done_callback(ended)
        return call

    @staticmethod
    async def _count(call: Any, method: _Method, started: float) -> None:
        code = _CANCELLED if call.cancelled() else (await call.code()).name
        method.done(code, started)


def client_interceptors(registry: CollectorRegistry) -> tuple[Any, ...]:
    """What ``open_channel(interceptors=...)`` takes: ``grpc_client_*`` in ``registry``
    for unary and server-streaming calls (bidi streams are left alone: the module's doc).
    One set per registry: give every channel of a service the same one."""
    calls = _Calls(registry, "client")
    return (_ClientUnary(calls), _ClientServerStream(calls))
