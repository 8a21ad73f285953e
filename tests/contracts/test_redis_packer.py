"""redis-py's asyncio connections, as services/common/redis_packing.py holds them.

``hiredis_packing`` replaces ``pack_command`` on redis-py's asyncio connection classes with
one call of ``hiredis.pack_command`` (what it buys and the bound on redis-py:
docs/dependencies.md#held-internals), and ``redis_client.connect`` gives a cluster's nodes
that class through ``RedisCluster.nodes_manager.connection_kwargs``. These tests name what
that relies on: the method and its signature, the calls by which redis-py packs every
command and pipeline through it, the classes it is applied to, the encoding it assumes,
hiredis' packer and its refusals, and the cluster's node settings. The bytes themselves
are held equal in tests/services/common/test_redis_packing.py."""

from __future__ import annotations

import inspect
from typing import Any

import hiredis
import pytest
import redis
from redis.asyncio import cluster as aiocluster
from redis.asyncio import connection as aioconnection
from redis.asyncio.sentinel import SentinelManagedConnection

from services.common.redis_packing import hiredis_packing

CALLERS = [  # what packs a command or a pipeline through the connection's pack_command
    (aioconnection.AbstractConnection, "send_command"),
    (aioconnection.AbstractConnection, "pack_commands"),
    (aiocluster.ClusterNode, "execute_command"),
]
PACKED = [  # the classes redis_client.connect packs with hiredis
    aioconnection.Connection,
    aioconnection.SSLConnection,
    aioconnection.UnixDomainSocketConnection,
    SentinelManagedConnection,
]


def moved(what: str, where: str = "services/common/redis_packing.py") -> str:
    return (
        f"redis-py {redis.__version__} moved {what}: {where} relies on it; "
        "see docs/dependencies.md#held-internals"
    )


def test_pack_command_keeps_its_signature() -> None:
    method = getattr(aioconnection.AbstractConnection, "pack_command", None)
    assert method is not None, moved("redis.asyncio.connection.AbstractConnection.pack_command")
    parameters = list(inspect.signature(method).parameters.values())
    shape = [(p.name, p.kind) for p in parameters]
    assert shape == [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ("args", inspect.Parameter.VAR_POSITIONAL),
    ], moved(f"AbstractConnection.pack_command's parameters ({shape})")


def test_every_command_and_pipeline_is_packed_through_pack_command() -> None:
    for cls, name in CALLERS:
        method = getattr(cls, name, None)
        assert method is not None, moved(f"{cls.__name__}.{name}")
        assert "pack_command" in method.__code__.co_names, moved(
            f"{cls.__name__}.{name}'s call of pack_command (it packs another way now)"
        )


def test_the_packed_classes_are_asyncio_connections() -> None:
    for cls in PACKED:
        assert issubclass(cls, aioconnection.AbstractConnection), moved(f"{cls.__name__}'s base")
        assert hiredis_packing(cls).pack_command is not cls.pack_command


def test_connections_encode_text_as_utf8_as_hiredis_does() -> None:
    parameters = inspect.signature(aioconnection.AbstractConnection.__init__).parameters
    for name, default in (("encoding", "utf-8"), ("encoding_errors", "strict")):
        assert name in parameters, moved(f"AbstractConnection's {name} parameter")
        got = parameters[name].default
        assert got == default, moved(f"the default {name} ({got!r}; hiredis writes UTF-8)")


@pytest.mark.parametrize("value", [True, None, bytearray(b"x"), [1]])
def test_hiredis_refuses_with_a_type_error_what_it_cannot_pack(value: object) -> None:
    """``_pack_command`` hands those to redis-py's own packer, which refuses or packs them."""
    assert callable(getattr(hiredis, "pack_command", None)), "hiredis.pack_command is gone"
    with pytest.raises(TypeError):
        hiredis.pack_command(("SET", "k", value))  # type: ignore[arg-type]  # on purpose


def test_a_clusters_nodes_are_made_from_its_node_settings() -> None:
    where = "services/common/redis_client.py (a cluster's connection class)"
    client: Any = aiocluster.RedisCluster(startup_nodes=[aiocluster.ClusterNode("127.0.0.1", 1)])
    settings = getattr(getattr(client, "nodes_manager", None), "connection_kwargs", None)
    assert isinstance(settings, dict), moved("RedisCluster.nodes_manager.connection_kwargs", where)
    assert "connection_class" in settings, moved("the cluster's node connection_class", where)
    initialize = aiocluster.NodesManager.initialize
    assert "connection_kwargs" in initialize.__code__.co_names, moved(
        "NodesManager.initialize's use of connection_kwargs", where
    )
    node_parameters = inspect.signature(aiocluster.ClusterNode).parameters
    assert "connection_class" in node_parameters, moved("ClusterNode's connection_class", where)
