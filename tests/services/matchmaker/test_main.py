"""``python -m services.matchmaker``: settings from the environment, JSON logs, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import open_channel

from .clients import LIMIT_S


async def test_the_module_serves_from_the_environment_and_stops_on_sigterm() -> None:
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": "0", "REDIS_URL": "", "LOG_LEVEL": "INFO"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.matchmaker",
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    lines: list[dict[str, object]] = []
    try:
        async with asyncio.timeout(LIMIT_S):
            while not any(line.get("event") == "serving" for line in lines):
                raw = await process.stderr.readline()
                assert raw, "the matchmaker exited before serving"
                lines.append(json.loads(raw))
        serving = next(line for line in lines if line["event"] == "serving")
        assert serving["service"] == "matchmaker" and serving["store"] == "MemoryStore"
        async with open_channel(f"127.0.0.1:{serving['port']}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(LIMIT_S):
            rest = await process.stderr.read()
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert code == 0
    events = [json.loads(line)["event"] for line in rest.decode().splitlines()]
    assert events[-1] == "stopped"
