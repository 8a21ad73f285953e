"""Connections that never get going cost little for long: no hello within HELLO_TIMEOUT_MS
closes a WebSocket (1008); an HTTP request head that trickles in past HEADER_TIMEOUT_MS
(a WebSocket handshake's too) loses its connection."""

from __future__ import annotations

import asyncio

import pytest

from rackem.client import Client, ConnectionLost
from tests.system.raw_ws import RawWebSocket

from .conftest import StartGateway, metrics_text, ws_url


async def test_a_websocket_that_never_says_hello_is_closed_and_a_greeted_one_stays(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(hello_timeout_ms=300)
    strangers = [await RawWebSocket.open(gateway.port) for _ in range(20)]
    async with Client(ws_url(gateway)) as greeted:
        for stranger in strangers:
            assert await stranger.closed(timeout=10) == 1008
            await stranger.aclose()
        assert (await greeted.ping(2.0))["t"] == 2.0  # long past the timeout: still open
    late = Client(ws_url(gateway))
    await late.connect(hello=False)
    await late.send({"type": "hello", "version": 2})  # a hello refused is no hello
    assert (await late.recv())["code"] == "bad_version"
    with pytest.raises(ConnectionLost) as lost:
        await late.recv(timeout=10)
    assert lost.value.code == 1008
    assert 'rackem_gateway_dropped_total{reason="no_hello"} 21.0' in await metrics_text(gateway)


async def read_until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (30 s at most: a loaded
    machine may be late, and the trickle it races goes on for 40 s)."""
    async with asyncio.timeout(30):
        return await reader.read()


async def trickle(
    writer: asyncio.StreamWriter, lines: list[bytes], closed: asyncio.Task[bytes]
) -> int:
    """Write ``lines`` one every 0.2 s until the server closes; how many were written."""
    sent = 0
    for line in lines:
        if closed.done():
            break
        writer.write(line)
        sent += 1
        await asyncio.wait([closed], timeout=0.2)
    return sent


@pytest.mark.parametrize("path", ["/", "/ws"])
async def test_a_request_head_that_trickles_in_is_dropped(
    start_gateway: StartGateway, path: str
) -> None:
    gateway = await start_gateway(header_timeout_ms=500)
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    closed = asyncio.create_task(read_until_closed(reader))
    head = [f"GET {path} HTTP/1.1\r\n".encode(), b"Host: 127.0.0.1\r\n"]
    if path == "/ws":
        head += [b"Upgrade: websocket\r\n", b"Connection: Upgrade\r\n"]
    sent = await trickle(writer, head + [b"X-Slow: %d\r\n" % i for i in range(200)], closed)
    assert await closed == b""  # closed without an answer, long before the head was done
    assert sent < len(head) + 200
    writer.close()


async def test_the_deadline_is_for_the_head_only_and_again_for_each_request(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(header_timeout_ms=500)
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    async with asyncio.timeout(10):
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        length = 0
        while (line := await reader.readline()) != b"\r\n":
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert await reader.readexactly(length) == b'{"status":"ok"}'

    closed = asyncio.create_task(read_until_closed(reader))
    sent = await trickle(writer, [b"GET / HTTP/1.1\r\n"] + [b"X-Slow: 1\r\n"] * 200, closed)
    assert await closed == b"" and sent < 201  # the second request's head is timed too
    writer.close()
    async with Client(ws_url(gateway)) as client:  # an open WebSocket has no deadline
        await asyncio.sleep(1.0)
        assert (await client.ping(3.0))["t"] == 3.0
