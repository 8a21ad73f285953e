"""Quick match by level: the rating spread of the tables it starts, and the players' wait.

    python bench/matchmaking_levels.py [--players 2] [--minutes 60] [--rates 0.1,0.5,2,10]

Drives the matchmaker's own seating code (``services.matchmaker.seating.Matchmaker``, its
memory store and its ``Starter`` with the due loop ticking every 250 ms) on a simulated
clock: rated players arrive as a Poisson process at each ``--rates`` (players a second),
their ratings drawn from a normal distribution (mean 1500, sd 250, as shown values), and
ask for a quick match of ``--players``. A stand-in table replica records every start.
For each arrival rate and each window (``off``: no window, the matchmaker before levels;
the default; a narrower and a wider one) it prints: the mean number of players waiting
(the queue, by Little's law), the humans' rating spread (max - min) of tables that
started with two or more, p50 and p90, the mean and p90 wait from arrival to start, and
the share of players who started with bots only. Fill timers are the defaults (15 s
after a second human, 30 s for a lone one). Same seed, same figures.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import random
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services._gen.rackem.v1 import table_pb2  # noqa: E402
from services.common.registry import MemoryRegistry, Replica  # noqa: E402
from services.matchmaker.codes import new_code  # noqa: E402
from services.matchmaker.placement import Placer  # noqa: E402
from services.matchmaker.records import Timings  # noqa: E402
from services.matchmaker.seating import Matchmaker  # noqa: E402
from services.matchmaker.starter import Starter  # noqa: E402
from services.matchmaker.store.memory import MemoryStore  # noqa: E402
from services.matchmaker.watchers import LobbyWatchers  # noqa: E402

TICK_MS = 250
BASE = Timings()  # the defaults, the level window's included
WINDOWS = {
    "off": replace(BASE, level_open_ms=0),
    "narrow 50+10/s": replace(BASE, level_window=50, level_widen_per_s=10),
    f"default {BASE.level_window}+{BASE.level_widen_per_s}/s": BASE,
    "wide 200+40/s": replace(BASE, level_window=200, level_widen_per_s=40),
}


@dataclass
class Outcome:
    queue: float
    spread_p50: float
    spread_p90: float
    wait_mean_s: float
    wait_p90_s: float
    alone: float  # share of players whose table started with no other human
    tables: int


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def simulate(
    players: int, rate: float, minutes: float, timings: Timings, seed: int
) -> Outcome:
    now = [1_700_000_000_000]
    start_ms = now[0]

    def clock() -> int:
        return now[0]

    arrivals: dict[str, tuple[int, int]] = {}  # profile -> (arrived ms, rating)
    starts: list[tuple[int, list[str]]] = []  # (ms, humans' profiles)

    async def create(request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
        starts.append((now[0], [s.profile for s in request.seats if not s.bot]))
        return table_pb2.CreateTableReply(table_id=request.table_id, replica="sim")

    registry = MemoryRegistry()
    await registry.heartbeat(Replica("sim", "sim", 0), 10**12)
    store = MemoryStore(clock=clock)
    placer = Placer(registry, 5.0, local={"sim": create})
    starter = Starter(store, placer, timings, "bench", clock)
    mm = Matchmaker(
        store,
        starter,
        LobbyWatchers(),
        timings,
        level="medium",
        codes=new_code,
        clock=clock,
        watch_poll_s=1.0,
    )
    rng = random.Random(seed)
    end = start_ms + int(minutes * 60_000)
    events: list[tuple[int, int, str]] = []
    t, n = float(start_ms), 0
    while True:
        t += rng.expovariate(rate) * 1000
        if t >= end:
            break
        heapq.heappush(events, (int(t), 1, f"p{n:016x}"))
        n += 1
    for tick in range(start_ms, end + 120_000, TICK_MS):
        heapq.heappush(events, (tick, 0, ""))
    while events:
        when, kind, profile = heapq.heappop(events)
        now[0] = when
        if kind == 0:
            await starter.tick()
            continue
        rating = max(600, min(2600, round(rng.gauss(1500, 250))))
        arrivals[profile] = (when, rating)
        await mm.quick_match("Player", players, profile, rating)
    await store.close()
    spreads, waits, alone, seated = [], [], 0, 0
    for at, humans in starts:
        ratings = [arrivals[p][1] for p in humans]
        if len(humans) >= 2:
            spreads.append(float(max(ratings) - min(ratings)))
        else:
            alone += 1
        for p in humans:
            waits.append((at - arrivals[p][0]) / 1000)
            seated += 1
    duration_s = (end - start_ms) / 1000
    return Outcome(
        queue=sum(waits) / duration_s,
        spread_p50=_pct(spreads, 0.5),
        spread_p90=_pct(spreads, 0.9),
        wait_mean_s=statistics.fmean(waits) if waits else float("nan"),
        wait_p90_s=_pct(waits, 0.9),
        alone=alone / seated if seated else float("nan"),
        tables=len(starts),
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--rates", default="0.1,0.5,2,10")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(
        f"quick match of {args.players}, {args.minutes:g} simulated minutes per row, "
        f"ratings N(1500, 250); load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'arrivals/s':>10} {'window':<18}{'queue':>7}{'spread p50':>11}{'p90':>6}"
        f"{'wait mean':>10}{'p90':>6}{'alone':>7}{'tables':>8}"
    )
    for rate in (float(r) for r in args.rates.split(",")):
        for name, timings in WINDOWS.items():
            o = await simulate(args.players, rate, args.minutes, timings, args.seed)
            print(
                f"{rate:>10g} {name:<18}{o.queue:>7.1f}{o.spread_p50:>11.0f}{o.spread_p90:>6.0f}"
                f"{o.wait_mean_s:>9.1f}s{o.wait_p90_s:>5.1f}s{o.alone:>7.1%}{o.tables:>8}"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
