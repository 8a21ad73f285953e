"""The connection alone (services/gateway/connection.py), over a real uvicorn socket: its
state goes HANDSHAKE -> OPEN -> CLOSING -> CLOSED, what was queued before a close is
sent before the close frame, nothing pushed or received after it is handled, and the
endpoint's tasks are cancelled with the connection's own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import pytest
import uvicorn
import websockets
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.exceptions import ConnectionClosed

from services.gateway.connection import POLICY, Connection, ConnectionState
from services.gateway.metrics import Metrics


class Echo:
    """An endpoint that records the connection's state at each step."""

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.states: list[tuple[str, ConnectionState]] = []
        self.frames: list[str] = []
        self.side = asyncio.get_running_loop().create_future()  # the endpoint's own task
        self.ended = asyncio.Event()

    async def on_receive(self, frame: str | bytes | None) -> None:
        conn = self.conn
        assert conn is not None and isinstance(frame, str)
        self.frames.append(frame)
        self.states.append((frame, conn.state))
        if frame == "hello":
            conn.greeted()
            conn.push({"type": "welcome"})
        elif frame == "bye":
            conn.push({"type": "one"})
            conn.push({"type": "two"})
            conn.close(POLICY)
            conn.push({"type": "after the close"})  # not sent
            self.states.append(("closed", conn.state))
        else:
            conn.push({"type": "echo", "text": frame})

    async def serve(self, ws: WebSocket) -> None:
        await ws.accept()
        self.conn = Connection(ws, Metrics(), queue=8, hello_timeout_s=0)
        self.states.append(("accepted", self.conn.state))
        await self.conn.run(self.on_receive, lambda: (self.side,))
        self.states.append(("ran", self.conn.state))
        self.conn.ended()
        self.ended.set()


@pytest.fixture
async def served() -> AsyncIterator[tuple[Echo, str]]:
    echo = Echo()
    app = Starlette(routes=[WebSocketRoute("/ws", echo.serve)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(30):
        while not server.started:
            await asyncio.sleep(0.01)
    try:
        yield echo, f"ws://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
        sock.close()


async def test_a_connection_goes_from_handshake_to_closed_and_sends_what_was_queued_first(
    served: tuple[Echo, str],
) -> None:
    echo, url = served
    async with websockets.connect(url) as ws:
        await ws.send("hello")
        assert json.loads(await ws.recv()) == {"type": "welcome"}
        await ws.send("ping")
        assert json.loads(await ws.recv()) == {"type": "echo", "text": "ping"}
        await ws.send("bye")
        got = []
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(30):
                while True:
                    got.append(json.loads(await ws.recv()))
        assert got == [{"type": "one"}, {"type": "two"}]
        assert closed.value.rcvd is not None and closed.value.rcvd.code == POLICY
    async with asyncio.timeout(30):
        await echo.ended.wait()
        assert echo.conn is not None
        await echo.conn.closed()
    assert echo.states == [
        ("accepted", ConnectionState.HANDSHAKE),
        ("hello", ConnectionState.HANDSHAKE),
        ("ping", ConnectionState.OPEN),
        ("bye", ConnectionState.OPEN),
        ("closed", ConnectionState.CLOSING),
        ("ran", ConnectionState.CLOSED),
    ]
    assert echo.conn.close_code == POLICY
    assert echo.side.cancelled()  # the endpoint's task ended with the connection
