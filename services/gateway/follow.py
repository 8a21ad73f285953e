"""Following one seat: its waiting room until the table starts, then its table's views.

Each step forwards what the services stream, as protocol messages, through ``push``.
A lost matchmaker stream is picked up again with ``Locate``; a lost table stream is
re-opened at the owner (``wrong_replica`` redirects) or through ``TABLE_ADDR``: there on a
new link where the replica behind it cannot serve (``Backends.spread``), and with a
complaint against an owner this gateway cannot reach (``Backends.next_hop``). Table
views come over the gateway's link to the replica (``services.gateway.table_client``).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services._gen.rackem.v1 import table_pb2 as tb
from services.common.errors import ServiceError, from_rpc_error
from services.gateway import messages
from services.gateway.backends import Backends
from services.gateway.table_client import LinkFeed

__all__ = ["FINAL", "SPECTATOR", "FollowEnd", "Follower", "Push", "Seat", "follow"]

FINAL = frozenset({"finished", "ended"})
SPECTATOR = -1
"""The seat a watcher is followed as: the table's views for it hold public information only
(rackcore's ``SPECTATOR``; tests/services/gateway/test_purity.py holds the two equal)."""
Push = Callable[[dict[str, Any] | bytes], None]
"""Sends a message to the connection (``Connection.push``): a dict, or its JSON text."""


class FollowEnd(enum.Enum):
    """How following a seat or a table ended (when no service refused it)."""

    OVER = "over"  # the table is over (finished, ended), or its waiting room closed
    REPLACED = "replaced"  # the table ended the stream: a newer connection took the seat


@dataclass(slots=True)
class Seat:
    """The seat a connection holds, known by its token; or a spectator's place at a table
    (seat ``SPECTATOR``, no token, known by its room ``code``)."""

    token: str
    seat: int
    table_id: str
    code: str = ""  # a spectator's: the waiting room is watched by code
    replica: str = ""  # the owning table replica's address, once started
    started: bool = False
    status: str = ""  # the table's status in its latest view
    # The latest ``view`` message sent for it, as the table wrote it (JSON text, never read
    # on the way): what a ``hint`` is asked from (hints.py).
    view: bytes = b""
    rated: bool = False  # a rated table (its lobby's ``rated``): no hints there
    leaving: bool = False  # a leave is under way: the table ends the stream for it
    # While its views are followed: a call for the seat was answered at another address
    # than theirs (``_watch_table``: they follow the table there).
    moved: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class Follower:
    """What following a seat uses: the channels, the count of followed tables
    (``GatewayState.following``), and how often and how patiently a lost stream is re-opened."""

    backends: Backends
    count: Callable[[str, int], None]
    tries: int
    backoff_s: float
    timeout_s: float


async def follow(
    via: Follower, seat: Seat, lobby: mm.Lobby, push: Push, announce: Callable[[], None]
) -> FollowEnd:
    """Forward the seat's lobby, then its views, until its table is over.

    ``announce`` (the ``seated`` message) runs before the first message is pushed, and
    for a started table only once the table has accepted the token, so a seat the table
    refuses (a seat that was left) is never announced. Returns how it ended
    (``FollowEnd``); raises ``ServiceError`` when a service refuses or stays unreachable.
    """
    if lobby.status != "started":
        announce()
        lobby = await _wait_for_start(via, seat, lobby, push)
        if lobby.status != "started":
            return FollowEnd.OVER
        first = None
    else:
        first = lobby
    if lobby.table_id:
        seat.table_id = lobby.table_id
    seat.replica = lobby.replica
    seat.started = True
    seat.rated = lobby.rated

    def before_first_view() -> None:
        if first is not None:
            announce()
            push(messages.lobby(first, seat.seat))

    return await _watch_table(via, seat, push, before_first_view)


async def _wait_for_start(via: Follower, seat: Seat, lobby: mm.Lobby, push: Push) -> mm.Lobby:
    """Forward the waiting room's updates until the table starts or closes; the last one."""
    request = mm.TokenRequest(token=seat.token)
    by_code = mm.LobbyRequest(code=seat.code)
    spectating = seat.seat == SPECTATOR
    push(messages.lobby(lobby, seat.seat))
    tries = 0
    while lobby.status == "waiting":
        failure: ServiceError | None = None
        matchmaker = via.backends.matchmaker
        stream = matchmaker.WatchCode(by_code) if spectating else matchmaker.WatchLobby(request)
        try:
            async for update in stream:
                tries = 0
                if update == lobby:
                    continue
                lobby = update
                push(messages.lobby(lobby, seat.seat))
                if lobby.status != "waiting":
                    return lobby
        except (grpc.aio.AioRpcError, ServiceError) as exc:  # over gRPC, or in process
            failure = from_rpc_error(exc) if isinstance(exc, grpc.aio.AioRpcError) else exc
            if failure.code != "unavailable":
                raise failure from None
        finally:
            stream.cancel()  # done with it: the matchmaker stops watching now
        tries += 1
        if tries > via.tries:
            raise failure or ServiceError("unavailable", "the waiting room stream ended")
        await asyncio.sleep(via.backoff_s * tries)
        if spectating:
            again = await via.backends.call_matchmaker(
                lambda stub: stub.GetLobby(by_code, timeout=via.timeout_s)
            )
        else:
            located = await via.backends.call_matchmaker(
                lambda stub: stub.Locate(request, timeout=via.timeout_s)
            )
            again = located.lobby
        if again != lobby:
            lobby = again
            push(messages.lobby(lobby, seat.seat))
    return lobby


async def _watch_table(
    via: Follower, seat: Seat, push: Push, before_first: Callable[[], None] | None
) -> FollowEnd:
    """Forward the table's views to the end of the match, re-subscribing where needed.

    Each view's message is pushed as the link reads it (``on_view``), as the table wrote
    it: no task stands between the link and the connection's outbox.
    """
    backends = via.backends
    fallback = backends.table_addr
    request = tb.SeatRequest(table_id=seat.table_id, token=seat.token)
    target = seat.replica or fallback
    unreachable = ""  # the owner complained of at the balanced address
    status = ""
    tries = 0

    def forward(table_view: game_pb2.TableView) -> None:
        nonlocal status, tries, before_first
        tries = 0
        seat.replica = target
        status = seat.status = table_view.status
        seat.view = table_view.message
        if before_first is not None:
            first, before_first = before_first, None
            first()
        push(table_view.message)  # the ``view`` message, as the table wrote it

    views: LinkFeed | None = None

    def moved(addr: str) -> None:
        """A call for the seat (a move, a continue) was answered by the table at ``addr``,
        not where its views come from: the table moved, and the old owner still holds the
        stream open (it is paused, or cut off in a way this link has not seen yet), so the
        views follow the table there now rather than once the link breaks."""
        if views is not None and addr != target:
            views.close()
            views.end(ServiceError("wrong_replica", "the table answered elsewhere", addr))

    via.count(seat.table_id, +1)
    seat.moved = moved
    try:
        while True:
            views = (
                backends.watch(
                    target, tb.SummaryRequest(table_id=seat.table_id), forward, unreachable
                )
                if seat.seat == SPECTATOR
                else backends.subscribe(target, request, forward, unreachable)
            )
            try:
                await views.finished()
                return FollowEnd.OVER if status in FINAL else FollowEnd.REPLACED
            except ServiceError as exc:
                err = exc
            finally:
                views.close()
            tries += 1
            if tries > via.tries:
                raise err
            next_target, unreachable = backends.next_hop(err, target)
            if next_target is None:
                if err.code == "wrong_replica" and not err.owner:
                    backends.spread()  # the balanced replica cannot serve: another one
                elif err.code not in ("unavailable", "shutting_down"):
                    raise err
                next_target = fallback
            # Straight on to an owner named; else a pause (a replica cut from the store, an
            # owner being complained of, a table changing owner: each takes a moment).
            if err.code != "wrong_replica" or not err.owner or unreachable:
                await asyncio.sleep(via.backoff_s * tries)
            target = next_target
    finally:
        seat.moved = None
        via.count(seat.table_id, -1)
