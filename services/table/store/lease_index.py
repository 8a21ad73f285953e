"""The lease index: when each live table's lease expires, so sweepers read only the expired.

Before it, each replica's sweeper read the whole live set and probed every lease it did
not hold, every second: work proportional to all tables times all replicas. With the
index, a sweep is one small call per shard when nothing expired, and otherwise reads
only the entries whose expiry has passed (``claim``).

On Redis the index is one sorted set per shard, ``<prefix>:{leases:N}`` (member: table
id; score: when its lease expires, in Redis's own clock, so replicas' clocks never
matter). A table's shard is ``crc32(id) % shards``; in a Redis Cluster the shards spread
over the nodes by their hash tags. The index is never written in one script with a
table's ``{t:ID}`` keys (another slot): an owner notes its tables' expiries once per
renewal round (``note``, one call per shard for all its tables), and a sweeper checks
the lease itself before it adopts a table the index names. The index may lag the
leases by a round; it can only make a sweep look at a table a little early or late,
never let two replicas hold one table (the lease decides that). Its scripts are in
``lua.py``.
"""

from __future__ import annotations

import random
import zlib
from collections import defaultdict
from collections.abc import Sequence

from services.common.redis_client import RedisClient
from services.table.store import Expired, lua

__all__ = ["FINISHED", "RedisLeaseIndex", "shard_of"]

FINISHED = "finished"
"""The lease of a finished table: no owner string (``"id address"``) can equal it."""


def shard_of(table_id: str, shards: int) -> int:
    return zlib.crc32(table_id.encode()) % shards


class RedisLeaseIndex:
    def __init__(
        self, client: RedisClient, shards: int = 1, prefix: str = "rackem", chunk: int = 500
    ) -> None:
        if shards < 1:
            raise ValueError("the lease index needs at least one shard")
        self._redis = client
        self._shards = shards
        self._chunk = chunk
        self.keys = [f"{prefix}:{{leases:{n}}}" for n in range(shards)]
        self._legacy = f"{prefix}:tables:live"
        self._note = client.register_script(lua.NOTE_LEASES)
        self._count = client.register_script(lua.COUNT_EXPIRED)
        self._claim = client.register_script(lua.CLAIM_EXPIRED)
        self._overdue = client.register_script(lua.LEASE_OVERDUE)

    def key(self, table_id: str) -> str:
        return self.keys[shard_of(table_id, self._shards)]

    async def add(self, table_id: str, lease_ms: int) -> None:
        """List a new table, its lease expiring ``lease_ms`` from now."""
        await self._note(keys=[self.key(table_id)], args=["NX", lease_ms, table_id, 0])

    async def note(self, ages: Sequence[tuple[str, int]], lease_ms: int) -> None:
        """Each listed table's lease expires ``lease_ms - age`` from now (tables no longer
        listed, because they finished meanwhile, are not listed again)."""
        by_shard: dict[str, list[str | int]] = defaultdict(list)
        for table_id, age in ages:
            by_shard[self.key(table_id)] += [table_id, age]
        for key, pairs in by_shard.items():
            step = 2 * self._chunk
            for start in range(0, len(pairs), step):
                args = ["XX", lease_ms, *pairs[start : start + step]]
                await self._note(keys=[key], args=args)

    async def expired_count(self) -> int:
        total = 0
        for key in self.keys:
            total += int(await self._count(keys=[key]))
        return total

    async def claim(self, limit: int, claim_ms: int) -> list[Expired]:
        claimed: list[Expired] = []
        start = random.randrange(self._shards)  # no shard is always read first
        for key in self.keys[start:] + self.keys[:start]:
            if len(claimed) >= limit:
                break
            flat = await self._claim(keys=[key], args=[limit - len(claimed), claim_ms])
            claimed += [
                Expired(str(i), int(ms)) for i, ms in zip(flat[::2], flat[1::2], strict=True)
            ]
        return claimed

    async def overdue_ms(self, table_id: str) -> int | None:
        """How many ms ago the entry of ``table_id`` expired (0: not yet); None if it is not
        listed."""
        overdue = int(await self._overdue(keys=[self.key(table_id)], args=[table_id]))
        return None if overdue < 0 else overdue

    async def import_live_set(self) -> int:
        """List the tables of the set the index replaced (``<prefix>:tables:live``, which
        replicas of before the index keep writing during a rolling upgrade), expired,
        so a sweeper checks each one's lease, and take them out of that set; tables
        listed already are left as they are. Their owners, if alive, keep them (the
        lease decides); the others move."""
        ids = [str(i) for i in await self._redis.smembers(self._legacy)]
        by_shard: dict[str, list[str]] = defaultdict(list)
        for table_id in ids:
            by_shard[self.key(table_id)].append(table_id)
        for key, members in by_shard.items():
            for start in range(0, len(members), self._chunk):
                pairs: list[str | int] = []
                for table_id in members[start : start + self._chunk]:
                    pairs += [table_id, 0]
                await self._note(keys=[key], args=["NX", 0, *pairs])  # expiring now
        for start in range(0, len(ids), self._chunk):  # moved: not imported again
            await self._redis.srem(self._legacy, *ids[start : start + self._chunk])
        return len(ids)

    async def members(self) -> list[str]:
        out: list[str] = []
        for key in self.keys:
            out += [str(m) for m in await self._redis.zrange(key, 0, -1)]
        return sorted(out)

    async def remove(self, table_id: str) -> None:
        await self._redis.zrem(self.key(table_id), table_id)
