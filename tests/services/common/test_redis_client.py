"""The services' Redis client: many more concurrent commands than pooled connections."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis
from redis_engines import KINDS, Engines, SentinelGroup, Server, _binary, free_port

from services.common.redis_client import (
    FOLLOW_S,
    MAX_CONNECTIONS,
    RECHECK_S,
    Durability,
    NotReplicated,
    RedisClient,
    RedisTarget,
    connect,
    is_outage,
    parse_url,
    send_per_node,
)


async def test_commands_beyond_the_pool_wait_for_a_connection_instead_of_failing(
    redis_url: str,
) -> None:
    client = connect(redis_url)
    try:
        many = MAX_CONNECTIONS * 20

        async def one(i: int) -> str:
            await client.set(f"pool-test:{i}", str(i))
            # BLPOP with a timeout holds its connection for a while, as slow commands do
            await client.blpop([f"pool-test:none:{i}"], timeout=0.05)
            value = await client.get(f"pool-test:{i}")
            assert value is not None
            return str(value)

        values = await asyncio.gather(*(one(i) for i in range(many)))
        assert values == [str(i) for i in range(many)]
    finally:
        await client.aclose()


def test_redis_urls_name_their_engine_nodes_and_password() -> None:
    assert parse_url("redis://:pw@h:6379/0") is None  # a single server: redis-py's own URL
    sentinel = parse_url("redis+sentinel://:p%40ss@s1:26379,s2:26380/rackem/2")
    assert sentinel == RedisTarget(
        "sentinel", (("s1", 26379), ("s2", 26380)), "rackem", 2, None, "p@ss"
    )
    cluster = parse_url("redis+cluster://user:pw@n1:7000,n2:7001")
    assert cluster == RedisTarget("cluster", (("n1", 7000), ("n2", 7001)), "", 0, "user", "pw")
    assert (
        parse_url("redis+sentinel://s1:26379/rackem?sentinel_password=x").sentinel_password == "x"
    )  # type: ignore[union-attr]
    for bad in ("redis+sentinel://s1:26379", "redis+cluster://n1:7000/0", "redis+cluster://n1"):
        with pytest.raises(ValueError):
            parse_url(bad)


@pytest.mark.parametrize("kind", KINDS)
async def test_each_engine_serves_commands_scripts_and_batches(
    redis_engines: Engines, kind: str
) -> None:
    client = connect(redis_engines.url(kind))
    try:
        script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        keys = [f"engine-test:{{{secrets.token_hex(4)}}}" for _ in range(30)]  # many slots
        await script(keys=[keys[0]], args=[0])  # loaded (on every primary of a cluster)
        sent = await send_per_node(
            client, [(k, ("EVALSHA", script.sha, 1, k, n)) for n, k in enumerate(keys)]
        )
        assert sent == list(range(30))
    finally:
        await client.aclose()


async def test_a_write_counts_only_once_the_replicas_asked_for_have_it(
    redis_engines: Engines,
) -> None:
    sentinel = connect(redis_engines.url("sentinel"))  # a primary and one replica
    single = connect(redis_engines.url("single"))  # no replica at all
    try:
        write = [("wait-test", ("SET", "wait-test", "1"))]
        assert await send_per_node(sentinel, write, Durability(1, 2_000)) == [True]
        (short,) = await send_per_node(sentinel, write, Durability(2, 200))
        assert isinstance(short, NotReplicated) and is_outage(short)
        (alone,) = await send_per_node(single, write, Durability(1, 100))
        assert isinstance(alone, NotReplicated)
        assert await send_per_node(single, write) == [True]
    finally:
        await sentinel.aclose()
        await single.aclose()


async def test_a_sentinel_client_follows_the_newest_configuration_once_a_write_is_not_replicated(
    tmp_path: Path,
) -> None:
    """A Sentinel left with an old primary (a minority cut off with it, here one that
    monitors a server of its own) names it whole, at an older configuration epoch than
    the majority's failover made. The client takes the newest configuration a majority of
    answers holds; and once a write's ``WAIT`` comes back short, it asks the Sentinels
    again, so that its pooled connections to the old primary do not keep it there."""
    write = [("follow-test", ("SET", "follow-test", "1"))]
    async with _stray_then_group(tmp_path) as (group, client):
        # Only the stray Sentinel answers: its primary it is.
        (short,) = await send_per_node(client, write, Durability(1, 100))
        assert isinstance(short, NotReplicated)
        # The group starts and fails over once: its configuration is newer (epoch 1).
        group.start()
        with redis.Redis(port=group.sentinel_ports[0], decode_responses=True) as sentinel:
            sentinel.sentinel_failover("rackem")
        new = group.wait_failover(group.primary)
        group.wait_synced()
        await _until_all_sentinels_name(group, new.port)
        async with asyncio.timeout(20):
            while True:  # each short WAIT has the pool ask the Sentinels again
                try:
                    (answer,) = await send_per_node(client, write, Durability(1, 100))
                except redis.ConnectionError:  # under way on the old primary as it switched
                    continue
                if answer is True:
                    break
                assert isinstance(answer, NotReplicated)
                await asyncio.sleep(RECHECK_S)
        pool = client.connection_pool
        assert pool.master_address == ("127.0.0.1", new.port)  # type: ignore[attr-defined]


async def test_a_sentinel_client_whose_writes_wait_for_nothing_follows_a_failover_too(
    tmp_path: Path,
) -> None:
    """Writes that wait for no replica (REDIS_WAIT_REPLICAS=0) never come back short: the pool
    asks the Sentinels again every ``FOLLOW_S`` all the same, and its writes go to the
    primary of the newest configuration within about that long."""
    async with _stray_then_group(tmp_path) as (group, client):
        await client.set("follow-plain", "stray")  # only the stray Sentinel answers yet
        group.start()
        with redis.Redis(port=group.sentinel_ports[0], decode_responses=True) as sentinel:
            sentinel.sentinel_failover("rackem")
        new = group.wait_failover(group.primary)
        await _until_all_sentinels_name(group, new.port)
        switched = time.monotonic()
        async with asyncio.timeout(20):
            while True:
                try:
                    await client.set("follow-plain", "group")
                except redis.ConnectionError:  # under way on the old primary as it switched
                    continue
                with new.client() as primary:
                    if primary.get("follow-plain") == b"group":
                        break
                await asyncio.sleep(0.05)
        assert time.monotonic() - switched < FOLLOW_S + 3.0


@contextlib.asynccontextmanager
async def _stray_then_group(tmp_path: Path) -> AsyncIterator[tuple[SentinelGroup, RedisClient]]:
    """A Sentinel client over a stray Sentinel of its own (monitoring a server with no
    replica, so ``WAIT 1`` never holds there) and a ``SentinelGroup`` whose Sentinels'
    ports are chosen but none started: until the test starts the group, only the stray
    Sentinel answers, and the client's primary is the stray server."""
    group = SentinelGroup(tmp_path / "group")
    stray = Server(tmp_path / "stray", group.password)
    stray.start()
    stray_sentinel = _sentinel(tmp_path / "stray-sentinel", stray.port, group.password)
    nodes = [stray_sentinel[1], *group.sentinel_ports]
    url = (
        f"redis+sentinel://:{group.password}@"
        + ",".join(f"127.0.0.1:{port}" for port in nodes)
        + "/rackem/0"
    )
    client = connect(url)
    try:
        yield group, client
    finally:
        await client.aclose()
        stray_sentinel[0].terminate()
        stray_sentinel[0].wait(10)
        group.stop()
        stray.stop()


def _sentinel(
    directory: Path, primary_port: int, password: str
) -> tuple[subprocess.Popen[bytes], int]:
    """A Sentinel of its own monitoring ``rackem`` at ``primary_port`` (quorum 2: alone, it
    never fails over), and its port."""
    directory.mkdir(parents=True)
    port = free_port()
    config = directory / "sentinel.conf"
    config.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {directory}\nlogfile {directory / 'sentinel.log'}\n"
        f"sentinel monitor rackem 127.0.0.1 {primary_port} 2\n"
        f"sentinel auth-pass rackem {password}\n"
    )
    process = subprocess.Popen([_binary("redis-sentinel"), str(config)], stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            with redis.Redis(port=port, socket_timeout=1, decode_responses=True) as sentinel:
                if sentinel.sentinel_master("rackem"):
                    return process, port
        except (redis.ConnectionError, redis.ResponseError):
            if time.monotonic() > deadline:
                process.terminate()
                raise
        time.sleep(0.05)


async def _until_all_sentinels_name(group: SentinelGroup, port: int) -> None:
    async with asyncio.timeout(20):
        while True:
            named = set()
            for sentinel_port in group.sentinel_ports:
                with redis.Redis(port=sentinel_port, decode_responses=True) as sentinel:
                    named.add(int(sentinel.sentinel_get_master_addr_by_name("rackem")[1]))
            if named == {port}:
                return
            await asyncio.sleep(0.1)
