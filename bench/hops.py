"""The round trips a move makes on the process-per-service stack, each timed bare.

    python3 bench/hops.py [--round-trips 3000] [--json]

A move there crosses three hops one after the other: the client's WebSocket to the
gateway, the gateway's ``Table.Link`` stream to the replica (gRPC, one message each
way), and the replica's append to Redis (one ``EVALSHA``). This times each hop alone,
from one uvloop process, against a server process of its own: the bare WebSocket echo
``bench/load.py`` compares with (``bench/echo_server.py``), a grpc.aio stream-stream
echo of 600-byte messages (a move's ``LinkUp`` is ~100 bytes, its ``LinkDown`` ~3 KB), and
``redis-server`` running a two-command script. Their sum, with no game work at all, is
the floor of one client's move on that stack, printed as a multiple of the echo: what
``bench/load.py``'s ratio to the echo can come down to (docs/performance.md).

For comparison it also times the cheapest hop there could be between gateway and table:
a bare TCP stream between two uvloop processes, each message a 4-byte length and the
600 bytes (what a hand-written transport would cost at the least: no HTTP/2, no gRPC
threads), and prints the floor with it in place of the gRPC stream.

For the gRPC hop it also prints the CPU time each side spends per round trip (a write and
a read each): what one link message costs either end, whatever it carries, which is
what the link's pacing saves (services/common/pacing.py). gRPC's settings in the
environment (``GRPC_EXPERIMENTS``) reach both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import struct
import subprocess
import sys
import time

import grpc
import redis.asyncio as aioredis
from load_servers import cpu_s, free_port, start_echo, stop_process

from rackem.client import Client
from services.common import loop

MESSAGE = b"x" * 600
_LENGTH = struct.Struct(">I")
_SCRIPT = "redis.call('RPUSH', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[2]); return 1"


def _same(data: bytes) -> bytes:
    return data


async def serve_grpc(port: int) -> None:
    """A stream-stream method that writes back every message it reads."""

    async def echo(requests: object, context: grpc.aio.ServicerContext) -> None:
        async for message in requests:  # type: ignore[attr-defined]
            await context.write(message)

    handler = grpc.stream_stream_rpc_method_handler(echo, _same, _same)
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("hops.Echo", {"E": handler}),)
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("listening", flush=True)
    await server.wait_for_termination()


class _Framed(asyncio.Protocol):
    """Length-prefixed messages on a TCP stream; each whole one to ``on_message``."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self.answer: asyncio.Future[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while len(buffer) >= 4:
            (size,) = _LENGTH.unpack_from(buffer)
            if len(buffer) < 4 + size:
                return
            message = bytes(buffer[4 : 4 + size])
            del buffer[: 4 + size]
            self.on_message(message)

    def send(self, message: bytes) -> None:
        assert self.transport is not None
        self.transport.write(_LENGTH.pack(len(message)) + message)

    def on_message(self, message: bytes) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(message)


class _EchoFramed(_Framed):
    def on_message(self, message: bytes) -> None:
        self.send(message)


async def serve_raw(port: int) -> None:
    """Every length-prefixed message read is written back."""
    server = await asyncio.get_running_loop().create_server(_EchoFramed, "127.0.0.1", port)
    print("listening", flush=True)
    await server.serve_forever()


async def _raw(port: int, n: int) -> list[float]:
    loop = asyncio.get_running_loop()
    transport, framed = await loop.create_connection(_Framed, "127.0.0.1", port)
    took = []
    for _ in range(n):
        started = time.perf_counter()
        framed.answer = loop.create_future()
        framed.send(MESSAGE)
        await framed.answer
        took.append(time.perf_counter() - started)
    transport.close()
    return took


def _p50_ms(seconds: list[float]) -> float:
    ordered = sorted(seconds[len(seconds) // 10 :])  # the first tenth warms up
    return round(ordered[len(ordered) // 2] * 1000, 3)


async def _ws(url: str, n: int) -> list[float]:
    client = Client(url)
    await client.connect(hello=False)
    took = []
    for _ in range(n):
        started = time.perf_counter()
        await client.send({"type": "ping"})
        await client.recv()
        took.append(time.perf_counter() - started)
    await client.close()
    return took


async def _grpc(port: int, n: int) -> list[float]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream("/hops.Echo/E", _same, _same)()
        replies = call.__aiter__()
        took = []
        for _ in range(n):
            started = time.perf_counter()
            await call.write(MESSAGE)
            await replies.__anext__()
            took.append(time.perf_counter() - started)
        call.cancel()
    return took


async def _redis(port: int, n: int) -> list[float]:
    client = aioredis.Redis(port=port)
    sha = await client.script_load(_SCRIPT)
    took = []
    for _ in range(n):
        started = time.perf_counter()
        await client.execute_command(
            "EVALSHA", sha, 2, "hops:log", "hops:state", "m" * 120, "s" * 400
        )
        took.append(time.perf_counter() - started)
    await client.aclose()
    return took


async def measure(
    n: int, echo_url: str, grpc_port: int, grpc_pid: int, redis_port: int, raw_port: int
) -> dict[str, float]:
    echo = _p50_ms(await _ws(echo_url, n))
    client_before, server_before = time.process_time(), cpu_s(grpc_pid)
    grpc_ms = _p50_ms(await _grpc(grpc_port, n))
    client_cpu, server_cpu = time.process_time() - client_before, cpu_s(grpc_pid) - server_before
    redis_ms = _p50_ms(await _redis(redis_port, n))
    raw_ms = _p50_ms(await _raw(raw_port, n))
    floor = echo + grpc_ms + redis_ms
    bare = echo + raw_ms + redis_ms
    return {
        "websocket_echo_ms": echo,
        "grpc_stream_round_trip_ms": grpc_ms,
        "redis_evalsha_ms": redis_ms,
        "floor_ms": round(floor, 3),
        "floor_vs_echo": round(floor / echo, 2),
        "grpc_client_cpu_us_per_round_trip": round(client_cpu / n * 1e6),
        "grpc_server_cpu_us_per_round_trip": round(server_cpu / n * 1e6),
        "bare_tcp_round_trip_ms": raw_ms,
        "floor_with_bare_tcp_vs_echo": round(bare / echo, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--round-trips", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve-grpc", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-raw", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_grpc:
        loop.run(serve_grpc(args.serve_grpc))
        return
    if args.serve_raw:
        loop.run(serve_raw(args.serve_raw))
        return
    grpc_port, redis_port, raw_port = free_port(), free_port(), free_port()
    echo, echo_url = start_echo()
    grpc_server = subprocess.Popen(
        [sys.executable, __file__, "--serve-grpc", str(grpc_port)], stdout=subprocess.PIPE
    )
    raw_server = subprocess.Popen(
        [sys.executable, __file__, "--serve-raw", str(raw_port)], stdout=subprocess.PIPE
    )
    redis_server = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        assert grpc_server.stdout is not None and raw_server.stdout is not None
        grpc_server.stdout.readline()  # "listening"
        raw_server.stdout.readline()
        time.sleep(0.3)  # redis-server accepts within this on an idle machine
        figures = loop.run(
            measure(args.round_trips, echo_url, grpc_port, grpc_server.pid, redis_port, raw_port)
        )
    finally:
        for process in (echo, grpc_server, raw_server, redis_server):
            stop_process(process)
    figures_out = {"load_average": [round(x, 2) for x in os.getloadavg()], **figures}
    if args.json:
        print(json.dumps(figures_out))
        return
    print(f"load average {figures_out['load_average']}")
    for name, value in figures.items():
        print(f"  {name:<28} {value}")


if __name__ == "__main__":
    main()
