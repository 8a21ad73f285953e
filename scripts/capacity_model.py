"""The capacity model: the benchmarks' figures (bench/results/*.json) and the design choices
(``DESIGN``) turned into pods, cores, Redis primaries and memory, and the archive's disk.
scripts/capacity.py writes docs/capacity.md from it; tests/deploy/test_capacity.py holds
k8s/ to ``sizing()`` and ``lease_index_setting()``. What each bench file holds:
scripts/capacity.py's docstring.
"""

from __future__ import annotations

import json
import math
import statistics
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
    # Memory and disk (docs/capacity.md, "Memory and disk"):
    "redis_maxmemory_gib": 16,  # one primary's maxmemory: 60-70 % of its node (the AOF fork)
    "redis_memory_fill": 0.8,  # planned use at most this much of maxmemory (the 80 % alert)
    "archive_outage_s": 3_600,  # the design point: the archive down this long, Redis holds on
    "archive_lag_s": 60,  # a finished table leaves Redis within this, the archive up
    "matchmaker_ttl_s": 86_400,  # DONE_TTL_MS, TOKEN_TTL_MS: its record of a started table
    "finished_ttl_s": 86_400,  # FINISHED_TTL_MS: the longest a finished table waits in Redis
    "sweep_s": 0.1,  # SWEEP_MS: each replica's sweep, one call per lease index shard
    "cpu_limit_cores": 2,  # every rackem container's CPU limit: above what one process uses
    "prod_players": 100_000,  # k8s/overlays/prod's fleet: the pods the plan gives for these
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
    human_moves_per_match: float  # one human's moves in a match at the benchmark's levels
    live_table_bytes: float  # a live table's keys, averaged over its match (MEMORY USAGE)
    finished_table_bytes: float  # a finished table's keys, waiting for the archive
    redis_overhead: float  # used_memory over MEMORY USAGE (expiries, allocator): at least 1
    lease_index_bytes: float  # one live table's entry in the lease index
    matchmaker_bytes: float  # the matchmaker's record, code and token of a started table
    record_zlib_bytes: float  # a record's log, compressed as stored
    archive_bytes: dict[str, float]  # per record stored, rows, pages and indexes, by backend
    load_runs: str  # when and under what load the figures were taken

    @property
    def appends_per_move(self) -> float:
        """Table moves per human move: the bots at the table move as often as the human."""
        return DESIGN["seats"] / DESIGN["humans_per_table"]  # type: ignore[no-any-return]

    @property
    def matches_per_player_s(self) -> float:
        """Matches a connected player finishes a second, at the benchmark's pace."""
        humans: int = DESIGN["humans_per_table"]  # type: ignore[assignment]
        return self.moves_per_player_s / (self.human_moves_per_match * humans)

    @property
    def archive_record_bytes(self) -> float:
        """Bytes a record takes in the deployed archive (PostgreSQL; SQLite without one)."""
        return self.archive_bytes.get("postgresql", self.archive_bytes["sqlite"])


def measured() -> Measured:
    whole, fleet, takeover, stored = (
        load("load_processes.json"),
        load("fleet_costs.json"),
        load("takeover.json"),
        load("record_bytes.json"),
    )
    red = stored["redis"]
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
        human_moves_per_match=red["human_moves_per_match"],
        live_table_bytes=red["live_table_bytes_mean"],
        finished_table_bytes=red["finished_table_bytes"],
        redis_overhead=max(
            1.0, red["used_memory_per_finished_table"] / red["finished_table_bytes"]
        ),
        lease_index_bytes=red["lease_index_bytes_per_table"],
        matchmaker_bytes=red["matchmaker_bytes_per_started_table"],
        record_zlib_bytes=stored["record"]["zlib_bytes_mean"],
        archive_bytes={k: v["bytes_per_record"] for k, v in stored["archive"].items()},
        load_runs=(
            f"load averages: the load run {whole['load_average_before'][0]} before and "
            f"{whole['load_average_after'][0]} after, the fleet costs run "
            f"{fleet['rows'][0]['load_average'][0]} to {fleet['rows'][-1]['load_average'][0]}, "
            f"the takeover runs {takeover['load_averages'][0][0]} to "
            f"{takeover['load_averages'][-1][0]}, the bytes run "
            f"{red['load_average'][0][0]} to {red['load_average'][-1][0]}"
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
    # The table, bot and matchmaker: one event loop each, planned at the target; the bot's
    # autoscaler holds each pod there.
    one_loop = {"cpu_request_m": int(target * 1000), "cpu_limit": DESIGN["cpu_limit_cores"]}
    return {
        "gateway": {
            "max_connections": connections,
            "bound_by": "CPU" if by_cpu < by_memory else "memory",
            "cpu_request_m": int(_round_up(gateway_cores * 1000, 100)),
            "cpu_limit": DESIGN["cpu_limit_cores"],
            "memory_request_mi": int(_round_up(gateway_memory, 64)),
            "memory_limit_mi": int(limit),
            "hpa_connections": int(connections * target),
            # The CPU fallback's target, as a share of the request: the CPU of
            # ``hpa_connections`` players, so both metrics ask for the same pods.
            "hpa_cpu_utilization": round(100 * int(connections * target) / connections),
        },
        "table": dict(one_loop),
        "bot": {**one_loop, "hpa_cpu_m": int(target * 1000)},
        "matchmaker": dict(one_loop),
    }


def plan(players: int, m: Measured) -> dict[str, Any]:
    """Pods, cores and Redis shards for ``players`` connected at once."""
    target = DESIGN["cpu_target"]
    size = sizing(m)["gateway"]
    moves = players * m.moves_per_player_s
    tables = players / DESIGN["humans_per_table"]
    cores = {k: moves * ms / 1000 for k, ms in m.cpu_ms_per_move.items()}
    # Gateways as the autoscaler keeps them: ``hpa_connections`` a pod, the rest of
    # ``MAX_CONNECTIONS`` room for a lost pod's players while pods are added.
    gateway_pods = max(math.ceil(players / size["hpa_connections"]), 2)
    pods = {
        "gateway": max(gateway_pods, math.ceil(cores["gateway"] / (size["cpu_request_m"] / 1000))),
        "table": max(math.ceil(cores["table"] / target), 2),
        "bot": max(math.ceil(cores.get("bot", 0.0) / target), 2),
        "matchmaker": max(math.ceil(cores.get("matchmaker", 0.0) / target), 2),
    }
    index_shards = lease_index_shards(players, m)
    commands = (
        moves * m.appends_per_move * m.redis_commands_per_append
        + tables * m.redis_commands_per_table_s
        + sweep_cost(pods["table"], max(index_shards, lease_index_setting(m)), m)[0]
    )
    redis_cores = players * redis_us_per_player_s(m) / 1e6
    by_cpu = max(1, math.ceil(redis_cores / target))
    memory = redis_memory(players, m)
    return {
        "players": players,
        "moves_per_s": moves,
        "tables": tables,
        "cores": cores,
        "pods": pods,
        "redis_commands_per_s": commands,
        "redis_cores": redis_cores,
        "redis_shards_by_cpu": by_cpu,
        "redis_shards_by_memory": memory["primaries"],
        "redis_shards": max(by_cpu, memory["primaries"]),
        "redis_bound_by": "CPU" if by_cpu >= memory["primaries"] else "memory",
        "memory": memory,
        "outage_h": outage_hours(players, max(by_cpu, memory["primaries"]), m),
        "archive": archive_growth(players, m),
        "lease_index_shards": index_shards,
        "requested_cores": (
            pods["gateway"] * size["cpu_request_m"] / 1000
            + (pods["table"] + pods["bot"] + pods["matchmaker"]) * target
        ),
    }


def prod_fleet(m: Measured) -> dict[str, int]:
    """What k8s/overlays/prod runs: the plan's pods for ``prod_players``. The tables and
    matchmakers as fixed replicas, the gateways and bots as their autoscalers' ceilings
    (the plan's pods are what they reach at those players)."""
    players: int = DESIGN["prod_players"]  # type: ignore[assignment]
    pods = plan(players, m)["pods"]
    return {
        "players": players,
        "table_replicas": pods["table"],
        "matchmaker_replicas": pods["matchmaker"],
        "gateway_max_replicas": pods["gateway"],
        "bot_max_replicas": pods["bot"],
    }


def lease_index_shards(players: int, m: Measured) -> int:
    """Index shards so that one (one sorted set: one slot, one primary's thread) takes at
    most a quarter of a primary's CPU budget at ``players``."""
    index_cores = players / DESIGN["humans_per_table"] * m.index_us_per_table_s / 1e6
    return max(1, math.ceil(index_cores / (DESIGN["cpu_target"] / 4)))


def lease_index_setting(m: Measured) -> int:
    """``LEASE_INDEX_SHARDS`` for the prod overlay: the largest design point's. It cannot
    change without draining the tables, and a shard more costs each replica only one small
    call a sweep (``sweep_cost``), so it is set for the fleet's growth, not today's size."""
    return lease_index_shards(max(DESIGN["players"]), m)  # type: ignore[call-overload]


def sweep_cost(replicas: int, shards: int, m: Measured) -> tuple[float, float]:
    """Redis commands a second and Redis cores that ``replicas`` sweeping ``shards`` take
    with nothing expired."""
    commands = replicas * shards * m.redis_commands_per_sweep / DESIGN["sweep_s"]
    return commands, commands * m.redis_us_per_command / 1e6


GIB = 2**30


def _bytes_per_player(m: Measured) -> dict[str, float]:
    """Redis bytes one connected player keeps, by what (``backlog``: per second of an
    archive outage)."""
    per_s = m.matches_per_player_s
    tables_per_player = 1 / DESIGN["humans_per_table"]
    # A finished table waits with its keys and an entry in the pending index (a sorted set
    # as the lease index is: its entry costs as much).
    waiting = m.finished_table_bytes * m.redis_overhead + m.lease_index_bytes
    return {
        "live": tables_per_player * (m.live_table_bytes * m.redis_overhead + m.lease_index_bytes),
        "on_the_way": per_s * DESIGN["archive_lag_s"] * waiting,
        "matchmaker": per_s * DESIGN["matchmaker_ttl_s"] * m.matchmaker_bytes * m.redis_overhead,
        "backlog": per_s * waiting,
    }


def redis_memory(players: int, m: Measured) -> dict[str, float]:
    """Redis memory at ``players`` with the archive down ``archive_outage_s``, and the
    primaries (at ``redis_maxmemory_gib``, filled to ``redis_memory_fill``) it takes."""
    per = _bytes_per_player(m)
    out = {k: players * v / GIB for k, v in per.items() if k != "backlog"}
    out["backlog"] = players * per["backlog"] * DESIGN["archive_outage_s"] / GIB
    out["total"] = sum(out.values())
    usable = DESIGN["redis_maxmemory_gib"] * DESIGN["redis_memory_fill"]
    out["primaries"] = max(1, math.ceil(out["total"] / usable - 1e-9))
    return out


def outage_hours(players: int, primaries: int, m: Measured) -> dict[str, float]:
    """How long the archive may be down before Redis (``primaries`` of maxmemory) reaches
    the alert (its fill) and before it is full (``store_full``: every move refused)."""
    per = _bytes_per_player(m)
    steady = players * (per["live"] + per["on_the_way"] + per["matchmaker"])
    growth = players * per["backlog"]  # bytes a second of outage
    room = primaries * DESIGN["redis_maxmemory_gib"] * GIB
    return {
        "alert": (room * DESIGN["redis_memory_fill"] - steady) / growth / 3600,
        "full": (room - steady) / growth / 3600,
        "gib_per_h": growth * 3600 / GIB,
        "most_gib": growth * DESIGN["finished_ttl_s"] / GIB,
    }


def archive_growth(players: int, m: Measured) -> dict[str, float]:
    """Matches a day and what they add to the archive."""
    per_day = players * m.matches_per_player_s * 86_400
    return {
        "matches_per_day": per_day,
        "gib_per_day": per_day * m.archive_record_bytes / GIB,
        "tib_per_year": per_day * 365 * m.archive_record_bytes / 2**40,
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
        (
            DESIGN["redis_maxmemory_gib"]
            * DESIGN["redis_memory_fill"]
            * GIB
            / memory_per_player(m),
            f"one Redis primary's memory ({DESIGN['redis_maxmemory_gib']} GiB maxmemory at "
            f"{DESIGN['redis_memory_fill']:.0%}, the archive down "
            f"{DESIGN['archive_outage_s'] / 3600:g} h), no Cluster",
        ),
    ]
    return sorted(out)


def memory_per_player(m: Measured) -> float:
    """Redis bytes a connected player needs at the design point (an outage of
    ``archive_outage_s`` included)."""
    per = _bytes_per_player(m)
    return (
        per["live"]
        + per["on_the_way"]
        + per["matchmaker"]
        + per["backlog"] * float(DESIGN["archive_outage_s"])
    )
