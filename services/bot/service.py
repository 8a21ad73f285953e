"""The bot service's one operation, transport-free: a move for the seat whose view it is given.

The gRPC surface (``servicer.py``) calls it; so may a caller in this process (``rackem
up``'s seam, rackem/seam/bots.py), which then owns the copying a wire would do. It sees
one seat's view, never a match state, and keeps nothing between calls.
"""

from __future__ import annotations

import time

from rackcore.bots import choose
from services._gen.rackem.v1 import bot_pb2
from services.bot.metrics import BotMetrics
from services.bot.views import checked_view
from services.convert import move_to_pb

__all__ = ["BotService"]


class BotService:
    def __init__(self, metrics: BotMetrics | None = None) -> None:
        """``metrics``: where each choice's time is observed, by level (none: nowhere)."""
        self._decisions = None if metrics is None else metrics.decision_seconds

    def choose_move(self, request: bot_pb2.ChooseMoveRequest) -> bot_pb2.ChooseMoveReply:
        """The move the request's level plays from its view; ``ServiceError`` (``bad_request``)
        for a request that is not a view to move from; ``RuntimeError`` if the bot chose a
        move its view does not allow (a bug)."""
        started = time.perf_counter()
        view = checked_view(request)
        move = choose(view, level=request.level, seed=request.seed)
        if self._decisions is not None:
            self._decisions[request.level].observe(time.perf_counter() - started)
        if move not in view.legal_moves():
            raise RuntimeError("the bot chose a move its view does not allow")
        return bot_pb2.ChooseMoveReply(move=move_to_pb(move))
