"""The table store on Redis. Every multi-key write is one Lua script on one table's keys.

Keys (the ``{t:ID}`` hash tag keeps one table in one Redis Cluster slot)::

    rackem:{t:ID}:meta     string  TableMeta JSON (rules, seats, token hashes, seed)
    rackem:{t:ID}:log      list    one move JSON per accepted move
    rackem:{t:ID}:state    string  TableState JSON (status, deadlines, covers, round over)
    rackem:{t:ID}:replies  hash    "seat:move_id" -> the version after that move
    rackem:{t:ID}:lease    string  the owner ("replica-id address"), SET NX PX, renewed;
                                   "finished" once the match is over and recorded
    rackem:{t:ID}:complaint string gateways could not reach the owner: "since|owner",
                                   then "!owner" once its lease was revoked (``COMPLAIN``)
    rackem:{leases:N}      zset    lease index shard N: id -> when its lease expires
    rackem:{archive:N}     zset    pending index shard N (with an archive): a finished
                                   table's id -> when a sweeper may archive it
    rackem:{archive:N}:at  hash    id -> when it finished

Every script (``lua.py``) and transaction touches one table's keys only, so on a Redis
Cluster each is one slot's; batches of them go out one pipeline per node (``ScriptBatch``,
``send_per_node``). With a ``Durability`` of one replica or more, a create or an append
is acknowledged only once that many replicas have it (``WAIT``), so a failover never
loses a move a player saw accepted; so is a state save (a continue, a leave, a cover, a
deal), which a player may see answered too.

The lease index (services/table/store/lease_index.py) is how sweepers find orphans without
reading every table: each owner notes its tables' expiries in it every renewal round,
so an entry whose score has passed is a lease that may have expired. It lives in other
slots than the tables, so it is never written in one script with a table's keys; a
sweeper checks the lease itself before it adopts anything the index names.

Redis unreachable, failing over, loading or full, or a write fewer replicas confirmed
than asked, is raised as ``StoreUnavailable`` (``redis_client.raise_store_error``);
any other error as it is.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, cast

import orjson

from services.common import tracing
from services.common.redis_client import Durability, RedisClient, raise_store_error
from services.common.redis_metrics import RedisOps
from services.common.script_batch import ScriptBatch
from services.table.store import AppendResult, Complaint, Expired, Pending, lua
from services.table.store.lease_index import FINISHED, RedisLeaseIndex
from services.table.store.pending import RedisPendingIndex
from services.table.stored import Reply, StoredTable, TableMeta, TableState

__all__ = ["OPS", "RedisStore", "keys"]

CHUNK = 500
"""Commands per pipeline in ``renew_many`` and ``orphans``: no one pipeline holds Redis long."""
_PARTS = ("meta", "log", "state", "replies", "lease", "complaint")
OPS = (
    "create",
    "load",
    "append",
    "save",
    "reply",
    "acquire",
    "complain",
    "renew",
    "release",
    "holder",
    "finish",
    "pending",
    "drop_archived",
    "live_tables",
    "note_leases",
    "sweep",
    "forget",
)
"""The store's operations, as ``rackem_redis_command_seconds{op}`` names them: one per
method, but ``renew`` (one table or many), ``sweep`` (counting and claiming expired
leases) and ``pending`` (the archive's backlog: adding, counting, claiming)."""
# A traced move's round trips (services/common/tracing.py): the operation, never a key.
_REDIS = {
    op: {"db.system.name": "redis", "db.operation.name": op} for op in ("append", "save", "reply")
}


def _reply_fields(reply: Reply | None) -> list[str | int]:
    if reply is None:
        return ["", ""]
    return [f"{reply.seat}:{reply.move_id}", reply.version]


def keys(table_id: str) -> list[str]:
    """The table's keys in script order: meta, log, state, replies, lease, complaint."""
    return [f"rackem:{{t:{table_id}}}:{part}" for part in _PARTS]


class RedisStore:
    def __init__(
        self,
        client: RedisClient,
        chunk: int = CHUNK,
        durability: Durability | None = None,
        index_shards: int = 1,
        index_prefix: str = "rackem",
        ops: RedisOps | None = None,
    ) -> None:
        """``ops``: where the operations are timed (``OPS`` among its names); None: nowhere."""
        self._redis = client
        self._ops = ops or RedisOps(OPS)
        self._chunk = chunk
        self.index = RedisLeaseIndex(client, index_shards, index_prefix, chunk)
        self.pending = RedisPendingIndex(client, index_shards, index_prefix)
        # Every move is an append and many clock events a save: each is batched with
        # the other tables' (services/common/script_batch.py), one pipeline per node per
        # batch. Creates and appends wait for the replicas ``durability`` asks for.
        self._create = ScriptBatch(client, client.register_script(lua.CREATE), chunk, durability)
        self._append = ScriptBatch(client, client.register_script(lua.APPEND), chunk, durability)
        # A save answers a player too (a continue, a leave): it waits as an append does.
        self._save = ScriptBatch(client, client.register_script(lua.SAVE), chunk, durability)
        # Taking a table waits for the replicas too: a write followed by WAIT confirms
        # every earlier write of the primary, so what the new owner then serves (a move
        # an earlier owner stored but had no replica confirm yet) cannot be lost after.
        self._acquire = ScriptBatch(client, client.register_script(lua.ACQUIRE), chunk, durability)
        self._renew = ScriptBatch(client, client.register_script(lua.RENEW), chunk)
        self._release = client.register_script(lua.RELEASE)
        self._complain = client.register_script(lua.COMPLAIN)
        self._finish = client.register_script(lua.FINISH)
        self._drop = client.register_script(lua.DROP_ARCHIVED)

    async def create(self, meta: TableMeta, state: TableState, owner: str, lease_ms: int) -> bool:
        args: list[str | int] = [meta.to_json(), state.to_json(), owner, lease_ms]
        try:
            with self._ops("create"):
                created = await self._create(keys(meta.table_id), args)
                if created:
                    await self.index.add(meta.table_id, lease_ms)
        except Exception as exc:
            raise_store_error(exc)
        return bool(created)

    async def load(self, table_id: str) -> StoredTable | None:
        meta_key, log_key, state_key = keys(table_id)[:3]
        try:
            with self._ops("load"):
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.get(meta_key)
                    pipe.lrange(log_key, 0, -1)
                    pipe.get(state_key)
                    meta, log, state = await pipe.execute()
        except Exception as exc:
            raise_store_error(exc)
        if meta is None or state is None:
            return None
        return StoredTable(
            TableMeta.from_json(meta), [json.loads(m) for m in log], TableState.from_json(state)
        )

    async def append(
        self,
        table_id: str,
        owner: str,
        index: int,
        move: dict[str, Any],
        state: TableState,
        reply: Reply | None = None,
        lease_ms: int = 0,
    ) -> AppendResult:
        args: list[str | int] = [
            owner,
            index,
            orjson.dumps(move).decode(),
            state.to_json(),
            *_reply_fields(reply),
            lease_ms,
        ]
        try:
            with (
                self._ops("append"),
                tracing.child("redis append", tracing.CLIENT, _REDIS["append"]),
            ):
                result = int(await self._append(keys(table_id), args))
        except Exception as exc:
            raise_store_error(exc)
        return "ok" if result == 1 else "conflict" if result == 0 else "lost"

    async def save_state(
        self, table_id: str, owner: str, state: TableState, lease_ms: int = 0
    ) -> bool:
        try:
            with (
                self._ops("save"),
                tracing.child("redis save", tracing.CLIENT, _REDIS["save"]),
            ):
                return bool(await self._save(keys(table_id), [owner, state.to_json(), lease_ms]))
        except Exception as exc:
            raise_store_error(exc)

    async def reply(self, table_id: str, seat: int, move_id: str) -> int | None:
        try:
            with self._ops("reply"), tracing.child("redis reply", tracing.CLIENT, _REDIS["reply"]):
                version = await self._redis.hget(keys(table_id)[3], f"{seat}:{move_id}")
        except Exception as exc:
            raise_store_error(exc)
        return None if version is None else int(version)

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> str | None:
        try:
            with self._ops("acquire"):
                holder = await self._acquire(keys(table_id), [owner, lease_ms])
        except Exception as exc:
            raise_store_error(exc)
        return str(holder) or None

    async def complain(
        self, table_id: str, owner: str, hold_ms: int, window_ms: int, cooldown_ms: int
    ) -> Complaint:
        args: list[str | int] = [owner, hold_ms, window_ms, cooldown_ms]
        try:
            with self._ops("complain"):
                verdict = str(await self._complain(keys=keys(table_id), args=args))
        except Exception as exc:
            raise_store_error(exc)
        return cast("Complaint", verdict)

    async def renew(self, table_id: str, owner: str, lease_ms: int) -> bool:
        try:
            with self._ops("renew"):
                return bool(await self._renew(keys(table_id), [owner, lease_ms]))
        except Exception as exc:
            raise_store_error(exc)

    async def renew_many(self, table_ids: Sequence[str], owner: str, lease_ms: int) -> list[bool]:
        """The ``RENEW`` script per table (its own keys, its own slot), batched: one
        pipeline per node per ``chunk`` tables."""
        try:
            with self._ops("renew"):
                renewed = await asyncio.gather(
                    *(self._renew(keys(table_id), [owner, lease_ms]) for table_id in table_ids)
                )
        except Exception as exc:
            raise_store_error(exc)
        return [bool(done) for done in renewed]

    async def release(self, table_id: str, owner: str) -> None:
        try:
            with self._ops("release"):
                if await self._release(keys=keys(table_id), args=[owner]):
                    await self.index.note([(table_id, 0)], 0)  # free now: sweep it at once
        except Exception as exc:
            raise_store_error(exc)

    async def holder(self, table_id: str) -> str | None:
        try:
            with self._ops("holder"):
                value = await self._redis.get(keys(table_id)[4])
        except Exception as exc:
            raise_store_error(exc)
        return None if value is None else str(value)

    async def finish(
        self,
        table_id: str,
        owner: str,
        state: TableState,
        ttl_ms: int,
        archive_after_ms: int | None = None,
    ) -> bool:
        args: list[str | int] = [owner, state.to_json(), ttl_ms, FINISHED]
        try:
            with self._ops("finish"):
                done = await self._finish(keys=keys(table_id), args=args)
        except Exception as exc:
            raise_store_error(exc)
        if done:
            # Listed pending before it leaves the lease index: a crash in between leaves
            # it in the lease index, where a sweeper finds it finished and lists it.
            if archive_after_ms is not None:
                await self.add_pending(table_id, archive_after_ms)
            await self.forget(table_id)
        return bool(done)

    async def add_pending(self, table_id: str, delay_ms: int) -> None:
        try:
            with self._ops("pending"):
                await self.pending.add(table_id, delay_ms)
        except Exception as exc:
            raise_store_error(exc)

    async def pending_count(self) -> int:
        try:
            with self._ops("pending"):
                return await self.pending.count()
        except Exception as exc:
            raise_store_error(exc)

    async def claim_pending(self, limit: int, claim_ms: int) -> list[Pending]:
        try:
            with self._ops("pending"):
                return await self.pending.claim(limit, claim_ms)
        except Exception as exc:
            raise_store_error(exc)

    async def drop_archived(self, table_id: str) -> bool:
        try:
            with self._ops("drop_archived"):
                dropped = await self._drop(keys=keys(table_id), args=[FINISHED])
                await self.pending.remove(table_id)
        except Exception as exc:
            raise_store_error(exc)
        return bool(dropped)

    async def live_tables(self) -> list[str]:
        try:
            with self._ops("live_tables"):
                return await self.index.members()
        except Exception as exc:
            raise_store_error(exc)

    async def note_leases(self, ages: Sequence[tuple[str, int]], lease_ms: int) -> None:
        try:
            with self._ops("note_leases"):
                await self.index.note(ages, lease_ms)
        except Exception as exc:
            raise_store_error(exc)

    async def expired_count(self) -> int:
        try:
            with self._ops("sweep"):
                return await self.index.expired_count()
        except Exception as exc:
            raise_store_error(exc)

    async def claim_expired(self, limit: int, claim_ms: int) -> list[Expired]:
        try:
            with self._ops("sweep"):
                return await self.index.claim(limit, claim_ms)
        except Exception as exc:
            raise_store_error(exc)

    async def lease_overdue_ms(self, table_id: str) -> int | None:
        try:
            with self._ops("sweep"):
                return await self.index.overdue_ms(table_id)
        except Exception as exc:
            raise_store_error(exc)

    async def forget(self, table_id: str) -> None:
        try:
            with self._ops("forget"):
                await self.index.remove(table_id)
        except Exception as exc:
            raise_store_error(exc)
