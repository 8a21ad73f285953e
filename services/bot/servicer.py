"""The bot service's gRPC surface: ``rackem.v1.Bot`` (``ChooseMove``, ``Review``) on ``BotService``.

A refusal aborts the call with its code; anything unexpected is logged and answered
``internal``.
"""

from __future__ import annotations

import logging

import grpc

from services._gen.rackem.v1 import bot_pb2, bot_pb2_grpc
from services.bot.service import BotService
from services.common.errors import ServiceError, abort

__all__ = ["SERVICE_NAME", "BotServicer"]

log = logging.getLogger("rackem.bot")

SERVICE_NAME = "rackem.v1.Bot"


class BotServicer(bot_pb2_grpc.BotServicer):
    def __init__(self, service: BotService) -> None:
        self._service = service

    async def ChooseMove(
        self,
        request: bot_pb2.ChooseMoveRequest,
        context: grpc.aio.ServicerContext[bot_pb2.ChooseMoveRequest, bot_pb2.ChooseMoveReply],
    ) -> bot_pb2.ChooseMoveReply:
        try:
            return self._service.choose_move(request)
        except ServiceError as err:
            await abort(context, err)  # type: ignore[arg-type]
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "ChooseMove"}}, exc_info=True)
            await abort(context, ServiceError("internal", "internal error"))  # type: ignore[arg-type]

    async def Review(
        self,
        request: bot_pb2.ReviewRequest,
        context: grpc.aio.ServicerContext[bot_pb2.ReviewRequest, bot_pb2.ReviewReply],
    ) -> bot_pb2.ReviewReply:
        try:
            return await self._service.review(request)
        except ServiceError as err:
            await abort(context, err)  # type: ignore[arg-type]
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "Review"}}, exc_info=True)
            await abort(context, ServiceError("internal", "internal error"))  # type: ignore[arg-type]
