"""How fast a table replica takes moves: on one table, then across many tables.

    python bench/table_bench.py [--moves 400] [--tables 20] [--redis redis://...]

The replica runs as its own process (``python -m services.table``, the memory store
unless ``--redis``); this process plays every seat of each table over real gRPC, on
one link (the gateway's client) as a gateway would, with every seat subscribed (so
each move also pays for its broadcasts). Each table is played move after move, as
people would; the many-table run plays them all at once. Prints moves per second and
the p50/p99 latency of a move's call. Client and
server share the machine: compare figures from one run, not across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from seat_views import view_of

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.gateway.table_client import Link, dial

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = 2


async def start_replica(redis_url: str | None, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "LOG_LEVEL": "INFO",
        "DECISION_MS": "600000",
        "CONTINUE_MS": "0",
        "ABANDON_MS": "600000",
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    out = log.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "services.table"], cwd=ROOT, env=env, stderr=out
    )
    for _ in range(600):
        for line in log.read_text().splitlines():
            item = json.loads(line)
            if item.get("event") == "table_serving":
                return process, str(item["addr"])
        if process.poll() is not None:
            raise SystemExit(f"the replica exited:\n{log.read_text()}")
        await asyncio.sleep(0.05)
    raise SystemExit("the replica did not start")


def _slot(card: int, deck_size: int) -> int:
    """Where a card belongs in a sorted rack: good enough to keep rounds going."""
    return min(9, (card - 1) * 10 // deck_size)


class Seat:
    """One seat's subscription over the link, read as its gateway would; keeps the newest view."""

    def __init__(self, link: Link, request: table_pb2.SeatRequest) -> None:
        self.latest: game_pb2.TableView | None = None
        self.changed = asyncio.Event()
        self.views = link.subscribe(request, self._seen)

    def _seen(self, view: game_pb2.TableView) -> None:
        self.latest = view
        self.changed.set()

    async def at(self, version: int) -> game_pb2.TableView:
        """The seat's view once the table is at ``version``."""
        while self.latest is None or self.latest.version < version:
            self.changed.clear()
            await self.changed.wait()
        return self.latest

    async def dealt(self, version: int) -> game_pb2.TableView:
        """The first view of the next round (the table deals at once: CONTINUE_MS=0)."""
        while True:
            latest = self.latest
            if latest is not None and latest.version == version and latest.status == "playing":
                return latest
            self.changed.clear()
            await self.changed.wait()

    def close(self) -> None:
        self.views.close()


async def play_table(stub: table_pb2_grpc.TableAsyncStub, link: Link, moves: int) -> list[float]:
    """Play ``moves`` moves at a new table; the latency of each move's call in seconds."""
    rules = game_pb2.Rules(players=PLAYERS, target=10_000, turn_cap=1_000)
    specs = [table_pb2.SeatSpec(name=f"P{i}") for i in range(PLAYERS)]
    created = await stub.CreateTable(table_pb2.CreateTableRequest(rules=rules, seats=specs))
    tid, tokens = created.table_id, list(created.tokens)
    seats = [Seat(link, table_pb2.SeatRequest(table_id=tid, token=t)) for t in tokens]
    view = await seats[0].dealt(0)
    latencies = []
    for n in range(moves):
        if view.status == "round_over":
            view = await seats[0].dealt(n)
        seen = view_of(view)
        turn, phase = seen.turn, seen.phase
        if phase == "draw":
            move = game_pb2.Move(act="draw", source="stock")
        else:
            move = game_pb2.Move(act="place", slot=_slot(seen.held or 0, 10 * PLAYERS + 20))
        request = table_pb2.SubmitMoveRequest(
            table_id=tid, token=tokens[turn], move=move, move_id=f"m{n}", expected_version=n
        )
        started = time.perf_counter()
        version = await link.submit(request, 10)
        latencies.append(time.perf_counter() - started)
        view = await seats[turn].at(version)  # the mover's own view (its held card)
        if view.status not in ("playing", "round_over"):
            break
    for seat in seats:
        seat.close()
    return latencies


def report(name: str, latencies: list[float], seconds: float) -> None:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    rate = len(latencies) / seconds
    figures = f"{rate:>8.0f} moves/s  p50 {p50:.2f} ms  p99 {p99:.2f} ms"
    print(f"{name:<24} {len(latencies):>6} moves {figures}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=400, help="moves per table")
    parser.add_argument("--tables", type=int, default=20, help="tables played at once")
    parser.add_argument("--redis", help="a Redis URL for the store (default: memory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        process, addr = await start_replica(args.redis, Path(folder) / "replica.log")
        try:
            async with grpc.aio.insecure_channel(addr) as channel:
                stub = table_pb2_grpc.TableStub(channel)
                link = dial(stub)
                await play_table(stub, link, 50)  # warm up
                print(
                    f"store: {'redis' if args.redis else 'memory'}, {PLAYERS} seats, all subscribed"
                )
                started = time.perf_counter()
                one = await play_table(stub, link, args.moves)
                report("one table", one, time.perf_counter() - started)
                started = time.perf_counter()
                many = await asyncio.gather(
                    *(play_table(stub, link, args.moves) for _ in range(args.tables))
                )
                flat = [x for table in many for x in table]
                report(f"{args.tables} tables at once", flat, time.perf_counter() - started)
                await link.close()
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    asyncio.run(main())
