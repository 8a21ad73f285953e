"""The bot service's operations, transport-free: a move for the seat whose view it is given,
and a finished match's review for one seat.

The gRPC surface (``servicer.py``) calls them; so may a caller in this process (``rackem
up``'s seam, rackem/seam/bots.py), which then owns the copying a wire would do. A move is
chosen from one seat's view, never a match state; a review only from a finished match's
log, whose seed is public by then (``reviews.py``). Nothing is kept between calls.
"""

from __future__ import annotations

import time

from rackcore.bots import choose
from services._gen.rackem.v1 import bot_pb2
from services.bot.metrics import BotMetrics
from services.bot.reviews import Reviewer
from services.bot.views import checked_view
from services.convert import move_to_pb

__all__ = ["BotService"]


class BotService:
    def __init__(self, metrics: BotMetrics | None = None, reviewer: Reviewer | None = None) -> None:
        """``metrics``: where each choice's time is observed, by level (none: nowhere);
        ``reviewer``: where reviews run (none: a ``Reviewer`` with its default queue)."""
        self._decisions = None if metrics is None else metrics.decision_seconds
        self._reviewer = Reviewer() if reviewer is None else reviewer

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

    async def review(self, request: bot_pb2.ReviewRequest) -> bot_pb2.ReviewReply:
        """The review of the log's finished match for the request's seat, computed off the
        loop (``reviews.py``); ``ServiceError`` ``not_finished``, ``bad_request`` or ``busy``."""
        review_json = await self._reviewer.review(request.log_json, request.seat)
        return bot_pb2.ReviewReply(review_json=review_json)

    async def close(self) -> None:
        """Stop the review worker, if one was started."""
        await self._reviewer.close()
