"""``bench/load.py``'s report: one phase's figures as text, and the ratios to the echo and
the goals, added to the JSON report."""

from __future__ import annotations

from typing import Any

__all__ = ["GOALS", "GOAL_P99_MS", "ratios_and_goals", "text"]

# By stack (``--stack``): one client's move ÷ the echo just before it, and the server's
# CPU per move at 4,000 humans (docs/performance.md, "Today's figures").
GOALS = {"up": (1.5, 0.6), "processes": (2.5, 0.9)}
GOAL_P99_MS = 100.0


def text(title: str, s: dict[str, Any]) -> str:
    unit = "moves" if "moves" in s else "round trips"
    lines = [
        title,
        f"  {s.get('moves', s.get('round_trips'))} {unit}, {s['per_second']}/s  "
        f"p50 {s['p50_ms']} ms  p99 {s['p99_ms']} ms  max {s['max_ms']} ms"
        f"  ({s['connected_at_start']} connected when the window opened)",
        f"  the window opened {s['window_opened_after_s']} s after the first connection, "
        f"{s['seated_at_start']} of {s['clients']} clients seated; before it: "
        f"{s['before_window']['count']} {unit}, p50 {s['before_window']['p50_ms']} ms  "
        f"p99 {s['before_window']['p99_ms']} ms",
    ]
    if "paired_echo" in s:
        e = s["paired_echo"]
        lines.append(
            f"  paired echo (one round trip just before each move): {e['round_trips']}, "
            f"p50 {e['p50_ms']} ms  p99 {e['p99_ms']} ms"
        )
    if "views_per_second" in s:
        lines.append(f"  views {s['views_per_second']}/s, games finished {s['games_finished']}")
    if "server_cpu_cores" in s:
        per = s.get("server_cpu_ms_per_op")
        text = f"  server: CPU {s['server_cpu_cores']} cores"
        if len(s["server_cpu_cores_by_process"]) > 1:
            text += f" {s['server_cpu_cores_by_process']}"
        if per is not None:
            text += f", {per} ms per {unit[:-1]}"
        if "server_cpu_ms_per_client_joining" in s:
            text += f", {s['server_cpu_ms_per_client_joining']} ms per client joining"
            if "server_cpu_ms_per_join_less_moves" in s:
                text += f" (~{s['server_cpu_ms_per_join_less_moves']} ms less its moves)"
        lines.append(text)
        rss = s["server_rss_mb"]
        text = f"  server: waited for a CPU {s['server_cpu_wait_per_s']} s/s; "
        text += f"RSS {rss[0]} MB before the clients, {rss[1]} MB with them"
        if "server_kb_per_client" in s:
            text += f" ({s['server_kb_per_client']} KB per client)"
        lines.append(text)
    if len(s.get("server_cpu_ms_per_op_by_process", {})) > 1:
        lines.append(
            f"  server: CPU ms per {unit[:-1]} by process {s['server_cpu_ms_per_op_by_process']}"
        )
    if "server_idle_cpu_cores" in s:
        idle = s["server_idle_cpu_cores_by_process"]
        text = "  server idle (no clients, while the echo was timed): CPU "
        text += f"{s['server_idle_cpu_cores']} cores" + (f" {idle}" if len(idle) > 1 else "")
        lines.append(text)
    if "gateway_submit_move_mean_ms" in s:
        lines.append(f"  gateway → table move (link) mean {s['gateway_submit_move_mean_ms']} ms")
    if "link_messages" in s:
        link = s["link_messages"]
        lines.append(
            f"  link messages a move: up {link['up_per_move']} ({link['calls_per_up']} calls "
            f"each), down {link['down_per_move']} ({link.get('events_per_down', 0)} events each)"
        )
    for name, g in s.get("gateways", {}).items():
        mean = f", gateway → table mean {g['move_mean_ms']} ms" if "move_mean_ms" in g else ""
        lines.append(
            f"  {name}: {g['moves']:.0f} moves{mean}; {g['connections']:.0f} connections and "
            f"{g['tables']:.0f} tables when the window opened"
        )
    if "live_tables_by_replica" in s:
        lines.append(
            f"  live tables by replica (window opened, closed): {s['live_tables_by_replica']}"
        )
    lines.append(
        f"  clients: {s['procs']} process(es), CPU {s['client_cpu_cores']} cores, "
        f"loop lag p99 {s['client_loop_lag_p99_ms']} ms"
    )
    if s["errors"]:
        lines.append(f"  errors/refusals: {s['errors']}")
    return "\n".join(lines)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else round(a / b, 2)


def ratios_and_goals(report: dict[str, Any], stack: str) -> None:
    game, one = report["stack"], report["echo_1_client"]
    same = report.get("echo_same_load", one)
    paired = game.get("paired_echo", {})
    ratios = {
        "p50_vs_echo_1_client": _ratio(game["p50_ms"], one["p50_ms"]),
        "p50_vs_paired_echo": _ratio(game["p50_ms"], paired.get("p50_ms")),
        "p99_vs_paired_echo": _ratio(game["p99_ms"], paired.get("p99_ms")),
        "p50_vs_echo_same_load": _ratio(game["p50_ms"], same["p50_ms"]),
        "p99_vs_echo_same_load": _ratio(game["p99_ms"], same["p99_ms"]),
        "server_cpu_per_move_vs_echo_round_trip": _ratio(
            game.get("server_cpu_ms_per_op"), one.get("server_cpu_ms_per_op")
        ),
    }
    single = ratios["p50_vs_paired_echo"] or ratios["p50_vs_echo_1_client"]
    report["ratios"] = ratios
    ratio, cpu = GOALS[stack]
    per_move = game.get("server_cpu_ms_per_op")
    report["goals"] = {
        f"one client's p50 within {ratio:g}x the echo's (with --clients 1)": (
            single is not None and single <= ratio
        ),
        f"server CPU per move at most {cpu:g} ms (at 4,000 humans)": (
            per_move is not None and per_move <= cpu
        ),
        f"p99 under {GOAL_P99_MS:g} ms": (game["p99_ms"] or 1e9) < GOAL_P99_MS,
    }
