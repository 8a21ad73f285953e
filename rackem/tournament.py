"""``rackem tournament``: bots play whole matches against each other; print how each fared.

Seats take the ``--bots`` list round-robin and the list rotates by one seat each
match, so every bot sits in every seat equally often. Match ``i`` is dealt from a
seed derived from ``--seed`` and ``i``, so a tournament replays exactly; with
``--jobs`` the matches are shared among processes and the result is the same.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rackcore import Match, RackError, Rules, observe
from rackcore.bots import LEVELS, RETIRED, choose

__all__ = [
    "MatchRecord",
    "match_seed",
    "play_match",
    "register",
    "run",
    "seating",
    "summarize",
    "wilson",
]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tournament", help="play computer players against each other and compare them"
    )
    p.add_argument("--players", type=int, default=2, help="seats at each table (2-4)")
    p.add_argument(
        "--bots",
        default="hard,medium",
        help="comma list of levels (or retired ones, e.g. hard-2025), dealt to seats "
        "round-robin and rotated each match",
    )
    p.add_argument("--matches", type=int, default=100)
    p.add_argument("--seed", default="0", help="any text; every match seed derives from it")
    p.add_argument("--rules", default=None, help='rules options as JSON, e.g. {"bonus": true}')
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--rated",
        action="store_true",
        help="also rate each level as a player (OpenSkill Plackett-Luce, in match order): "
        "the figures of services/profiles/levels.py",
    )
    p.set_defaults(func=run)


@dataclass
class MatchRecord:
    """What one match tells about its bots."""

    seats: tuple[str, ...]
    winner: int  # the winning side: a seat, or a pair 0/1 with partners
    rounds: list[int | None] = field(default_factory=list)  # who went out, per round
    out_turns: list[int] = field(default_factory=list)  # own turns taken, per won round
    times: dict[str, list[float]] = field(default_factory=dict)  # decision seconds per bot
    cpu: dict[str, list[float]] = field(default_factory=dict)  # decision CPU seconds per bot
    scores: list[int] = field(default_factory=list)  # final score per side


def match_seed(seed: str, index: int) -> bytes:
    """The 32-byte seed of match ``index`` of the tournament ``seed``."""
    return hashlib.sha256(f"rackem-tournament/{seed}/{index}".encode()).digest()


def seating(bots: Sequence[str], players: int, index: int) -> tuple[str, ...]:
    """The bot of every seat in match ``index``: round-robin, rotated one seat per match."""
    return tuple(bots[(seat + index) % len(bots)] for seat in range(players))


def play_match(rules: Rules, seats: Sequence[str], seed: bytes) -> MatchRecord:
    """Play one whole match between the bots in ``seats``."""
    match = Match(rules, seed)
    bot_seed = int.from_bytes(hashlib.sha256(seed + b"/bots").digest()[:8], "big")
    record = MatchRecord(seats=tuple(seats), winner=-1)
    times, cpu = record.times, record.cpu
    rounds_seen = 0
    while True:
        outcome = match.outcome()
        if len(match.rounds) > rounds_seen:
            for result in match.rounds[rounds_seen:]:
                record.rounds.append(result.winner)
                if result.winner is not None:
                    record.out_turns.append(match.turns_taken[result.winner])
            rounds_seen = len(match.rounds)
        if outcome is not None:
            record.winner = outcome.winner
            record.scores = match.side_totals()
            return record
        if match.phase == "round_over":
            match.next_round()
        seat = match.turn
        view = observe(match, seat)
        start, start_cpu = time.perf_counter(), time.process_time()
        move = choose(view, seats[seat], bot_seed)
        cpu.setdefault(seats[seat], []).append(time.process_time() - start_cpu)
        times.setdefault(seats[seat], []).append(time.perf_counter() - start)
        match.apply(move)


def _play_indexed(job: tuple[dict[str, Any], tuple[str, ...], str, int]) -> MatchRecord:
    rules, seats, seed, index = job
    return play_match(Rules.from_dict(rules), seats, match_seed(seed, index))


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% for the default ``z``)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return max(0.0, (centre - spread) / denom), min(1.0, (centre + spread) / denom)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def summarize(rules: Rules, records: Iterable[MatchRecord]) -> dict[str, Any]:
    """Per bot: matches, wins, win rate with its 95% interval, turns to go out, no-winner rate,
    and decision time; plus the totals of the tournament."""
    per: dict[str, dict[str, Any]] = {}
    all_rounds = all_empty = 0
    for record in records:
        sides = [rules.side_of(seat) for seat in range(len(record.seats))]
        winners = {bot for seat, bot in enumerate(record.seats) if sides[seat] == record.winner}
        empty = sum(1 for w in record.rounds if w is None)
        all_rounds += len(record.rounds)
        all_empty += empty
        for bot in dict.fromkeys(record.seats):
            s = per.setdefault(
                bot,
                {
                    "matches": 0,
                    "wins": 0,
                    "fair": 0.0,
                    "rounds": 0,
                    "empty": 0,
                    "out_turns": [],
                    "times": [],
                    "cpu": [],
                },
            )
            s["matches"] += 1
            s["wins"] += bot in winners
            bot_sides = {sides[seat] for seat, b in enumerate(record.seats) if b == bot}
            s["fair"] += len(bot_sides) / rules.sides
            s["rounds"] += len(record.rounds)
            s["empty"] += empty
            s["times"].extend(record.times.get(bot, []))
            s["cpu"].extend(record.cpu.get(bot, []))
        won = [w for w in record.rounds if w is not None]
        for seat, turns in zip(won, record.out_turns, strict=True):
            per[record.seats[seat]]["out_turns"].append(turns)
    bots = []
    for bot, s in per.items():
        low, high = wilson(s["wins"], s["matches"])
        times, cpu = sorted(s["times"]), sorted(s["cpu"])
        outs = s["out_turns"]
        bots.append(
            {
                "bot": bot,
                "matches": s["matches"],
                "wins": s["wins"],
                "win_rate": s["wins"] / s["matches"],
                "win_rate_95": [low, high],
                "fair_share": s["fair"] / s["matches"],
                "rounds_won": len(outs),
                "turns_to_go_out": sum(outs) / len(outs) if outs else None,
                "no_winner_rate": s["empty"] / s["rounds"] if s["rounds"] else 0.0,
                "decisions": len(times),
                "decision_ms_p50": 1000 * _percentile(times, 0.50),
                "decision_ms_p99": 1000 * _percentile(times, 0.99),
                "decision_cpu_ms_p50": 1000 * _percentile(cpu, 0.50),
                "decision_cpu_ms_p99": 1000 * _percentile(cpu, 0.99),
            }
        )
    return {
        "rules": rules.to_dict(),
        "rounds": all_rounds,
        "no_winner_rate": all_empty / all_rounds if all_rounds else 0.0,
        "bots": bots,
    }


def _records(
    rules: Rules, bots: Sequence[str], matches: int, seed: str, jobs: int
) -> Iterator[MatchRecord]:
    work = [
        (rules.to_dict(full=True), seating(bots, rules.players, i), seed, i) for i in range(matches)
    ]
    if jobs <= 1:
        for job in work:
            yield _play_indexed(job)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_play_indexed, work)


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} matches")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _parse(args: argparse.Namespace) -> tuple[Rules, list[str]]:
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    unknown = [b for b in bots if b not in LEVELS + RETIRED]
    if not bots or unknown:
        raise ValueError(f"--bots takes levels from {', '.join(LEVELS + RETIRED)}")
    if args.matches < 1 or args.jobs < 1:
        raise ValueError("--matches and --jobs must be at least 1")
    options = json.loads(args.rules) if args.rules else {}
    if not isinstance(options, dict):
        raise ValueError("--rules must be a JSON object")
    if options.setdefault("players", args.players) != args.players:
        raise ValueError("--rules and --players disagree on the number of players")
    return Rules.from_dict(options), bots


def run(args: argparse.Namespace) -> int:
    try:
        rules, bots = _parse(args)
    except (ValueError, RackError) as exc:
        print(f"rackem tournament: {exc}", file=sys.stderr)
        return 2
    show = sys.stderr.isatty()
    records = []
    for record in _records(rules, bots, args.matches, args.seed, args.jobs):
        records.append(record)
        if show:
            _progress(len(records), args.matches)
    summary = summarize(rules, records)
    summary = {"players": rules.players, "matches": args.matches, "seed": args.seed, **summary}
    if getattr(args, "rated", False):
        from rackem.rated import rate_levels

        summary["rated"] = rate_levels(rules, records)
    if args.json:
        print(json.dumps(summary))
    else:
        print(_table(summary))
        if "rated" in summary:
            from rackem.rated import rated_table

            print(rated_table(summary["rated"]))
    return 0


def _table(summary: dict[str, Any]) -> str:
    lines = [
        f"{summary['matches']} matches, {summary['players']} players, "
        f"rules {json.dumps(summary['rules'])}, seed {summary['seed']!r}",
        f"{'bot':<10}{'wins':>6}{'win rate [95%]':>24}{'fair':>7}{'turns out':>10}"
        f"{'no winner':>10}{'ms p50/p99':>14}{'cpu ms p50/p99':>16}",
    ]
    for b in summary["bots"]:
        low, high = b["win_rate_95"]
        turns = f"{b['turns_to_go_out']:.2f}" if b["turns_to_go_out"] is not None else "-"
        rate = f"{b['win_rate']:.1%} [{low:.1%}, {high:.1%}]"
        wall = f"{b['decision_ms_p50']:.2f}/{b['decision_ms_p99']:.2f}"
        cpu = f"{b['decision_cpu_ms_p50']:.2f}/{b['decision_cpu_ms_p99']:.2f}"
        lines.append(
            f"{b['bot']:<10}{b['wins']:>6}{rate:>24}{b['fair_share']:>7.1%}{turns:>10}"
            f"{b['no_winner_rate']:>10.1%}{wall:>14}{cpu:>16}"
        )
    lines.append(f"rounds {summary['rounds']}, with no winner {summary['no_winner_rate']:.1%}")
    return "\n".join(lines)
