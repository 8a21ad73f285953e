"""One accepted WebSocket as a transport: frames in, a bounded queue out, close codes.

The connection knows nothing of the protocol's commands: it hands every frame to its
endpoint's ``on_receive`` (``session.py``) and writes what is pushed, in order. Its
lifecycle is one ``ConnectionState``, in the spirit of Starlette's ``WebSocketState``:

- ``HANDSHAKE``: accepted, no ``hello`` yet; closed ``POLICY`` after
  ``HELLO_TIMEOUT_MS`` (a stranger holding a socket);
- ``OPEN``: greeted (``greeted()``);
- ``CLOSING``: ``close(code)`` was asked: what is queued is sent, then the close frame;
  nothing more is queued and no frame more is handed on;
- ``ABORTED``: dropped at once (``abort(code)``: a full queue, or a queue too full to
  take the close): the send loop is cancelled and the close frame sent as it ends;
- ``CLOSED``: both loops are over and the endpoint's tasks are cancelled.

The hot path: a message pushed while the send loop waits with nothing queued is written
at once, in the pusher's own call (no loop turn, no task): straight into the protocol's
buffer where the server offers that (``ws_protocol.TEXT_FRAMES``), else by the ASGI
call; one whose write had to wait (flow control) is ``_in_flight``, and what comes next
queues behind it. A message is pushed as a dict, or as its JSON text already made (the
table's ``view`` messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from services.common import eager
from services.common.lean_sync import Event, Queue
from services.common.logs import event
from services.gateway.metrics import Metrics
from services.gateway.protocol import encode
from services.gateway.ws_protocol import INVALID_TEXT, TEXT_FRAMES

__all__ = ["POLICY", "SLOW", "Connection", "ConnectionState"]

log = logging.getLogger("rackem.gateway")

POLICY = 1008  # repeated abuse, or no hello in time
SLOW = 1013  # the client did not read its messages: try again (resume)

Frame = str | bytes | None
Message = dict[str, Any] | bytes
"""A message to a client: a dict, or its JSON text (UTF-8) as it goes on the wire."""


class ConnectionState(enum.IntEnum):
    """Where a connection is in its life; each state comes after the ones above it."""

    HANDSHAKE = 0
    OPEN = 1
    CLOSING = 2
    ABORTED = 3
    CLOSED = 4


_HANDSHAKE = ConnectionState.HANDSHAKE
_OPEN = ConnectionState.OPEN
_CLOSING = ConnectionState.CLOSING  # a plain name: read on every push and every frame
_ABORTED = ConnectionState.ABORTED
_CLOSED = ConnectionState.CLOSED


class Connection:
    def __init__(
        self, ws: WebSocket, metrics: Metrics, *, queue: int, hello_timeout_s: float
    ) -> None:
        self.ws = ws
        self.state = _HANDSHAKE
        self.close_code: int | None = None  # set once CLOSING or ABORTED
        self._metrics = metrics
        self._hello_timeout_s = hello_timeout_s
        self._hello_timer: asyncio.TimerHandle | None = None
        self._outbox: Queue[bytes | int] = Queue(maxsize=queue)
        # The server's way to hold a text frame in the caller's call, if it has one.
        direct = ws.scope.get("extensions", {}).get(TEXT_FRAMES)
        self._send_direct: Callable[[bytes], bool] | None = direct["send"] if direct else None
        self._sender: asyncio.Task[None] | None = None
        self._sender_idle = False  # the send loop waits with nothing queued
        self._in_flight: asyncio.Future[None] | None = None  # a direct write still under way
        self._done = Event()

    async def run(
        self,
        on_receive: Callable[[Frame], Awaitable[None]],
        tasks: Callable[[], Iterable[asyncio.Future[Any] | None]],
    ) -> None:
        """Serve the socket until either side closes it; then cancel the connection's own
        tasks and ``tasks()`` (the endpoint's) together, and send a pending abort's close."""
        loop = asyncio.get_running_loop()
        if self._hello_timeout_s > 0:
            self._hello_timer = loop.call_later(self._hello_timeout_s, self._no_hello)
        self._sender = asyncio.create_task(self._send_loop())
        receiver = asyncio.create_task(self._receive_loop(on_receive))
        # Whichever loop ends first; asyncio.wait would do, at the cost of a set, a waiter
        # and a callback per task held for the connection's whole life.
        first: asyncio.Future[None] = loop.create_future()

        def one_ended(_: object) -> None:
            if not first.done():
                first.set_result(None)

        self._sender.add_done_callback(one_ended)
        receiver.add_done_callback(one_ended)
        try:
            await first
        finally:
            if self._hello_timer is not None:
                self._hello_timer.cancel()
            running = [
                t for t in (receiver, self._sender, self._in_flight, *tasks()) if t is not None
            ]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            if self.state is _ABORTED and self.close_code is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.ws.close(self.close_code), timeout=1.0)
            self.state = _CLOSED

    def ended(self) -> None:
        """The endpoint has let go of everything: ``closed()`` returns."""
        self._done.set()

    async def closed(self) -> None:
        await self._done.wait()

    def greeted(self) -> None:
        """The client said hello: no more hello timeout."""
        if self.state is _HANDSHAKE:
            self.state = _OPEN
        if self._hello_timer is not None:
            self._hello_timer.cancel()

    def push(self, message: Message) -> None:
        """Queue one message for the client; a full queue drops the client (it can resume)."""
        if self.state >= _CLOSING:
            return
        data = message if isinstance(message, bytes) else encode(message)
        if self._sender_idle and self._in_flight is None and self._outbox.empty():
            self._send_now(data)
            return
        try:
            self._outbox.put_nowait(data)
        except asyncio.QueueFull:
            self._metrics.dropped.labels("slow").inc()
            event(log, "dropped_slow_client")
            self.abort(SLOW)

    def close(self, code: int) -> None:
        """Send what is queued, then close with ``code``."""
        if self.state >= _CLOSING:
            return
        try:
            self._outbox.put_nowait(code)
            self.state, self.close_code = _CLOSING, code
        except asyncio.QueueFull:
            self.abort(code)

    def abort(self, code: int) -> None:
        """Drop the client now: the send loop stops and ``code`` closes the socket."""
        self.state, self.close_code = _ABORTED, code
        if self._sender is not None:
            self._sender.cancel()

    def _no_hello(self) -> None:
        """``HELLO_TIMEOUT_MS`` passed without a hello: a stranger holding a socket."""
        if self.state is _HANDSHAKE:
            self._metrics.dropped.labels("no_hello").inc()  # counted, never logged
            self.close(POLICY)

    def _send_now(self, data: bytes) -> None:
        """Write ``data`` now, without the send loop's turn; if the socket makes the write
        wait (flow control), what comes next queues behind it."""
        direct = self._send_direct
        if direct is not None and direct(data):
            return
        sending = eager.start(self.ws.send_text(data.decode()))
        if not sending.done():
            self._in_flight = sending
            sending.add_done_callback(self._sent)
        else:
            self._sent(sending)

    def _sent(self, sending: asyncio.Future[None]) -> None:
        if self._in_flight is sending:
            self._in_flight = None
        failed = sending.cancelled() or sending.exception() is not None  # the client is gone
        if failed and self._sender is not None:
            self._sender.cancel()  # the connection ends, as when the send loop fails

    async def _send_loop(self) -> None:
        while True:
            self._sender_idle = True
            item = await self._outbox.get()
            self._sender_idle = False
            if self._in_flight is not None:  # a write made at once is still under way
                await asyncio.wait([self._in_flight])
            if isinstance(item, int):
                await self.ws.close(item)
                return
            direct = self._send_direct
            if direct is None or not direct(item):
                await self.ws.send_text(item.decode())

    async def _receive_loop(self, on_receive: Callable[[Frame], Awaitable[None]]) -> None:
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    if message.get("code") == INVALID_TEXT:  # closed by GatewayWebSocket
                        self._metrics.dropped.labels("bad_utf8").inc()
                    return
                if self.state >= _CLOSING:
                    continue
                text = message.get("text")
                await on_receive(text if text is not None else message.get("bytes"))
