"""``rackem up``'s bot service, called by the table replica in this process without a socket.

Under ``rackem up`` the table replica and the bot service share one process and one event
loop. Over loopback gRPC each bot move cost a unary call (request and reply through
gRPC's machinery and its threads; what it cost: docs/performance.md) for a choice
that takes a fraction of that. ``LocalBots`` answers the table's call (``Bots`` in
services/table/bot_client.py), and the gateway's (``BotClient`` in
services/gateway/bot_client.py: a hint's move, a finished match's review), with the bot
service's own operations (``BotService``), directly.

What the table sees is what it sees over gRPC: its own copy of the reply, or a
``ServiceError`` with the code the servicer would have aborted with; anything unexpected
is logged and becomes ``internal``. The bot sees what it would over gRPC: its own copy of
the request, the seat's view as JSON. Its choice runs on the loop, as the bot servicer's
did when it was served from this process; a review runs in the bot service's worker
process, off the loop, as it does over gRPC.
"""

from __future__ import annotations

import asyncio
import logging

from rackem.seam.wire import copied
from services._gen.rackem.v1 import bot_pb2
from services.bot.service import BotService
from services.common.errors import ServiceError

__all__ = ["LocalBots"]

log = logging.getLogger("rackem.up")


class LocalBots:
    def __init__(self, service: BotService) -> None:
        self._service = service

    async def ChooseMove(
        self, request: bot_pb2.ChooseMoveRequest, timeout: float | None = None
    ) -> bot_pb2.ChooseMoveReply:
        """The bot's move (the call takes no longer than its choice: ``timeout`` never ends
        it early)."""
        try:
            return copied(self._service.choose_move(copied(request)))
        except ServiceError:
            raise
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "ChooseMove"}}, exc_info=True)
            raise ServiceError("internal", "internal error") from None

    async def Review(
        self, request: bot_pb2.ReviewRequest, timeout: float | None = None
    ) -> bot_pb2.ReviewReply:
        """The review (``timeout`` ends the wait ``unavailable``; the worker finishes it)."""
        try:
            async with asyncio.timeout(timeout):
                return copied(await self._service.review(copied(request)))
        except ServiceError:
            raise
        except TimeoutError:
            raise ServiceError("unavailable", "the bot service did not answer in time") from None
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "Review"}}, exc_info=True)
            raise ServiceError("internal", "internal error") from None
