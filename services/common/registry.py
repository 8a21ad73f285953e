"""The table-replica registry: replicas heartbeat their address and load; placement reads it.

Two implementations of one interface: Redis (deployments) and memory (``rackem up``
without Redis, where table and matchmaker share one process and one store).

On Redis the registry is ``rackem:{replicas}:set`` (the ids) and one expiring string
``rackem:{replicas}:r:ID`` per replica, all under one hash tag: each heartbeat, removal
and read is one Lua script on one Redis Cluster slot (no MULTI or MGET across slots).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Protocol

from services.common.redis_client import RedisClient
from services.common.redis_metrics import RedisOps

__all__ = ["REGISTRY_OPS", "MemoryRegistry", "RedisRegistry", "Registry", "Replica"]

_TAG = "rackem:{replicas}:"
_SET = _TAG + "set"

# KEYS: the set, the replica's key.  ARGV: id, body, ttl ms.
_HEARTBEAT = """
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""
# KEYS: the set, the replica's key.  ARGV: id.
_REMOVE = """
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[1], ARGV[1])
return 1
"""
# KEYS: the set.  ARGV: the key prefix.  Returns id, body, id, body... of live replicas;
# drops the ids whose key expired.
_LIVE = """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local body = redis.call('GET', ARGV[1] .. id)
  if body then
    out[#out + 1] = id
    out[#out + 1] = body
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return out
"""


def _key(replica_id: str) -> str:
    return f"{_TAG}r:{replica_id}"


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


REGISTRY_OPS = ("heartbeat", "replicas")
"""The registry's Redis operations (``rackem_redis_command_seconds{op}``): a replica's
heartbeat or its removal, and reading the live replicas."""


class RedisRegistry:
    def __init__(self, client: RedisClient, ops: RedisOps | None = None) -> None:
        """The registry in ``client``'s Redis, its operations timed in ``ops`` (which
        knows ``REGISTRY_OPS``; None: nowhere)."""
        self._redis = client
        self._ops = ops or RedisOps(REGISTRY_OPS)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._remove = client.register_script(_REMOVE)
        self._live = client.register_script(_LIVE)

    async def heartbeat(self, replica: Replica, ttl_ms: int) -> None:
        body = json.dumps(
            {"addr": replica.addr, "load": replica.load, "draining": replica.draining}
        )
        with self._ops("heartbeat"):
            await self._heartbeat(keys=[_SET, _key(replica.id)], args=[replica.id, body, ttl_ms])

    async def remove(self, replica_id: str) -> None:
        with self._ops("heartbeat"):
            await self._remove(keys=[_SET, _key(replica_id)], args=[replica_id])

    async def live(self) -> list[Replica]:
        with self._ops("replicas"):
            flat = await self._live(keys=[_SET], args=[_key("")])
        out = []
        for rid, body in sorted(zip(flat[::2], flat[1::2], strict=True)):
            data = json.loads(body)
            out.append(Replica(str(rid), data["addr"], int(data["load"]), bool(data["draining"])))
        return out
