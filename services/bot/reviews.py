"""Reviews of finished matches (``rackcore.review``), computed off the event loop.

A review replays a whole match and weighs each of one seat's decisions against the hard
bot's choice: up to a couple of seconds of CPU. It runs in a worker process of its own
(one per bot service process, started with the first review; ``spawn``, never ``fork``: the
server's gRPC threads are running), so the loop keeps answering ``ChooseMove`` meanwhile.
One review runs at a time; ``queue`` more wait behind it, and past them a review is
refused ``busy`` (the caller tries again later; the gateway keeps the reviews it got).

The log is read in the worker too: the loop never parses a client's log. What the worker
answers is a pair (a code, its text): no exception crosses the process boundary, and a
malformed log is a refusal, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from services.common.errors import ServiceError

__all__ = ["Reviewer", "compute"]

log = logging.getLogger("rackem.bot")

NOT_FINISHED = "only a finished match is reviewed: its log has no revealed seed"
NOT_A_LOG = "not a finished rackem-match/1 log"


def compute(log_json: str, seat: int) -> tuple[str, str]:
    """In the worker: ``("", the review as JSON)``, or ``(code, message)`` of the refusal."""
    from rackcore import RackError
    from rackcore.review import review

    try:
        match_log: Any = json.loads(log_json)
    except ValueError:
        return "bad_request", "the log is not JSON"
    if not isinstance(match_log, dict):
        return "bad_request", NOT_A_LOG
    result = match_log.get("result")
    winner = result.get("winner") if isinstance(result, dict) else None
    if not isinstance(match_log.get("seed"), str) or type(winner) is not int:
        return "not_finished", NOT_FINISHED
    rules = match_log.get("rules")
    players = rules.get("players") if isinstance(rules, dict) else None
    if type(players) is not int:
        return "bad_request", NOT_A_LOG
    if not 0 <= seat < players:
        return "bad_request", f"seat {seat} is not at this table (seats 0 to {players - 1})"
    try:
        done = review(match_log, seat)
    except RackError as exc:  # the rules' own words for what the log breaks
        return "bad_request", f"{NOT_A_LOG}: {exc}"
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return "bad_request", NOT_A_LOG  # a log shaped unlike any the tables write
    return "", json.dumps(done.to_dict())


class Reviewer:
    """Reviews, one at a time in a worker process, at most ``queue`` more waiting."""

    def __init__(self, queue: int = 4) -> None:
        self._limit = 1 + max(0, queue)
        self._taken = 0  # reviews running or waiting
        self._pool: ProcessPoolExecutor | None = None

    async def review(self, log_json: str, seat: int) -> str:
        """The seat's review as JSON text; ``ServiceError`` ``busy``, ``not_finished``,
        ``bad_request`` (a log that is not one, a seat not at its table) or ``internal``."""
        if self._taken >= self._limit:
            raise ServiceError("busy", "the bot service is reviewing other matches; try again")
        self._taken += 1
        try:
            pool = self._worker()
            try:
                code, text = await asyncio.get_running_loop().run_in_executor(
                    pool, compute, log_json, seat
                )
            except BrokenProcessPool:  # the worker died (killed, out of memory): a new one next
                if self._pool is pool:
                    self._pool = None
                log.error("review_worker_lost", exc_info=True)
                raise ServiceError("internal", "internal error") from None
        finally:
            self._taken -= 1
        if code:
            raise ServiceError(code, text)
        return text

    def _worker(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    async def close(self) -> None:
        """End the worker: those waiting are cancelled, a review running finishes (seconds)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
