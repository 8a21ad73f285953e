"""The store on Redis: each state change of a table is one Lua script (``lua.py``), so it
is atomic across any number of matchmaker replicas; changes are announced on one pub/sub
channel.

The keys spread over many hash tags (``redis_keys.py``): a table lives in a *home*
(``{quick<players>}`` for quick match, ``{room-<n>}`` for private tables) with the
sorted sets its scripts change, so each script touches one slot, and a Redis Cluster
carries the homes on different nodes. A room code, a seat token and a rematch pointer
each have a key tagged by what it is looked up by, written around the table's script:

- a code is claimed (``SET NX``) before the script that opens its table, with an
  expiry past its table's (``_code_life``), and a table that another sitter's script
  opened first, or that is closed, frees it (``CODE_TTL``: only while it still names
  that table);
- a seat token's key is written once its table's script has seated it, and deleted
  once the seat is left or taken by a newer token; the table's ``k<seat>`` is the
  authority (``LEAVE`` checks it), the token's key the way to find the table;
- a rematch pointer is claimed (``SET NX``) before the script that opens the rematch,
  which whoever comes first runs.

A table id's home is remembered from the pointer or due set it came from, else found
among its few candidate homes (``Layout.candidates``). Keys of the layout before this
one (``mm:{mm}:``) are still read, and its due tables started.

With a ``Durability`` of one replica or more, every write a caller's answer rests on is
followed on its own connection by ``WAIT replicas wait_ms`` (``send_per_node``): the
scripts that seat, open, join, claim, start (``FINISH``), leave and open a rematch, and
the ``SET``s of codes, seat tokens and rematch pointers. Fewer replicas in time raises
``StoreUnavailable`` (the call answers ``unavailable``) and has a Sentinel client ask for
its primary again: a primary about to be demoted, cut from its replicas, takes the write
but no player is told of it (docs/matchmaker.md, *Redis replicas*). Not waited for:
releases, the due loop's claims, code expiries and token deletions, none of which a
player is answered from (a token whose deletion is lost still fails ``LEAVE``'s check of
its seat).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from services.common.errors import ServiceError
from services.common.logs import event
from services.common.redis_client import (
    Durability,
    NotReplicated,
    RedisClient,
    raise_store_error,
    send_per_node,
)
from services.common.redis_metrics import RedisOps
from services.common.script_batch import ScriptBatch
from services.matchmaker.records import NewTable, Placed, Sitter, TableRecord, Timings
from services.matchmaker.store import ReleaseMode, lua
from services.matchmaker.store.redis_keys import DEFAULT_NAMESPACE, Home, Layout

__all__ = ["DEFAULT_NAMESPACE", "OPS", "RedisStore"]

log = logging.getLogger("rackem.matchmaker.store")

_KNOWN_HOMES = 50_000  # table ids whose home this replica remembers (a few MB)
OPS = (
    "quick_join",
    "create_private",
    "rematch",
    "rematch_of",
    "join_code",
    "leave",
    "claim",
    "claim_due",
    "finish",
    "release",
    "table",
    "seat_of",
    "table_by_code",
)
"""The store's operations, as ``rackem_redis_command_seconds{op}`` names them: its
methods, each timed whole (its script and the few keys around it)."""


def _record(flat: Sequence[Any]) -> TableRecord:
    """A table from HGETALL's flat field/value list."""
    return TableRecord.from_fields(
        {str(k): str(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
    )


def _code_life(timings: Timings) -> int:
    """A code's expiry, from its claim and from each join: past its table's whether the
    table is still waiting (``LOBBY_TTL_MS`` from the last join) or started within that
    time (``DONE_TTL_MS`` more), so starting a table need not touch its code."""
    return timings.lobby_ttl_ms + timings.done_ttl_ms


def _refusal(reply: Any) -> None:
    if len(reply) == 1:
        raise ServiceError(str(reply[0]), _MESSAGES.get(str(reply[0]), "refused"))


def _placed(reply: Any, head: int = 3) -> Placed:
    _refusal(reply)
    return Placed(str(reply[0]), int(reply[1]), bool(int(reply[2])), _record(reply[head:]))


_MESSAGES = {
    "no_code": "no waiting table has that code",
    "table_full": "the table has no free seat",
    "already_started": "the table has already started",
    "bad_token": "unknown or expired seat token",
    "no_rematch": "the rematch was called off",
}


class RedisStore:
    """The Redis store. ``namespace`` prefixes every key and holds no hash tag; tests
    use one each."""

    def __init__(
        self,
        client: RedisClient,
        namespace: str = DEFAULT_NAMESPACE,
        ops: RedisOps | None = None,
        durability: Durability | None = None,
    ) -> None:
        """``ops``: where the operations are timed (``OPS`` among its names); None: nowhere.
        ``durability``: how many replicas must have a write a caller is answered from."""
        self._redis = client
        self._durability = durability
        self._ops = ops or RedisOps(OPS)
        self._keys = Layout(namespace)
        self._chan = self._keys.channel
        self._known: OrderedDict[str, Home] = OrderedDict()
        # The scripts a caller is answered from: each followed by WAIT (``_durable``).
        self._quick_join = self._durable(lua.QUICK_JOIN)
        self._create_private = self._durable(lua.CREATE_PRIVATE)
        self._join = self._durable(lua.JOIN)
        self._leave = self._durable(lua.LEAVE)
        self._claim = self._durable(lua.CLAIM)
        self._claim_due = ScriptBatch(client, client.register_script(lua.CLAIM_DUE))
        self._finish = self._durable(lua.FINISH)
        self._release = client.register_script(lua.RELEASE)
        self._rematch = self._durable(lua.REMATCH)
        self._code_ttl = client.register_script(lua.CODE_TTL)

    # -- writes a caller is answered from ------------------------------------------------

    def _durable(self, script: str) -> _Durable:
        return _Durable(
            ScriptBatch(
                self._redis, self._redis.register_script(script), durability=self._durability
            )
        )

    async def _set(self, key: str, value: str, px: int, *, nx: bool = False) -> bool:
        """``SET key value PX px`` (``NX``: only if it is not there), followed by ``WAIT``
        as ``durability`` asks; whether it was set."""
        args: tuple[str | int, ...] = ("SET", key, value, "PX", px, *(("NX",) if nx else ()))
        (answer,) = await send_per_node(self._redis, [(key, args)], self._durability)
        if isinstance(answer, NotReplicated):
            raise_store_error(answer)
        if isinstance(answer, Exception):
            raise answer
        return bool(answer)

    # -- homes -------------------------------------------------------------------------

    def _remember(self, table_id: str, home: Home) -> Home:
        self._known[table_id] = home
        self._known.move_to_end(table_id)
        if len(self._known) > _KNOWN_HOMES:
            self._known.popitem(last=False)
        return home

    async def _home_of(self, table_id: str) -> Home | None:
        """The home of a table id: remembered, else the candidate that holds it."""
        known = self._known.get(table_id)
        if known is not None:
            return known
        homes = self._keys.candidates(table_id)
        found = await asyncio.gather(*(self._redis.exists(h.table(table_id)) for h in homes))
        for home, exists in zip(homes, found, strict=True):
            if exists:
                return self._remember(table_id, home)
        return None

    def _pointed(self, table_id: str, name: str | None) -> Home | None:
        """The home a pointer names (None: a legacy pointer, or a name not known here)."""
        home = self._keys.named(name) if name is not None else self._keys.legacy
        return None if home is None else self._remember(table_id, home)

    def _head(self, home: Home, now_ms: int) -> list[Any]:
        return [home.prefix, now_ms, self._chan]

    # -- the keys apart from the tables ------------------------------------------------

    async def _claim_code(self, code: str, table_id: str, home: Home, ttl_ms: int) -> bool:
        """Take ``code`` for a table about to open; False if any table holds it (one of
        the legacy layout's included)."""
        won, legacy = await asyncio.gather(
            self._set(self._keys.code(code), f"{table_id} {home.name}", ttl_ms, nx=True),
            self._redis.exists(self._keys.legacy_code(code)),
        )
        if won and legacy:
            await self._code_for(code, table_id, home, 0)
            return False
        return bool(won)

    def _code_key(self, code: str, home: Home) -> str:
        return self._keys.legacy_code(code) if home is self._keys.legacy else self._keys.code(code)

    async def _code_for(self, code: str, table_id: str, home: Home, ttl_ms: int) -> None:
        """Keep ``code`` for ``ttl_ms`` more, or free it (0), if it still names the table."""
        await self._code_ttl(keys=[self._code_key(code, home)], args=[table_id, ttl_ms])

    async def _give_token(
        self, sitter: Sitter, placed: Placed, home: Home, timings: Timings
    ) -> Placed:
        value = f"{placed.table_id} {placed.seat} {home.name}"
        await self._set(self._keys.token(sitter.token_hash), value, timings.token_ttl_ms)
        return placed

    async def _token(self, token_hash: str) -> tuple[str, int, Home, str] | None:
        """(table id, seat, home, the token's key) of a seat token's hash."""
        key = self._keys.token(token_hash)
        value = await self._redis.get(key)
        if value is None:
            key = self._keys.legacy_token(token_hash)
            value = await self._redis.get(key)
        if value is None:
            return None
        parts = str(value).split(" ")
        home = self._pointed(parts[0], parts[2] if len(parts) > 2 else None)
        return None if home is None else (parts[0], int(parts[1]), home, key)

    async def _rematch_pointer(self, old_id: str) -> tuple[str, str, Home] | None:
        """(id, code, home) of the rematch of ``old_id``; the code empty for the legacy
        layout's (whose table its own script opened)."""
        value = await self._redis.get(self._keys.rematch(old_id))
        if value is not None:
            table_id, code = str(value).split(" ")
            return table_id, code, self._remember(table_id, self._keys.room(table_id))
        legacy = await self._redis.get(self._keys.legacy_rematch(old_id))
        if legacy is None:
            return None
        return str(legacy), "", self._remember(str(legacy), self._keys.legacy)

    # -- the store interface -----------------------------------------------------------

    async def quick_join(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed | None:
        with self._ops("quick_join"):
            players = table.rules.players
            home = self._keys.quick(players)

            async def run(open_new: bool) -> Any:
                return await self._quick_join(
                    keys=[home.queue(players), home.due],
                    args=[
                        *self._head(home, now_ms),
                        players,
                        sitter.name,
                        sitter.token_hash,
                        timings.fill_ms,
                        timings.fill_lone_ms,
                        timings.lobby_ttl_ms,
                        table.rules_json(),
                        table.level,
                        owner,
                        timings.claim_ms,
                        "1" if open_new else "",
                        table.id,
                        table.code,
                        sitter.profile,
                        sitter.rating,
                        timings.level_window,
                        timings.level_widen_per_s,
                        timings.level_open_ms,
                    ],
                )

            reply = await run(False)
            if not reply:  # no open table has a seat: claim a code, then open one
                if not await self._claim_code(table.code, table.id, home, _code_life(timings)):
                    return None
                reply = await run(True)
                if str(reply[0]) != table.id:  # another sitter's table opened meanwhile
                    await self._code_for(table.code, table.id, home, 0)
            placed = _placed(reply)
            self._remember(placed.table_id, home)
            return await self._give_token(sitter, placed, home, timings)

    async def create_private(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str | None
    ) -> Placed | None:
        with self._ops("create_private"):
            home = self._keys.room(table.id)
            if not await self._claim_code(table.code, table.id, home, _code_life(timings)):
                return None
            reply = await self._create_private(
                keys=[home.table(table.id), home.due],
                args=[
                    *self._head(home, now_ms),
                    table.id,
                    table.code,
                    sitter.name,
                    sitter.token_hash,
                    table.rules_json(),
                    table.level,
                    table.rules.players,
                    timings.lobby_ttl_ms,
                    "0" if owner is None else "1",
                    owner or "",
                    timings.claim_ms,
                    "1" if table.spectators else "0",
                    sitter.profile,
                    sitter.rating,
                    "1" if table.rated else "0",
                    table.daily,
                ],
            )
            if not reply:  # the id is taken (never, for random ids): draw again
                await self._code_for(table.code, table.id, home, 0)
                return None
            self._remember(table.id, home)
            return await self._give_token(sitter, _placed(reply), home, timings)

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
        with self._ops("rematch"):
            pointer = await self._rematch_pointer(old_id)
            if pointer is None:
                home = self._keys.room(table.id)
                if not await self._claim_code(table.code, table.id, home, _code_life(timings)):
                    return None
                won = await self._set(
                    self._keys.rematch(old_id),
                    f"{table.id} {table.code}",
                    timings.lobby_ttl_ms,
                    nx=True,
                )
                if won:
                    pointer = table.id, table.code, self._remember(table.id, home)
                else:  # another player asked first: their rematch it is
                    await self._code_for(table.code, table.id, home, 0)
                    pointer = await self._rematch_pointer(old_id)
                    if pointer is None:
                        return None
            table_id, code, home = pointer
            args: list[Any] = [
                *self._head(home, now_ms),
                old_id,
                table_id,
                code,
                table.rules.players,
                table.rules_json(),
                table.level,
                seat,
                sitter.name,
                sitter.token_hash,
                timings.lobby_ttl_ms,
                timings.rematch_ms,
                owner,
                timings.claim_ms,
                "1" if table.spectators else "0",
                sitter.profile,
                sitter.rating,
                "1" if table.rated else "0",
            ]
            for name, bot in seats:
                args += [name, "1" if bot else ""]
            reply = await self._rematch(keys=[home.table(table_id), home.due], args=args)
            placed = _placed(reply, head=4)
            replaced = str(reply[3])
            if replaced:  # the seat's older token no longer resolves
                await self._redis.delete(self._keys.token(replaced))
                if home is self._keys.legacy:
                    await self._redis.delete(self._keys.legacy_token(replaced))
            return await self._give_token(sitter, placed, home, timings)

    async def rematch_of(self, old_id: str) -> str | None:
        with self._ops("rematch_of"):
            pointer = await self._rematch_pointer(old_id)
            if pointer is None:
                return None
            table_id, _, home = pointer
            # The pointer is claimed just before its table opens: name it once it is there.
            return table_id if await self._redis.exists(home.table(table_id)) else None

    async def join_code(
        self, code: str, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed:
        with self._ops("join_code"):
            found = await self._by_code(code)
            if found is None:
                raise ServiceError("no_code", _MESSAGES["no_code"])
            table_id, home = found
            reply = await self._join(
                keys=[home.table(table_id), home.due],
                args=[
                    *self._head(home, now_ms),
                    sitter.name,
                    sitter.token_hash,
                    timings.lobby_ttl_ms,
                    owner,
                    timings.claim_ms,
                    sitter.profile,
                    sitter.rating,
                ],
            )
            placed = _placed(reply)
            await self._code_for(code, table_id, home, _code_life(timings))
            return await self._give_token(sitter, placed, home, timings)

    async def leave(self, token_hash: str, now_ms: int, timings: Timings) -> TableRecord:
        with self._ops("leave"):
            found = await self._token(token_hash)
            if found is None:
                raise ServiceError("bad_token", _MESSAGES["bad_token"])
            table_id, seat, home, key = found
            reply = await self._leave(
                keys=[home.table(table_id), home.due],
                args=[*self._head(home, now_ms), seat, token_hash, timings.done_ttl_ms],
            )
            if len(reply) == 1 and str(reply[0]) == "bad_token":
                await self._redis.delete(key)  # its seat was freed or taken: it never counts again
            _refusal(reply)
            await self._redis.delete(key)
            record = _record(reply[2:])
            if record.status == "closed":
                await self._code_for(record.code, table_id, home, 0)
            return record

    async def claim(self, table_id: str, owner: str, now_ms: int, timings: Timings) -> bool:
        with self._ops("claim"):
            home = await self._home_of(table_id)
            if home is None:
                return False
            reply = await self._claim(
                keys=[home.table(table_id), home.due],
                args=[*self._head(home, now_ms), owner, timings.claim_ms],
            )
            return bool(int(reply))

    async def claim_due(self, owner: str, now_ms: int, limit: int, timings: Timings) -> list[str]:
        """Up to ``limit`` due tables of each home, claimed in one pipeline per node."""
        with self._ops("claim_due"):
            homes = self._keys.homes
            replies = await asyncio.gather(
                *(
                    self._claim_due(
                        [home.due], [*self._head(home, now_ms), owner, timings.claim_ms, limit]
                    )
                    for home in homes
                )
            )
            claimed = []
            for home, ids in zip(homes, replies, strict=True):
                for table_id in ids:
                    claimed.append(str(table_id))
                    self._remember(str(table_id), home)
            return claimed

    async def finish(
        self,
        table_id: str,
        owner: str,
        replica: str,
        bots: Sequence[tuple[int, str]],
        timings: Timings,
    ) -> TableRecord | None:
        with self._ops("finish"):
            home = await self._home_of(table_id)
            if home is None:
                return None
            pairs = [str(part) for seat, name in bots for part in (seat, name)]
            reply = await self._finish(
                keys=[home.table(table_id), home.due],
                args=[*self._head(home, 0), owner, replica, timings.done_ttl_ms, *pairs],
            )
            if not reply:
                return None
            record = _record(reply)
            if home is self._keys.legacy:  # its code was claimed for the lobby's time only
                await self._code_for(record.code, table_id, home, timings.done_ttl_ms)
            return record

    async def release(
        self, table_id: str, owner: str, now_ms: int, mode: ReleaseMode, timings: Timings
    ) -> str:
        with self._ops("release"):
            home = await self._home_of(table_id)
            if home is None:
                return "lost"
            reply = await self._release(
                keys=[home.table(table_id), home.due],
                args=[
                    *self._head(home, now_ms),
                    owner,
                    mode,
                    timings.retry_ms,
                    timings.max_attempts,
                    timings.done_ttl_ms,
                ],
            )
            status = str(reply)
            if status == "closed":
                record = await self.table(table_id)
                if record is not None:
                    await self._code_for(record.code, table_id, home, 0)
            return status

    async def table(self, table_id: str) -> TableRecord | None:
        with self._ops("table"):
            home = await self._home_of(table_id)
            if home is None:
                return None
            raw = await self._redis.hgetall(home.table(table_id))
            fields = {str(key): str(value) for key, value in raw.items()}
            if "rules" not in fields:
                return None
            return TableRecord.from_fields(fields)

    async def seat_of(self, token_hash: str) -> tuple[str, int] | None:
        with self._ops("seat_of"):
            found = await self._token(token_hash)
            return None if found is None else (found[0], found[1])

    async def _by_code(self, code: str) -> tuple[str, Home] | None:
        value = await self._redis.get(self._keys.code(code))
        if value is None:
            value = await self._redis.get(self._keys.legacy_code(code))
        if value is None:
            return None
        parts = str(value).split(" ")
        home = self._pointed(parts[0], parts[1] if len(parts) > 1 else None)
        return None if home is None else (parts[0], home)

    async def table_by_code(self, code: str) -> str | None:
        with self._ops("table_by_code"):
            found = await self._by_code(code)
            return None if found is None else found[0]

    async def changes(self) -> AsyncIterator[str]:
        """Table ids from the change channel; resubscribes (yielding ``""``) after errors."""
        backoff = 0.1
        while True:
            pubsub = None
            try:
                if isinstance(self._redis, RedisCluster):
                    await self._redis.initialize()  # its pub/sub picks a node from the slots
                pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                await pubsub.subscribe(self._chan)
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
                    await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis-py 8

    async def close(self) -> None:
        await self._redis.aclose()


class _Durable:
    """A script's calls, each followed by ``WAIT`` as its store's ``durability`` asks
    (``ScriptBatch``: calls at once share a pipeline, and its ``WAIT``); a write fewer
    replicas confirmed than asked raises ``StoreUnavailable`` (``again`` False: it may be
    on the primary alone)."""

    def __init__(self, batch: ScriptBatch) -> None:
        self._batch = batch

    async def __call__(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        try:
            return await self._batch(keys, args)
        except NotReplicated as exc:
            raise_store_error(exc)
