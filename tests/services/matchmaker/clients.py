"""Client-side helpers for the matchmaker tests: refusal codes, lobby streams."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING

import grpc
import pytest

from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.errors import from_rpc_error

if TYPE_CHECKING:
    from services._gen.rackem.v1.matchmaker_pb2_grpc import MatchmakerAsyncStub as Stub
LIMIT_S = 10  # a guard against hangs, far above any duration the tests configure


async def refused(call: Awaitable[object]) -> str:
    """The stable error code a call is refused with (it must be refused)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return from_rpc_error(caught.value).code


async def until_status(stub: Stub, token: str, status: str) -> pb.Lobby:
    """Watch the token's lobby until it has ``status``; that lobby."""
    async with asyncio.timeout(LIMIT_S):
        async for lobby in stub.WatchLobby(pb.TokenRequest(token=token)):
            if lobby.status == status:
                return lobby
    raise AssertionError(f"the lobby stream ended before {status}")


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
