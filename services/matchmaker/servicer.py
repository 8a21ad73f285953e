"""The matchmaker's gRPC surface: ``rackem.v1.Matchmaker``, one line per RPC over
``MatchmakerService``; a refusal aborts the call with its code (``abort``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import grpc

from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2_grpc
from services.common.errors import ServiceError, abort
from services.matchmaker.service import MatchmakerService, internal_error

__all__ = ["SERVICE_NAME", "MatchmakerServicer"]

SERVICE_NAME = "rackem.v1.Matchmaker"
T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServicer):
    """The calls over gRPC: a refusal aborts the call with its code (``abort``)."""

    def __init__(self, service: MatchmakerService) -> None:
        self._service = service

    async def _call(self, rpc: str, context: Context, work: Callable[[], Awaitable[T]]) -> T:
        try:
            return await work()
        except ServiceError as err:
            failure = err
        except Exception as exc:
            failure = internal_error(rpc, exc)
        await abort(context, failure)

    async def QuickMatch(self, request: pb.QuickMatchRequest, context: Context) -> pb.Seated:
        return await self._call("QuickMatch", context, partial(self._service.quick_match, request))

    async def CreateTable(self, request: pb.CreatePrivateRequest, context: Context) -> pb.Seated:
        return await self._call(
            "CreateTable", context, partial(self._service.create_table, request)
        )

    async def JoinByCode(self, request: pb.JoinRequest, context: Context) -> pb.Seated:
        return await self._call("JoinByCode", context, partial(self._service.join_by_code, request))

    async def Start(self, request: pb.TokenRequest, context: Context) -> pb.Lobby:
        return await self._call("Start", context, partial(self._service.start, request))

    async def Leave(self, request: pb.TokenRequest, context: Context) -> pb.Lobby:
        return await self._call("Leave", context, partial(self._service.leave, request))

    async def Locate(self, request: pb.TokenRequest, context: Context) -> pb.Seated:
        return await self._call("Locate", context, partial(self._service.locate, request))

    async def GetLobby(self, request: pb.LobbyRequest, context: Context) -> pb.Lobby:
        return await self._call("GetLobby", context, partial(self._service.get_lobby, request))

    async def WatchLobby(
        self, request: pb.TokenRequest, context: Context
    ) -> AsyncIterator[pb.Lobby]:
        lobbies = self._service.watch_lobby(request)
        while True:
            lobby = await self._call("WatchLobby", context, partial(_next_lobby, lobbies))
            if lobby is None:
                return
            yield lobby

    async def WatchCode(
        self, request: pb.LobbyRequest, context: Context
    ) -> AsyncIterator[pb.Lobby]:
        lobbies = self._service.watch_code(request)
        while True:
            lobby = await self._call("WatchCode", context, partial(_next_lobby, lobbies))
            if lobby is None:
                return
            yield lobby

    async def Rematch(self, request: pb.TokenRequest, context: Context) -> pb.Seated:
        return await self._call("Rematch", context, partial(self._service.rematch, request))

    async def WatchRematch(
        self, request: pb.TokenRequest, context: Context
    ) -> AsyncIterator[pb.Lobby]:
        lobbies = self._service.watch_rematch(request)
        while True:
            lobby = await self._call("WatchRematch", context, partial(_next_lobby, lobbies))
            if lobby is None:
                return
            yield lobby


async def _next_lobby(lobbies: AsyncIterator[pb.Lobby]) -> pb.Lobby | None:
    try:
        return await anext(lobbies)
    except StopAsyncIteration:
        return None
