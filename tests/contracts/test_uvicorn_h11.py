"""uvicorn's HTTP/1.1 protocol (h11), as services/gateway/http_protocol.py holds it.

``bounded_http`` subclasses uvicorn's ``H11Protocol`` for a deadline on each request's
head, which uvicorn lacks (what it buys and the bound on uvicorn:
docs/dependencies.md#held-internals). These tests name what it relies on: the module and
classes, the methods it overrides and their signatures, how uvicorn calls
``on_response_complete`` and makes a cycle per request, hands an upgraded connection to
another protocol, and the attributes it reads, on a live connection. The deadline itself
is tested in tests/services/gateway/test_strangers.py."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import pytest
import uvicorn

from services.gateway.http_protocol import bounded_http

MODULE = "uvicorn.protocols.http.h11_impl"
OVERRIDDEN = {  # method: its parameters
    "__init__": ["self", "config", "server_state", "app_state", "_loop"],
    "connection_made": ["self", "transport"],
    "data_received": ["self", "data"],
    "on_response_complete": ["self"],
    "connection_lost": ["self", "exc"],
}
CALLS = {  # (class, method): the names http_protocol.py needs it to use
    ("H11Protocol", "handle_events"): ["RequestResponseCycle", "cycle", "on_response_complete"],
    ("H11Protocol", "handle_websocket_upgrade"): ["set_protocol"],
    ("RequestResponseCycle", "__init__"): ["response_complete"],
    ("RequestResponseCycle", "send"): ["response_complete", "on_response"],
}

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def moved(what: str) -> str:
    return (
        f"uvicorn {uvicorn.__version__} moved {what}: services/gateway/http_protocol.py "
        "relies on it; see docs/dependencies.md#held-internals"
    )


def h11_impl() -> Any:
    try:
        return importlib.import_module(MODULE)
    except ImportError:
        pytest.fail(moved(f"the module {MODULE}"))


def test_the_protocol_class_is_where_http_protocol_imports_it() -> None:
    module = h11_impl()
    for name in ("H11Protocol", "RequestResponseCycle"):
        assert inspect.isclass(getattr(module, name, None)), moved(f"{MODULE}.{name}")
    assert bounded_http(1.0).__mro__[1] is module.H11Protocol, moved(f"{MODULE}.H11Protocol")


def test_the_overridden_methods_keep_their_signatures() -> None:
    cls = h11_impl().H11Protocol
    for name, parameters in OVERRIDDEN.items():
        what = f"H11Protocol.{name}"
        method = getattr(cls, name, None)
        assert method is not None and name in vars(cls), moved(what)
        got = list(inspect.signature(method).parameters)
        assert got == parameters, moved(f"{what}'s parameters (now {got}, not {parameters})")


def test_uvicorn_makes_a_cycle_per_request_and_calls_back_when_it_is_answered() -> None:
    module = h11_impl()
    for (class_name, method_name), names in CALLS.items():
        method = getattr(getattr(module, class_name), method_name, None)
        assert method is not None, moved(f"{class_name}.{method_name}")
        missing = [name for name in names if name not in method.__code__.co_names]
        assert not missing, moved(f"{class_name}.{method_name}'s use of {missing}")


class _Seen(h11_impl().H11Protocol):  # type: ignore[misc]
    """uvicorn's own class, what http_protocol.py reads looked at as each answer ends."""

    answered: ClassVar[list[dict[str, Any]]] = []
    made: ClassVar[list[dict[str, Any]]] = []

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        _Seen.made.append({"cycle": self.cycle, "loop": self.loop, "transport": self.transport})

    def on_response_complete(self) -> None:
        cycle = self.cycle
        _Seen.answered.append(
            {
                "cycle": cycle,
                "complete": getattr(cycle, "response_complete", None),
                "ours": self.transport.get_protocol() is self,
            }
        )
        super().on_response_complete()


async def _app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await receive()
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
async def port() -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_app, http=_Seen, ws="none", log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not server.started:
            await asyncio.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    await task


async def test_the_attributes_http_protocol_reads_are_on_a_live_connection(port: int) -> None:
    _Seen.made.clear()
    _Seen.answered.clear()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(2):  # two requests on one keep-alive connection
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            async with asyncio.timeout(10):
                while await reader.readline() != b"\r\n":
                    pass
                assert await reader.readexactly(2) == b"ok"
    finally:
        writer.close()
    [made] = _Seen.made
    assert made["cycle"] is None, moved("H11Protocol.cycle (None until a request)")
    assert made["loop"] is asyncio.get_running_loop(), moved("H11Protocol.loop")
    for method in ("close", "is_closing", "get_protocol"):
        assert callable(getattr(made["transport"], method, None)), moved(f".transport.{method}")
    cycle_class = h11_impl().RequestResponseCycle
    assert len(_Seen.answered) == 2, moved("the call of on_response_complete once per answer")
    first, second = _Seen.answered
    for answer in (first, second):
        assert isinstance(answer["cycle"], cycle_class), moved("H11Protocol.cycle's class")
        assert answer["complete"] is True, moved("RequestResponseCycle.response_complete")
        assert answer["ours"], moved("the transport's protocol while answering")
    assert first["cycle"] is not second["cycle"], moved("a new cycle per request")
