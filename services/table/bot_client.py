"""Moves for bot and cover seats: from the bot service, or in-process when it fails.

The bot service gets the seat's view only. When it is unreachable, errs or is
slower than ``timeout_ms``, the move comes from ``rackcore.bots.choose(view,
"medium")`` in this process instead, so a table never stalls; after a failure the
service is left alone for ``retry_ms`` before it is asked again (one log line per
failure, not per move). Without a bot service address every level plays in-process.

The service is called through ``Bots``: the gRPC stub of the address given, or, under
``rackem up``, the bot service in the same process (rackem/seam/bots.py), which answers
the same call without a socket and refuses with a ``ServiceError``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

import grpc

from rackcore import Move, View
from rackcore.bots import choose
from services._gen.rackem.v1 import bot_pb2, bot_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.logs import event
from services.convert import move_from_pb
from services.table.views import view_json

__all__ = ["FALLBACK_LEVEL", "BotClient", "Bots"]

log = logging.getLogger("rackem.table.bots")

FALLBACK_LEVEL = "medium"


class Bots(Protocol):
    """The bot service's call, as its gRPC stub makes it."""

    def ChooseMove(
        self, request: bot_pb2.ChooseMoveRequest, timeout: float | None = None
    ) -> Awaitable[bot_pb2.ChooseMoveReply]: ...


class BotClient:
    def __init__(
        self,
        addr: str,
        timeout_ms: int,
        retry_ms: int,
        bots: Bots | None = None,
        interceptors: Sequence[Any] = (),
    ) -> None:
        """The bot service at ``addr`` (none: every level in-process), or ``bots``; the
        channel to ``addr`` with ``interceptors`` (services/common/grpc_metrics.py)."""
        self._channel = (
            open_channel(addr, interceptors=interceptors) if addr and bots is None else None
        )
        if self._channel is not None:
            bots = bot_pb2_grpc.BotStub(self._channel)
        self._stub = bots
        self._timeout = timeout_ms / 1000
        self._retry = retry_ms / 1000
        self._resting_until = 0.0
        self.fallbacks = 0  # moves chosen in-process because the service failed

    async def choose(self, view: View, level: str) -> Move:
        """The move for ``view``'s seat (its ``seat`` set, ``by`` unset)."""
        if self._stub is None:  # no bot service configured: every level in-process
            return choose(view, level=level, seed=secrets.randbits(32))
        if time.monotonic() >= self._resting_until:
            request = bot_pb2.ChooseMoveRequest(
                view_json=view_json(view), level=level, seed=secrets.randbits(63)
            )
            try:
                reply = await self._stub.ChooseMove(request, timeout=self._timeout)
                move = move_from_pb(reply.move, seat=view.seat)
                if move in view.legal_moves():
                    return move
                reason = "illegal_move"
            except grpc.aio.AioRpcError as exc:
                reason = exc.code().name.lower()
            except ServiceError as err:  # in this process: refused as the servicer would
                reason = err.code
            except Exception:  # a malformed reply: the service is not to be trusted now
                reason = "bad_reply"
            self._resting_until = time.monotonic() + self._retry
            self.fallbacks += 1
            event(
                log,
                "bot_fallback",
                logging.WARNING,
                reason=reason,
                retry_ms=int(self._retry * 1000),
            )
        else:
            self.fallbacks += 1
        return choose(view, level=FALLBACK_LEVEL, seed=secrets.randbits(32))

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close(None)
