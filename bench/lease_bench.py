"""What a replica's lease renewal and sweep cost on Redis: a call per table vs one batch.

    python bench/lease_bench.py [--tables 2000] [--rounds 20] [--chunk 500]

Starts its own ``redis-server`` (durable as deployed: AOF fsynced every second, a
password) on a free port, creates ``--tables``
tables there through ``RedisStore``, and times renewal rounds the old way (one awaited
``renew`` per table, as ``Tables._renew`` did) and with ``renew_many`` (pipelined
chunks). Then the sweep's read with two replicas' worth of tables: the lease index's
count of expired leases (before it, a sweep read every lease it did not hold; see
bench/fleet_costs.py for the command counts). Prints, per
round, this process's CPU ms, redis-server's CPU ms and wall ms. Client and Redis share
the machine: compare figures from one run, not across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from load_servers import cpu_s  # noqa: E402

from services.common.redis_client import connect  # noqa: E402
from services.table.store.redis import RedisStore  # noqa: E402
from services.table.stored import SeatMeta, TableMeta, TableState  # noqa: E402

PASSWORD = secrets.token_hex(16)
LOCAL = "127.0.0.1"
HERE, OTHER = "replica-a 10.0.0.1:50052", "replica-b 10.0.0.2:50052"
LEASE_MS = 60_000  # long: no lease expires during the run


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCAL, 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis(workdir: str) -> tuple[subprocess.Popen[bytes], int]:
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", LOCAL, "--dir", workdir]
    command += ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]
    command += ["--requirepass", PASSWORD]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("redis-server exited")
        with contextlib.suppress(redis.RedisError), redis.Redis(port=port, password=PASSWORD) as c:
            if c.ping():
                return process, port
        time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not answer")


def meta(table_id: str) -> TableMeta:
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot 2", True, "hard", ""))
    return TableMeta(table_id, "", {"players": 2}, "00" * 32, seats, 0)


async def measure(
    label: str, rounds: int, redis_pid: int, work: Callable[[], Awaitable[object]]
) -> None:
    await work()  # warm: connections open, scripts loaded
    cpu, server, wall = time.process_time(), cpu_s(redis_pid), time.perf_counter()
    for _ in range(rounds):
        await work()
    cpu = time.process_time() - cpu
    server = cpu_s(redis_pid) - server
    wall = time.perf_counter() - wall
    print(
        f"{label:<44} CPU {cpu / rounds * 1000:7.1f} ms   "
        f"redis CPU {server / rounds * 1000:6.1f} ms   wall {wall / rounds * 1000:7.1f} ms"
    )


async def bench(args: argparse.Namespace) -> None:
    workdir = tempfile.mkdtemp(prefix="rackem-lease-bench-")
    redis_server, port = start_redis(workdir)
    client = connect(f"redis://:{PASSWORD}@{LOCAL}:{port}/0")
    try:
        store = RedisStore(client, chunk=args.chunk)
        ids = [f"t{i:06d}" for i in range(args.tables)]
        for table_id in ids:
            assert await store.create(meta(table_id), TableState.new(2), HERE, LEASE_MS)
        print(
            f"{args.tables} tables on redis-server :{port}, {args.rounds} rounds each, per round:"
        )

        async def one_by_one() -> None:
            for table_id in ids:
                assert await store.renew(table_id, HERE, LEASE_MS)

        async def batched() -> None:
            assert all(await store.renew_many(ids, HERE, LEASE_MS))

        await measure("renew: one call per table (old)", args.rounds, redis_server.pid, one_by_one)
        await measure(
            f"renew_many (chunks of {args.chunk})", args.rounds, redis_server.pid, batched
        )

        others = [f"u{i:06d}" for i in range(args.tables)]  # another replica's tables
        for table_id in others:
            assert await store.create(meta(table_id), TableState.new(2), OTHER, LEASE_MS)
        total = len(ids) + len(others)
        print(f"sweep over {total} live tables, none expired, per round:")

        async def sweep() -> None:
            assert await store.expired_count() == 0

        await measure("expired_count() (the lease index)", args.rounds, redis_server.pid, sweep)
    finally:
        await client.aclose()
        redis_server.terminate()
        redis_server.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--chunk", type=int, default=500)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
