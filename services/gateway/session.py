"""One WebSocket connection: frames in, limits, the commands, and a bounded queue out.

The connection holds at most one seat, always by the token the matchmaker handed out
(never a seat number from a message). Every outbound message goes through one bounded
queue; a client that lets it fill is dropped, and can resume with its token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services._gen.rackem.v1 import table_pb2 as tb
from services.common import eager
from services.common.errors import ServiceError
from services.common.logs import event
from services.gateway import messages
from services.gateway.follow import FINAL, Seat, follow
from services.gateway.hub import REPLACED, Hub
from services.gateway.limits import AbuseCounter, TokenBucket
from services.gateway.protocol import (
    VERSION,
    ProtocolError,
    check_name,
    encode,
    from_service,
    parse,
)
from services.gateway.rematch import Finished, after_match, forget, rematch
from services.gateway.watch import Spectator, refuse_while_watching, watch
from services.gateway.ws_protocol import INVALID_TEXT

__all__ = ["POLICY", "SLOW", "Session"]

log = logging.getLogger("rackem.gateway")

POLICY = 1008  # repeated abuse
SLOW = 1013  # the client did not read its messages: try again (resume)
_STRIKES = frozenset({"bad_frame", "bad_request", "rate_limited"})
_TOKEN = re.compile(r"[0-9a-f]{32}")
SERVER = "rackem-gateway/1"


class Session:
    def __init__(self, hub: Hub, ws: WebSocket, address: str) -> None:
        s = hub.settings
        self.hub = hub
        self.ws = ws
        self.address = address  # for the game limiter only (limits.client_key); never logged
        self.seat: Seat | None = None
        self.watching: Spectator | None = None  # the table this connection watches, if any
        self.finished: Finished | None = None  # its last finished match (for a rematch)
        self._outbox: asyncio.Queue[str | int] = asyncio.Queue(maxsize=s.outbound_queue)
        self._bucket = TokenBucket(s.msg_rate, s.msg_burst)
        self._abuse = AbuseCounter(s.abuse_limit, s.abuse_window_s)
        self._greeted = False
        self._hello_timer: asyncio.TimerHandle | None = None
        self._closing: int | None = None
        self._hard = False
        self._sender: asyncio.Task[None] | None = None
        # A message is written at once, in the pusher's own call, while the send loop
        # waits with nothing queued; one whose write had to wait is ``_in_flight``.
        self._sender_idle = False
        self._in_flight: asyncio.Future[None] | None = None
        self._follow: asyncio.Task[None] | None = None
        self._done = asyncio.Event()

    # -- the connection ------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the accepted socket until either side closes it."""
        self.hub.join(self)
        wait_s = self.hub.settings.hello_timeout_ms / 1000
        if wait_s > 0:
            self._hello_timer = asyncio.get_running_loop().call_later(wait_s, self._no_hello)
        self._sender = asyncio.create_task(self._send_loop())
        receiver = asyncio.create_task(self._receive_loop())
        try:
            await asyncio.wait({self._sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if self._hello_timer is not None:
                self._hello_timer.cancel()
            tasks = [
                t for t in (receiver, self._sender, self._follow, self._in_flight) if t is not None
            ]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._hard and self._closing is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.ws.close(self._closing), timeout=1.0)
            self._unbind()
            if self.watching is not None:
                self.watching.stop()
            forget(self)
            self.hub.leave(self)
            self._done.set()

    async def closed(self) -> None:
        await self._done.wait()

    def push(self, message: dict[str, Any]) -> None:
        """Queue one message for the client; a full queue drops the client (it can resume)."""
        if self._closing is not None:
            return
        text = encode(message)
        if self._sender_idle and self._in_flight is None and self._outbox.empty():
            self._send_now(text)
            return
        try:
            self._outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.hub.metrics.dropped.labels("slow").inc()
            event(log, "dropped_slow_client")
            self._abort(SLOW)

    def close(self, code: int) -> None:
        """Send what is queued, then close with ``code``."""
        if self._closing is not None:
            return
        try:
            self._outbox.put_nowait(code)
            self._closing = code
        except asyncio.QueueFull:
            self._abort(code)

    def _no_hello(self) -> None:
        """``HELLO_TIMEOUT_MS`` passed without a hello: a stranger holding a socket."""
        if not self._greeted and self._closing is None:
            self.hub.metrics.dropped.labels("no_hello").inc()  # counted, never logged
            self.close(POLICY)

    def replaced(self) -> None:
        """A newer connection resumed this seat: let go of it and close."""
        self._stop_following()
        self.seat = None
        self.close(REPLACED)

    def _abort(self, code: int) -> None:
        self._closing = code
        self._hard = True
        if self._sender is not None:
            self._sender.cancel()

    def _send_now(self, text: str) -> None:
        """Write ``text`` now, without the send loop's turn; if the socket makes the write
        wait (flow control), what comes next queues behind it."""
        sending = eager.start(self.ws.send_text(text))
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
            await self.ws.send_text(item)

    async def _receive_loop(self) -> None:
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    if message.get("code") == INVALID_TEXT:  # closed by GatewayWebSocket
                        self.hub.metrics.dropped.labels("bad_utf8").inc()
                    return
                text = message.get("text")
                await self._frame(text if text is not None else message.get("bytes"))

    async def _frame(self, frame: str | bytes | None) -> None:
        if self._closing is not None:
            return
        if not self._bucket.take():
            self._refuse(ProtocolError("rate_limited", "too many messages; slow down"))
            return
        try:
            message = parse(frame, self.hub.settings.max_frame_bytes)
            kind = message["type"]
            if kind == "hello":
                self._hello(message)
            elif not self._greeted:
                raise ProtocolError("hello_first", "say hello first")
            else:
                await _HANDLERS[kind](self, message)
        except ProtocolError as err:
            self._refuse(err)
        except ServiceError as err:
            self._refuse(from_service(err.code, err.message))
        except Exception:
            log.exception("unexpected_error")
            self._refuse(ProtocolError("internal", "internal error"))

    def _refuse(self, err: ProtocolError) -> None:
        self.hub.metrics.errors.labels(err.code).inc()
        self.push(err.to_message())
        if err.code in _STRIKES and self._abuse.strike():
            self.hub.metrics.dropped.labels("abuse").inc()
            event(log, "closed_for_abuse")
            self.close(POLICY)

    # -- seats ---------------------------------------------------------------------------

    def _no_seat(self) -> None:
        refuse_while_watching(self)
        seat = self.seat
        if seat is not None and seat.status in FINAL:
            # The final view went out and the table's end of the stream is on its way: the
            # match is over for this connection now (it may start a new game at once).
            self._stop_following()
            self._unbind()
            if seat.status == "finished":
                after_match(self, seat)
        if self.seat is not None:
            raise ProtocolError(
                "already_seated", "this connection already holds a seat; leave first"
            )

    def _seated(self) -> Seat:
        refuse_while_watching(self)
        if self.seat is None:
            raise ProtocolError("not_seated", "this connection holds no seat")
        return self.seat

    def _new_game(self) -> None:
        self._no_seat()
        if self.hub.admission.overloaded:
            raise ProtocolError("busy", "the server is busy; try again in a moment")
        if not self.hub.games.allow(self.address):
            raise ProtocolError(
                "rate_limited", "too many new games from this address; wait a while"
            )

    def _bind(self, reply: mm.Seated, token: str) -> None:
        self._stop_following()
        forget(self)
        seat = Seat(token=reply.token or token, seat=reply.seat, table_id=reply.table_id)
        self.seat = seat
        self.hub.claim(seat.token, self)
        announcement = messages.seated(reply) | {"token": seat.token}
        self._follow = asyncio.create_task(
            self._follow_seat(seat, reply.lobby, lambda: self.push(announcement))
        )

    async def _follow_seat(self, seat: Seat, lobby: mm.Lobby, announce: Callable[[], None]) -> None:
        try:
            over = await follow(self.hub, seat, lobby, self.push, announce)
        except ServiceError as err:  # the seat is no longer followed: the client may resume
            self._refuse(from_service(err.code, err.message))
            over = True
        except Exception:
            log.exception("unexpected_error")
            self._refuse(ProtocolError("internal", "internal error"))
            over = True
        if over is None and not seat.leaving:  # ended for a newer connection of the seat
            self.replaced()
        elif over and self.seat is seat:
            self._unbind()
        if over and seat.status == "finished" and not seat.leaving:
            after_match(self, seat)

    def _stop_following(self) -> None:
        if self._follow is not None and self._follow is not asyncio.current_task():
            self._follow.cancel()
        self._follow = None

    def _unbind(self) -> None:
        if self.seat is not None:
            self.hub.release(self.seat.token, self)
        self.seat = None

    # -- commands ------------------------------------------------------------------------

    def _hello(self, message: dict[str, Any]) -> None:
        if self._greeted:
            raise ProtocolError("bad_request", "hello comes once")
        if message["version"] != VERSION:
            raise ProtocolError("bad_version", f"this server speaks version {VERSION}")
        self._greeted = True
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.push(messages.welcome(SERVER))

    def _timeout(self) -> float:
        return self.hub.settings.rpc_timeout_s

    async def _quick_match(self, message: dict[str, Any]) -> None:
        name = check_name(message["name"])
        self._new_game()
        request = mm.QuickMatchRequest(name=name, players=message["players"])
        reply = await self.hub.backends.call_matchmaker(
            lambda stub: stub.QuickMatch(request, timeout=self._timeout())
        )
        self._bind(reply, reply.token)

    async def _create_table(self, message: dict[str, Any]) -> None:
        name = check_name(message["name"])
        rules = messages.rules_to_request(message.get("rules"))
        self._new_game()
        request = mm.CreatePrivateRequest(
            name=name,
            rules=rules,
            level=message.get("level", "medium"),
            start_now=message.get("start_now", False),
            spectators=message.get("spectators", "off"),
        )
        reply = await self.hub.backends.call_matchmaker(
            lambda stub: stub.CreateTable(request, timeout=self._timeout())
        )
        self._bind(reply, reply.token)

    async def _join(self, message: dict[str, Any]) -> None:
        name = check_name(message["name"])
        code = message["code"].strip().upper()
        if len(code) != 6 or not code.isalnum():
            raise ProtocolError("no_code", "no waiting table has that code")
        self._new_game()
        request = mm.JoinRequest(code=code, name=name)
        reply = await self.hub.backends.call_matchmaker(
            lambda stub: stub.JoinByCode(request, timeout=self._timeout())
        )
        self._bind(reply, reply.token)

    async def _resume(self, message: dict[str, Any]) -> None:
        token = message["token"].strip().lower()
        self._no_seat()
        if _TOKEN.fullmatch(token) is None:
            raise ProtocolError("bad_token", "that is not a seat token")
        request = mm.TokenRequest(token=token)
        reply = await self.hub.backends.call_matchmaker(
            lambda stub: stub.Locate(request, timeout=self._timeout())
        )
        self._bind(reply, token)

    async def _start(self, message: dict[str, Any]) -> None:
        seat = self._seated()
        request = mm.TokenRequest(token=seat.token)
        await self.hub.backends.call_matchmaker(
            lambda stub: stub.Start(request, timeout=self._timeout())
        )

    def _playing(self, move_id: str | None = None) -> Seat:
        seat = self._seated()
        if not seat.started:
            raise ProtocolError("illegal_move", "the table has not started", move_id)
        return seat

    async def _move(self, message: dict[str, Any]) -> None:
        move_id: str = message["id"]
        try:
            seat = self._playing(move_id)
            request = tb.SubmitMoveRequest(
                table_id=seat.table_id,
                token=seat.token,
                move=messages.move_to_pb(message["move"]),
                move_id=move_id,
            )
        except ProtocolError as err:
            err.move_id = move_id
            raise
        if "version" in message:
            request.expected_version = message["version"]
        started = time.perf_counter()
        try:
            reply, _ = await self.hub.backends.link_call(seat.replica, submit=request)
        except ServiceError as err:
            self.hub.admission.answered(time.perf_counter() - started)
            self.hub.metrics.moves.labels("refused").inc()
            raise from_service(err.code, err.message, move_id) from None
        took = time.perf_counter() - started
        self.hub.admission.answered(took)
        self.hub.metrics.move_latency.observe(took)
        self.hub.metrics.moves.labels("accepted").inc()
        self.push({"type": "moved", "id": move_id, "version": reply.moved})

    async def _continue(self, message: dict[str, Any]) -> None:
        seat = self._playing()
        request = tb.SeatRequest(table_id=seat.table_id, token=seat.token)
        await self.hub.backends.link_call(seat.replica, continue_round=request)

    async def _leave(self, message: dict[str, Any]) -> None:
        if self.watching is not None:  # stop watching
            self.watching.stop()
            self.watching = None
            self.push({"type": "left"})
            return
        seat = self._seated()
        request = mm.TokenRequest(token=seat.token)
        seat.leaving = True
        try:
            await self._leave_seat(seat, request)
        finally:
            seat.leaving = False
        self._stop_following()
        self._unbind()
        self.push({"type": "left"})

    async def _leave_seat(self, seat: Seat, request: mm.TokenRequest) -> None:
        if not seat.started:
            try:
                await self.hub.backends.call_matchmaker(
                    lambda stub: stub.Leave(request, timeout=self._timeout())
                )
            except ServiceError as err:
                if err.code != "already_started":
                    raise
                located = await self.hub.backends.call_matchmaker(
                    lambda stub: stub.Locate(request, timeout=self._timeout())
                )
                seat.started, seat.replica = True, located.lobby.replica
        if seat.started:
            table_request = tb.SeatRequest(table_id=seat.table_id, token=seat.token)
            await self.hub.backends.link_call(seat.replica, leave=table_request)

    async def _ping(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"type": "pong"}
        if "t" in message:
            reply["t"] = message["t"]
        self.push(reply)


_HANDLERS: dict[str, Callable[[Session, dict[str, Any]], Awaitable[None]]] = {
    "quick_match": Session._quick_match,
    "create_table": Session._create_table,
    "join": Session._join,
    "start": Session._start,
    "move": Session._move,
    "continue": Session._continue,
    "leave": Session._leave,
    "resume": Session._resume,
    "ping": Session._ping,
    "watch": watch,
    "rematch": rematch,
}
