"""What the gateway asks of the bot service: a seat's hint (``ChooseMove``) and a finished
match's review (``Review``), the calls of its gRPC stub that it makes.

``Backends`` dials ``BOT_ADDR`` and calls its gRPC stub, which is one of these; under
``rackem up`` the gateway is given the bot service in its own process instead
(rackem/seam/bots.py), which answers the same calls without a socket. Either way a
refusal is a ``ServiceError`` once ``Backends.call_bot`` has mapped it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

from services._gen.rackem.v1 import bot_pb2

__all__ = ["BotClient"]


class BotClient(Protocol):
    def ChooseMove(
        self, request: bot_pb2.ChooseMoveRequest, timeout: float | None = None
    ) -> Awaitable[bot_pb2.ChooseMoveReply]: ...
    def Review(
        self, request: bot_pb2.ReviewRequest, timeout: float | None = None
    ) -> Awaitable[bot_pb2.ReviewReply]: ...
