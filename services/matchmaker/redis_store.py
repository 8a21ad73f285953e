"""The store on Redis: each state change is one Lua script (``lua.py``), so it is atomic
across any number of matchmaker replicas; changes are announced on one pub/sub channel.

Keys, all under one hash tag so they share a Redis Cluster slot (namespace ``mm:{mm}:``):
``t:<id>`` table hash, ``q:<players>`` open public tables (sorted set by age), ``due``
tables to start (sorted set by when), ``code:<CODE>`` → table id (``SET NX`` + TTL),
``tok:<sha256>`` → "table-id seat"; channel ``ev`` carries the id of each changed table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from services.common.errors import ServiceError
from services.common.logs import event
from services.common.redis_client import RedisClient
from services.matchmaker import lua
from services.matchmaker.records import NewTable, Placed, Sitter, TableRecord, Timings
from services.matchmaker.store import ReleaseMode

__all__ = ["DEFAULT_NAMESPACE", "RedisStore"]

DEFAULT_NAMESPACE = "mm:{mm}:"
log = logging.getLogger("rackem.matchmaker.store")


def _record(flat: Sequence[Any]) -> TableRecord:
    """A table from HGETALL's flat field/value list."""
    return TableRecord.from_fields(
        {str(k): str(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
    )


def _refusal(reply: Any) -> None:
    if len(reply) == 1:
        raise ServiceError(str(reply[0]), _MESSAGES.get(str(reply[0]), "refused"))


def _placed(reply: Any) -> Placed | None:
    if not reply:
        return None
    _refusal(reply)
    return Placed(str(reply[0]), int(reply[1]), bool(int(reply[2])), _record(reply[3:]))


_MESSAGES = {
    "no_code": "no waiting table has that code",
    "table_full": "the table has no free seat",
    "already_started": "the table has already started",
    "bad_token": "unknown or expired seat token",
    "no_rematch": "the rematch was called off",
}


class RedisStore:
    """The Redis store. ``namespace`` must contain one hash tag; tests use their own."""

    def __init__(self, client: RedisClient, namespace: str = DEFAULT_NAMESPACE) -> None:
        self._redis = client
        self._ns = namespace
        self._quick_join = client.register_script(lua.QUICK_JOIN)
        self._create_private = client.register_script(lua.CREATE_PRIVATE)
        self._join_code = client.register_script(lua.JOIN_CODE)
        self._leave = client.register_script(lua.LEAVE)
        self._claim = client.register_script(lua.CLAIM)
        self._claim_due = client.register_script(lua.CLAIM_DUE)
        self._finish = client.register_script(lua.FINISH)
        self._release = client.register_script(lua.RELEASE)
        self._rematch = client.register_script(lua.REMATCH)

    def _key(self, *parts: str) -> str:
        return self._ns + ":".join(parts)

    async def quick_join(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed | None:
        players = str(table.rules.players)
        reply = await self._quick_join(
            keys=[
                self._key("q", players),
                self._key("due"),
                self._key("t", table.id),
                self._key("code", table.code),
                self._key("tok", sitter.token_hash),
            ],
            args=[
                self._ns,
                now_ms,
                players,
                sitter.name,
                sitter.token_hash,
                table.id,
                table.code,
                timings.fill_ms,
                timings.fill_lone_ms,
                timings.lobby_ttl_ms,
                timings.token_ttl_ms,
                table.rules_json(),
                table.level,
                owner,
                timings.claim_ms,
            ],
        )
        return _placed(reply)

    async def create_private(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str | None
    ) -> Placed | None:
        reply = await self._create_private(
            keys=[
                self._key("t", table.id),
                self._key("code", table.code),
                self._key("tok", sitter.token_hash),
                self._key("due"),
            ],
            args=[
                self._ns,
                now_ms,
                table.id,
                table.code,
                sitter.name,
                sitter.token_hash,
                table.rules_json(),
                table.level,
                table.rules.players,
                timings.lobby_ttl_ms,
                timings.token_ttl_ms,
                "0" if owner is None else "1",
                owner or "",
                timings.claim_ms,
                "1" if table.spectators else "0",
            ],
        )
        return _placed(reply)

    async def rematch(
        self,
        old_id: str,
        table: NewTable,
        seats: Sequence[tuple[str, bool]],
        seat: int,
        sitter: Sitter,
        now_ms: int,
        timings: Timings,
        owner: str,
    ) -> Placed | None:
        args: list[Any] = [
            self._ns,
            now_ms,
            old_id,
            table.id,
            table.code,
            table.rules.players,
            table.rules_json(),
            table.level,
            seat,
            sitter.name,
            sitter.token_hash,
            timings.lobby_ttl_ms,
            timings.token_ttl_ms,
            timings.rematch_ms,
            owner,
            timings.claim_ms,
            "1" if table.spectators else "0",
        ]
        for name, bot in seats:
            args += [name, "1" if bot else ""]
        reply = await self._rematch(
            keys=[
                self._key("rm", old_id),
                self._key("t", table.id),
                self._key("code", table.code),
                self._key("tok", sitter.token_hash),
                self._key("due"),
            ],
            args=args,
        )
        return _placed(reply)

    async def rematch_of(self, old_id: str) -> str | None:
        found = await self._redis.get(self._key("rm", old_id))
        return None if found is None else str(found)

    async def join_code(
        self, code: str, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed:
        reply = await self._join_code(
            keys=[self._key("code", code), self._key("tok", sitter.token_hash), self._key("due")],
            args=[
                self._ns,
                now_ms,
                sitter.name,
                sitter.token_hash,
                timings.token_ttl_ms,
                timings.lobby_ttl_ms,
                owner,
                timings.claim_ms,
            ],
        )
        placed = _placed(reply)
        assert placed is not None  # JOIN_CODE never returns the empty reply
        return placed

    async def leave(self, token_hash: str, now_ms: int, timings: Timings) -> TableRecord:
        reply = await self._leave(
            keys=[self._key("tok", token_hash), self._key("due")],
            args=[self._ns, now_ms, timings.done_ttl_ms],
        )
        _refusal(reply)
        return _record(reply[2:])

    async def claim(self, table_id: str, owner: str, now_ms: int, timings: Timings) -> bool:
        reply = await self._claim(
            keys=[self._key("t", table_id), self._key("due")],
            args=[self._ns, now_ms, owner, timings.claim_ms],
        )
        return bool(int(reply))

    async def claim_due(self, owner: str, now_ms: int, limit: int, timings: Timings) -> list[str]:
        reply = await self._claim_due(
            keys=[self._key("due")],
            args=[self._ns, now_ms, owner, timings.claim_ms, limit],
        )
        return [str(table_id) for table_id in reply]

    async def finish(
        self,
        table_id: str,
        owner: str,
        replica: str,
        bots: Sequence[tuple[int, str]],
        timings: Timings,
    ) -> TableRecord | None:
        pairs = [str(part) for seat, name in bots for part in (seat, name)]
        reply = await self._finish(
            keys=[self._key("t", table_id), self._key("due")],
            args=[self._ns, 0, owner, replica, timings.done_ttl_ms, *pairs],
        )
        return _record(reply) if reply else None

    async def release(
        self, table_id: str, owner: str, now_ms: int, mode: ReleaseMode, timings: Timings
    ) -> str:
        reply = await self._release(
            keys=[self._key("t", table_id), self._key("due")],
            args=[
                self._ns,
                now_ms,
                owner,
                mode,
                timings.retry_ms,
                timings.max_attempts,
                timings.done_ttl_ms,
            ],
        )
        return str(reply)

    async def table(self, table_id: str) -> TableRecord | None:
        raw = await self._redis.hgetall(self._key("t", table_id))
        fields = {str(key): str(value) for key, value in raw.items()}
        if "rules" not in fields:
            return None
        return TableRecord.from_fields(fields)

    async def seat_of(self, token_hash: str) -> tuple[str, int] | None:
        value = await self._redis.get(self._key("tok", token_hash))
        if value is None:
            return None
        table_id, seat = str(value).split(" ")
        return table_id, int(seat)

    async def table_by_code(self, code: str) -> str | None:
        value = await self._redis.get(self._key("code", code))
        return None if value is None else str(value)

    async def changes(self) -> AsyncIterator[str]:
        """Table ids from the ``ev`` channel; resubscribes (yielding ``""``) after errors."""
        channel = self._key("ev")
        backoff = 0.1
        while True:
            pubsub = None
            try:
                if isinstance(self._redis, RedisCluster):
                    await self._redis.initialize()  # its pub/sub picks a node from the slots
                pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                await pubsub.subscribe(channel)
                yield ""
                backoff = 0.1
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        yield str(message["data"])
            except (RedisError, OSError) as exc:
                event(log, "changes_lost", logging.WARNING, error_type=type(exc).__name__)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                if pubsub is not None:
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        await self._redis.aclose()
