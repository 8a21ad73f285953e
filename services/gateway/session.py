"""The protocol's commands on one WebSocket connection: limits, hello, seats, moves.

The transport (the outbound queue, writes, close codes, the connection's state) is
``connection.py``; this module decides what each frame means.

The connection holds at most one seat, always by the token the matchmaker handed out
(never a seat number from a message). Every outbound message goes through one bounded
queue; a client that lets it fill is dropped, and can resume with its token.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson
from starlette.websockets import WebSocket

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services._gen.rackem.v1 import table_pb2 as tb
from services.common.errors import ServiceError
from services.common.logs import event
from services.gateway import messages
from services.gateway.admission import Admission
from services.gateway.backends import Backends
from services.gateway.connection import POLICY, Connection, ConnectionState
from services.gateway.follow import FINAL, Follower, Seat, follow
from services.gateway.limits import AbuseCounter, GameLimiter, TokenBucket
from services.gateway.metrics import Metrics
from services.gateway.protocol import (
    VERSION,
    ProtocolError,
    check_name,
    from_service,
    parse,
)
from services.gateway.rematch import Finished, after_match, forget, rematch
from services.gateway.settings import GatewaySettings
from services.gateway.state import REPLACED, Member
from services.gateway.watch import Spectator, refuse_while_watching, watch

__all__ = ["Registry", "Session"]

log = logging.getLogger("rackem.gateway")

MAX_MOVE_ID = 64  # a move's id: 1 to 64 characters (schemas/move.json)
_STRIKES = frozenset({"bad_frame", "bad_request", "rate_limited"})
_HANDSHAKE = ConnectionState.HANDSHAKE  # a plain name: read on every frame
_TOKEN = re.compile(r"[0-9a-f]{32}")
SERVER = "rackem-gateway/1"


class Registry(Protocol):
    """What a session asks of the gateway's registry of connections (``GatewayState``)."""

    def join(self, member: Member) -> None: ...
    def leave(self, member: Member) -> None: ...
    def claim(self, token: str, member: Member) -> None: ...
    def release(self, token: str, member: Member) -> None: ...


class Session:
    """The protocol's commands on one connection (``connection.py``), and the seat it holds."""

    def __init__(
        self,
        ws: WebSocket,
        address: str,
        *,
        registry: Registry,
        backends: Backends,
        follower: Follower,
        metrics: Metrics,
        admission: Admission,
        games: GameLimiter,
        settings: GatewaySettings,
    ) -> None:
        s = settings
        self.registry = registry
        self.backends = backends
        self.follower = follower
        self.metrics = metrics
        self.admission = admission
        self.games = games
        self.settings = settings
        self.conn = Connection(
            ws, metrics, queue=s.outbound_queue, hello_timeout_s=s.hello_timeout_ms / 1000
        )
        self.push = self.conn.push  # bound once: every view goes through it
        self.close = self.conn.close
        self.closed = self.conn.closed
        self.address = address  # for the game limiter only (limits.client_key); never logged
        self.seat: Seat | None = None
        self.watching: Spectator | None = None  # the table this connection watches, if any
        self.finished: Finished | None = None  # its last finished match (for a rematch)
        self._bucket = TokenBucket(s.msg_rate, s.msg_burst)
        self._abuse = AbuseCounter(s.abuse_limit, s.abuse_window_s)
        self._follow: asyncio.Task[None] | None = None

    async def run(self) -> None:
        """Serve the accepted socket until either side closes it."""
        self.registry.join(self)
        try:
            await self.conn.run(self._frame, lambda: (self._follow,))
        finally:
            self._unbind()
            if self.watching is not None:
                self.watching.stop()
            forget(self)
            self.registry.leave(self)
            self.conn.ended()

    def replaced(self) -> None:
        """A newer connection resumed this seat: let go of it and close."""
        self._stop_following()
        self.seat = None
        self.close(REPLACED)

    async def _frame(self, frame: str | bytes | None) -> None:
        if not self._bucket.take():
            refusal = "too many messages; slow down"
            self._refuse(ProtocolError("rate_limited", refusal, _move_id(frame)))
            return
        try:
            message = parse(frame, self.settings.max_frame_bytes)
            kind = message["type"]
            if kind == "hello":
                self._hello(message)
            elif self.conn.state is _HANDSHAKE:
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
        self.metrics.errors.labels(err.code).inc()
        self.push(err.to_message())
        if err.code in _STRIKES and self._abuse.strike():
            self.metrics.dropped.labels("abuse").inc()
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
        if self.admission.overloaded:
            raise ProtocolError("busy", "the server is busy; try again in a moment")
        if not self.games.allow(self.address):
            raise ProtocolError(
                "rate_limited", "too many new games from this address; wait a while"
            )

    def _bind(self, reply: mm.Seated, token: str) -> None:
        self._stop_following()
        forget(self)
        seat = Seat(token=reply.token or token, seat=reply.seat, table_id=reply.table_id)
        self.seat = seat
        self.registry.claim(seat.token, self)
        announcement = messages.seated(reply) | {"token": seat.token}
        self._follow = asyncio.create_task(
            self._follow_seat(seat, reply.lobby, lambda: self.push(announcement))
        )

    async def _follow_seat(self, seat: Seat, lobby: mm.Lobby, announce: Callable[[], None]) -> None:
        try:
            over = await follow(self.follower, seat, lobby, self.push, announce)
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
            self.registry.release(self.seat.token, self)
        self.seat = None

    # -- commands ------------------------------------------------------------------------

    def _hello(self, message: dict[str, Any]) -> None:
        if self.conn.state is not _HANDSHAKE:
            raise ProtocolError("bad_request", "hello comes once")
        if message["version"] != VERSION:
            raise ProtocolError("bad_version", f"this server speaks version {VERSION}")
        self.conn.greeted()
        self.push(messages.welcome(SERVER))

    def _timeout(self) -> float:
        return self.settings.rpc_timeout_s

    async def _quick_match(self, message: dict[str, Any]) -> None:
        name = check_name(message["name"])
        self._new_game()
        request = mm.QuickMatchRequest(name=name, players=message["players"])
        reply = await self.backends.call_matchmaker(
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
        reply = await self.backends.call_matchmaker(
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
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.JoinByCode(request, timeout=self._timeout())
        )
        self._bind(reply, reply.token)

    async def _resume(self, message: dict[str, Any]) -> None:
        token = message["token"].strip().lower()
        self._no_seat()
        if _TOKEN.fullmatch(token) is None:
            raise ProtocolError("bad_token", "that is not a seat token")
        request = mm.TokenRequest(token=token)
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.Locate(request, timeout=self._timeout())
        )
        self._bind(reply, token)

    async def _start(self, message: dict[str, Any]) -> None:
        seat = self._seated()
        request = mm.TokenRequest(token=seat.token)
        await self.backends.call_matchmaker(
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
            version = await self.backends.submit(seat.replica, request)
        except ServiceError as err:
            self.admission.answered(time.perf_counter() - started)
            self.metrics.moves_refused.inc()
            raise from_service(err.code, err.message, move_id) from None
        took = time.perf_counter() - started
        self.admission.answered(took)
        self.metrics.move_latency.observe(took)
        self.metrics.moves_accepted.inc()
        self.push({"type": "moved", "id": move_id, "version": version})

    async def _continue(self, message: dict[str, Any]) -> None:
        seat = self._playing()
        request = tb.SeatRequest(table_id=seat.table_id, token=seat.token)
        await self.backends.continue_round(seat.replica, request)

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
                await self.backends.call_matchmaker(
                    lambda stub: stub.Leave(request, timeout=self._timeout())
                )
            except ServiceError as err:
                if err.code != "already_started":
                    raise
                located = await self.backends.call_matchmaker(
                    lambda stub: stub.Locate(request, timeout=self._timeout())
                )
                seat.started, seat.replica = True, located.lobby.replica
        if seat.started:
            table_request = tb.SeatRequest(table_id=seat.table_id, token=seat.token)
            await self.backends.leave(seat.replica, table_request)

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


def _move_id(frame: str | bytes | None) -> str | None:
    """The id of a ``move`` frame that will not be handled (a flood's), for its refusal to
    carry as every refusal of a move does; None for anything else. The frame's size was
    bounded by the socket's ``ws_max_size``."""
    if not isinstance(frame, str):
        return None
    try:
        message = orjson.loads(frame)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("type") != "move":
        return None
    move_id = message.get("id")
    return move_id if isinstance(move_id, str) and 0 < len(move_id) <= MAX_MOVE_ID else None
