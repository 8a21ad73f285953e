"""uvicorn's WebSocket protocol, as services/gateway/ws_protocol.py holds it.

``GatewayWebSocket`` subclasses a class of uvicorn's private modules (one socket write a
turn, a quiet 1007, a close that leaves behind a full buffer, a lighter connection: what
it buys and the bound on uvicorn are in docs/dependencies.md#held-internals). These tests
name what it relies on: the module and class, the methods it overrides and their
signatures, the calls by which uvicorn reaches those overrides, the methods uvicorn calls
on the inbox and flag it swaps for ``lean_sync``'s, and the attributes it reads and assigns,
on a live connection. What the subclass does is tested in tests/services/gateway/
(test_ws_writes.py, test_invalid_text.py, test_slow_reader.py)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from services.common import lean_sync
from services.gateway.ws_protocol import GatewayWebSocket

MODULE = "uvicorn.protocols.websockets.websockets_sansio_impl"
IMPORTED = {  # module: the names ws_protocol.py imports from it
    MODULE: ["WebSocketsSansIOProtocol"],
    "uvicorn._types": ["ASGIReceiveEvent", "ASGISendEvent"],
    "uvicorn.protocols.utils": ["ClientDisconnected"],
}
OVERRIDDEN = {  # method: its parameters, and whether it is a coroutine function
    "__init__": (["self", "config", "server_state", "app_state", "_loop"], False),
    "handle_connect": (["self", "event"], False),
    "connection_lost": (["self", "exc"], False),
    "send": (["self", "message"], True),
    "send_receive_event_to_app": (["self"], False),
}
REACHED_FROM = {  # an override: uvicorn's methods that call it
    "handle_connect": ["handle_events"],
    "send_receive_event_to_app": ["handle_text", "handle_bytes", "handle_cont"],
    "send": ["run_asgi"],
}
USED = [  # the attributes ws_protocol.py reads or assigns, set by uvicorn's __init__
    "queue",
    "writable",
    "conn",
    "transport",
    "loop",
    "handshake_complete",
    "close_sent",
    "initial_response",
    "disconnected",
    "frames",
    "curr_msg_data_type",
    "read_paused",
]
USED_AFTER_HANDSHAKE = ["request", "response", "scope"]  # set by handle_connect

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def moved(what: str) -> str:
    return (
        f"uvicorn {uvicorn.__version__} moved {what}: services/gateway/ws_protocol.py "
        "relies on it; see docs/dependencies.md#held-internals"
    )


def base() -> type[Any]:
    module = importlib.import_module(MODULE)
    cls: type[Any] = module.WebSocketsSansIOProtocol
    return cls


def test_the_private_names_ws_protocol_imports_are_where_it_imports_them() -> None:
    for module_name, names in IMPORTED.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            pytest.fail(moved(f"the module {module_name}"))
        for name in names:
            assert hasattr(module, name), moved(f"{module_name}.{name}")
    assert GatewayWebSocket.__mro__[1] is base(), moved(f"{MODULE}.WebSocketsSansIOProtocol")


def test_the_overridden_methods_keep_their_signatures() -> None:
    cls = base()
    for name, (parameters, coroutine) in OVERRIDDEN.items():
        what = f"WebSocketsSansIOProtocol.{name}"
        method = getattr(cls, name, None)
        assert method is not None and name in vars(cls), moved(what)
        got = list(inspect.signature(method).parameters)
        assert got == parameters, moved(f"{what}'s parameters (now {got}, not {parameters})")
        assert inspect.iscoroutinefunction(method) == coroutine, moved(f"{what} (async or not)")


def test_uvicorn_still_reaches_the_overrides() -> None:
    cls = base()
    for name, callers in REACHED_FROM.items():
        for caller in callers:
            method = getattr(cls, caller, None)
            assert method is not None, moved(f"WebSocketsSansIOProtocol.{caller}")
            assert name in method.__code__.co_names, moved(f"the call of {name} from {caller}")


def test_lean_sync_has_every_method_uvicorn_calls_on_the_inbox_and_the_writable_flag() -> None:
    source = inspect.getsource(importlib.import_module(MODULE))
    for attribute, swapped in (("queue", lean_sync.Queue), ("writable", lean_sync.Event)):
        called = set(re.findall(rf"self\.{attribute}\.(\w+)", source))
        assert called, moved(f"WebSocketsSansIOProtocol.{attribute}")
        missing = sorted(name for name in called if not hasattr(swapped, name))
        assert not missing, moved(
            f"its use of self.{attribute}: it now calls {missing}, which "
            f"services/common/lean_sync.py's {swapped.__name__} lacks"
        )


def test_the_handshake_is_read_only_until_it_is_answered() -> None:
    """ws_protocol.py lets go of the request and response once the handshake is answered:
    uvicorn must read them nowhere else than where it answers it."""
    cls = base()
    for attribute, readers in (
        ("request", {"handle_connect"}),
        ("response", {"handle_connect", "send"}),
    ):
        reading = {
            name
            for name, value in vars(cls).items()
            if inspect.isfunction(value) and attribute in value.__code__.co_names
        }
        assert reading <= readers, moved(
            f"its reads of self.{attribute} (now in {sorted(reading)})"
        )


class _Seen(base()):  # type: ignore[misc]
    """uvicorn's own class (not the gateway's), the last one made kept."""

    last: ClassVar[Any] = None
    seen: ClassVar[dict[str, Any]] = {}  # its attributes as the app is called to connect

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Seen.last = self


async def _app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "websocket":
        return
    await receive()  # connect
    _Seen.seen = dict(vars(_Seen.last))
    await send({"type": "websocket.accept"})
    await receive()
    await send({"type": "websocket.close", "code": 1000})


@pytest.fixture
async def port() -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_app, http="h11", ws=_Seen, log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not server.started:
            await asyncio.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    await task


async def test_the_attributes_ws_protocol_uses_are_on_a_live_connection(port: int) -> None:
    async with connect(f"ws://127.0.0.1:{port}/") as ws:
        await ws.send("hi")
        await ws.wait_closed()
    seen = _Seen.seen
    missing = [name for name in [*USED, *USED_AFTER_HANDSHAKE] if name not in seen]
    assert not missing, moved(f"WebSocketsSansIOProtocol's attributes {missing}")
    kinds: dict[str, type | tuple[type, ...]] = {
        "conn": ServerProtocol,
        "loop": asyncio.AbstractEventLoop,
        "handshake_complete": bool,
        "close_sent": bool,
        "disconnected": bool,
        "read_paused": bool,
        "frames": list,
        "request": Request,
        "response": Response,
        "scope": dict,
        "initial_response": type(None),  # no HTTP answer under way
    }
    for name, kind in kinds.items():
        assert isinstance(seen[name], kind), moved(f"the type of .{name} ({type(seen[name])})")
    assert seen["curr_msg_data_type"] in ("text", "bytes"), moved(".curr_msg_data_type")
    assert isinstance(seen["scope"]["extensions"], dict), moved("scope['extensions']")
    transport = seen["transport"]
    for method in ("write", "close", "abort", "is_closing", "pause_reading", "get_protocol"):
        assert callable(getattr(transport, method, None)), moved(f".transport.{method}")
