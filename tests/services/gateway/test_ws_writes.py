"""The gateway's WebSocket protocol writes the frames sent in one loop turn in one socket
write (a move's ``view`` and ``moved`` to the mover), in order, a close behind them; a text
frame already encoded can be held without the ASGI call (``TEXT_FRAMES``)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import pytest
import uvicorn

from services.gateway.ws_protocol import TEXT_FRAMES, GatewayWebSocket
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
    protocol: GatewayWebSocket | None = None
    scopes: ClassVar[list[dict[str, Any]]] = []

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        counted = _CountedWrites(transport)
        _Counting.last, _Counting.protocol = counted, self
        super().connection_made(counted)  # type: ignore[arg-type]


def _direct(scope: dict[str, Any]) -> Callable[[bytes], bool]:
    send: Callable[[bytes], bool] = scope["extensions"][TEXT_FRAMES]["send"]
    return send


async def _app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """Each text frame ``N`` (or ``N close``, ``N mixed``, ``N paused``) is answered with N
    frames sent back to back (then a close 4000; every other one held by ``TEXT_FRAMES``;
    each tried that way while the socket takes no more, then sent as ASGI sends them)."""
    if scope["type"] != "websocket":
        return
    _Counting.scopes.append(scope)
    await receive()  # connect
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        count, *how = message["text"].split()
        close = how == ["close"]
        writes, protocol = _Counting.last, _Counting.protocol
        assert writes is not None and protocol is not None
        before = writes.writes
        if how == ["paused"]:
            protocol.pause_writing()
        for n in range(int(count)):
            text = f"frame {n}"
            if how == ["mixed"] and n % 2 == 0:
                assert _direct(scope)(text.encode())
                continue
            if how == ["paused"]:
                assert not _direct(scope)(text.encode())  # it would have to wait
                protocol.resume_writing()
            await send({"type": "websocket.send", "text": text})
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


async def test_frames_held_without_the_asgi_call_share_the_write_in_order(port: int) -> None:
    ws = await RawWebSocket.open(port)
    try:
        ws.send_text("5 mixed")
        await ws.flush()
        got = [await ws.recv() for _ in range(6)]
        assert got == [f"frame {n}" for n in range(5)] + ["writes 1"]
    finally:
        await ws.aclose()


async def test_a_frame_is_not_held_while_the_socket_takes_no_more(port: int) -> None:
    ws = await RawWebSocket.open(port)
    try:
        ws.send_text("1 paused")
        await ws.flush()
        assert [await ws.recv(), await ws.recv()] == ["frame 0", "writes 1"]
    finally:
        await ws.aclose()


async def test_a_lost_connection_lets_go_of_the_frames_extension(port: int) -> None:
    _Counting.scopes.clear()
    ws = await RawWebSocket.open(port)
    ws.send_text("1")
    await ws.flush()
    assert [await ws.recv(), await ws.recv()] == ["frame 0", "writes 1"]
    protocol = _Counting.protocol
    assert protocol is not None and TEXT_FRAMES in _Counting.scopes[-1]["extensions"]
    await ws.aclose()
    async with asyncio.timeout(5):
        while not protocol.disconnected:
            await asyncio.sleep(0.01)
    # The scope held the protocol's own method: a cycle the connection's end breaks.
    assert TEXT_FRAMES not in _Counting.scopes[-1]["extensions"]
    assert not protocol.send_text_now(b"late")


async def test_a_close_right_after_held_frames_comes_behind_them(port: int) -> None:
    ws = await RawWebSocket.open(port)
    try:
        ws.send_text("2 close")
        await ws.flush()
        assert [await ws.recv(), await ws.recv()] == ["frame 0", "frame 1"]
        assert await ws.closed() == 4000
    finally:
        await ws.aclose()
