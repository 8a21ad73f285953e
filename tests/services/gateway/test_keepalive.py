"""The gateway's channels find a replica whose process is stopped (SIGSTOP: its kernel
still holds the connection, so no packet is lost and nothing is refused): the keepalive
ping goes unanswered and gRPC ends the link within seconds, so a view stream held open
there breaks and the gateway follows the table to its new owner (docs/partitions.md,
``replica-pause``). A contract test of gRPC core's behaviour: the ping's answer is waited
for ``grpc.http2.ping_timeout_ms`` (a minute by default), whatever
``grpc.keepalive_timeout_ms`` says, so ``CHANNEL_OPTIONS`` sets both."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.gateway.backends import CHANNEL_OPTIONS

# A gRPC server as the services make it (services/common/grpc_server.py), with the health
# service whose Watch is a stream that stays open, as a table's view stream does.
SERVER = """
import asyncio
from services.common.grpc_server import add_health, new_server

async def main():
    server = new_server()
    add_health(server, [""])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    try:
        assert process.stdout is not None
        yield process, int(process.stdout.readline())
    finally:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


async def _stream_after_stop(
    process: subprocess.Popen[str], port: int, options: tuple[tuple[str, int], ...]
) -> tuple[str, float]:
    """How an open stream to the server ends once the server is stopped, and after how
    many seconds ("open" if it is still open after 8 s: twice what the keepalive takes)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        first = await stream.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        await asyncio.sleep(0.5)
        os.kill(process.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            async with asyncio.timeout(8):
                await stream.read()
        except TimeoutError:
            return "open", time.monotonic() - stopped
        except grpc.aio.AioRpcError as exc:
            return exc.code().name, time.monotonic() - stopped
        finally:
            stream.cancel()
        return "read", time.monotonic() - stopped


async def test_a_stream_to_a_stopped_replica_breaks_within_seconds(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    ended, after = await _stream_after_stop(*server, CHANNEL_OPTIONS)
    assert ended == "UNAVAILABLE", (ended, after)


async def test_without_the_ping_timeout_the_stream_stays_open(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    """Why ``grpc.http2.ping_timeout_ms`` is set: without it the keepalive alone leaves
    the stream open (when a gRPC release changes that, this test says so)."""
    options = tuple(o for o in CHANNEL_OPTIONS if o[0] != "grpc.http2.ping_timeout_ms")
    ended, _ = await _stream_after_stop(*server, options)
    assert ended == "open"
