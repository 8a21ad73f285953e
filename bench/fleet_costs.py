"""What the table fleet's background work costs Redis, counted by Redis itself.

    python3 bench/fleet_costs.py [--tables 1000,10000,50000] [--replicas 1,4,16]
                                 [--moves 5000] [--json bench/results/fleet_costs.json]

Starts its own ``redis-server`` (durable as deployed: AOF every second, a password) on
a free port. For each number of live tables and of replicas it creates the tables
through ``RedisStore`` (owned round-robin by the replicas) and drives the store the way
``services/table/leases.py``, ``adoption.py`` and ``table.py`` do, with the default settings
(``LEASE_MS`` 1500: a renewal round every 500 ms; ``SWEEP_MS`` 250):

- **per move**: one ``append`` (the move, the state, the reply, the lease renewed);
- **per idle table per second**: every replica's renewal round (``renew_many`` of its
  idle tables, ``note_leases`` of all of them), over the round's period;
- **per busy table per second**: the same round when every table moved meanwhile (its
  append renewed the lease: only ``note_leases``);
- **per sweep**, nothing expired: ``expired_count``;
- **per orphan**: one replica's leases expire (it died); each other replica's sweep
  counts, claims its fair share and reads each claimed lease.

Commands are counted with ``CONFIG RESETSTAT`` and ``INFO commandstats`` around each
step: exact, whatever else the machine does. Redis counts the commands a script runs
as well as the ``EVALSHA`` itself; both are shown. Redis's CPU per step (``/proc``) is
printed too, with the load average: it is noisy on a shared machine. The old sweep
(every replica read the whole live set and one lease per table it did not hold, every
second) is shown for comparison, computed from that code: ``1 + tables - tables /
replicas`` commands per replica per sweep.

Prints a table and writes the figures as JSON (``--json``), which
``scripts/capacity.py`` reads for docs/capacity.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from lease_bench import LOCAL, PASSWORD, meta, start_redis  # noqa: E402
from load_servers import cpu_s  # noqa: E402

from services.common.redis_client import connect  # noqa: E402
from services.table.settings import TableSettings  # noqa: E402
from services.table.store.redis import RedisStore  # noqa: E402
from services.table.stored import Reply, TableState  # noqa: E402

DEFAULTS = TableSettings()
ROUND_S = DEFAULTS.lease_ms // 3 / 1000  # a renewal round's period, as deployed
LEASE_MS = 600_000  # the leases the bench takes: none expires while 50,000 are created
SWEEP_S = DEFAULTS.sweep_ms / 1000
BATCH = 2_000  # calls in flight at once while creating or moving
MOVE = {"seat": 0, "act": "draw", "from": "stock", "by": "human"}


def owner(replica: int) -> str:
    return f"replica-{replica} 10.0.{replica // 250}.{replica % 250}:50052"


class Counter:
    """Commands Redis ran since ``reset``, by its own count, and its CPU seconds."""

    def __init__(self, client: Any, pid: int) -> None:
        self._client = client
        self._pid = pid
        self._cpu = 0.0

    async def reset(self) -> None:
        await self._client.config_resetstat()
        self._cpu = cpu_s(self._pid)

    async def read(self) -> tuple[dict[str, int], float]:
        cpu = cpu_s(self._pid) - self._cpu
        stats = await self._client.info("commandstats")
        calls = {
            name.removeprefix("cmdstat_"): int(value["calls"])
            for name, value in stats.items()
            if name.removeprefix("cmdstat_") not in ("info", "config|resetstat", "config")
        }
        return calls, cpu


def figures(calls: dict[str, int], cpu: float, per: float, plain: int = 0) -> dict[str, Any]:
    """``plain``: commands the client sent that are not scripts (the rest of what Redis
    counts, but the ``EVALSHA``s, ran inside the scripts)."""
    scripts = sum(n for c, n in calls.items() if c in ("evalsha", "eval", "evalsha_ro"))
    return {
        "commands": sum(calls.values()) / per,
        "sent_commands": (scripts + plain) / per,
        "redis_cpu_us": cpu * 1e6 / per,
        "by_command": {c: n / per for c, n in sorted(calls.items())},
    }


async def gathered(calls: list[Any]) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(calls), BATCH):
        out += await asyncio.gather(*calls[start : start + BATCH])
    return out


async def one_setup(
    store: RedisStore, counter: Counter, tables: int, replicas: int
) -> dict[str, Any]:
    ids = [f"t{n:07d}" for n in range(tables)]
    mine = {r: ids[r::replicas] for r in range(replicas)}
    state = TableState.new(2)
    created = await gathered(
        [store.create(meta(t), state, owner(n % replicas), LEASE_MS) for n, t in enumerate(ids)]
    )
    assert all(created)
    result: dict[str, Any] = {"tables": tables, "replicas": replicas}

    # Per move: appends to distinct tables, as many replicas' tables move at once.
    moves = min(args.moves, tables)
    picked = ids[:moves]
    await counter.reset()
    answers = await gathered(
        [
            store.append(
                t,
                owner(n % replicas),
                0,
                MOVE,
                state,
                Reply(0, f"m{n}", 1),
                lease_ms=LEASE_MS,
            )
            for n, t in enumerate(picked)
        ]
    )
    assert all(a == "ok" for a in answers), set(answers)
    result["per_move"] = figures(*await counter.read(), moves)

    # A renewal round of every replica, every table idle: renew_many + note_leases.
    await counter.reset()
    for r in range(replicas):
        assert all(await store.renew_many(mine[r], owner(r), LEASE_MS))
        await store.note_leases([(t, 0) for t in mine[r]], LEASE_MS)
    result["per_idle_table_second"] = figures(*await counter.read(), tables * ROUND_S)

    # The same round when every table moved since the last one (its append renewed it).
    await counter.reset()
    for r in range(replicas):
        await store.note_leases([(t, 0) for t in mine[r]], LEASE_MS)
    result["per_busy_table_second"] = figures(*await counter.read(), tables * ROUND_S)

    # A sweep of every replica with nothing expired.
    await counter.reset()
    for _ in range(replicas):
        assert await store.expired_count() == 0
    result["per_sweep"] = figures(*await counter.read(), replicas)
    result["old_sweep_commands"] = 1 + tables - tables // replicas

    # Replica 0 dies: its leases expire in the index; every other replica sweeps once.
    if replicas > 1:
        await store.note_leases([(t, LEASE_MS) for t in mine[0]], LEASE_MS)
        await counter.reset()
        claimed = 0
        for _ in range(1, replicas):
            expired = await store.expired_count()
            share = math.ceil(len(mine[0]) / (replicas - 1))
            got = [e.table_id for e in await store.claim_expired(min(share, expired), LEASE_MS)]
            await gathered([store.holder(t) for t in got])
            claimed += len(got)
        assert claimed == len(mine[0]), (claimed, len(mine[0]))
        sweeps = figures(*await counter.read(), claimed, plain=claimed)
        result["per_orphan_claimed"] = sweeps
    await store._redis.flushall()
    return result


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


async def bench() -> list[dict[str, Any]]:
    workdir = tempfile.mkdtemp(prefix="fleet-costs-")
    redis_server, port = start_redis(workdir)
    client = connect(f"redis://:{PASSWORD}@{LOCAL}:{port}/0")
    try:
        store = RedisStore(client)
        counter = Counter(client, redis_server.pid)
        await one_setup(store, counter, 20, 2)  # warm: every script loaded, connections open
        rows = []
        for tables in args.tables:
            for replicas in args.replicas:
                started = time.monotonic()
                row = await one_setup(store, counter, tables, replicas)
                row["load_average"] = load_average()
                row["seconds"] = round(time.monotonic() - started, 1)
                rows.append(row)
                print(line(row), flush=True)
        return rows
    finally:
        await client.aclose()
        redis_server.terminate()
        redis_server.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


HEADER = (
    f"{'tables':>7} {'repl':>4} | {'per move':>8} {'(sent)':>6} {'us':>5} | "
    f"{'idle/s':>6} {'busy/s':>6} | {'sweep':>5} {'old sweep':>9} | {'orphan':>6} | load"
)


def line(row: dict[str, Any]) -> str:
    move, idle, busy = row["per_move"], row["per_idle_table_second"], row["per_busy_table_second"]
    orphan = row.get("per_orphan_claimed", {}).get("commands")
    return (
        f"{row['tables']:>7} {row['replicas']:>4} | {move['commands']:>8.2f} "
        f"{move['sent_commands']:>6.2f} {move['redis_cpu_us']:>5.0f} | "
        f"{idle['commands']:>6.2f} {busy['commands']:>6.3f} | "
        f"{row['per_sweep']['commands']:>5.1f} {row['old_sweep_commands']:>9} | "
        f"{'-' if orphan is None else f'{orphan:.2f}':>6} | {row['load_average']}"
    )


def main() -> None:
    print(
        "Redis commands (INFO commandstats, scripts' own commands included; '(sent)': the\n"
        "ones the client sent) per move, per idle and per busy table per second, per sweep\n"
        f"(old: the sweep before the lease index), per orphan claimed; 'us': redis-server\n"
        f"CPU per move. LEASE_MS {DEFAULTS.lease_ms}, SWEEP_MS {DEFAULTS.sweep_ms}.\n"
    )
    print(HEADER)
    rows = asyncio.run(bench())
    report = {
        "bench": "fleet_costs",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "lease_ms": DEFAULTS.lease_ms,
        "sweep_ms": DEFAULTS.sweep_ms,
        "renew_round_s": ROUND_S,
        "cpus": os.cpu_count(),
        "note": "loopback, one redis-server, the machine shared with other work",
        "rows": rows,
    }
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nwritten to {args.json}")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--tables", type=_ints, default=[1_000, 10_000, 50_000])
parser.add_argument("--replicas", type=_ints, default=[1, 4, 16])
parser.add_argument("--moves", type=int, default=5_000)
parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "fleet_costs.json"))
args = parser.parse_args()

if __name__ == "__main__":
    main()
