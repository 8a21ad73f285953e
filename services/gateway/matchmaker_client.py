"""What the gateway asks of the matchmaker: the calls of its gRPC stub that it makes.

``Backends`` dials the matchmaker and calls its gRPC stub, which is one of these; under
``rackem up`` the gateway is given the matchmaker in its own process instead
(rackem/seam/matchmaker.py), which answers the same calls without a socket. Either
way a refusal is a ``ServiceError`` (over gRPC, once ``Backends.call_matchmaker`` has
mapped it) and a stream is iterated, then ``cancel()``ed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Protocol

from services._gen.rackem.v1 import matchmaker_pb2 as mm

__all__ = ["LobbyStream", "MatchmakerClient"]


class LobbyStream(Protocol):
    """A waiting room's updates, until it starts or closes; ``cancel()`` ends it early."""

    def __aiter__(self) -> AsyncIterator[mm.Lobby]: ...
    def cancel(self) -> bool: ...


class MatchmakerClient(Protocol):
    def QuickMatch(
        self, request: mm.QuickMatchRequest, timeout: float | None = None
    ) -> Awaitable[mm.Seated]: ...
    def CreateTable(
        self, request: mm.CreatePrivateRequest, timeout: float | None = None
    ) -> Awaitable[mm.Seated]: ...
    def JoinByCode(
        self, request: mm.JoinRequest, timeout: float | None = None
    ) -> Awaitable[mm.Seated]: ...
    def Start(
        self, request: mm.TokenRequest, timeout: float | None = None
    ) -> Awaitable[mm.Lobby]: ...
    def Leave(
        self, request: mm.TokenRequest, timeout: float | None = None
    ) -> Awaitable[mm.Lobby]: ...
    def Locate(
        self, request: mm.TokenRequest, timeout: float | None = None
    ) -> Awaitable[mm.Seated]: ...
    def GetLobby(
        self, request: mm.LobbyRequest, timeout: float | None = None
    ) -> Awaitable[mm.Lobby]: ...
    def Rematch(
        self, request: mm.TokenRequest, timeout: float | None = None
    ) -> Awaitable[mm.Seated]: ...
    def WatchLobby(self, request: mm.TokenRequest) -> LobbyStream: ...
    def WatchCode(self, request: mm.LobbyRequest) -> LobbyStream: ...
    def WatchRematch(self, request: mm.TokenRequest) -> LobbyStream: ...
