"""docs/capacity.md, derived from the benchmarks' JSON: pods, cores and Redis shards.

    python3 scripts/capacity.py            # writes docs/capacity.md
    python3 scripts/capacity.py --check    # fails if docs/capacity.md is not what it gives

Reads bench/results/ (written by the benchmarks themselves):

- ``load_processes.json``: ``bench/load.py --stack processes --json``, a process per
  service on Redis: CPU per move of each service; memory per connection is the
  largest of every ``load_*.json`` there (a gateway holds more per connection when
  it is overloaded and its queues fill: the limit has to hold that too);
- ``fleet_costs.json``: ``bench/fleet_costs.py``: Redis commands (and Redis CPU) per
  move, per live table per second and per sweep;
- ``takeover.json``: ``bench/takeover.py``: SIGKILL to the next accepted move.

Every number in docs/capacity.md comes from those files and the few design choices
below (``DESIGN``); ``sizing()`` is also what k8s/ must request
(tests/deploy/test_capacity.py checks it).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "capacity.md"

DESIGN = {
    "cpu_target": 0.7,  # a pod (one Python event loop, or Redis's one thread) runs at most this
    "gateway_memory_limit_mb": 1024,  # the most memory a gateway pod is given
    "gateway_memory_headroom": 0.8,  # connections fill at most this much of the limit
    "humans_per_table": 1,  # as measured: a human against bots (the most tables per player)
    "seats": 2,
    "players": (100_000, 1_000_000),
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text())
    return data


@dataclass(frozen=True)
class Measured:
    moves_per_player_s: float  # human moves a second per connected player
    cpu_ms_per_move: dict[str, float]  # by service, per human move (its bots' work included)
    kb_per_connection: float  # the gateway's RSS per connected player
    gateway_base_mb: float  # the gateway's RSS with nobody connected
    matchmaker_cores_per_player: float
    redis_cpu_ms_per_move_measured: float  # Redis in the load run, all its work per move
    redis_commands_per_append: float
    redis_commands_per_table_s: float  # an idle table's lease renewal and index note
    redis_commands_per_sweep: float
    redis_us_per_command: float
    index_us_per_table_s: float  # the lease index's share: one shard's work per table
    takeover_p99_s: float
    takeover_max_s: float
    load_runs: str  # when and under what load the figures were taken

    @property
    def appends_per_move(self) -> float:
        """Table moves per human move: the bots at the table move as often as the human."""
        return DESIGN["seats"] / DESIGN["humans_per_table"]  # type: ignore[no-any-return]


def measured() -> Measured:
    whole, fleet, takeover = (
        load("load_processes.json"),
        load("fleet_costs.json"),
        load("takeover.json"),
    )
    run = whole["stack"]
    moves, seconds = run["moves"], run["duration_s"]
    cores = run["server_cpu_cores_by_process"]
    by_service: dict[str, float] = {}
    for process, used in cores.items():
        service = "table" if process.startswith("table") else process
        by_service[service] = by_service.get(service, 0.0) + used * seconds / moves * 1000
    rss = run["server_rss_mb_by_process"]["gateway"]
    rows = fleet["rows"]
    per_command = [
        r[k]["redis_cpu_us"] / r[k]["commands"]
        for r in rows
        for k in ("per_move", "per_idle_table_second")
    ]
    return Measured(
        moves_per_player_s=moves / seconds / run["connected_at_start"],
        cpu_ms_per_move={k: v for k, v in sorted(by_service.items()) if k != "redis"},
        kb_per_connection=max(
            json.loads(path.read_text())["stack"]["server_kb_per_client_by_process"]["gateway"]
            for path in sorted(RESULTS.glob("load_*.json"))
        ),
        gateway_base_mb=rss[0],
        matchmaker_cores_per_player=cores["matchmaker"] / run["connected_at_start"],
        redis_cpu_ms_per_move_measured=by_service["redis"],
        redis_commands_per_append=max(r["per_move"]["commands"] for r in rows),
        redis_commands_per_table_s=max(r["per_idle_table_second"]["commands"] for r in rows),
        redis_commands_per_sweep=max(r["per_sweep"]["commands"] for r in rows),
        redis_us_per_command=statistics.median(per_command),
        index_us_per_table_s=statistics.median(
            r["per_busy_table_second"]["redis_cpu_us"] for r in rows
        ),
        takeover_p99_s=takeover["moved_s"]["p99"],
        takeover_max_s=takeover["moved_s"]["max"],
        load_runs=(
            f"load averages: the load run {whole['load_average_before'][0]} before and "
            f"{whole['load_average_after'][0]} after, the fleet costs run "
            f"{fleet['rows'][0]['load_average'][0]} to {fleet['rows'][-1]['load_average'][0]}, "
            f"the takeover runs {takeover['load_averages'][0][0]} to "
            f"{takeover['load_averages'][-1][0]}"
        ),
    )


def _round_up(value: float, step: float) -> float:
    return math.ceil(value / step - 1e-9) * step


def sizing(m: Measured | None = None) -> dict[str, Any]:
    """Per pod: what k8s/base must set, from the measurements. A gateway takes as many
    players as both its CPU (one event loop at the target) and its largest memory limit
    allow; its memory limit then holds them with the headroom to spare."""
    m = m or measured()
    target = DESIGN["cpu_target"]
    most_mb = DESIGN["gateway_memory_limit_mb"] * DESIGN["gateway_memory_headroom"]
    by_memory = (most_mb - m.gateway_base_mb) * 1024 / m.kb_per_connection
    by_cpu = target / (m.moves_per_player_s * m.cpu_ms_per_move["gateway"] / 1000)
    connections = int(min(by_memory, by_cpu) // 500 * 500)
    gateway_cores = connections * m.moves_per_player_s * m.cpu_ms_per_move["gateway"] / 1000
    gateway_memory = m.gateway_base_mb + connections * m.kb_per_connection / 1024
    limit = _round_up(gateway_memory / DESIGN["gateway_memory_headroom"], 128)
    return {
        "gateway": {
            "max_connections": connections,
            "bound_by": "CPU" if by_cpu < by_memory else "memory",
            "cpu_request_m": int(_round_up(gateway_cores * 1000, 100)),
            "memory_request_mi": int(_round_up(gateway_memory, 64)),
            "memory_limit_mi": int(limit),
            "hpa_connections": int(connections * target),
        },
        "table": {"cpu_request_m": int(target * 1000)},
    }


def plan(players: int, m: Measured) -> dict[str, Any]:
    """Pods, cores and Redis shards for ``players`` connected at once."""
    target = DESIGN["cpu_target"]
    size = sizing(m)["gateway"]
    moves = players * m.moves_per_player_s
    tables = players / DESIGN["humans_per_table"]
    cores = {k: moves * ms / 1000 for k, ms in m.cpu_ms_per_move.items()}
    gateway_pods = max(math.ceil(players / size["max_connections"]), 2)
    pods = {
        "gateway": max(gateway_pods, math.ceil(cores["gateway"] / (size["cpu_request_m"] / 1000))),
        "table": max(math.ceil(cores["table"] / target), 2),
        "bot": max(math.ceil(cores.get("bot", 0.0) / target), 2),
        "matchmaker": max(math.ceil(cores.get("matchmaker", 0.0) / target), 2),
    }
    commands = (
        moves * m.appends_per_move * m.redis_commands_per_append
        + tables * m.redis_commands_per_table_s
        + pods["table"] * m.redis_commands_per_sweep / 0.25
    )
    redis_cores = players * redis_us_per_player_s(m) / 1e6
    index_cores = tables * m.index_us_per_table_s / 1e6
    return {
        "players": players,
        "moves_per_s": moves,
        "tables": tables,
        "cores": cores,
        "pods": pods,
        "redis_commands_per_s": commands,
        "redis_cores": redis_cores,
        "redis_shards": max(1, math.ceil(redis_cores / target)),
        "lease_index_shards": max(1, math.ceil(index_cores / (target / 4))),
        "requested_cores": (
            pods["gateway"] * size["cpu_request_m"] / 1000
            + (pods["table"] + pods["bot"] + pods["matchmaker"]) * target
        ),
    }


def redis_us_per_player_s(m: Measured) -> float:
    """Redis CPU a connected player costs a second: the larger of the model (commands
    per move and per table at the measured cost of a command) and the whole load run's
    Redis CPU per move (which holds the matchmaker, the registry and contention too)."""
    per_player_commands = (
        m.moves_per_player_s * m.appends_per_move * m.redis_commands_per_append
        + m.redis_commands_per_table_s / DESIGN["humans_per_table"]
    )
    modelled = per_player_commands * m.redis_us_per_command
    seen = m.moves_per_player_s * m.redis_cpu_ms_per_move_measured * 1000
    return max(modelled, seen)


def per_pod(m: Measured) -> list[tuple[float, str]]:
    """Players one pod carries (these scale by the pod count)."""
    target = DESIGN["cpu_target"]
    return [
        (
            target / (m.moves_per_player_s * m.cpu_ms_per_move["table"] / 1000),
            "a table replica (one event loop at 70 %)",
        ),
        (
            float(sizing(m)["gateway"]["max_connections"]),
            f"a gateway pod (`MAX_CONNECTIONS`, bound by its {sizing(m)['gateway']['bound_by']})",
        ),
    ]


def walls(m: Measured) -> list[tuple[float, str]]:
    """Players each single, unsharded thing carries before it is full, smallest first."""
    target = DESIGN["cpu_target"]
    out = [
        (target * 1e6 / redis_us_per_player_s(m), "one Redis primary (one thread), no Cluster"),
        (
            target / 4 * 1e6 / (m.index_us_per_table_s / DESIGN["humans_per_table"]),
            "one lease index shard (LEASE_INDEX_SHARDS=1) at a quarter of a primary",
        ),
    ]
    return sorted(out)


def _n(x: float) -> str:
    return f"{x:,.0f}"


def render(m: Measured) -> str:
    size = sizing(m)
    gw = size["gateway"]
    plans = [plan(n, m) for n in DESIGN["players"]]  # type: ignore[attr-defined]
    lines = [
        "# Capacity",
        "",
        "<!-- Written by scripts/capacity.py from bench/results/*.json: do not edit by hand;",
        "     run the benchmarks again, then `python3 scripts/capacity.py`. -->",
        "",
        "How many pods, cores and Redis shards a number of players needs, and what fills",
        "up first. Every figure below is computed by `scripts/capacity.py` from the",
        "benchmarks' own JSON in `bench/results/` (`bench/load.py --stack processes`,",
        "`bench/fleet_costs.py`, `bench/takeover.py`); `tests/deploy/test_capacity.py`",
        "fails when this page or the requests in `k8s/base/` no longer follow from them.",
        "",
        "## What was measured",
        "",
        f"Taken on a 2-core machine, at times shared with other work ({m.load_runs}).",
        "CPU time per move moves less with the machine's load than latency does (the same",
        "load run gave within 2% on a quiet and on a busy machine); command counts are",
        "Redis's own (`INFO commandstats`) and exact.",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    figures = [
        (
            "human moves per connected player (the benchmark's pace)",
            f"{m.moves_per_player_s:.3f} /s",
        ),
        *(
            (f"{service} CPU per human move (its bots' moves included)", f"{ms:.3f} ms")
            for service, ms in m.cpu_ms_per_move.items()
        ),
        (
            "Redis CPU per human move, all of Redis's work in that run",
            f"{m.redis_cpu_ms_per_move_measured:.3f} ms",
        ),
        (
            "gateway memory per connected player (the most in any load run)",
            f"{m.kb_per_connection:.0f} KB",
        ),
        ("gateway memory with nobody connected", f"{m.gateway_base_mb:.0f} MB"),
        ("Redis commands per table move (an append)", f"{m.redis_commands_per_append:.2f}"),
        ("Redis commands per idle live table per second", f"{m.redis_commands_per_table_s:.2f}"),
        ("Redis commands per sweep with nothing expired", f"{m.redis_commands_per_sweep:.2f}"),
        ("Redis CPU per command (median, fleet benchmark)", f"{m.redis_us_per_command:.2f} µs"),
        ("lease index CPU per live table per second", f"{m.index_us_per_table_s:.3f} µs"),
        (
            "SIGKILL of a replica to the next accepted move on its tables",
            f"p99 {m.takeover_p99_s:.2f} s, max {m.takeover_max_s:.2f} s",
        ),
    ]
    lines += [f"| {what} | {value} |" for what, value in figures]
    lines += [
        "",
        "The per-move and per-table Redis figures are flat from 1,000 to 50,000 live tables",
        "and from 1 to 16 replicas (`bench/results/fleet_costs.json`): a replica's",
        "background work follows its own tables (docs/tables.md, *Leases and failover*).",
        "",
        "## Per pod (what k8s/base requests)",
        "",
        f"- **gateway**: `MAX_CONNECTIONS` {gw['max_connections']:,}: as many players as its",
        f"  one event loop carries at {DESIGN['cpu_target']:.0%} of a core and its memory holds",
        f"  (bound here by its {gw['bound_by']}); CPU request {gw['cpu_request_m']}m (those",
        f"  players' moves), memory request {gw['memory_request_mi']} Mi and limit",
        f"  {gw['memory_limit_mi']} Mi (they fill at most",
        f"  {DESIGN['gateway_memory_headroom']:.0%} of it); the autoscaler holds",
        f"  {gw['hpa_connections']:,} connections a pod (CPU 70 % as the fallback).",
        f"- **table**: CPU request {size['table']['cpu_request_m']}m: a replica is one event loop,",
        f"  planned at {DESIGN['cpu_target']:.0%} of a core; its limit (2 cores) is above what",
        "  one process uses, so the tail is never throttled.",
        "",
        "## For 100,000 and 1,000,000 players",
        "",
        "Players as the benchmark plays them: one human per table against a bot",
        f"({DESIGN['seats']} seats, the most tables per player), every pod at most",
        f"{DESIGN['cpu_target']:.0%} busy.",
        "",
        "| | " + " | ".join(_n(p["players"]) + " players" for p in plans) + " |",
        "|---|" + "---|" * len(plans),
        "| human moves per second | " + " | ".join(_n(p["moves_per_s"]) for p in plans) + " |",
        "| live tables | " + " | ".join(_n(p["tables"]) for p in plans) + " |",
    ]
    for service in ("gateway", "table", "bot", "matchmaker"):
        lines.append(
            f"| {service} pods (cores used) | "
            + " | ".join(
                f"{p['pods'][service]:,} ({p['cores'].get(service, 0.0):.1f})" for p in plans
            )
            + " |"
        )
    lines += [
        "| Redis commands per second | "
        + " | ".join(_n(p["redis_commands_per_s"]) for p in plans)
        + " |",
        "| Redis cores (primaries' CPU) | "
        + " | ".join(f"{p['redis_cores']:.1f}" for p in plans)
        + " |",
        "| Redis Cluster primaries (shards) | "
        + " | ".join(str(p["redis_shards"]) for p in plans)
        + " |",
        "| `LEASE_INDEX_SHARDS` | "
        + " | ".join(str(p["lease_index_shards"]) for p in plans)
        + " |",
        "| cores requested in all (without Redis) | "
        + " | ".join(f"{p['requested_cores']:.0f}" for p in plans)
        + " |",
        "",
        "Each Redis primary has a replica (Sentinel or Cluster) on top of the shards above.",
        "`LEASE_INDEX_SHARDS` is chosen so that one index shard takes at most a quarter of",
        "a primary's budget; set it, the same on every table replica, before the fleet",
        "grows (changing it moves the index: do it with the tables drained).",
        "",
        "## Where the first wall is",
        "",
        "Pods scale out by count; what one pod carries only sets how many:",
        "",
        "| players | one pod |",
        "|---|---|",
    ]
    for players, what in per_pod(m):
        lines.append(f"| {_n(players)} | {what} |")
    lines += [
        "",
        "What cannot grow by adding pods, in players before it is full (smallest first):",
        "",
        "| players | what fills up |",
        "|---|---|",
    ]
    for players, what in walls(m):
        lines.append(f"| {_n(players)} | {what} |")
    first_players, first = walls(m)[0]
    lines += [
        "",
        f"The first wall is **{first}**, at about {_n(first_players)} players: past it",
        "Redis has to become a Cluster (`REDIS_URL=redis+cluster://…`, docs/deploy.md)",
        "with the primaries above, and `LEASE_INDEX_SHARDS` raised with it, before the",
        "index shard is the next. A Redis primary's CPU here is the larger of two",
        "figures: the commands the model counts at the measured cost of a command, and",
        "all of Redis's CPU per move in the load run (matchmaker, registry and the",
        "machine's contention included).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/capacity.md is stale")
    args = parser.parse_args()
    text = render(measured())
    if args.check:
        if DOC.read_text() != text:
            sys.exit("docs/capacity.md is not what scripts/capacity.py gives: run it")
        return
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
