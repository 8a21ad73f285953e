"""Head-to-head tuning runs between two variants of the hard bot (``HardParams``).

Run ``python3 bench/hard_tuning.py --a '{"lookahead": 3}' --b '{"lookahead": 0}' --rounds 400``
(each side's unnamed dials keep ``HardParams``' defaults: today's hard).
Each "round" is a match to a target of 50, so one round of play; seats alternate so
each variant moves first equally often, and round ``i`` is dealt from the same seed
for every pair of variants, so variants meet the same deals. It prints variant A's
share of the rounds with its 95% Wilson interval, both variants' average own turns
to go out, and A's decision CPU time. docs/bots.md says which runs set the dials.

With ``--same``, every seat plays variant A (``--b`` is not used) and it prints the
winners' average own turns to go out with its standard error: the measure of
docs/bots.md's own-turns tables, on single rounds. ``--jobs`` shares the rounds
among processes; the result does not depend on it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import time
from statistics import mean, stdev
from typing import Any

from rackcore import Match, Rules, observe
from rackcore.bots import Hard, HardParams
from rackem.tournament import wilson


def play_round(
    rules: Rules, seats: list[Hard], timed: int, seed: bytes
) -> tuple[int, int, list[float]]:
    """One match between ``seats``: the winner's seat, its own turns, seat ``timed``'s CPU."""
    match = Match(rules, seed)
    bot_seed = int.from_bytes(hashlib.sha256(seed + b"/bots").digest()[:8], "big")
    cpu: list[float] = []
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        seat = match.turn
        view = observe(match, seat)
        rng = random.Random(f"rackem-bot/hard/{bot_seed}/{seat}/{view.round_no}/{view.moves}")
        start = time.process_time()
        move = seats[seat].choose(view, rng)
        if seat == timed:
            cpu.append(time.process_time() - start)
        match.apply(move)
    winner = match.rounds[-1].winner
    outcome = match.outcome()
    assert outcome is not None
    turns = match.turns_taken[winner] if winner is not None else 0
    return outcome.winner, turns, cpu


def _same(job: tuple[str, int, int, str, int]) -> tuple[int, list[float]]:
    """Round ``index`` with variant A in every seat: the winner's own turns, seat 0's CPU."""
    params, players, target, seed, index = job
    bot = Hard(HardParams(**json.loads(params)))
    rules = Rules(players=players, target=target)
    digest = hashlib.sha256(f"rackem-tuning/{seed}/{index}".encode()).digest()
    _, turns, cpu = play_round(rules, [bot] * players, 0, digest)
    return turns, cpu


def same(args: argparse.Namespace) -> None:
    jobs = [(args.a, args.players, args.target, args.seed, i) for i in range(args.rounds)]
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(_same, jobs, chunksize=10)
    turns = [t for t, _ in results if t]
    cpu = sorted(c for _, times in results for c in times)
    summary = {
        "a": args.a,
        "rounds": args.rounds,
        "no_winner": args.rounds - len(turns),
        "turns_out": round(mean(turns), 3),
        "turns_out_se": round(stdev(turns) / len(turns) ** 0.5, 3),
        "cpu_ms_p50": round(1000 * cpu[len(cpu) // 2], 2),
        "cpu_ms_p99": round(1000 * cpu[int(len(cpu) * 0.99)], 2),
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(summary))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", default="{}", help="HardParams of variant A as JSON")
    p.add_argument("--b", default="{}", help="HardParams of variant B as JSON")
    p.add_argument("--rounds", type=int, default=400)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--target", type=int, default=50)
    p.add_argument("--seed", default="tuning")
    p.add_argument("--same", action="store_true", help="every seat plays A: own turns to go out")
    p.add_argument("--jobs", type=int, default=1, help="processes, with --same")
    args = p.parse_args()
    if args.same:
        same(args)
        return
    a = Hard(HardParams(**json.loads(args.a)))
    b = Hard(HardParams(**json.loads(args.b)))
    rules = Rules(players=args.players, target=args.target)
    won, turns_a, turns_b, cpu = 0, [], [], []
    for i in range(args.rounds):
        a_seat = i % args.players
        seats = [b] * args.players
        seats[a_seat] = a
        seed = hashlib.sha256(f"rackem-tuning/{args.seed}/{i}".encode()).digest()
        winner, turns, times = play_round(rules, seats, a_seat, seed)
        cpu += times
        if winner == a_seat:
            won += 1
            turns_a.append(turns)
        else:
            turns_b.append(turns)
    low, high = wilson(won, args.rounds)
    cpu.sort()
    summary: dict[str, Any] = {
        "a": args.a,
        "b": args.b,
        "rounds": args.rounds,
        "a_share": won / args.rounds,
        "a_share_95": [round(low, 3), round(high, 3)],
        "a_turns_out": round(mean(turns_a), 2) if turns_a else None,
        "b_turns_out": round(mean(turns_b), 2) if turns_b else None,
        "a_cpu_ms_p50": round(1000 * cpu[len(cpu) // 2], 2),
        "a_cpu_ms_p99": round(1000 * cpu[int(len(cpu) * 0.99)], 2),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
