"""Our Redis operations, timed and their failures counted by op, on a real Redis."""

from __future__ import annotations

import socket

import pytest
from prometheus_client import CollectorRegistry
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from services.common.errors import ServiceError
from services.common.redis_client import connect
from services.common.redis_metrics import RedisOps


def _sample(registry: CollectorRegistry, name: str, op: str) -> float | None:
    return registry.get_sample_value(name, {"op": op})


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_every_op_is_shown_at_0_then_each_use_is_timed(redis_url: str) -> None:
    registry = CollectorRegistry()
    ops = RedisOps(("load", "save"), registry)
    assert _sample(registry, "rackem_redis_command_seconds_count", "save") == 0
    assert _sample(registry, "rackem_redis_errors_total", "save") == 0
    client = connect(redis_url)
    try:
        with ops("load"):
            await client.ping()
        with pytest.raises(ResponseError), ops("load"):  # Redis refused it: an error
            await client.execute_command("NO-SUCH-COMMAND")
        with pytest.raises(ServiceError), ops("load"):  # our refusal, after Redis answered
            raise ServiceError("no_code", "no waiting table has that code")
    finally:
        await client.aclose()
    assert _sample(registry, "rackem_redis_command_seconds_count", "load") == 3
    assert _sample(registry, "rackem_redis_errors_total", "load") == 1
    assert _sample(registry, "rackem_redis_command_seconds_count", "save") == 0


async def test_redis_unreachable_counts_as_an_error() -> None:
    registry = CollectorRegistry()
    ops = RedisOps(("load",), registry)
    client = connect(f"redis://127.0.0.1:{_closed_port()}/0")
    try:
        with pytest.raises(RedisConnectionError), ops("load"):
            await client.ping()
    finally:
        await client.aclose()
    assert _sample(registry, "rackem_redis_errors_total", "load") == 1
