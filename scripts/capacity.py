"""docs/capacity.md, derived from the benchmarks' JSON: pods, cores, Redis shards and memory,
and the archive's disk.

    python3 scripts/capacity.py            # writes docs/capacity.md
    python3 scripts/capacity.py --check    # fails if docs/capacity.md is not what it gives

Reads bench/results/ (written by the benchmarks themselves):

- ``load_processes.json``: ``bench/load.py --stack processes --json``, a process per
  service on Redis: CPU per move of each service; memory per connection is the
  largest of every ``load_*.json`` there (a gateway holds more per connection when
  it is overloaded and its queues fill: the limit has to hold that too);
- ``fleet_costs.json``: ``bench/fleet_costs.py``: Redis commands (and Redis CPU) per
  move, per live table per second and per sweep;
- ``takeover.json``: ``bench/takeover.py``: SIGKILL to the next accepted move;
- ``record_bytes.json``: ``bench/record_bytes.py``: Redis bytes per live table, per
  finished table waiting for the archive, per lease index entry and per matchmaker record;
  the moves in a match; the archive's bytes per record (PostgreSQL and SQLite).

Every number in docs/capacity.md comes from those files and the few design choices
(``DESIGN``); the model is scripts/capacity_model.py, this script the page it writes;
``sizing()`` is also what k8s/ must request
(tests/deploy/test_capacity.py checks it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path

from capacity_model import (
    DESIGN,
    DOC,
    ROOT,
    Measured,
    lease_index_setting,
    load,
    measured,
    per_pod,
    plan,
    prod_fleet,
    sizing,
    sweep_cost,
    walls,
)

__all__ = ["DESIGN", "lease_index_setting", "measured", "plan", "prod_fleet", "render", "sizing"]


def _n(x: float) -> str:
    return f"{x:,.0f}"


def render(m: Measured) -> str:
    size = sizing(m)
    gw = size["gateway"]
    plans = [plan(n, m) for n in DESIGN["players"]]  # type: ignore[attr-defined]
    fleet = prod_fleet(m)
    prod = fleet["table_replicas"]
    lines = [
        "# Capacity",
        "",
        "<!-- Written by scripts/capacity.py from bench/results/*.json: do not edit by hand;",
        "     run the benchmarks again, then `python3 scripts/capacity.py`. -->",
        "",
        "How many pods, cores, Redis shards and how much Redis memory and archive disk a",
        "number of players needs, and what fills up first. Every figure below is computed by",
        "`scripts/capacity.py` from the benchmarks' own JSON in `bench/results/`",
        "(`bench/load.py --stack processes`, `bench/fleet_costs.py`, `bench/takeover.py`,",
        "`bench/record_bytes.py`); `tests/deploy/test_capacity.py` fails when this page, the",
        "requests in `k8s/base/` (gateway, table, bot and matchmaker), the prod overlay's pods",
        "or its `LEASE_INDEX_SHARDS` no longer follow from them.",
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
        f"  {gw['hpa_connections']:,} connections a pod, or without the connections metric",
        f"  {gw['hpa_cpu_utilization']}% of the CPU request (the CPU of as many players), so",
        "  a lost pod's players find room on the others while pods are added.",
        f"- **table**, **bot**, **matchmaker**: CPU request {size['table']['cpu_request_m']}m"
        " each: a pod is one",
        f"  event loop, planned at {DESIGN['cpu_target']:.0%} of a core; the bot's autoscaler"
        f" holds each pod at {size['bot']['hpa_cpu_m']}m.",
        "",
        f"Every CPU limit is {DESIGN['cpu_limit_cores']} cores, above what one process uses,"
        " so a busy pod's tail",
        "is never throttled; the limits only stop a runaway.",
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
        "| Redis primaries for its CPU | "
        + " | ".join(str(p["redis_shards_by_cpu"]) for p in plans)
        + " |",
        f"| Redis memory, the archive down {_hours(DESIGN['archive_outage_s'])} (below) | "
        + " | ".join(f"{p['memory']['total']:,.1f} GiB" for p in plans)
        + " |",
        "| Redis primaries for its memory | "
        + " | ".join(str(p["redis_shards_by_memory"]) for p in plans)
        + " |",
        "| **Redis Cluster primaries (shards)**: the larger | "
        + " | ".join(f"**{p['redis_shards']}** ({p['redis_bound_by']})" for p in plans)
        + " |",
        "| lease index shards needed | "
        + " | ".join(str(p["lease_index_shards"]) for p in plans)
        + " |",
        "| matches finished a day | "
        + " | ".join(_n(p["archive"]["matches_per_day"]) for p in plans)
        + " |",
        "| archive growth | "
        + " | ".join(f"{p['archive']['gib_per_day']:,.1f} GiB a day" for p in plans)
        + " |",
        "| cores requested in all (without Redis) | "
        + " | ".join(f"{p['requested_cores']:.0f}" for p in plans)
        + " |",
        "",
        "Each Redis primary has a replica (Sentinel or Cluster) on top of the shards above,",
        "with as much memory. An index shard is one sorted set (one slot, so one primary's",
        "thread): `LEASE_INDEX_SHARDS` is chosen so that one takes at most a quarter of a",
        "primary's CPU budget; set it, the same on every table replica, before the fleet",
        "grows (changing it moves the index: do it with the tables drained). The prod",
        f"overlay sets **{lease_index_setting(m)}**, what {_n(max(DESIGN['players']))} players"  # type: ignore[call-overload]
        " need: more shards than a",
        "fleet needs cost each replica one small call per shard a sweep, "
        f"{sweep_cost(prod, lease_index_setting(m), m)[0]:,.0f} commands a",
        f"second with its {prod} table replicas "
        f"({sweep_cost(prod, lease_index_setting(m), m)[1] * 1000:.1f} ms of a Redis core a",
        "second), and at",
        f"{_n(plans[-1]['players'])} players "
        + f"{sweep_cost(plans[-1]['pods']['table'], lease_index_setting(m), m)[0]:,.0f}"
        + " commands a second over the whole cluster (counted above).",
        "",
        "## The prod overlay",
        "",
        f"`k8s/overlays/prod` runs the pods planned above for {_n(fleet['players'])} players:",
        "",
        "| service | pods |",
        "|---|---|",
        f"| gateway | 2 to {fleet['gateway_max_replicas']} (its autoscaler) |",
        f"| table | {fleet['table_replicas']} |",
        f"| bot | 2 to {fleet['bot_max_replicas']} (its autoscaler) |",
        f"| matchmaker | {fleet['matchmaker_replicas']} |",
        "",
        f"At {_n(fleet['players'])} players every pod is at its target; past them the"
        " autoscalers stay at",
        "their ceilings and the pods run hotter, until at about "
        f"{_n(fleet['players'] / DESIGN['cpu_target'])} players the table",  # type: ignore[operator]
        "replicas' event loops are full and the gateways refuse new connections (their",
        f"`MAX_CONNECTIONS`, {_n(fleet['gateway_max_replicas'] * gw['max_connections'])} in all)."
        " For more players, raise `prod_players` in",
        "`scripts/capacity_model.py`, run `scripts/capacity.py` and take the pods (and Redis)",
        "it plans.",
        "",
        *memory_section(m, plans),
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


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g} h"


def _kib(value: float) -> str:
    return f"{value / 1024:.1f} KiB"


ARCHIVES = {
    "postgresql": "PostgreSQL (its growth per record: heap, TOAST, indexes, free space)",
    "sqlite": "SQLite (the file's growth per record: rows, index, pages)",
}


def memory_section(m: Measured, plans: list[dict[str, Any]]) -> list[str]:
    """docs/capacity.md's "Memory and disk": what a match keeps where, Redis's memory and
    how long the archive may be down, the archive's growth."""
    outage = _hours(DESIGN["archive_outage_s"])
    head = "| | " + " | ".join(_n(p["players"]) + " players" for p in plans) + " |"
    rule = "|---|" + "---|" * len(plans)

    def row(what: str, cell: Any) -> str:
        return f"| {what} | " + " | ".join(cell(p) for p in plans) + " |"

    figures = [
        (
            "the human's moves in a match (its bot as many; both `easy`, as the load run plays)",
            f"{m.human_moves_per_match:.0f}",
        ),
        (
            "matches a connected player finishes a day, at the benchmark's pace",
            f"{m.matches_per_player_s * 86_400:.1f}",
        ),
        (
            "a live table in Redis (its keys, `MEMORY USAGE`), averaged over its match",
            _kib(m.live_table_bytes),
        ),
        (
            "a finished table waiting for the archive (the same keys, at the end)",
            _kib(m.finished_table_bytes),
        ),
        (
            "Redis's `used_memory` over `MEMORY USAGE` (expiries, allocator), applied to all",
            f"{m.redis_overhead:.2f} times",
        ),
        ("the lease index, per live table", f"{m.lease_index_bytes:.0f} B"),
        (
            "the matchmaker's record, room code and seat token of a started table",
            _kib(m.matchmaker_bytes),
        ),
        (
            "a record's log, zlib-compressed (what the archive stores)",
            f"{m.record_zlib_bytes:,.0f} B",
        ),
        *(
            (f"a record in {ARCHIVES[name]}", f"{value:,.0f} B")
            for name, value in sorted(m.archive_bytes.items(), key=lambda kv: kv[0] != "postgresql")
        ),
    ]
    lines = [
        "## Memory and disk",
        "",
        "Redis holds every live table, each finished table until the archive has its record",
        f"(within {DESIGN['archive_lag_s']} s; all the while the archive is down: the",
        "*backlog*), and the matchmaker's record of each started table for",
        f"{_hours(DESIGN['matchmaker_ttl_s'])} (`DONE_TTL_MS`, `TOKEN_TTL_MS`). Every Redis of the",
        "project runs `noeviction`: a full Redis refuses every write, every move answers",
        "`unavailable`",
        "(`store_full`, docs/deploy.md). So its memory is sized like its CPU, from",
        "`bench/record_bytes.py` (real matches played to the end by the project's table",
        "service and bots on `redis-server`, their records put through `services/archive`",
        "into PostgreSQL and SQLite):",
        "",
        "| figure | value |",
        "|---|---|",
        *(f"| {what} | {value} |" for what, value in figures),
        "",
        "### Redis memory",
        "",
        f"In GiB, the archive down {outage} (the design point), every figure times the",
        "`used_memory` ratio above:",
        "",
        head,
        rule,
        row("live tables (and their lease index entries)", lambda p: f"{p['memory']['live']:,.1f}"),
        row(
            f"finished tables on their way to the archive (≤ {DESIGN['archive_lag_s']} s)",
            lambda p: f"{p['memory']['on_the_way']:,.2f}",
        ),
        row(
            f"the matchmaker's records of the last {_hours(DESIGN['matchmaker_ttl_s'])}",
            lambda p: f"{p['memory']['matchmaker']:,.1f}",
        ),
        row(
            f"the backlog: finished tables of {outage} without the archive",
            lambda p: f"{p['memory']['backlog']:,.1f}",
        ),
        row("**in all**", lambda p: f"**{p['memory']['total']:,.1f}**"),
        row(
            f"primaries for it ({DESIGN['redis_maxmemory_gib']} GiB `maxmemory`, filled to "
            f"{DESIGN['redis_memory_fill']:.0%})",
            lambda p: str(p["redis_shards_by_memory"]),
        ),
        row("primaries for Redis's CPU", lambda p: str(p["redis_shards_by_cpu"])),
        row(
            "**Redis primaries**: the larger",
            lambda p: f"**{p['redis_shards']}** (bound by {p['redis_bound_by']})",
        ),
        "",
        "**The rule**: Redis gets the larger of the primaries its CPU needs (commands at",
        f"{DESIGN['cpu_target']:.0%} of one thread each) and the primaries its memory needs",
        f"(live tables, the matchmaker's {_hours(DESIGN['matchmaker_ttl_s'])} of records and "
        f"{outage} of backlog,",
        f"within {DESIGN['redis_memory_fill']:.0%} of `maxmemory` each); a primary's",
        f"`maxmemory` is {DESIGN['redis_maxmemory_gib']} GiB here, 60 to 70 % of its node (room",
        "for the AOF rewrite's fork: docs/deploy.md). A Cluster spreads both by slot: a",
        "table's keys share its hash tag, so tables, backlog and records fall evenly on the",
        "primaries.",
        "",
        "### How long the archive may be down",
        "",
        "While the archive is down, finished tables stay in Redis: the backlog grows by",
        "every match finished, and nothing else changes. With Redis sized as above:",
        "",
        head,
        rule,
        row("the backlog grows by", lambda p: f"{p['outage_h']['gib_per_h']:,.1f} GiB an hour"),
        row(
            f"the archive down, Redis reaches {DESIGN['redis_memory_fill']:.0%} of `maxmemory` "
            "(the alert) after",
            lambda p: f"{p['outage_h']['alert']:,.1f} h",
        ),
        row(
            "the archive down, Redis is full (`store_full`: every move refused) after",
            lambda p: f"{p['outage_h']['full']:,.1f} h",
        ),
        row(
            f"the backlog at its bound, `FINISHED_TTL_MS` ({_hours(DESIGN['finished_ttl_s'])})",
            lambda p: f"{p['outage_h']['most_gib']:,.0f} GiB",
        ),
        "",
        "",
        "An archive outage longer than that needs more Redis memory before it is over (a",
        "primary more, or a larger `maxmemory`), or the archive back; the memory alert",
        "(docs/deploy.md, *When Redis is full*) fires with the hours to the right of it",
        "still to go. A finished table waits at most `FINISHED_TTL_MS`: past it its keys",
        "expire and its record never reaches the archive (it is still in the `match_record`",
        "log line), so that is the backlog's bound, and the outage Redis is never sized for.",
        "",
        "### The archive's disk",
        "",
        head,
        rule,
        row("matches finished a day", lambda p: _n(p["archive"]["matches_per_day"])),
        row(
            f"the archive grows by ({m.archive_record_bytes:,.0f} B a record)",
            lambda p: f"{p['archive']['gib_per_day']:,.1f} GiB a day",
        ),
        row("in a year", lambda p: f"{p['archive']['tib_per_year']:,.2f} TiB"),
        "",
        "Records are kept for good by default (`RECORD_RETENTION_MS` 0): the archive grows",
        "by the year's figure each year. With a retention it levels off at the retention",
        "times the daily figure. Backups add their own copies: each daily dump is about",
        "the size of the archive (the logs are already compressed; docs/archive.md).",
        "",
        *_profiles(),
    ]
    return lines


GIB_ = 2**30
BACKENDS = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}


def _profiles() -> list[str]:
    """Bytes per profile and per history entry (``profile_bytes.json``, bench/profile_bytes.py)."""
    got = load("profile_bytes.json")
    backends = [b for b in ("postgresql", "sqlite") if b in got]
    cell = " | ".join
    full = {b: got[b]["profile_after"] + 50 * got[b]["history_entry"] for b in backends}
    return [
        "### Profiles",
        "",
        f"`bench/profile_bytes.py`: {got['profiles']:,} profiles made through the profile store,",
        f"then {got['profiles'] * got['matches_per_profile'] // 2:,} rated two-player results",
        "applied (0 to 2 bots beside); each table's size with its indexes (PostgreSQL's",
        "`pg_total_relation_size` after VACUUM, SQLite's `dbstat` pages) over the rows made.",
        "",
        "| bytes | " + cell(BACKENDS[b] for b in backends) + " |",
        "|---|" + "---|" * len(backends),
        "| a new profile, its key included | "
        + cell(f"{got[b]['fresh_profile']:,.0f} B" for b in backends)
        + " |",
        f"| a profile after {got['matches_per_profile']} matches (its stats grown) | "
        + cell(f"{got[b]['profile_after']:,.0f} B" for b in backends)
        + " |",
        "| a history entry | " + cell(f"{got[b]['history_entry']:,.0f} B" for b in backends) + " |",
        "| a match's `applied_results` row | "
        + cell(f"{got[b]['applied_result']:,.0f} B" for b in backends)
        + " |",
        "| a profile with its full history (50 entries) | "
        + cell(f"{full[b] / 1024:,.1f} KiB" for b in backends)
        + " |",
        "",
        "A profile's history is capped at 50 entries, so a million profiles that have each",
        f"played 50 matches take about {full[backends[0]] * 1e6 / GIB_:,.1f} GiB in",
        f"{BACKENDS[backends[0]]}; `applied_results` grows by one row a match applied.",
        "",
    ]


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
