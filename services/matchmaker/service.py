"""The matchmaker's operations, as every transport calls them: ``rackem.v1.Matchmaker``'s
requests in, its replies out, over ``seating.Matchmaker``.

The gRPC servicer (``servicer.py``) and ``rackem up``'s in-process ``LocalMatchmaker``
(rackem/seam/matchmaker.py) both answer through these, so a call means the same
whichever way it arrives. Each raises
``ServiceError`` for a refusal; the transport turns that into what its caller reads.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from prometheus_client import Gauge

from rackcore import RulesError
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.errors import ServiceError
from services.common.unexpected import refusal_for
from services.convert import rules_from_pb
from services.matchmaker.lobby import lobby_to_pb, seated_to_pb
from services.matchmaker.metrics import MatchmakerMetrics
from services.matchmaker.records import TableRecord
from services.matchmaker.seating import Matchmaker

__all__ = ["MatchmakerService", "internal_error"]

log = logging.getLogger("rackem.matchmaker")


def internal_error(rpc: str, exc: Exception) -> ServiceError:
    """The refusal a caller gets for an unexpected failure of ``rpc``: ``unavailable``
    while Redis is unreachable, else ``internal``; logged (services/common/unexpected.py)."""
    return refusal_for(log, rpc, exc)


class MatchmakerService:
    def __init__(self, matchmaker: Matchmaker, metrics: MatchmakerMetrics | None = None) -> None:
        """``metrics``: where the waiting rooms streamed are counted (none: nowhere)."""
        self._mm = matchmaker
        self._waiting = None if metrics is None else metrics.waiting_players

    async def quick_match(self, request: pb.QuickMatchRequest) -> pb.Seated:
        return seated_to_pb(
            await self._mm.quick_match(
                request.name, request.players, request.profile, request.rating
            )
        )

    async def create_table(self, request: pb.CreatePrivateRequest) -> pb.Seated:
        try:
            rules = rules_from_pb(request.rules)
        except RulesError as exc:
            raise ServiceError("bad_rules", str(exc)) from None
        if request.spectators not in ("", "off", "public"):
            raise ServiceError("bad_request", "spectators is off or public")
        seating = await self._mm.create_private(
            request.name,
            rules,
            request.level,
            request.start_now,
            request.spectators == "public",
            profile=request.profile,
            rating=request.rating,
            rated=request.rated,
            daily=request.daily,
        )
        return seated_to_pb(seating)

    async def join_by_code(self, request: pb.JoinRequest) -> pb.Seated:
        return seated_to_pb(
            await self._mm.join(request.code, request.name, request.profile, request.rating)
        )

    async def start(self, request: pb.TokenRequest) -> pb.Lobby:
        return lobby_to_pb(await self._mm.start(request.token))

    async def leave(self, request: pb.TokenRequest) -> pb.Lobby:
        return lobby_to_pb(await self._mm.leave(request.token))

    async def locate(self, request: pb.TokenRequest) -> pb.Seated:
        return seated_to_pb(await self._mm.locate(request.token))

    async def get_lobby(self, request: pb.LobbyRequest) -> pb.Lobby:
        return lobby_to_pb(await self._mm.lobby(request.code))

    def watch_lobby(self, request: pb.TokenRequest) -> AsyncIterator[pb.Lobby]:
        """The seat's waiting room now and after every change, until it started or closed."""
        lobbies = _lobbies(self._mm.watch(request.token))
        return lobbies if self._waiting is None else _counted(lobbies, self._waiting)

    async def rematch(self, request: pb.TokenRequest) -> pb.Seated:
        return seated_to_pb(await self._mm.rematch(request.token))

    def watch_rematch(self, request: pb.TokenRequest) -> AsyncIterator[pb.Lobby]:
        """The rematch of the token's match once asked for, until it started or closed."""
        return _lobbies(self._mm.watch_rematch(request.token))

    def watch_code(self, request: pb.LobbyRequest) -> AsyncIterator[pb.Lobby]:
        """A spectator's waiting room by code, until it started or closed."""
        return _lobbies(self._mm.watch_code(request.code))


async def _counted(lobbies: AsyncIterator[pb.Lobby], waiting: Gauge) -> AsyncIterator[pb.Lobby]:
    """``lobbies``, counted in ``waiting`` while they are read (a player waiting for a
    table's start watches its lobby until then)."""
    waiting.inc()
    try:
        async for lobby in lobbies:
            yield lobby
    finally:
        waiting.dec()


async def _lobbies(records: AsyncIterator[TableRecord]) -> AsyncIterator[pb.Lobby]:
    async for record in records:
        yield lobby_to_pb(record)
