"""uvicorn's WebSocket protocol (websockets sans-I/O), with a quiet end for text that is not
UTF-8, and a close that reaches a slow reader and never waits on it for ever.

A text frame must be UTF-8 (RFC 6455 §8.1). uvicorn closes such a connection with 1007
but logs a traceback each time, and a second bad frame in the same read can fail the
transport with ``InvalidState``: one short connection per frame would flood the error
log. Here the connection is closed with 1007 once, and the app is told with a
``websocket.disconnect`` of code 1007, which the session counts
(``rackem_gateway_dropped_total{reason="bad_utf8"}``); nothing is logged.

A client that stops reading fills the socket; uvicorn then holds every send, the close
frame too, until the socket drains, so the gateway's 1013 for a slow reader never left
and the client (if it read again) saw the connection end without a code. Here a close
goes out at once, behind what is already buffered: a client that reads again gets all
of it, then the close code. And a client that does not read its close frame within
``close_grace_s`` is cut off (uvicorn would wait for the buffer to drain for ever).

Frames sent in one loop turn leave in one socket write: a data frame sent while the
socket takes more is put in websockets' output buffer, and the buffer is written once at
the end of the turn (``_flush``), so a move's ``view`` and ``moved`` to the mover cost one
write, not two. Anything uvicorn writes meanwhile (a close, a ping) empties the same
buffer, held frames first, so the order on the wire is the order of the sends. A text
frame already encoded (the table's ``view`` message, every frame the gateway writes) can
be held without the ASGI call at all: ``send_text_now``, offered to the app as the scope's
``TEXT_FRAMES`` extension (``connection.py`` uses it where it can, the ASGI way where not).

And it is lighter per connection (docs/performance.md, *Memory*): its inbox and its
``writable`` flag are ``services/common/lean_sync.py``'s (no deques), and the handshake's
request and response (headers and all) are let go once the handshake is answered.
"""

from __future__ import annotations

from typing import Any

from uvicorn._types import ASGIReceiveEvent, ASGISendEvent
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request
from websockets.protocol import State

from services.common.lean_sync import Event, Queue

__all__ = ["INVALID_TEXT", "TEXT_FRAMES", "GatewayWebSocket", "gateway_websocket"]

INVALID_TEXT = 1007  # "invalid frame payload data"
_REASON = "text frames are UTF-8"
TEXT_FRAMES = "rackem.text_frames"
"""The ASGI scope extension of a ``GatewayWebSocket``: ``{"send": send_text_now}``."""


class GatewayWebSocket(WebSocketsSansIOProtocol):
    close_grace_s = 5.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn uses put_nowait/get/empty of its queue and set/clear/wait/is_set of
        # writable, which lean_sync's classes have with asyncio's semantics.
        inbox: Queue[ASGIReceiveEvent] = Queue()
        writable = Event()
        writable.set()
        self.queue = inbox  # type: ignore[assignment]
        self.writable = writable  # type: ignore[assignment]
        self._flush_due = False  # frames are held for one write at the end of this turn

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # none for a refused handshake
        if scope is not None:
            scope["extensions"][TEXT_FRAMES] = {"send": self.send_text_now}

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        scope = getattr(self, "scope", None)
        if scope is not None:  # the scope's reference back to this protocol: a cycle
            scope["extensions"].pop(TEXT_FRAMES, None)

    def send_text_now(self, data: bytes) -> bool:
        """Hold a text frame (its UTF-8 ``data``) for this turn's write, as ``send`` holds a
        ``websocket.send``, in the caller's own call; False, and nothing sent, where
        ``send`` would have to wait or refuse (a full socket, a close under way): then send
        it that way."""
        if not self._may_hold():
            return False
        try:
            self.conn.send_text(data)
        except InvalidState:
            return False
        self._flush_soon()
        return True

    async def send(self, message: ASGISendEvent) -> None:
        if message["type"] == "websocket.send" and self._may_hold():
            self._hold(message)
            return
        closing = message["type"] == "websocket.close" and self.handshake_complete
        if closing and not self.writable.is_set() and not self.close_sent:
            self._close_now(message)  # a full socket: the close goes out behind the rest
            return
        await super().send(message)
        if closing:
            self._cut_after_grace()
        elif self.handshake_complete and self.response is not None:
            # Answered: uvicorn reads neither again (the app has the scope's copy of the
            # headers). websockets' parser keeps the request, as a local of its generator,
            # for the connection's life: its headers are emptied.
            self.request.headers.clear()
            self.request = self.response = None  # type: ignore[assignment]

    def _may_hold(self) -> bool:
        """Whether a data frame can wait for the end of this loop turn: the connection is
        open, greeted with no HTTP answer under way, and the socket not full (a full one
        makes uvicorn's send wait, as before)."""
        return (
            self.handshake_complete
            and not self.close_sent
            and self.initial_response is None
            and not self.disconnected
            and self.writable.is_set()
        )

    def _hold(self, message: Any) -> None:
        try:
            text = message.get("text")
            if text is not None:
                self.conn.send_text(text.encode())
            else:
                self.conn.send_binary(message.get("bytes") or b"")
        except InvalidState:
            raise ClientDisconnected() from None
        self._flush_soon()

    def _flush_soon(self) -> None:
        if not self._flush_due:
            self._flush_due = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        """Write every frame held this turn in one write (anything else written meanwhile,
        a close or a ping, took them along first: websockets keeps one output buffer)."""
        self._flush_due = False
        output = self.conn.data_to_send()
        if output and not self.transport.is_closing():
            self.transport.write(b"".join(output))

    def _close_now(self, message: Any) -> None:
        if self.conn.state is State.OPEN:
            self.conn.send_close(message.get("code", 1000), message.get("reason") or "")
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()  # once the client has read what is buffered
        self._cut_after_grace()

    def _cut_after_grace(self) -> None:
        self.loop.call_later(self.close_grace_s, self.transport.abort)  # no-op once closed

    def send_receive_event_to_app(self) -> None:
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:
            return  # past our close: discarded until the peer's close reply arrives
        if self.curr_msg_data_type == "text":
            try:
                self.queue.put_nowait({"type": "websocket.receive", "text": data.decode()})
            except UnicodeDecodeError:
                self._close_invalid_text()
                return
        else:
            self.queue.put_nowait({"type": "websocket.receive", "bytes": data})
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def _close_invalid_text(self) -> None:
        if self.conn.state is State.OPEN:
            self.conn.send_close(INVALID_TEXT, _REASON)
        self.queue.put_nowait(
            {"type": "websocket.disconnect", "code": INVALID_TEXT, "reason": _REASON}
        )
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()
        self._cut_after_grace()


def gateway_websocket(close_grace_s: float) -> type[GatewayWebSocket]:
    """``GatewayWebSocket`` cutting off clients that do not read their close within
    ``close_grace_s``."""

    class Configured(GatewayWebSocket):
        pass

    Configured.close_grace_s = close_grace_s
    return Configured
