"""The gateway's WebSocket protocol writes the frames sent in one loop turn in one socket
write (a move's ``view`` and ``moved`` to the mover), in order, a close behind them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import uvicorn

from services.gateway.ws_protocol import GatewayWebSocket
from tests.system.raw_ws import RawWebSocket

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _CountedWrites:
    """The real transport, its writes counted."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _Counting(GatewayWebSocket):
    last: _CountedWrites | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        counted = _CountedWrites(transport)
        _Counting.last = counted
        super().connection_made(counted)  # type: ignore[arg-type]


async def _app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """Each text frame ``N`` (or ``N close``) is answered with N frames sent back to back
    (then a close 4000)."""
    if scope["type"] != "websocket":
        return
    await receive()  # connect
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        count, *close = message["text"].split()
        writes = _Counting.last
        assert writes is not None
        before = writes.writes
        for n in range(int(count)):
            await send({"type": "websocket.send", "text": f"frame {n}"})
        if close:
            await send({"type": "websocket.close", "code": 4000})
            return
        await asyncio.sleep(0)  # the turn ends: what was held goes out
        await send({"type": "websocket.send", "text": f"writes {writes.writes - before}"})


@pytest.fixture
async def port() -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_app, ws=_Counting, log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not server.started:
            await asyncio.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    await task


async def test_frames_sent_in_one_turn_go_out_in_one_write_in_order(port: int) -> None:
    ws = await RawWebSocket.open(port)
    try:
        for count in (1, 3):
            ws.send_text(str(count))
            await ws.flush()
            got = [await ws.recv() for _ in range(count + 1)]
            assert got == [f"frame {n}" for n in range(count)] + ["writes 1"]
    finally:
        await ws.aclose()


async def test_a_close_right_after_held_frames_comes_behind_them(port: int) -> None:
    ws = await RawWebSocket.open(port)
    try:
        ws.send_text("2 close")
        await ws.flush()
        assert [await ws.recv(), await ws.recv()] == ["frame 0", "frame 1"]
        assert await ws.closed() == 4000
    finally:
        await ws.aclose()
