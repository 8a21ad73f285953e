"""The services' Redis client: many more concurrent commands than pooled connections."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from redis_engines import KINDS, Engines

from services.common.redis_client import (
    MAX_CONNECTIONS,
    Durability,
    NotReplicated,
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
