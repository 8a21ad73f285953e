"""How fast a SIGKILLed table replica's tables move on: kill → the next accepted move.

    python3 bench/takeover.py [--rounds 4] [--tables 30] [--pace 0.1]
                              [--json bench/results/takeover.json]

Starts its own ``redis-server`` (durable as deployed) and two table replicas
(``python -m services.table``, the default ``LEASE_MS`` and ``SWEEP_MS``, bots chosen
in process), then each round: starts a third replica, creates ``--tables`` tables on
it (one human seat, played from here over gRPC as a gateway would, one bot), lets them
play for two seconds, SIGKILLs it, and times, for each of its tables:

- **served**: from the kill to the first view a surviving replica sends (it took the
  lease and rebuilt the table);
- **moved**: from the kill to the first view of a move made after the kill (the next
  accepted move, by the human or the bot).

The human's client does what the gateway does: a refused or broken call is retried at
the owner the refusal names, or at the next surviving replica, every 20 ms. The
human thinks ``--pace`` seconds before each move and the bot waits ``BOT_DELAY_MS``
(the same) while a human is connected, so "moved" includes up to one such wait.
Prints p50, p90, p99 and max over every killed table, with the load average (the
machine may be shared: figures are from a busy machine), and writes them as JSON.
Asserts nothing; a table that does not move within 30 s counts as 30 s.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from lease_bench import LOCAL, PASSWORD, start_redis  # noqa: E402
from seat_views import view_of, views  # noqa: E402

from rackcore.bots import choose  # noqa: E402
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc  # noqa: E402
from services.common.errors import ServiceError  # noqa: E402
from services.convert import move_to_pb  # noqa: E402
from services.gateway.table_client import Link, dial  # noqa: E402
from services.table.settings import TableSettings  # noqa: E402

GIVE_UP_S = 30.0
RETRY_S = 0.02
CALL_S = 5.0  # seconds a call over the link waits for its answer
_ids = itertools.count()


class Replica:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.table"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._out,
        )
        self.addr = ""

    async def serving(self) -> str:
        deadline = time.monotonic() + 30
        while not self.addr:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"a table replica did not start: {self.log.read_text()}")
            for line in self.log.read_text().splitlines():
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if item.get("event") == "table_serving":
                    self.addr = str(item["addr"])
            await asyncio.sleep(0.05)
        return self.addr

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self._out.close()


@dataclass
class Seat:
    """One human seat, played as a gateway would play it."""

    table_id: str
    token: str
    addr: str
    pace: float
    survivors: list[str]
    views: list[tuple[float, int, str]] = field(default_factory=list)  # (t, version, addr)
    done: bool = False

    async def run(self, channels: dict[str, grpc.aio.Channel]) -> None:
        spare = itertools.cycle(self.survivors)
        request = table_pb2.SeatRequest(table_id=self.table_id, token=self.token)
        while not self.done:
            link = dial(table_pb2_grpc.TableStub(channels[self.addr]))
            try:
                async for view in views(link, request):
                    self.views.append((time.monotonic(), view.version, self.addr))
                    await self.answer(link, view)
                self.done = True
            except ServiceError as err:
                if err.code == "wrong_replica" and err.owner and err.owner in channels:
                    self.addr = err.owner
                else:
                    self.addr = next(spare)
                await asyncio.sleep(RETRY_S)
            finally:
                await link.close()

    async def answer(self, link: Link, tv: game_pb2.TableView) -> None:
        seat_request = table_pb2.SeatRequest(table_id=self.table_id, token=self.token)
        if tv.status == "round_over" and not tv.continued[0]:
            await link.continue_round(seat_request, CALL_S)
            return
        view = view_of(tv)
        if tv.status != "playing" or not view.my_turn:
            return
        await asyncio.sleep(self.pace)
        try:
            await link.submit(
                table_pb2.SubmitMoveRequest(
                    table_id=self.table_id,
                    token=self.token,
                    move=move_to_pb(choose(view, "medium", seed=tv.version)),
                    move_id=f"m{next(_ids)}",
                    expected_version=tv.version,
                ),
                CALL_S,
            )
        except ServiceError as err:
            if err.code not in ("stale_version", "not_your_turn", "illegal_move"):
                raise


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def one_round(
    env: dict[str, str], workdir: Path, n: int, survivors: list[str], args: argparse.Namespace
) -> list[dict[str, float]]:
    victim = Replica(env, workdir / f"victim-{n}.log")
    addr = await victim.serving()
    channels = {a: grpc.aio.insecure_channel(a) for a in [*survivors, addr]}
    try:
        stub = table_pb2_grpc.TableStub(channels[addr])
        seats = []
        for _ in range(args.tables):
            reply = await stub.CreateTable(
                table_pb2.CreateTableRequest(
                    rules=game_pb2.Rules(players=2),
                    seats=[
                        table_pb2.SeatSpec(name="Ann"),
                        table_pb2.SeatSpec(bot=True, level="medium"),
                    ],
                )
            )
            seats.append(Seat(reply.table_id, reply.tokens[0], addr, args.pace, survivors))
        tasks = [asyncio.create_task(s.run(channels)) for s in seats]
        await asyncio.sleep(2.0)
        killed = time.monotonic()
        victim.kill()
        before = {s.table_id: max((v for _, v, _ in s.views), default=0) for s in seats}
        deadline = killed + GIVE_UP_S
        while time.monotonic() < deadline:
            if all(s.done or _moved(s, killed, before[s.table_id]) for s in seats):
                break
            await asyncio.sleep(0.05)
        out = []
        for s in seats:
            after = [(t, v) for t, v, a in s.views if t > killed and a != addr]
            if s.done and not after:
                continue  # it ended before the kill
            served = min((t for t, _ in after), default=killed + GIVE_UP_S)
            moved = min((t for t, v in after if v > before[s.table_id]), default=killed + GIVE_UP_S)
            out.append({"served_s": served - killed, "moved_s": moved - killed})
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return out
    finally:
        for channel in channels.values():
            await channel.close(None)


def _moved(seat: Seat, killed: float, before: int) -> bool:
    return any(t > killed and v > before for t, v, _ in seat.views)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="takeover-"))
    redis_server, port = start_redis(str(workdir))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": f"redis://:{PASSWORD}@{LOCAL}:{port}/0",
        "HOST": LOCAL,
        "PORT": "0",
        "BOT_ADDR": "",
        "BOT_DELAY_MS": str(int(args.pace * 1000)),
        "DECISION_MS": "600000",
        "LOG_LEVEL": "INFO",
    }
    replicas = [Replica(env, workdir / f"survivor-{n}.log") for n in range(2)]
    try:
        survivors = [await r.serving() for r in replicas]
        samples: list[dict[str, float]] = []
        loads = []
        for n in range(args.rounds):
            got = await one_round(env, workdir, n, survivors, args)
            loads.append([round(x, 2) for x in os.getloadavg()])
            samples += got
            moved = [s["moved_s"] for s in got]
            print(
                f"round {n + 1}: {len(got)} tables, moved p50 {quantile(moved, 0.5):.2f} s, "
                f"max {max(moved):.2f} s; load average {loads[-1]}",
                flush=True,
            )
        settings = TableSettings()
        report: dict[str, Any] = {
            "bench": "takeover",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "lease_ms": settings.lease_ms,
            "sweep_ms": settings.sweep_ms,
            "pace_s": args.pace,
            "tables": len(samples),
            "load_averages": loads,
            "note": "loopback, the machine shared with other work",
        }
        for key in ("served_s", "moved_s"):
            values = [s[key] for s in samples]
            report[key] = {
                "p50": quantile(values, 0.5),
                "p90": quantile(values, 0.9),
                "p99": quantile(values, 0.99),
                "max": max(values),
            }
        return report
    finally:
        for r in replicas:
            r.kill()
        redis_server.terminate()
        redis_server.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--pace", type=float, default=0.1)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "takeover.json"))
    args = parser.parse_args()
    report = asyncio.run(bench(args))
    print(
        f"SIGKILL to served again / to the next accepted move, over {report['tables']} tables "
        f"(LEASE_MS {report['lease_ms']}, SWEEP_MS {report['sweep_ms']}):"
    )
    for key, label in (("served_s", "served"), ("moved_s", "moved")):
        q = report[key]
        print(
            f"  {label:<7} p50 {q['p50']:.2f} s  p90 {q['p90']:.2f} s  p99 {q['p99']:.2f} s  "
            f"max {q['max']:.2f} s"
        )
    print(f"  load averages after each round: {report['load_averages']}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.json}")


if __name__ == "__main__":
    main()
