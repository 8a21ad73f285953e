"""Matches played through partitions, pauses and kills, then every acknowledged move
checked against the final logs (issue 34; docs/partitions.md).

    sudo python3 bench/nemesis.py [--matches 24] [--tables 4] [--faults all]
                                  [--min-s 5] [--max-s 20] [--pace 0.15] [--seed 1]
                                  [--json bench/results/nemesis.json]

Builds a network of its own (tests/partition/netns.py: a bridge, a namespace and an
address per service) and the whole stack on it (tests/partition/netstack.py: two
gateways, three table replicas, the matchmaker, the bot service, a Redis primary with
its two replicas and three Sentinels). ``--tables`` pairs of players (tests/partition/players.py:
they resume and retry as docs/protocol.md says, each pair on both gateways) play private
matches one after another while the nemesis (tests/partition/faults.py) applies each
fault of ``--faults`` in turn, for ``--min-s`` to ``--max-s`` seconds (drawn with
``--seed``), then heals it and lets play go on for a while; once every fault has been
applied and ``--matches`` matches have started, the players finish theirs at full speed.

The checker (tests/partition/checker.py) then holds every player's acknowledged moves
against every final log (``/match/{id}.json``): every acknowledged move in its log
exactly once, every match finished, every log verified (``rackcore.verify``), no match
logged twice; and, per fault, the longest time a table in play made no move during it,
the longest its players' moves went unacknowledged, and the slowest first move after
the heal, against the bound (lease + takeover + a client's resend). Prints a table (a
``!`` marks a row past the bound after the heal) with the load average, writes JSON,
and exits 1 if safety failed. Needs root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from partition.checker import Report, format_table  # noqa: E402
from partition.faults import FAULTS, Nemesis  # noqa: E402
from partition.netns import Network  # noqa: E402
from partition.netstack import NetStack  # noqa: E402
from partition.players import Player  # noqa: E402
from partition.rounds import AFTER_HEAL_S, RULES, SETTINGS, Table, checked  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def _run(stack: NetStack, args: argparse.Namespace) -> tuple[Report, list[str]]:
    rng = random.Random(args.seed)
    nemesis = Nemesis(stack)
    rules = {**RULES, "target": args.target}
    started: list[Table] = []
    stop_starting = asyncio.Event()
    loads: list[str] = []

    async def slot() -> None:
        while not stop_starting.is_set():
            table = Table(stack, args.pace, rules)
            started.append(table)
            try:
                await table.task
            except Exception as exc:  # the checker counts its match as not finished
                print(f"[nemesis] {table.table_id}: {type(exc).__name__}: {exc}", flush=True)

    slots = [asyncio.create_task(slot()) for _ in range(args.tables)]
    try:
        await asyncio.sleep(args.warmup_s)
        kinds = [k for k in FAULTS if k in args.faults] * args.repeat
        for n, kind in enumerate(kinds):
            seconds = rng.uniform(args.min_s, args.max_s)
            in_play = {t.table_id for t in started if t.table_id and not t.task.done()}
            window = await nemesis.apply(kind, seconds, in_play)
            loads.append(_load())
            print(
                f"[nemesis] {n + 1}/{len(kinds)} {kind} ({window.detail}) "
                f"{window.end - window.start:.1f} s; load {loads[-1]}",
                flush=True,
            )
            await asyncio.sleep(args.settle_s)
        while len(started) < args.matches:
            await asyncio.sleep(0.5)
        stop_starting.set()
        for table in started:
            table.set_pace(0.0)
        async with asyncio.timeout(600):
            await asyncio.gather(*slots)
    finally:
        stop_starting.set()
        for table in started:
            for player in table.players:
                await player.close()
    players: list[Player] = [p for t in started for p in t.players]
    report = await asyncio.to_thread(checked, stack, players, nemesis.windows)
    return report, loads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=24, help="at least this many")
    parser.add_argument("--tables", type=int, default=4, help="matches played at once")
    parser.add_argument("--faults", default="all", help=f"comma-separated: {','.join(FAULTS)}")
    parser.add_argument("--repeat", type=int, default=1, help="each fault this many times")
    parser.add_argument("--min-s", type=float, default=5.0)
    parser.add_argument("--max-s", type=float, default=20.0)
    parser.add_argument("--settle-s", type=float, default=AFTER_HEAL_S + 3.0)
    parser.add_argument("--warmup-s", type=float, default=5.0)
    parser.add_argument("--pace", type=float, default=0.15, help="a player's thought, s")
    parser.add_argument("--target", type=int, default=int(RULES["target"]))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the services' logs")
    args = parser.parse_args(argv)
    args.faults = FAULTS if args.faults == "all" else tuple(args.faults.split(","))
    unknown = set(args.faults) - set(FAULTS)
    if unknown:
        parser.error(f"no such fault: {', '.join(sorted(unknown))}")

    workdir = Path(tempfile.mkdtemp(prefix="rackem-nemesis-"))
    began = time.monotonic()
    with Network() as net:
        stack = NetStack(workdir, net, SETTINGS)
        stack.build()
        try:
            stack.start()
            print(f"[nemesis] stack up in {time.monotonic() - began:.1f} s; logs in {workdir}")
            report, loads = asyncio.run(_run(stack, args))
        finally:
            stack.stop()
    load = _load()
    table = format_table(report, lambda _: AFTER_HEAL_S, load)
    marked = []
    for line, (_window, stall) in zip(table.splitlines()[2:], report.stalls, strict=False):
        marked.append(line + ("  !" if stall.after > AFTER_HEAL_S else ""))
    lines = table.splitlines()
    print("\n".join([*lines[:2], *marked, *lines[2 + len(marked) :]]))
    print(f"[nemesis] {time.monotonic() - began:.0f} s in all")
    if args.json is not None:
        out: dict[str, Any] = {
            "args": {k: v for k, v in vars(args).items() if k != "json"},
            "bound_s": AFTER_HEAL_S,
            "load_average": load,
            "load_during_faults": loads,
            "matches": report.matches,
            "finished": report.finished,
            "acknowledged": report.acknowledged,
            "moves_logged": report.moves_logged,
            "violations": report.violations,
            "faults": [
                {
                    "kind": window.kind,
                    "target": window.detail,
                    "seconds": round(window.end - window.start, 2),
                    "tables": stall.tables,
                    "no_move_s": round(stall.during, 2),
                    "no_player_move_s": round(stall.players, 2),
                    "after_heal_s": round(stall.after, 2),
                }
                for window, stall in report.stalls
            ],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
    if not args.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if report.safe else 1


if __name__ == "__main__":
    sys.exit(main())
