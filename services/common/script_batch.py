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

Each call's keys share one slot (a table's hash tag), so on a Redis Cluster a batch is
one pipeline per node (``services.common.redis_client.send_per_node``). With
``replicas`` set, each node's pipeline ends with ``WAIT replicas wait_ms``, and a call
answers only once that many replicas have its write: else it fails ``NotReplicated``
(the write may be on the primary alone; the caller treats it as an outage).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from services.common.redis_client import Durability, RedisClient, send_per_node

__all__ = ["MAX_BATCH", "ScriptBatch"]

MAX_BATCH = 500
"""Calls per pipeline at most: no one pipeline holds Redis long."""

_Call = tuple[Sequence[str], Sequence[str | int], "asyncio.Future[Any]"]


class ScriptBatch:
    def __init__(
        self,
        client: RedisClient,
        script: AsyncScript,
        max_batch: int = MAX_BATCH,
        durability: Durability | None = None,
    ) -> None:
        self._redis = client
        self._script = script
        self._max = max_batch
        self._durability = durability
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
        """EVALSHA of each call, one pipeline per node; a call's error is its result. No
        SCRIPT EXISTS first, as redis-py's scripts in pipelines do: that would be a second
        round trip per batch, for a case ``_send`` handles."""
        sha = self._script.sha
        commands = [(keys[0], ("EVALSHA", sha, len(keys), *keys, *args)) for keys, args, _ in batch]
        return await send_per_node(self._redis, commands, self._durability)


def _stopped() -> Exception:
    return ConnectionError("the Redis batch was cancelled")
