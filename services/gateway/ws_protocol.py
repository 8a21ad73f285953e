"""uvicorn's WebSocket protocol (websockets sans-I/O), with a quiet end for text that is not UTF-8.

A text frame must be UTF-8 (RFC 6455 §8.1). uvicorn closes such a connection with 1007
but logs a traceback each time, and a second bad frame in the same read can fail the
transport with ``InvalidState``: one short connection per frame would flood the error
log. Here the connection is closed with 1007 once, and the app is told with a
``websocket.disconnect`` of code 1007, which the session counts
(``rackem_gateway_dropped_total{reason="bad_utf8"}``); nothing is logged.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

__all__ = ["INVALID_TEXT", "GatewayWebSocket"]

INVALID_TEXT = 1007  # "invalid frame payload data"
_REASON = "text frames are UTF-8"


class GatewayWebSocket(WebSocketsSansIOProtocol):
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
