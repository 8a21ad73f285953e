"""The pending index: finished tables whose record waits for the archive (docs/tables.md).

With an archive (``DATABASE_URL``), a finished table's keys stay in Redis only until its
record is in the archive. The index is how the replicas' archivers find them: one sorted
set per shard, ``<prefix>:{archive:N}`` (member: table id; score: when a sweeper may take
it, Redis's clock), and beside it, in the same slot, the hash ``<prefix>:{archive:N}:at``
(table id → when it was listed: its finish). A table's shard is ``crc32(id) % shards``,
as in the lease index (the same ``LEASE_INDEX_SHARDS``).

Like the lease index it lives in other slots than the tables, so it is never written in
one script with a table's ``{t:ID}`` keys. What makes the hand-over crash-safe is the
order: a finished table leaves the lease index only once it is listed here
(``RedisStore.finish``; a sweeper that finds a ``finished`` lease still in the lease
index lists it here first), and leaves this index only once its record is in the
archive and its keys are dropped (``RedisStore.drop_archived``). A replica that dies
anywhere in between leaves an entry some sweeper takes.
"""

from __future__ import annotations

import random

from services.common.redis_client import RedisClient
from services.table.store import Pending, lua
from services.table.store.lease_index import shard_of

__all__ = ["RedisPendingIndex"]


class RedisPendingIndex:
    def __init__(self, client: RedisClient, shards: int = 1, prefix: str = "rackem") -> None:
        if shards < 1:
            raise ValueError("the pending index needs at least one shard")
        self._redis = client
        self._shards = shards
        self.keys = [f"{prefix}:{{archive:{n}}}" for n in range(shards)]
        self._add = client.register_script(lua.PENDING_ADD)
        self._claim = client.register_script(lua.PENDING_CLAIM)
        self._remove = client.register_script(lua.PENDING_REMOVE)

    def _keys(self, key: str) -> list[str]:
        return [key, f"{key}:at"]

    def key(self, table_id: str) -> str:
        return self.keys[shard_of(table_id, self._shards)]

    async def add(self, table_id: str, delay_ms: int) -> None:
        """List ``table_id`` (once: listed again, it keeps its first times); sweepers may
        take it ``delay_ms`` from now."""
        await self._add(keys=self._keys(self.key(table_id)), args=[table_id, delay_ms])

    async def count(self) -> int:
        total = 0
        for key in self.keys:
            total += int(await self._redis.zcard(key))
        return total

    async def claim(self, limit: int, claim_ms: int) -> list[Pending]:
        claimed: list[Pending] = []
        start = random.randrange(self._shards)  # no shard is always read first
        for key in self.keys[start:] + self.keys[:start]:
            if len(claimed) >= limit:
                break
            flat = await self._claim(keys=self._keys(key), args=[limit - len(claimed), claim_ms])
            for i in range(0, len(flat), 2):
                claimed.append(Pending(str(flat[i]), int(float(flat[i + 1]))))
        return claimed

    async def remove(self, table_id: str) -> None:
        await self._remove(keys=self._keys(self.key(table_id)), args=[table_id])
