"""``rackem up``'s matchmaker, called by the gateway in this process without a socket.

Under ``rackem up`` the gateway and the matchmaker share one process and one event
loop. Over loopback gRPC a call costs both ends their gRPC machinery, and gRPC's aio
server accepts one call at a time through its completion-queue thread: with the loop
busy (thousands of players) a burst of joins queued there for seconds and ran out of
its deadline. ``LocalMatchmaker`` answers the gateway's calls
(``services.gateway.matchmaker_client.MatchmakerClient``) with the matchmaker's own operations
(``MatchmakerService``), directly.

What a caller sees is what it sees over gRPC: the reply message (its own copy), or
``ServiceError`` with the code and message the servicer would have aborted with (an
unexpected exception is logged and becomes ``internal``), and ``unavailable`` when the
call's ``timeout`` passes. A stream is iterated and ``cancel()``ed, as a gRPC call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

from google.protobuf.message import Message

from rackem.seam.wire import copied
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.errors import ServiceError
from services.matchmaker.service import MatchmakerService, internal_error

__all__ = ["LobbyStream", "LocalMatchmaker"]

M = TypeVar("M", bound=Message)


class LocalMatchmaker:
    def __init__(self, service: MatchmakerService) -> None:
        self._service = service

    async def QuickMatch(
        self, request: pb.QuickMatchRequest, timeout: float | None = None
    ) -> pb.Seated:
        return await _call("QuickMatch", self._service.quick_match(copied(request)), timeout)

    async def CreateTable(
        self, request: pb.CreatePrivateRequest, timeout: float | None = None
    ) -> pb.Seated:
        return await _call("CreateTable", self._service.create_table(copied(request)), timeout)

    async def JoinByCode(self, request: pb.JoinRequest, timeout: float | None = None) -> pb.Seated:
        return await _call("JoinByCode", self._service.join_by_code(copied(request)), timeout)

    async def Start(self, request: pb.TokenRequest, timeout: float | None = None) -> pb.Lobby:
        return await _call("Start", self._service.start(copied(request)), timeout)

    async def Leave(self, request: pb.TokenRequest, timeout: float | None = None) -> pb.Lobby:
        return await _call("Leave", self._service.leave(copied(request)), timeout)

    async def Locate(self, request: pb.TokenRequest, timeout: float | None = None) -> pb.Seated:
        return await _call("Locate", self._service.locate(copied(request)), timeout)

    async def GetLobby(self, request: pb.LobbyRequest, timeout: float | None = None) -> pb.Lobby:
        return await _call("GetLobby", self._service.get_lobby(copied(request)), timeout)

    def WatchLobby(self, request: pb.TokenRequest) -> LobbyStream:
        return LobbyStream(self._service.watch_lobby(copied(request)))

    def WatchCode(self, request: pb.LobbyRequest) -> LobbyStream:
        return LobbyStream(self._service.watch_code(copied(request)))

    async def Rematch(self, request: pb.TokenRequest, timeout: float | None = None) -> pb.Seated:
        return await _call("Rematch", self._service.rematch(copied(request)), timeout)

    def WatchRematch(self, request: pb.TokenRequest) -> LobbyStream:
        return LobbyStream(self._service.watch_rematch(copied(request)))


class LobbyStream:
    """A waiting room's updates, read with ``async for``; ``cancel()`` ends it early."""

    def __init__(self, lobbies: AsyncIterator[pb.Lobby]) -> None:
        self._lobbies = lobbies
        self._cancelled = False

    def __aiter__(self) -> LobbyStream:
        return self

    async def __anext__(self) -> pb.Lobby:
        if self._cancelled:
            raise ServiceError("unavailable", "the waiting room stream was cancelled")
        return await _call("WatchLobby", anext(self._lobbies), None)

    def cancel(self) -> bool:
        """End the stream and its watch now (the watch's own cleanup runs in a task)."""
        if self._cancelled:
            return False
        self._cancelled = True
        close = getattr(self._lobbies, "aclose", None)
        if close is not None:
            task = asyncio.ensure_future(close())
            task.add_done_callback(_retrieve)
        return True


def _retrieve(task: asyncio.Future[object]) -> None:
    if not task.cancelled():
        task.exception()


async def _call(rpc: str, work: Awaitable[M], timeout: float | None) -> M:
    try:
        async with asyncio.timeout(timeout):
            return copied(await work)
    except (ServiceError, StopAsyncIteration):  # a refusal, or the stream's end: as they are
        raise
    except TimeoutError:
        raise ServiceError("unavailable", "the matchmaker did not answer in time") from None
    except Exception as exc:
        raise internal_error(rpc, exc) from None
