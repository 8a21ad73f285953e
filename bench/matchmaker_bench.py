"""How fast the matchmaker seats players: QuickMatch and Locate under concurrent clients.

    python bench/matchmaker_bench.py [--requests 2000] [--clients 50] [--redis redis://...]

The matchmaker runs in its own process (this script with ``--serve``): the memory store,
or Redis under a fresh key namespace with ``--redis``, and a stand-in table replica in
that process that answers CreateTable at once, so the figures are the matchmaker's own
(seat assignment, code allocation, the start of every table that fills). This process
drives ``--clients`` clients, each on its own channel, each sending its next request
when the last is answered. Prints requests per second and p50/p99 latency, with the
same server's bare health check as the baseline. Client and server share the machine:
compare figures from one run, not across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services._gen.rackem.v1 import matchmaker_pb2 as pb  # noqa: E402
from services._gen.rackem.v1 import matchmaker_pb2_grpc, table_pb2  # noqa: E402


async def serve(redis_url: str) -> None:
    """The server side: a matchmaker and a stand-in table replica; prints its address."""
    from services.common.redis_client import connect
    from services.common.registry import MemoryRegistry, Replica
    from services.common.settings import from_env
    from services.matchmaker.server import create_server
    from services.matchmaker.settings import MatchmakerSettings
    from services.matchmaker.store import Store
    from services.matchmaker.store.memory import MemoryStore
    from services.matchmaker.store.redis import RedisStore

    async def create(request: table_pb2.CreateTableRequest, context: Any) -> Any:
        return table_pb2.CreateTableReply(table_id=request.table_id, replica=table_addr)

    tables = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(
        create,
        request_deserializer=table_pb2.CreateTableRequest.FromString,
        response_serializer=table_pb2.CreateTableReply.SerializeToString,
    )
    tables.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("rackem.v1.Table", {"CreateTable": handler}),)
    )
    table_addr = f"127.0.0.1:{tables.add_insecure_port('127.0.0.1:0')}"
    await tables.start()
    registry = MemoryRegistry()
    client = connect(redis_url) if redis_url else None
    store: Store = (
        RedisStore(client, f"mm:bench-{secrets.token_hex(4)}:") if client else MemoryStore()
    )
    settings = from_env(MatchmakerSettings, host="127.0.0.1", port=0)
    running = await create_server(settings, store, registry)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(json.dumps({"addr": running.addr}), flush=True)
    while not stop.is_set():
        await registry.heartbeat(Replica("bench", table_addr, 0), 3_000)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
    await running.stop(1.0)
    await tables.stop(None)
    if client is not None:
        await client.aclose()


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


async def drive(
    label: str,
    stubs: list[Any],
    requests: int,
    call: Callable[[Any, int], Awaitable[object]],
) -> None:
    latencies: list[float] = []
    counter = iter(range(requests))

    async def client(stub: Any) -> None:
        for i in counter:
            started = time.perf_counter()
            await call(stub, i)
            latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(client(stub) for stub in stubs))
    elapsed = time.perf_counter() - began
    latencies.sort()
    print(
        f"{label:<28} {requests / elapsed:8.0f} req/s   "
        f"p50 {percentile(latencies, 0.5) * 1000:6.2f} ms   "
        f"p99 {percentile(latencies, 0.99) * 1000:6.2f} ms   "
        f"mean {statistics.fmean(latencies) * 1000:6.2f} ms"
    )


async def bench(args: argparse.Namespace) -> None:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, __file__, "--serve", "--redis", args.redis or ""]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        addr = json.loads(server.stdout.readline())["addr"]
        channels = [grpc.aio.insecure_channel(addr) for _ in range(args.clients)]
        stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
        store = f"Redis {args.redis}" if args.redis else "memory store"
        print(f"matchmaker at {addr} ({store}), {args.clients} clients, {args.requests} requests")
        tokens: list[str] = []

        async def quick(players: int) -> Callable[[Any, int], Awaitable[object]]:
            async def call(stub: Any, i: int) -> object:
                seated = await stub.QuickMatch(pb.QuickMatchRequest(name=f"P{i}", players=players))
                tokens.append(seated.token)
                return seated

            return call

        health = [health_pb2_grpc.HealthStub(channel) for channel in channels]

        async def check(stub: Any, i: int) -> object:
            return await stub.Check(health_pb2.HealthCheckRequest())

        await drive("warm-up", stubs, min(200, args.requests), await quick(2))
        await drive("baseline: Health.Check", health, args.requests, check)
        for players in (2, 4):
            label = f"QuickMatch, {players} players"
            await drive(label, stubs, args.requests, await quick(players))

        async def locate(stub: Any, i: int) -> object:
            return await stub.Locate(pb.TokenRequest(token=tokens[i % len(tokens)]))

        await drive("Locate", stubs, args.requests, locate)
        for channel in channels:
            await channel.close(None)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--redis", default="", help="a Redis URL (default: the memory store)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.redis))
    else:
        asyncio.run(bench(args))


if __name__ == "__main__":
    main()
