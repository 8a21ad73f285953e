"""The one way services open Redis: from ``REDIS_URL``, in one of Redis's own three modes.

``REDIS_URL`` chooses the engine (docs/deploy.md, "The Redis tier")::

    redis://[[user]:password@]host:port[/db]        one server (rediss:// for TLS)
    redis+sentinel://[[user]:password@]host:port[,host:port...]/SERVICE[/db]
        the primary of SERVICE, found through the Sentinels listed and followed through
        a failover (redis-py's ``Sentinel``); the password is the data nodes'; a
        ``?sentinel_password=`` query authenticates to the Sentinels themselves
    redis+cluster://[[user]:password@]host:port[,host:port...]
        a Redis Cluster, found from any of the nodes listed (redis-py's ``RedisCluster``)

Responses are decoded to ``str``; commands are packed by hiredis in every mode
(``redis_packing``). A single server's and a Sentinel primary's connections
come from a *blocking* pool of ``MAX_CONNECTIONS``: when a thousand tables append a
move at once the commands wait their turn for a connection (Redis runs one command at
a time anyway) instead of failing. redis-py's default pool refuses the 101st concurrent
command outright, which under load closed tables for "store errors" that were only a
full pool. A cluster client holds up to ``CLUSTER_CONNECTIONS`` per node.

Every code path that writes keys of more than one table or replica keeps to one slot
per command (a hash tag per table, per registry, per matchmaker queue or room code), so
the same code runs on all three; ``by_node`` groups batched commands per cluster node.
``is_outage`` tells an outage (Redis unreachable, failing over, loading) from a bug;
``raise_store_error`` raises an outage as the project's own ``StoreUnavailable``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import parse_qs, unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.connection import parse_url as parse_redis_url
from redis.asyncio.sentinel import (
    MasterNotFoundError,
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
)
from redis.exceptions import (
    ClusterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common.errors import StoreUnavailable
from services.common.redis_packing import hiredis_packing

__all__ = [
    "CLUSTER_CONNECTIONS",
    "FOLLOW_S",
    "MAX_CONNECTIONS",
    "POOL_WAIT_S",
    "RECHECK_S",
    "SOCKET_TIMEOUT_S",
    "Command",
    "Durability",
    "NotReplicated",
    "RedisClient",
    "RedisTarget",
    "connect",
    "is_outage",
    "parse_url",
    "raise_store_error",
    "recheck_primary",
    "send_per_node",
]

MAX_CONNECTIONS = 64
POOL_WAIT_S = 5.0  # a command waits this long for a free connection, then fails
CLUSTER_CONNECTIONS = 256  # per node; commands are pipelined, so few are open at once
SOCKET_TIMEOUT_S = 5.0  # a command unanswered this long fails (a frozen or gone server)
CONNECT_TIMEOUT_S = 2.0
HEALTH_CHECK_S = 10

RedisClient = aioredis.Redis | RedisCluster
"""What ``connect`` returns: a client of one server (single or Sentinel), or a cluster's."""

SENTINEL_SCHEME = "redis+sentinel"
CLUSTER_SCHEME = "redis+cluster"


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """A parsed ``REDIS_URL`` of the Sentinel or Cluster kind."""

    mode: str  # "sentinel" or "cluster"
    nodes: tuple[tuple[str, int], ...]
    service: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = field(default=None, repr=False)


def parse_url(url: str) -> RedisTarget | None:
    """The Sentinel or Cluster target of ``url``; None for a plain ``redis://`` URL."""
    scheme = url.partition("://")[0].lower()
    if scheme not in (SENTINEL_SCHEME, CLUSTER_SCHEME):
        return None
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, _, password = userinfo.partition(":") if userinfo else ("", "", "")
    nodes: list[tuple[str, int]] = []
    for node in hosts.split(","):
        host, _, port = node.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{scheme}:// needs host:port pairs, got {node!r}")
        nodes.append((host.strip("[]"), int(port)))
    path = [p for p in parts.path.split("/") if p]
    query = parse_qs(parts.query)
    sentinel_password = query.get("sentinel_password", [None])[0]
    common = {
        "nodes": tuple(nodes),
        "username": unquote(username) or None,
        "password": unquote(password) or None,
    }
    if scheme == CLUSTER_SCHEME:
        if path:
            raise ValueError("a Redis Cluster has one database: redis+cluster:// takes no path")
        return RedisTarget("cluster", **common)  # type: ignore[arg-type]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError("redis+sentinel:// needs /SERVICE or /SERVICE/DB after the hosts")
    return RedisTarget(
        "sentinel",
        service=unquote(path[0]),
        db=int(path[1]) if len(path) == 2 else 0,
        sentinel_password=sentinel_password,
        **common,  # type: ignore[arg-type]
    )


class _Sentinels(Sentinel):
    """redis-py's ``Sentinel``, asking every Sentinel at once for the primary and taking
    the answer of the newest configuration (the highest ``config-epoch``) of a majority.

    redis-py takes the first Sentinel that names a primary not marked down. A Sentinel cut
    off with the old primary (a minority: it cannot fail over, and nobody tells it of the
    failover the others made) still names it, whole, as long as the cut lasts; and so the
    services would keep writing to a primary that the failover has replaced. A failover
    takes a majority's votes, so a majority of answers holds one from a Sentinel that knows
    of it once its configuration has spread (a second at most on a connected majority)."""

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        need = len(self.sentinels) // 2 + 1
        asking = {asyncio.ensure_future(s.sentinel_masters()) for s in self.sentinels}
        best: dict[str, Any] | None = None
        answered = 0
        errors: list[str] = []
        try:
            while asking and answered < need:
                done, asking = await asyncio.wait(asking, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    try:
                        masters = task.result()
                    except (RedisConnectionError, ResponseError, RedisTimeoutError) as exc:
                        errors.append(repr(exc))
                        continue
                    answered += 1
                    state = masters.get(service_name) if isinstance(masters, dict) else None
                    if not state or not self.check_master_state(state, service_name):
                        continue
                    if best is None or int(state["config-epoch"]) > int(best["config-epoch"]):
                        best = state
        finally:
            for task in asking:
                task.cancel()
            if asking:  # their connections let go (a cancelled read drops its connection)
                await asyncio.gather(*asking, return_exceptions=True)
        if best is None:
            raise MasterNotFoundError(f"No master found for {service_name!r}: {errors}")
        return str(best["ip"]), int(best["port"])


RECHECK_S = 0.5
"""How often at most a pool asks the Sentinels again because a write's ``WAIT`` came back short."""
FOLLOW_S = 1.0
"""How often a pool in use asks the Sentinels again anyway: a service whose writes wait
for no replica (``REDIS_WAIT_REPLICAS=0``) follows a failover within about this long too."""


class _BlockingSentinelPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """The Sentinel pool (finds and follows the primary) that waits for a free connection,
    and asks the Sentinels again when a write was not replicated (``recheck``)."""

    _rechecked_at = -RECHECK_S
    _rechecking: asyncio.Task[None] | None = None

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        """A connection, as ever; and, at most every ``FOLLOW_S``, the Sentinels asked again
        in the background (``recheck``)."""
        if time.monotonic() - self._rechecked_at >= FOLLOW_S:
            self.recheck()
        return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]

    def recheck(self) -> None:
        """A write's ``WAIT`` came back short: the primary may be one that a failover
        replaced (cut off from its replicas, it still takes writes, none of them
        acknowledged). Ask the Sentinels in the background (at most every ``RECHECK_S``);
        if they name another primary, every connection closes, so the next commands go to
        the new one. redis-py asks only when it makes a connection, and a pool's
        connections to an old primary that is cut off from its replicas never fail."""
        now = time.monotonic()
        if self._rechecking is not None or now - self._rechecked_at < RECHECK_S:
            return
        self._rechecked_at = now
        self._rechecking = asyncio.ensure_future(self._recheck())

    async def _recheck(self) -> None:
        try:
            before = self.master_address
            after = await self.get_master_address()  # type: ignore[no-untyped-call]
            if before is not None and after != before:
                # Every connection to the old primary closes now, busy ones too: a read
                # under way there fails (and is tried again) rather than answer from a
                # copy that the failover discards.
                await self.disconnect()
        except Exception:  # no Sentinel answers: the next connection asks them again
            pass
        finally:
            self._rechecking = None


class _SentinelRedis(aioredis.Redis):
    """The primary's client, which also closes its connections to the Sentinels."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        sentinels: Sentinel = self.connection_pool.sentinel_manager  # type: ignore[attr-defined]
        try:
            await super().aclose(close_connection_pool)
        finally:
            await sentinels.aclose()


def connect(url: str) -> RedisClient:
    """A client for ``url`` (see the module's doc for the three kinds)."""
    target = parse_url(url)
    if target is None:
        options: dict[str, Any] = {
            "max_connections": MAX_CONNECTIONS,
            "timeout": POOL_WAIT_S,
            "decode_responses": True,
            "health_check_interval": HEALTH_CHECK_S,
            "socket_timeout": SOCKET_TIMEOUT_S,
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
            **parse_redis_url(url),  # as ``from_url`` reads it: the URL's options win
        }
        base = options.pop("connection_class", Connection)  # TLS or a Unix socket
        pool = aioredis.BlockingConnectionPool(connection_class=hiredis_packing(base), **options)
        return aioredis.Redis.from_pool(pool)
    if target.mode == "cluster":
        packing = hiredis_packing(Connection)
        cluster = RedisCluster(
            startup_nodes=[
                ClusterNode(host, port, connection_class=packing) for host, port in target.nodes
            ],
            max_connections=CLUSTER_CONNECTIONS,
            username=target.username,
            password=target.password,
            decode_responses=True,
            health_check_interval=HEALTH_CHECK_S,
            socket_timeout=SOCKET_TIMEOUT_S,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
        )
        # RedisCluster takes no connection class; the nodes it finds are made from these
        # (tests/services/common/test_redis_packing.py checks them on a real cluster).
        cluster.nodes_manager.connection_kwargs["connection_class"] = packing
        return cluster
    sentinel_kwargs: dict[str, object] = {
        "socket_timeout": SOCKET_TIMEOUT_S,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "decode_responses": True,
    }
    if target.sentinel_password:
        sentinel_kwargs["password"] = target.sentinel_password
    sentinel = _Sentinels(list(target.nodes), sentinel_kwargs=sentinel_kwargs)  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis-py 8
    client: aioredis.Redis = sentinel.master_for(
        target.service,
        redis_class=_SentinelRedis,
        connection_pool_class=_BlockingSentinelPool,
        max_connections=MAX_CONNECTIONS,
        timeout=POOL_WAIT_S,
        connection_class=hiredis_packing(SentinelManagedConnection),
        db=target.db,
        username=target.username,
        password=target.password,
        decode_responses=True,
        health_check_interval=HEALTH_CHECK_S,
        socket_timeout=SOCKET_TIMEOUT_S,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
    )
    return client


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means Redis cannot serve for now (down, failing over, loading, a
    cluster slot moving, full) rather than a refusal or a bug: callers answer
    ``unavailable``."""
    if isinstance(
        exc,
        RedisConnectionError  # MasterNotFoundError, BusyLoadingError, MaxConnectionsError too
        | RedisTimeoutError
        | ClusterDownError  # MasterDownError too
        | TryAgainError
        | ReadOnlyError  # a demoted primary, before the client follows the failover
        | OutOfMemoryError  # full (maxmemory-policy noeviction): writes fail until it is not
        | NotReplicated
        | StoreUnavailable  # a store's word for all of these
        | SlotNotCoveredError
        | OSError
        | asyncio.TimeoutError,
    ):
        return True
    return isinstance(exc, RedisClusterException) and "cannot be connected" in str(exc)


def raise_store_error(exc: Exception) -> NoReturn:
    """Raise ``exc``, a Redis call's error, as a store raises it: an outage as
    ``StoreUnavailable`` (``again`` unless the write may be on the primary alone,
    ``NotReplicated``, or Redis is full), anything else as it is."""
    if not is_outage(exc):
        raise exc
    full = isinstance(exc, OutOfMemoryError)
    again = not (full or isinstance(exc, NotReplicated))
    raise StoreUnavailable(type(exc).__name__, again=again, full=full) from exc


@dataclass(frozen=True, slots=True)
class Durability:
    """How many replicas must have a write before it is acknowledged (``WAIT``), and how
    long to wait for them. ``replicas=0``: the primary's word is enough."""

    replicas: int = 0
    wait_ms: int = 1000


class NotReplicated(RedisError):
    """Fewer replicas than asked confirmed a write in time: it may be on the primary only,
    so it is not acknowledged (``is_outage``: the caller answers ``unavailable``)."""


Command = tuple[str, tuple[Any, ...]]
"""A command to send and one key it touches (which names its slot, hence its node)."""


async def send_per_node(
    client: RedisClient, commands: Sequence[Command], durability: Durability | None = None
) -> list[Any]:
    """Send ``commands`` in one pipeline per node (redis-py's cluster pipeline splits by
    node and sends to all nodes at once; a single server's is one pipeline); each
    command's answer, an error included, in order. A lone command on a single server or
    a Sentinel primary, with no replicas to wait for, goes as a plain command (``_lone``).

    With ``durability.replicas``, each node's commands are followed on the same
    connection by ``WAIT replicas wait_ms``: a command whose node confirmed fewer answers
    ``NotReplicated`` instead of its result. This is the helper for any batch of
    single-slot commands (scripts included: redis-py refuses ``evalsha`` in a cluster
    pipeline, but not the raw ``EVALSHA`` command, whose slot it reads from the keys).
    """
    if not commands:
        return []
    replicas = durability.replicas if durability is not None else 0
    wait_ms = durability.wait_ms if durability is not None else 0
    if len(commands) == 1 and not replicas and not isinstance(client, RedisCluster):
        return [await _lone(client, commands[0][1])]
    node_of: list[str] = []
    if isinstance(client, RedisCluster):
        await client.initialize()  # the slots map, on first use (a no-op after)
        nodes: dict[str, ClusterNode] = {}
        for key, _ in commands:
            node = client.get_node_from_key(key)
            if node is None:
                raise SlotNotCoveredError(f"no cluster node serves the slot of {key!r}")
            nodes[node.name] = node
            node_of.append(node.name)
        async with client.pipeline(transaction=False) as cluster_pipe:
            for _, args in commands:
                cluster_pipe.execute_command(*args)
            if replicas:
                for node in nodes.values():
                    cluster_pipe.execute_command("WAIT", replicas, wait_ms, target_nodes=node)
            results = list(await cluster_pipe.execute(raise_on_error=False))
        waited = dict(zip(nodes, results[len(commands) :], strict=True)) if replicas else {}
    else:
        async with client.pipeline(transaction=False) as pipe:
            for _, args in commands:
                pipe.execute_command(*args)
            if replicas:
                pipe.execute_command("WAIT", replicas, wait_ms)
            results = list(await pipe.execute(raise_on_error=False))
        node_of = [""] * len(commands)
        waited = {"": results[len(commands)]} if replicas else {}
    answers = results[: len(commands)]
    if replicas:
        for n, node_name in enumerate(node_of):
            acked = waited[node_name]
            if isinstance(answers[n], Exception):
                continue
            if isinstance(acked, Exception):
                answers[n] = acked
            elif int(acked) < replicas:
                answers[n] = NotReplicated(
                    f"{acked} of {replicas} replicas confirmed the write in {wait_ms} ms"
                )
        if any(isinstance(answer, NotReplicated) for answer in answers):
            recheck_primary(client)
    return answers


def recheck_primary(client: RedisClient) -> None:
    """Have a Sentinel client ask the Sentinels for its primary again (``_BlockingSentinelPool
    .recheck``); a no-op for any other client."""
    pool = getattr(client, "connection_pool", None)
    if isinstance(pool, _BlockingSentinelPool):
        pool.recheck()


async def _lone(client: RedisClient, args: tuple[Any, ...]) -> Any:
    """One command on its own, answered as a pipeline answers it (its error as its result).

    A batch of one is most batches while a replica is not busy. As a plain command it
    costs the loop less than a pipeline of one (no pipeline object, its command stack and
    its shielded reset; the figures: docs/performance.md, *Redis*), and it is sent the same
    way, with the same retries.
    """
    try:
        return await client.execute_command(*args)
    except ResponseError as exc:
        return exc
