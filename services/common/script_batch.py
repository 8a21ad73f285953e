"""Calls of one Redis Lua script, gathered while Redis is busy and sent as one pipeline.

A table replica appends a move to Redis for every move it takes. One round trip per
append costs the replica's loop a connection checkout, a write, a read and two
hand-overs each time; at hundreds of moves a second that was most of its time in
Redis. ``ScriptBatch`` is group commit: a call made while no batch is in flight goes
out on the next loop turn, with whatever else was called in the same turn; calls made
while a batch is in flight wait for it and go out together in the next one. So a lone
call waits for nobody, and under load one pipeline carries many calls.

Each call still gets its own answer: a script's error (``ResponseError``) reaches only
its caller; a broken connection reaches every call of that batch, as it would have
reached each of them one by one. Calls of one batch are not a transaction, and their
order is not promised (a table holds its lock across its append, so one table never has
two calls in one batch).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, ResponseError

__all__ = ["MAX_BATCH", "ScriptBatch"]

MAX_BATCH = 500
"""Calls per pipeline at most: no one pipeline holds Redis long."""

_Call = tuple[Sequence[str], Sequence[str | int], "asyncio.Future[Any]"]


class ScriptBatch:
    def __init__(
        self, client: aioredis.Redis, script: AsyncScript, max_batch: int = MAX_BATCH
    ) -> None:
        self._redis = client
        self._script = script
        self._max = max_batch
        self._queued: list[_Call] = []
        self._sender: asyncio.Task[None] | None = None
        self.pipelines = 0  # pipelines sent, for tests and benchmarks
        self.calls = 0

    async def __call__(self, keys: Sequence[str], args: Sequence[str | int]) -> Any:
        """The script's answer for ``keys`` and ``args``, sent in the next batch."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((keys, args, answer))
        if self._sender is None:
            self._sender = asyncio.create_task(self._send_all())
        return await answer

    async def _send_all(self) -> None:
        try:
            while self._queued:
                batch, self._queued = self._queued[: self._max], self._queued[self._max :]
                await self._send(batch)
        finally:
            self._sender = None
            left, self._queued = self._queued, []  # only when cancelled: fail them, not hang
            for _, _, answer in left:
                if not answer.done():
                    answer.set_exception(_stopped())

    async def _send(self, batch: list[_Call]) -> None:
        self.pipelines += 1
        self.calls += len(batch)
        try:
            results = await self._run(batch)
            forgotten = [n for n, r in enumerate(results) if isinstance(r, NoScriptError)]
            if forgotten:  # Redis restarted or flushed its scripts: load it, send those again
                self._script.sha = await self._redis.script_load(self._script.script)
                again = await self._run([batch[n] for n in forgotten])
                for n, result in zip(forgotten, again, strict=True):
                    results[n] = result
        except BaseException as exc:
            for _, _, answer in batch:
                if not answer.done():
                    answer.set_exception(exc if isinstance(exc, Exception) else _stopped())
            if not isinstance(exc, Exception):
                raise
            return
        for (_, _, answer), result in zip(batch, results, strict=True):
            if answer.done():  # its caller was cancelled
                continue
            if isinstance(result, Exception):
                answer.set_exception(result)
            else:
                answer.set_result(result)

    async def _run(self, batch: list[_Call]) -> list[Any]:
        """EVALSHA of each call, in one pipeline (a lone call: a plain command); a call's
        error is its result. No SCRIPT EXISTS first, as redis-py's scripts in pipelines do:
        that would be a second round trip per batch, for a case ``_send`` handles."""
        sha = self._script.sha
        if len(batch) == 1:
            keys, args, _ = batch[0]
            try:
                return [await self._redis.evalsha(sha, len(keys), *keys, *args)]
            except ResponseError as err:
                return [err]
        async with self._redis.pipeline(transaction=False) as pipe:
            for keys, args, _ in batch:
                pipe.evalsha(sha, len(keys), *keys, *args)
            return list(await pipe.execute(raise_on_error=False))


def _stopped() -> Exception:
    return ConnectionError("the Redis batch was cancelled")
