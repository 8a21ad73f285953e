"""A WebSocket client that sends any frame, valid or not: websockets' sans-I/O client
protocol over asyncio streams (tests of what a careless or hostile client sends)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

__all__ = ["RawWebSocket"]


class RawWebSocket:
    """``await RawWebSocket.open(port)``; ``send_text(bytes)`` sends the bytes as they are."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, proto: ClientProtocol
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._proto = proto
        self._texts: deque[str] = deque()
        self.response: Response | None = None
        self.close_code: int | None = None
        self.close_reason = ""

    @classmethod
    async def open(
        cls,
        port: int,
        *,
        host: str = "127.0.0.1",
        headers: dict[str, str] | None = None,
        local_addr: tuple[str, int] | None = None,
    ) -> RawWebSocket:
        """Connect and complete the handshake (from ``local_addr``, if given)."""
        reader, writer = await asyncio.open_connection(
            host, port, limit=2**20, local_addr=local_addr
        )
        proto = ClientProtocol(parse_uri(f"ws://{host}:{port}/ws"), max_size=2**20)
        request = proto.connect()
        for name, value in (headers or {}).items():
            if name in request.headers:
                del request.headers[name]
            request.headers[name] = value
        proto.send_request(request)
        ws = cls(reader, writer, proto)
        await ws.flush()
        while proto.state is State.CONNECTING:
            if not await ws._read():
                break
        return ws

    @property
    def is_open(self) -> bool:
        return self._proto.state is State.OPEN

    def send_text(self, data: bytes | str) -> None:
        """Queue one text frame of ``data``'s bytes (checked as UTF-8 by nobody)."""
        self._proto.send_text(data.encode() if isinstance(data, str) else data)

    def send_binary(self, data: bytes) -> None:
        self._proto.send_binary(data)

    def send_frame(self, frame: Frame) -> None:
        self._proto.send_frame(frame)

    async def flush(self) -> None:
        """Write what is queued."""
        for chunk in self._proto.data_to_send():
            if chunk:
                self._writer.write(chunk)
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    async def recv(self, timeout: float = 10.0) -> str | None:
        """The next text message, or None once the connection is closed."""
        async with asyncio.timeout(timeout):
            while not self._texts:
                if not await self._read():
                    return None
        return self._texts.popleft()

    async def closed(self, timeout: float = 10.0) -> int | None:
        """Read (and drop) messages until the connection closes; its close code."""
        while await self.recv(timeout) is not None:
            pass
        return self.close_code

    async def _read(self) -> bool:
        try:
            data = await self._reader.read(2**16)
        except ConnectionError:
            data = b""
        if data:
            self._proto.receive_data(data)
        else:
            self._proto.receive_eof()
        for event in self._proto.events_received():
            if isinstance(event, Response):
                self.response = event
            elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                self._texts.append(bytes(event.data).decode())
        if self._proto.close_rcvd is not None and self.close_code is None:
            self.close_code = self._proto.close_rcvd.code
            self.close_reason = self._proto.close_rcvd.reason
        await self.flush()
        return bool(data) and self._proto.state is not State.CLOSED

    async def aclose(self) -> None:
        if self._proto.state is State.OPEN:
            self._proto.send_close(1000)
            await self.flush()
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
