"""Commands packed by hiredis: the bytes redis-py's own packer writes, on every mode's
connections (a real single server, a 3-primary cluster and a Sentinel primary)."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.sentinel import SentinelManagedConnection
from redis.exceptions import DataError
from redis_engines import KINDS, Engines

from services.common.redis_client import connect
from services.common.redis_packing import hiredis_packing

ARGUMENTS = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
)
COMMANDS = st.sampled_from(["SET", "EVALSHA", "CONFIG GET", b"CLIENT LIST", b"GET"])


def _python(*args: Any) -> bytes:
    return b"".join(Connection().pack_command(*args))


def _hiredis(*args: Any) -> bytes:
    return b"".join(hiredis_packing(Connection)().pack_command(*args))


@settings(max_examples=300)
@given(command=COMMANDS, args=st.lists(ARGUMENTS, max_size=12))
def test_hiredis_writes_the_bytes_redis_py_writes(command: str | bytes, args: list[Any]) -> None:
    assert _hiredis(command, *args) == _python(command, *args)


def test_a_table_replicas_append_packs_the_same() -> None:
    append = (
        "EVALSHA",
        "a" * 40,
        2,
        "rackem:{t:0123}:log",
        "rackem:{t:0123}:state",
        "0123abcd 127.0.0.1:50051",
        17,
        '{"seat":0,"act":"draw","from":"stock","by":"human"}',
        '{"status":"playing","covered":[false,false],"dealt_round":1}',
        "0:m-1é",
        18,
        1500,
    )
    assert _hiredis(*append) == _python(*append)


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_what_redis_has_no_form_for_is_refused_as_redis_py_refuses_it(value: object) -> None:
    with pytest.raises(DataError):
        _python("SET", "k", value)
    with pytest.raises(DataError):
        _hiredis("SET", "k", value)


def test_one_packing_class_per_base_class_keeps_the_base() -> None:
    for base in (Connection, SSLConnection, SentinelManagedConnection):
        packing = hiredis_packing(base)
        assert packing is hiredis_packing(base) and issubclass(packing, base)


def _connections(client: Any) -> list[Any]:
    if isinstance(client, RedisCluster):
        nodes = client.get_nodes()
        assert nodes
        return [c for node in nodes for c in node._connections]
    pool = client.connection_pool
    return [*pool._in_use_connections, *pool._available_connections] or [pool.make_connection()]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_modes_connections_pack_with_hiredis_and_are_answered(
    kind: str, redis_engines: Engines
) -> None:
    client = connect(redis_engines.url(kind))
    try:
        key = f"packing:{{{secrets.token_hex(4)}}}"
        await client.set(key, "värde ✓")
        assert await client.get(key) == "värde ✓"
        async with client.pipeline(transaction=False) as pipe:
            pipe.set(f"{key}:n", 41)
            pipe.incr(f"{key}:n")
            assert await pipe.execute() == [True, 42]
        connections = _connections(client)
        assert connections
        assert all(type(c).__name__.startswith("Hiredis") for c in connections), connections
        await client.delete(key, f"{key}:n")
    finally:
        await client.aclose()


def test_a_unix_socket_url_keeps_its_connection_class() -> None:
    client = connect("unix:///tmp/no-such-redis.sock?db=2")
    pool = client.connection_pool
    assert pool.connection_class.__name__ == "HiredisUnixDomainSocketConnection"
    assert pool.connection_kwargs["path"] == "/tmp/no-such-redis.sock"
    assert pool.connection_kwargs["db"] == 2
