"""The protocol's commands on one WebSocket connection: limits, hello, seats, moves.

The transport (the outbound queue, writes, close codes, the connection's state) is
``connection.py``; this module decides what each frame means. What the connection is
doing (idle, waiting or playing at a seat, watching a table, after its match) is one
value, ``state`` (session_state.py), changed only by ``enter``. The commands kept in
modules of their own (watch.py, rematch.py, hints.py) see the session through ``SessionApi``.

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
from services.archive.profiles import Profile
from services.common import tracing
from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event
from services.gateway import daily, messages, profiles
from services.gateway.admission import Admission
from services.gateway.backends import Backends
from services.gateway.connection import POLICY, Connection, ConnectionState
from services.gateway.follow import FINAL, FollowEnd, Follower, Seat, follow
from services.gateway.hints import hint
from services.gateway.limits import AbuseCounter, GameLimiter, TokenBucket
from services.gateway.metrics import Metrics
from services.gateway.protocol import (
    VERSION,
    ProtocolError,
    check_name,
    from_service,
    parse,
    room_code,
)
from services.gateway.rematch import forward_offers, rematch
from services.gateway.session_state import IDLE, AfterMatch, Seated, State, Watching
from services.gateway.settings import GatewaySettings
from services.gateway.state import REPLACED, Member
from services.gateway.watch import watch

__all__ = ["Connections", "Session"]

log = logging.getLogger("rackem.gateway")

MAX_MOVE_ID = 64  # a move's id: 1 to 64 characters (schemas/move.json)
_STRIKES = frozenset({"bad_frame", "bad_request", "rate_limited"})
_HANDSHAKE = ConnectionState.HANDSHAKE  # a plain name: read on every frame
_TOKEN = re.compile(r"[0-9a-f]{32}")
SERVER = "rackem-gateway/1"


class Connections(Protocol):
    """What a session asks of the gateway's register of its connections and the seat tokens
    they hold (``GatewayState``)."""

    def join(self, member: Member) -> None: ...
    def leave(self, member: Member) -> None: ...
    def claim(self, token: str, member: Member) -> None: ...
    def release(self, token: str, member: Member) -> None: ...


class Session:
    """The protocol's commands on one connection (``connection.py``), and its state."""

    def __init__(
        self,
        ws: WebSocket,
        address: str,
        *,
        connections: Connections,
        backends: Backends,
        follower: Follower,
        metrics: Metrics,
        admission: Admission,
        games: GameLimiter,
        settings: GatewaySettings,
        profile_store: profiles.Profiles | None = None,
    ) -> None:
        s = settings
        self.connections = connections
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
        self._state: State = IDLE
        self._bucket = TokenBucket(s.msg_rate, s.msg_burst)
        self._abuse = AbuseCounter(s.abuse_limit, s.abuse_window_s)
        self.profiles = profile_store  # None: no DATABASE_URL (profile messages: unavailable)
        self.profile: Profile | None = None  # bound by ``profile`` (profiles.py)
        self.profile_lookups = GameLimiter(
            s.profile_lookups_per_connection, s.profile_lookups_window_s
        )

    @property
    def state(self) -> State:
        return self._state

    def enter(self, state: State) -> None:
        """Move to ``state``: the old state's task ends (unless it is the caller), its
        seat's token is let go, and a new seat's token is claimed (a connection that held
        it before is told it was replaced)."""
        old, self._state = self._state, state
        if old is state:
            return
        old.stop()
        if isinstance(old, Seated):
            self.connections.release(old.seat.token, self)
        if isinstance(state, Seated):
            self.connections.claim(state.seat.token, self)

    async def run(self) -> None:
        """Serve the accepted socket until either side closes it."""
        self.connections.join(self)
        try:
            await self.conn.run(self._frame, self._tasks)
        finally:
            self.enter(IDLE)
            self.connections.leave(self)
            self.conn.ended()

    def _tasks(self) -> tuple[asyncio.Task[None] | None]:
        """The task of the state that follows a seat or a table, for the connection to wait
        on at the end."""
        state = self._state
        return (state.task if isinstance(state, Seated | Watching) else None,)

    def replaced(self) -> None:
        """A newer connection resumed this seat: let go of it and close."""
        if isinstance(self._state, Seated):
            self.enter(IDLE)  # the token is the newer connection's: releasing it is a no-op
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
        except Exception as exc:
            self.refuse_failure(exc)

    def refuse_failure(self, exc: BaseException) -> None:
        """The refusal for ``exc``, the one mapping of every failure to what the client
        sees: a refusal of ours as it is, a service's by its code, anything else logged and
        ``internal``."""
        if isinstance(exc, ProtocolError):
            self._refuse(exc)
        elif isinstance(exc, ServiceError):
            self._refuse(from_service(exc.code, exc.message))
        elif isinstance(exc, StoreUnavailable):  # the profile store, for now
            self._refuse(from_service("unavailable", ""))
        else:
            log.error("unexpected_error", exc_info=exc)
            self._refuse(ProtocolError("internal", "internal error"))

    def _refuse(self, err: ProtocolError) -> None:
        self.metrics.errors.labels(err.code).inc()
        self.push(err.to_message())
        if err.code in _STRIKES and self._abuse.strike():
            self.metrics.dropped.labels("abuse").inc()
            event(log, "closed_for_abuse")
            self.close(POLICY)

    # -- seats ---------------------------------------------------------------------------

    def make_free(self) -> None:
        state = self._state
        if isinstance(state, Watching):
            raise _watching()
        if isinstance(state, Seated) and state.seat.status in FINAL:
            # The final view went out and the table's end of the stream is on its way: the
            # match is over for this connection now (it may start a new game at once).
            self._match_over(state.seat)
        if isinstance(self._state, Seated):
            raise ProtocolError(
                "already_seated", "this connection already holds a seat; leave first"
            )

    def may_start_game(self) -> None:
        if self.admission.refuses_new():
            raise ProtocolError("busy", "the server is busy; try again in a moment")
        if not self.games.allow(self.address):
            self.metrics.admission_refusals["games_per_ip"].inc()
            raise ProtocolError(
                "rate_limited", "too many new games from this address; wait a while"
            )

    def _seated(self) -> Seat:
        state = self._state
        if isinstance(state, Watching):
            raise _watching()
        if not isinstance(state, Seated):
            raise ProtocolError("not_seated", "this connection holds no seat")
        return state.seat

    def take_seat(
        self, reply: mm.Seated, token: str, kind: str | None = None, since: float = 0.0
    ) -> None:
        seat = Seat(
            token=reply.token or token,
            seat=reply.seat,
            table_id=reply.table_id,
            rated=reply.lobby.rated,
        )
        seated = Seated(seat)
        self.enter(seated)
        announcement = messages.seated(reply) | {"token": seat.token}
        joined = None if kind is None else self.metrics.join_latency[kind]

        def announce() -> None:
            self.push(announcement)
            if joined is not None:
                joined.observe(time.perf_counter() - since)

        seated.task = asyncio.create_task(self._follow_seat(seated, reply.lobby, announce))

    async def _follow_seat(
        self, seated: Seated, lobby: mm.Lobby, announce: Callable[[], None]
    ) -> None:
        seat = seated.seat
        ended: FollowEnd | None = None  # None: a service refused or stayed unreachable
        try:
            ended = await follow(self.follower, seat, lobby, self.push, announce)
        except Exception as exc:  # the seat is no longer followed: the client may resume
            self.refuse_failure(exc)
        if self._state is not seated or seat.leaving:
            return  # moved on meanwhile, or a leave under way does the rest
        if ended is FollowEnd.REPLACED:  # ended for a newer connection of the seat
            self.replaced()
        else:
            self._match_over(seat)

    def _match_over(self, seat: Seat) -> None:
        """The seat's table is over for this connection: after the match if it finished
        (a rematch may be asked for, and its offer is forwarded), else idle."""
        if seat.status != "finished":
            self.enter(IDLE)
            return
        after = AfterMatch(seat)
        self.enter(after)
        after.offers = asyncio.create_task(
            forward_offers(
                self.backends.matchmaker, seat.token, self.settings.rematch_offer_s, self.push
            )
        )

    # -- commands ------------------------------------------------------------------------

    def _hello(self, message: dict[str, Any]) -> None:
        if self.conn.state is not _HANDSHAKE:
            raise ProtocolError("bad_request", "hello comes once")
        if message["version"] != VERSION:
            raise ProtocolError("bad_version", f"this server speaks version {VERSION}")
        self.conn.greeted()
        self.push(messages.welcome(SERVER))

    def _new_game(self) -> None:
        self.make_free()
        self.may_start_game()

    def _timeout(self) -> float:
        return self.settings.rpc_timeout_s

    async def _player(self) -> tuple[str, int]:
        """The bound profile's id and rating as shown, for a new game ("", 0 unbound),
        re-read from the store (a rated match since may have changed the rating; the one
        read before stands in while the store does not answer)."""
        bound = self.profile
        if bound is None or self.profiles is None:
            return "", 0
        try:
            fresh = await self.profiles.store.profile(bound.id)
        except (StoreUnavailable, ProtocolError):
            return bound.id, bound.rating.value
        if fresh is None:  # forgotten from another device
            self.profile = None
            raise ProtocolError("bad_profile", "this profile was forgotten")
        self.profile = fresh
        return fresh.id, fresh.rating.value

    async def _quick_match(self, message: dict[str, Any]) -> None:
        since = time.perf_counter()
        name = check_name(message["name"])
        self._new_game()
        profile, rating = await self._player()
        request = mm.QuickMatchRequest(
            name=name, players=message["players"], profile=profile, rating=rating
        )
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.QuickMatch(request, timeout=self._timeout())
        )
        self.take_seat(reply, reply.token, "quick", since)

    async def _create_table(self, message: dict[str, Any]) -> None:
        since = time.perf_counter()
        name = check_name(message["name"])
        rules = messages.rules_to_request(message.get("rules"))
        rated = message.get("rated", False)
        if rated and self.profile is None:
            raise ProtocolError("no_profile", "a rated table needs a profile; send profile first")
        self._new_game()
        profile, rating = await self._player()
        request = mm.CreatePrivateRequest(
            name=name,
            rules=rules,
            # No level asked: the matchmaker seats the level nearest a bound profile's rating,
            # else its default (services/matchmaker/seating.py).
            level=message.get("level", ""),
            start_now=message.get("start_now", False),
            spectators=message.get("spectators", "off"),
            profile=profile,
            rated=rated,
            rating=rating,
        )
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.CreateTable(request, timeout=self._timeout())
        )
        self.take_seat(reply, reply.token, "create", since)

    async def _join(self, message: dict[str, Any]) -> None:
        since = time.perf_counter()
        name = check_name(message["name"])
        code = room_code(message["code"])
        self._new_game()
        profile, rating = await self._player()
        request = mm.JoinRequest(code=code, name=name, profile=profile, rating=rating)
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.JoinByCode(request, timeout=self._timeout())
        )
        self.take_seat(reply, reply.token, "join", since)

    async def _resume(self, message: dict[str, Any]) -> None:
        token = message["token"].strip().lower()
        self.make_free()
        if _TOKEN.fullmatch(token) is None:
            raise ProtocolError("bad_token", "that is not a seat token")
        request = mm.TokenRequest(token=token)
        reply = await self.backends.call_matchmaker(
            lambda stub: stub.Locate(request, timeout=self._timeout())
        )
        self.take_seat(reply, token)

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
        """A seat's move, from its frame to its answer: one ``move`` span, with tracing on
        (docs/tracing.md)."""
        with tracing.span("move", tracing.SERVER) as current:
            if current is not None and current.is_recording():  # a sampled move only
                current.set_attribute("rackem.move.act", _act(message))
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
                version = await self.backends.submit(seat.replica, request, seat.moved)
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
        await self.backends.continue_round(seat.replica, request, seat.moved)

    async def _leave(self, message: dict[str, Any]) -> None:
        if isinstance(self._state, Watching):  # stop watching
            self.enter(IDLE)
            self.push({"type": "left"})
            return
        seat = self._seated()
        request = mm.TokenRequest(token=seat.token)
        seat.leaving = True
        try:
            await self._leave_seat(seat, request)
        finally:
            seat.leaving = False
        if isinstance(self._state, Seated) and self._state.seat is seat:
            self.enter(IDLE)
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
    "hint": hint,
    "profile": profiles.profile,
    "link_code": profiles.link_code,
    "forget_profile": profiles.forget_profile,
    "history": profiles.history,
    "leaderboard": profiles.leaderboard,
    "daily": daily.daily,
    "play_daily": daily.play_daily,
}


def _watching() -> ProtocolError:
    """A seat or table message from a connection that watches a table."""
    return ProtocolError(
        "watching", "this connection is watching a table and holds no seat; leave first"
    )


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


def _act(message: dict[str, Any]) -> str:
    """The move's act, for a span (the schema checked the shape; the act may be unknown)."""
    move = message.get("move")
    act = move.get("act") if isinstance(move, dict) else None
    return act if isinstance(act, str) and act.isalpha() and len(act) <= 16 else "unknown"
