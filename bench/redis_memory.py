"""What Redis holds per table: a live table's keys (start, middle), a finished one's, and
the matchmaker's per table, with their TTLs. For docs/deploy.md's sizing of the Redis tier.

    python bench/redis_memory.py [--tables 50]

Starts its own durable ``redis-server`` (AOF, a password) and a table replica in this
process on it; each table seats two human seats (moves over the gateway's link client
on real gRPC, each answered, so the move-id records and replies are stored as in play)
and is played to the end by rackcore's bots. ``MEMORY USAGE`` of every key of a table is summed at
its first move, halfway and once finished; the matchmaker's keys (its table record,
room code, two seat tokens) from its own store. Prints bytes per table (median of the
tables) and the machine's load average: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from seat_views import view_of, views  # noqa: E402

from rackcore import Rules  # noqa: E402
from rackcore.bots import choose  # noqa: E402
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc  # noqa: E402
from services.common.errors import ServiceError  # noqa: E402
from services.common.redis_client import connect  # noqa: E402
from services.common.registry import RedisRegistry  # noqa: E402
from services.convert import move_to_pb  # noqa: E402
from services.gateway.table_client import dial  # noqa: E402
from services.matchmaker.ids import hash_token, new_table_id, new_token  # noqa: E402
from services.matchmaker.records import NewTable, Sitter, Timings  # noqa: E402
from services.matchmaker.store.redis import RedisStore as MatchmakerStore  # noqa: E402
from services.matchmaker.store.redis_keys import Layout  # noqa: E402
from services.table.server import create_server  # noqa: E402
from services.table.settings import TableSettings  # noqa: E402
from services.table.store.redis import RedisStore, keys  # noqa: E402

LOCAL = "127.0.0.1"
PASSWORD = secrets.token_hex(16)


def start_redis(workdir: str) -> tuple[subprocess.Popen[bytes], int]:
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    with __import__("socket").socket() as sock:
        sock.bind((LOCAL, 0))
        port = int(sock.getsockname()[1])
    command = ["redis-server", "--port", str(port), "--bind", LOCAL, "--dir", workdir]
    command += ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]
    command += ["--requirepass", PASSWORD]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with redis.Redis(port=port, password=PASSWORD) as client:
                if client.ping():
                    return process, port
        except redis.RedisError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not answer")


def usage(client: redis.Redis, names: list[str]) -> int:
    return sum(int(client.memory_usage(name, samples=0) or 0) for name in names)


async def play(
    stub: table_pb2_grpc.TableAsyncStub, sync: redis.Redis, table_id: str, tokens: list[str]
) -> tuple[int, int, int, int]:
    """Play both seats to the end: the table's bytes at its first move, 150 moves in and
    at the end, and its moves."""
    names = keys(table_id)
    sizes: list[int] = []
    moves = 0

    async def seat(token: str) -> None:
        nonlocal moves
        request = table_pb2.SeatRequest(table_id=table_id, token=token)
        done: set[tuple[int, str]] = set()
        async for tv in views(link, request):
            if tv.status == "round_over":
                if (tv.version, "continue") not in done:
                    done.add((tv.version, "continue"))
                    await link.continue_round(request, 5)
                continue
            view = view_of(tv)
            if tv.status != "playing" or not view.my_turn or (tv.version, "move") in done:
                continue
            done.add((tv.version, "move"))
            try:
                await link.submit(
                    table_pb2.SubmitMoveRequest(
                        table_id=table_id,
                        token=token,
                        move=move_to_pb(choose(view, "medium", seed=tv.version)),
                        move_id=f"m{tv.version}-{secrets.token_hex(4)}",
                        expected_version=tv.version,
                    ),
                    5,
                )
            except ServiceError:
                continue  # overtaken by a newer view: answer that one
            moves += 1
            if moves in (1, 150):
                sizes.append(usage(sync, names))

    link = dial(stub)
    try:
        await asyncio.gather(*(seat(token) for token in tokens))
    finally:
        await link.close()
    sizes.append(usage(sync, names))
    while len(sizes) < 3:
        sizes.insert(1, sizes[0])
    return sizes[0], sizes[1], sizes[-1], int(sync.llen(names[1]))


async def bench(tables: int) -> None:
    workdir = tempfile.mkdtemp(prefix="rackem-redis-memory-")
    server, port = start_redis(workdir)
    url = f"redis://:{PASSWORD}@{LOCAL}:{port}/0"
    client = connect(url)
    sync = redis.Redis(port=port, password=PASSWORD)
    settings = TableSettings(
        host=LOCAL, port=0, bot_delay_ms=0, decision_ms=600_000, bot_addr="", redis_url=url
    )
    running = await create_server(
        settings, store=RedisStore(client), registry=RedisRegistry(client)
    )
    try:
        async with grpc.aio.insecure_channel(running.addr) as channel:
            stub = table_pb2_grpc.TableStub(channel)
            figures = []
            for n in range(tables):
                request = table_pb2.CreateTableRequest(
                    code=f"C{n:05d}",
                    rules=game_pb2.Rules(players=2),
                    seats=[table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(name="Bob")],
                )
                created = await stub.CreateTable(request)
                figures.append(await play(stub, sync, created.table_id, list(created.tokens)))
                ttl = sync.pttl(keys(created.table_id)[1])
        mm = MatchmakerStore(client)
        timings = Timings()
        layout = Layout()
        mm_sizes = []
        for _ in range(tables):
            table = NewTable(
                new_table_id(), secrets.token_hex(3).upper(), False, Rules(), "medium", 0
            )
            first, second = (
                Sitter("Ann", hash_token(new_token())),
                Sitter("Bob", hash_token(new_token())),
            )
            now = int(time.time() * 1000)
            await mm.create_private(table, first, now, timings, None)
            await mm.join_code(table.code, second, now, timings, "bench")
            names = [layout.room(table.id).table(table.id), layout.code(table.code)]
            names += [layout.token(s.token_hash) for s in (first, second)]
            mm_sizes.append(usage(sync, names))
    finally:
        await running.stop(0)
        await client.aclose()
        info = sync.info("memory")
        sync.close()
        server.terminate()
        server.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    start, middle, end = (statistics.median(f[i] for f in figures) for i in range(3))
    print(f"{tables} two-seat tables played to the end over gRPC on redis-server (AOF, password)")
    played = statistics.median(f[3] for f in figures)
    print(f"  moves per match (median):      {played:6.0f}")
    print(f"  live table, first move:        {start / 1024:6.1f} KiB")
    print(f"  live table, 150 moves in:      {middle / 1024:6.1f} KiB")
    print(f"  finished table (TTL {ttl / 3_600_000:.0f} h):    {end / 1024:6.1f} KiB")
    print(f"  matchmaker, per started table: {statistics.median(mm_sizes) / 1024:6.1f} KiB")
    print(f"  redis used_memory at the end:  {int(info['used_memory']) / 2**20:6.1f} MiB")
    print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    asyncio.run(bench(parser.parse_args().tables))


if __name__ == "__main__":
    main()
