"""A table replica is ready only while it reaches its Redis; it stays alive meanwhile."""

from __future__ import annotations

import asyncio
from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis_engines import Single

from services.common.channels import open_channel
from services.common.running import Running as BotRunning
from services.table.server import ALIVE, create_server
from table.table_players import fast_settings

SERVING = health_pb2.HealthCheckResponse.SERVING


async def _status(stub: health_pb2_grpc.HealthStub, service: str = "") -> int:
    reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
    return int(reply.status)


async def _until(stub: health_pb2_grpc.HealthStub, serving: bool) -> None:
    async with asyncio.timeout(30):
        while (await _status(stub) == SERVING) != serving:
            await asyncio.sleep(0.05)


async def test_a_replica_that_lost_redis_is_not_ready_until_it_is_back(
    tmp_path: Path, bot_server: BotRunning
) -> None:
    redis = Single(tmp_path)
    redis.start()
    running = await create_server(fast_settings(redis_url=redis.url), bot_addr=bot_server.addr)
    try:
        async with open_channel(running.addr) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            assert await _status(health) == SERVING
            redis.server.kill()
            await _until(health, serving=False)
            assert await _status(health, ALIVE) == SERVING  # liveness: do not restart it
            redis.server.start()  # the same port, its AOF read back
            await _until(health, serving=True)
            assert await _status(health, "rackem.v1.Table") == SERVING
    finally:
        await running.stop(0)
        redis.stop()
