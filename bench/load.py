"""Load on the whole stack: N protocol clients playing through the gateway, beside a bare echo.

    python3 bench/load.py --clients 100 --pace 3 --duration 60
    python3 bench/load.py --clients 1 --pace 0 --duration 60        # the single-client ratio
    python3 bench/load.py --clients 1000 --pace 3 --humans-per-table 2 --json
    python3 bench/load.py --stack processes --clients 1000 ...       # a process per service
    python3 bench/load.py --stack processes --tables 3 --gateways 2 ...   # a bigger fleet
    python3 bench/load.py --url ws://127.0.0.1:8000/ws --server-pid PID ...
        # add --metrics-url http://127.0.0.1:9100/metrics (its METRICS_PORT) for /metrics
    python3 bench/load.py --stack processes --trace-ratio 0.01 ...  # traced (docs/tracing.md)

By default it starts ``rackem up --port <free> --no-browser`` as a subprocess;
``--stack processes`` instead runs every service as its own ``rackem serve`` process
(``tests/system/stack.py``) on a ``redis-server`` of its own, with ``--tables`` table
replicas and ``--gateways`` gateways (default one each; every gateway on the one
matchmaker). Client i connects to gateway i mod N, round robin as a load balancer
spreads connections: with 2 gateways and 2 humans a table, every table has a human on
each gateway (cross-gateway play: the table's views go out over both gateways' links).
Either way with ``GAMES_PER_IP=0`` (every client comes from 127.0.0.1; ``--server-env K=V``
adds settings), and it stops them at the end. ``--trace-ratio R`` (with ``--stack
processes``) traces every service at sample ratio R (``OTEL_TRACES_SAMPLER=
parentbased_traceidratio``) into an OTLP/gRPC endpoint served in this process
(``tests/system/otlp.py``), which counts the spans it receives; the count is printed.
``--url`` uses a running gateway instead (give it ``GAMES_PER_IP=0``). In the same run it
starts ``bench/echo_server.py`` (bare Starlette + uvicorn, ``websockets-sansio`` as the
gateway) and measures its round trip with the same client code: one client as fast as it
can, then (``--echo-duration``) the same number of clients at the same pace; with one client
(or ``--paired-echo``) each move is also preceded by one echo round trip, so both are timed
under the same machine load.
``--pin`` runs the clients on a core of their own (the last) and every server process and
the echo on the others, as players' devices are their own: on a 2-core machine the kernel
otherwise often wakes a client on the core where the server already works on what the
move set off (the bots' turn right after it, with ``BOT_DELAY_MS=0``).

Each client (``rackem.client.Client``) loops: new table → play to the end → next table,
until the run ends. With ``--humans-per-table 1`` (default) a table is "new game against
the computer" (``create_table`` with ``start_now``, bots of ``--level``, the bot delay the
server is configured with); with ``--humans-per-table H`` groups of H clients share a
private table (the first creates it, the others join by its code). Before each move
and each continue a client thinks for a random time with mean ``--pace`` seconds
(exponential; 0: none), then chooses with ``rackcore.bots`` (or at random:
``--chooser``).
Move latency is client send → ``moved`` received. Clients connect and sit down spread
over ``--ramp`` seconds. The measured window of ``--duration`` seconds opens once every
client is playing: after the ramp, as soon as the last one is seated (a client turned
away by admission control while the server is busy backs off and tries again), or
``--settle`` seconds after the ramp with whoever is seated by then. The figures count only
the window; the moves made before it (while clients were still joining) are summed up
apart.
Clients run in ``--procs`` worker processes, each one asyncio loop; the worker CPU and
event-loop lag are printed, so a client-side bottleneck shows. For the servers it
prints CPU (per move, per client joining and the same less the moves made while
joining, per process), the time their threads were runnable but waited for a CPU (the
rest of the machine holding them back), and RSS; the totals sum every process (every
gateway and replica, the matchmaker, the bot, Redis). Per gateway (its /metrics) the
moves it answered in the window and their mean time to the table, and its connections
and tables; per table replica its live tables when the window opened and closed (the
registry's heartbeats in Redis).

Loopback only; bounded in count (``--clients``) and time (ramp + settle + duration, then every
connection is closed and the subprocesses are stopped). Prints figures and asserts
nothing. Client and server share the machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import load_metrics
import load_report
from load_clients import Plan, Shared, Tally, raise_fd_limit, share_with, shares, worker
from load_servers import (
    ROOT,
    Processes,
    Sample,
    Servers,
    pin,
    record_profiles,
    start_echo,
    start_servers,
    stop_process,
)

from rackem.client import ws_url

MEMORY_MIN_CLIENTS = 50  # fewer: allocator noise swamps the per-client figure


# -- one phase: workers plus samples of the servers ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Samples:
    begin: Sample  # before the first client connects
    start: Sample  # the window opens
    end: Sample  # the window closes
    gateways: dict[str, dict[str, float]]  # by gateway, its /metrics over the window
    opened_after: float  # seconds from the first connection to the window's opening
    seated: int  # clients seated (playing, or connected to the echo) when the window opened
    live_tables: tuple[dict[str, int], dict[str, int]] = ({}, {})  # by replica: open, close

    @property
    def gateway_move_ms(self) -> float | None:
        """The mean gateway → table move (over its link) in the window, every gateway's."""
        moves = sum(g["moves"] for g in self.gateways.values())
        spent = sum(g["sum_s"] for g in self.gateways.values())
        return spent / moves * 1000 if moves > 0 else None


def run_phase(
    plan: Plan,
    procs: int,
    servers: Processes,
    scrape: dict[str, str],
    profile: str = "",
    live_tables: Callable[[], dict[str, int]] | None = None,
) -> tuple[Tally, Samples]:
    """Run the plan's clients; sample the servers, each gateway's metrics at ``scrape``
    (/metrics URLs by gateway), the replicas' live tables (``live_tables``) when the window
    opens and closes, and profile them given a prefix."""
    begin = servers.sample()
    parts = shares(plan, procs)
    context = multiprocessing.get_context("spawn")
    shared = Shared.make(context)
    with context.Pool(len(parts), share_with, (shared,)) as pool:
        pending = pool.starmap_async(worker, [(plan, part) for part in parts])
        while time.time() < plan.earliest or (
            shared.seated.value < plan.clients and time.time() < plan.latest
        ):
            time.sleep(0.05)
        start = servers.sample()
        seated, opens = shared.seated.value, time.time()
        shared.opens.value = opens
        spies = record_profiles(servers.pids, plan.duration, profile) if profile else []
        before = load_metrics.scrape(scrape)
        tables_open = live_tables() if live_tables else {}
        while time.time() < opens + plan.duration:
            time.sleep(0.05)
        end = servers.sample()
        after = load_metrics.scrape(scrape)
        tables_close = live_tables() if live_tables else {}
        results = pending.get(timeout=120)
    for spy in spies:  # each stops by itself after the window, then writes its file
        try:
            spy.wait(30)
        except subprocess.TimeoutExpired:
            stop_process(spy)
    tally = Tally()
    for result in results:
        tally.merge(result)
    gateways = load_metrics.gateway_figures(before, after)
    tables = (tables_open, tables_close)
    return tally, Samples(begin, start, end, gateways, opens - plan.t0, seated, tables)


# -- figures ------------------------------------------------------------------------------------


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 3)


def summary(plan: Plan, procs: int, tally: Tally, samples: Samples) -> dict[str, Any]:
    lat = tally.latencies
    out: dict[str, Any] = {
        "mode": plan.mode,
        "clients": plan.clients,
        "pace_s": plan.pace,
        "ramp_s": plan.ramp,
        "duration_s": plan.duration,
        "procs": procs,
        "window_opened_after_s": round(samples.opened_after, 1),
        "seated_at_start": samples.seated,
        "connected_at_start": tally.at_start,
        "round_trips" if plan.mode == "echo" else "moves": len(lat),
        "per_second": round(len(lat) / plan.duration, 1),
        "p50_ms": _ms(_quantile(lat, 0.5)),
        "p99_ms": _ms(_quantile(lat, 0.99)),
        "max_ms": _ms(max(lat) if lat else None),
        "before_window": {
            "count": len(tally.before),
            "p50_ms": _ms(_quantile(tally.before, 0.5)),
            "p99_ms": _ms(_quantile(tally.before, 0.99)),
        },
        "errors": dict(tally.errors),
        "client_cpu_cores": round(tally.cpu / plan.duration, 2),
        "client_loop_lag_p99_ms": _ms(_quantile(tally.lag, 0.99)),
    }
    if plan.mode == "game":
        out |= {
            "players": plan.players,
            "humans_per_table": plan.humans,
            "level": plan.level,
            "views_per_second": round(tally.views / plan.duration, 1),
            "games_finished": tally.games,
        }
        if tally.paired:
            out["paired_echo"] = {
                "round_trips": len(tally.paired),
                "p50_ms": _ms(_quantile(tally.paired, 0.5)),
                "p99_ms": _ms(_quantile(tally.paired, 0.99)),
            }
    out |= _server_figures(samples, len(lat), tally.at_start, plan.duration, len(tally.before))
    if samples.gateway_move_ms is not None:
        out["gateway_submit_move_mean_ms"] = round(samples.gateway_move_ms, 3)
    answered = int(sum(g["moves"] for g in samples.gateways.values()))
    if links := load_metrics.link_figures(samples.gateways, answered):
        out["link_messages"] = links
    if len(samples.gateways) > 1:
        out["gateways"] = {
            name: {
                k: round(v, 3) for k, v in g.items() if k != "sum_s" and k not in load_metrics.LINK
            }
            for name, g in samples.gateways.items()
        }
    if samples.live_tables[0] or samples.live_tables[1]:
        opened, closed = samples.live_tables
        out["live_tables_by_replica"] = {
            replica: [opened.get(replica, 0), closed.get(replica, 0)]
            for replica in sorted(opened.keys() | closed.keys())
        }
    return out


def _server_figures(
    s: Samples, done: int, joined: int, seconds: float, done_before: int
) -> dict[str, Any]:
    cpu = s.end.cpu_since(s.start)
    if not cpu:
        return {}
    total = sum(cpu.values())
    out: dict[str, Any] = {
        "server_cpu_cores": round(total / seconds, 2),
        "server_cpu_cores_by_process": {k: round(v / seconds, 2) for k, v in cpu.items()},
        "server_cpu_wait_per_s": round(sum(s.end.waited_since(s.start).values()) / seconds, 2),
    }
    if done:
        out["server_cpu_ms_per_op"] = round(total / done * 1000, 3)
        out["server_cpu_ms_per_op_by_process"] = {
            k: round(v / done * 1000, 3) for k, v in cpu.items()
        }
    if joined >= MEMORY_MIN_CLIENTS:
        ramp = sum(s.start.cpu_since(s.begin).values())
        out["server_cpu_ms_per_client_joining"] = round(ramp / joined * 1000, 2)
        if done:  # the ramp's CPU less its moves (at the window's cost each): the joins alone
            joins = ramp - done_before * total / done
            out["server_cpu_ms_per_join_less_moves"] = round(joins / joined * 1000, 2)
    rss_begin, rss_start = sum(s.begin.rss.values()), sum(s.start.rss.values())
    out["server_rss_mb"] = [round(rss_begin / 2**20, 1), round(rss_start / 2**20, 1)]
    out["server_rss_mb_by_process"] = {
        k: [round(s.begin.rss.get(k, 0) / 2**20, 1), round(v / 2**20, 1)]
        for k, v in s.start.rss.items()
    }
    if joined >= MEMORY_MIN_CLIENTS:
        out["server_kb_per_client"] = round((rss_start - rss_begin) / joined / 1024, 1)
        out["server_kb_per_client_by_process"] = {
            k: round((s.start.rss[k] - s.begin.rss.get(k, 0)) / joined / 1024, 1)
            for k in s.start.rss
        }
    return out


def _idle_cpu(before: Sample, after: Sample) -> dict[str, Any]:
    """The servers' CPU with no client (their fixed cost: heartbeats, lease renewals,
    timers), in cores, over the echo phases."""
    cpu, seconds = after.cpu_since(before), after.at - before.at
    if not cpu or seconds <= 0:
        return {}
    return {
        "server_idle_cpu_cores": round(sum(cpu.values()) / seconds, 3),
        "server_idle_cpu_cores_by_process": {k: round(v / seconds, 3) for k, v in cpu.items()},
    }


# -- main ---------------------------------------------------------------------------------------


def _parse_env(items: list[str]) -> dict[str, str]:
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--server-env wants KEY=VALUE, not {item!r}")
        env[key] = value
    return env


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--clients", type=int, default=100, help="clients (default 100)")
    add("--pace", type=float, default=3.0, help="mean think time before each move, s (0: none)")
    add("--duration", type=float, default=30.0, help="measured seconds (default 30)")
    add(
        "--ramp",
        type=float,
        help="seconds over which clients connect and sit down (default clients/25, at least 2;"
        " the echo phase: clients/50)",
    )
    add(
        "--settle",
        type=float,
        default=120.0,
        help="after the ramp, wait at most this long for every client to be seated (default 120)",
    )
    add("--stack", choices=("up", "processes"), default="up", help="what to start (default up)")
    add("--tables", type=int, default=1, help="table replicas with --stack processes")
    add(
        "--gateways",
        type=int,
        default=1,
        help="gateways with --stack processes; client i connects to gateway i mod N",
    )
    add("--url", help="an existing gateway instead (give it GAMES_PER_IP=0)")
    add("--metrics-url", default="", help="with --url: its /metrics (on its METRICS_PORT)")
    add("--server-pid", type=int, action="append", default=[], help="with --url: for CPU/RSS")
    add("--server-env", action="append", default=[], metavar="K=V", help="server settings")
    add(
        "--trace-ratio",
        type=float,
        metavar="R",
        help="with --stack processes: trace every service at sample ratio R (0 < R <= 1) into"
        " an OTLP endpoint in this process that counts the spans (docs/tracing.md)",
    )
    add("--players", type=int, default=2, help="seats per table (default 2)")
    add("--humans-per-table", type=int, default=1, help="clients per table (default 1)")
    add("--level", default="easy", help="the bots at the tables (default easy)")
    add(
        "--chooser",
        default="easy",
        help="how the clients play: a rackcore.bots level (~1 ms of client CPU a move), or"
        " random (a random legal move)",
    )
    add("--procs", type=int, default=1, help="client worker processes (default 1)")
    add(
        "--pin",
        action="store_true",
        help="the clients on the last core, every server and the echo on the others "
        "(as players' devices are their own)",
    )
    add("--echo-duration", type=float, default=10.0, help="echo at the same load, s (0: skip)")
    add(
        "--paired-echo",
        action=argparse.BooleanOptionalAction,
        help="time an echo round trip just before each move (default: with one client)",
    )
    add(
        "--profile",
        metavar="PREFIX",
        help="py-spy record each server process during the window into PREFIX.NAME.txt",
    )
    add("--seed", type=int, default=1)
    add("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if not 1 <= args.humans_per_table <= args.players <= 4 or args.clients < 1:
        raise SystemExit("want 1 ≤ --humans-per-table ≤ --players ≤ 4 and --clients ≥ 1")
    if args.clients > 20_000 or args.duration > 3_600:
        raise SystemExit("bounded: at most 20,000 clients and 3,600 s")
    if not (1 <= args.tables <= 16 and 1 <= args.gateways <= 16):
        raise SystemExit("want 1 ≤ --tables ≤ 16 and 1 ≤ --gateways ≤ 16")
    if (args.tables > 1 or args.gateways > 1) and (args.stack != "processes" or args.url):
        raise SystemExit("--tables and --gateways are for --stack processes")
    if args.trace_ratio is not None and (
        args.stack != "processes" or args.url or not 0 < args.trace_ratio <= 1
    ):
        raise SystemExit("--trace-ratio wants 0 < R <= 1 and --stack processes")
    return args


def _otlp_sink() -> Any:
    """``tests/system/otlp.py``'s ``OtlpSink``, counting spans without keeping them; loaded
    by name, as load_servers.py loads the stack."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("tests.system.otlp").OtlpSink(keep=False)


def main() -> None:
    args = _arguments()
    raise_fd_limit()
    # A client joining costs the stack ~10-25 ms of CPU (connect, table, subscriptions):
    # joining much faster than this saturates it before the measured window opens.
    ramp = args.ramp if args.ramp is not None else max(2.0, args.clients / 25)
    procs = max(1, args.procs)
    paired = args.paired_echo if args.paired_echo is not None else args.clients == 1
    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    servers: Servers | None = None
    server_env = _parse_env(args.server_env)
    sink = _otlp_sink() if args.trace_ratio is not None else None
    if sink is not None:  # the SDK's own batch delay (5 s), as deployed; --server-env wins
        traced = sink.env(args.trace_ratio)
        del traced["OTEL_BSP_SCHEDULE_DELAY"]
        server_env = {**traced, **server_env}
        report["tracing"] = {"ratio": args.trace_ratio}
    echo, echo_url = start_echo()
    try:
        live_tables: Callable[[], dict[str, int]] | None = None
        urls: tuple[str, ...]
        if args.url:
            urls = (ws_url(args.url),)
            metrics_urls = {"gateway": args.metrics_url} if args.metrics_url else {}
            pids = {f"pid {pid}": pid for pid in args.server_pid}
            report["server"] = f"{urls[0]} (given)"
        else:
            servers = start_servers(args.stack, server_env, args.tables, args.gateways)
            urls, pids, metrics_urls = tuple(servers.urls), servers.pids, servers.metrics_urls
            live_tables = servers.live_tables
            report["server"] = f"{args.stack}: {', '.join(pids)} (started by bench/load.py)"
        client_cpus: tuple[int, ...] = ()
        if args.pin:
            cores = sorted(os.sched_getaffinity(0))
            if len(cores) < 2:
                raise SystemExit("--pin needs two cores or more")
            client_cpus = (cores[-1],)
            pin([*pids.values(), echo.pid], set(cores[:-1]))
            report["pinned"] = {"clients": list(client_cpus), "servers": cores[:-1]}
        echo_proc = Processes({"echo": echo.pid})
        idle_from = Processes(pids).sample()  # the servers, idle while the echo is timed
        base = Plan(
            mode="echo",
            urls=(echo_url,),
            clients=1,
            pace=0.0,
            players=args.players,
            humans=1,
            level=args.level,
            chooser=args.chooser,
            t0=time.time() + 3.0,
            ramp=1.0,
            duration=5.0,
            seed=args.seed,
            cpus=client_cpus,
        )
        report["echo_1_client"] = summary(base, 1, *run_phase(base, 1, echo_proc, {}))
        if args.echo_duration > 0 and (args.clients > 1 or args.pace > 0):
            plan = replace(
                base,
                clients=args.clients,
                pace=args.pace,
                t0=time.time() + 3.0,
                ramp=max(2.0, args.clients / 50),
                duration=args.echo_duration,
                settle=args.settle,
            )
            same_load = run_phase(plan, procs, echo_proc, {})
            report["echo_same_load"] = summary(plan, procs, *same_load)
        plan = replace(
            base,
            mode="game",
            urls=urls,
            clients=args.clients,
            pace=args.pace,
            humans=args.humans_per_table,
            t0=time.time() + 3.0,
            ramp=ramp,
            duration=args.duration,
            paired_echo=echo_url if paired else "",
            settle=args.settle,
        )
        idle = _idle_cpu(idle_from, Processes(pids).sample())
        measured = run_phase(
            plan, procs, Processes(pids), metrics_urls, args.profile or "", live_tables
        )
        report["stack"] = summary(plan, procs, *measured) | idle
    finally:
        if servers is not None:
            servers.stop()  # a traced service exports what it still holds as it stops
        stop_process(echo)
        if sink is not None:
            report["tracing"]["spans_received"] = sink.count()
            sink.stop()
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    load_report.ratios_and_goals(report, args.stack)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"machine: {report['cpus']} CPUs, load average {report['load_average_before']} before, "
        f"{report['load_average_after']} after\nserver: {report['server']}"
    )
    print(load_report.text("echo, 1 client, as fast as it can", report["echo_1_client"]))
    if "echo_same_load" in report:
        same = report["echo_same_load"]
        print(load_report.text(f"echo, {args.clients} clients, pace {args.pace} s", same))
    bots = args.players - args.humans_per_table
    tables = f"{args.humans_per_table} human(s) and {bots} bot(s)"
    tables += f" ({args.level})" if bots else ""
    title = f"rackem, {args.clients} clients, pace {args.pace} s, {tables} per table"
    print(load_report.text(title, report["stack"]))
    if "tracing" in report:
        tracing = report["tracing"]
        print(f"tracing: ratio {tracing['ratio']}, {tracing['spans_received']} spans received")
    print(f"ratios: {report['ratios']}")
    print(f"goals (measured, not asserted): {report['goals']}")


if __name__ == "__main__":
    main()
