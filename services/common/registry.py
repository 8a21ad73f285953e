"""The table-replica registry: replicas heartbeat their address and load; placement reads it.

Two implementations of one interface: Redis (deployments) and memory (``rackem up``
without Redis, where table and matchmaker share one process and one store).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Protocol

import redis.asyncio as aioredis

__all__ = ["MemoryRegistry", "RedisRegistry", "Registry", "Replica"]

_SET = "rackem:replicas"


def _key(replica_id: str) -> str:
    return f"rackem:replica:{replica_id}"


@dataclass(frozen=True, slots=True)
class Replica:
    id: str
    addr: str
    load: int
    draining: bool = False


class Registry(Protocol):
    async def heartbeat(self, replica: Replica, ttl_ms: int) -> None: ...
    async def remove(self, replica_id: str) -> None: ...
    async def live(self) -> list[Replica]:
        """Replicas whose heartbeat has not expired, draining ones included."""
        ...


class MemoryRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, tuple[Replica, float]] = {}

    async def heartbeat(self, replica: Replica, ttl_ms: int) -> None:
        self._entries[replica.id] = (replica, time.monotonic() + ttl_ms / 1000)

    async def remove(self, replica_id: str) -> None:
        self._entries.pop(replica_id, None)

    async def live(self) -> list[Replica]:
        now = time.monotonic()
        for rid, (_, expires) in list(self._entries.items()):
            if expires <= now:
                del self._entries[rid]
        return [replica for replica, _ in self._entries.values()]


class RedisRegistry:
    def __init__(self, client: aioredis.Redis) -> None:
        self._redis = client

    async def heartbeat(self, replica: Replica, ttl_ms: int) -> None:
        body = json.dumps(
            {"addr": replica.addr, "load": replica.load, "draining": replica.draining}
        )
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(_key(replica.id), body, px=ttl_ms)
            pipe.sadd(_SET, replica.id)
            await pipe.execute()

    async def remove(self, replica_id: str) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(_key(replica_id))
            pipe.srem(_SET, replica_id)
            await pipe.execute()

    async def live(self) -> list[Replica]:
        ids = sorted(str(i) for i in await self._redis.smembers(_SET))
        if not ids:
            return []
        bodies = await self._redis.mget([_key(i) for i in ids])
        out = []
        for rid, body in zip(ids, bodies, strict=True):
            if body is None:
                await self._redis.srem(_SET, rid)
                continue
            data = json.loads(body)
            out.append(Replica(rid, data["addr"], int(data["load"]), bool(data["draining"])))
        return out
