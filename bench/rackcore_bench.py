"""How fast rackcore plays: validated moves per second and the cost of a view, on one core.

Run ``python3 bench/rackcore_bench.py [--seconds S]``. It prints figures and asserts
nothing; the goal for random playouts is at least 100,000 validated moves per second.
Times are the CPU time of this one process, so other load on the machine skews them less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Callable

from rackcore import Match, Move, Rules, View, observe

GOAL_MOVES_PER_SECOND = 100_000
# CPU time of this process: a busy machine slows the wall clock, not the work measured.
_clock = time.process_time
TABLES = (Rules(players=2), Rules(players=3), Rules(players=4, partners=True, bonus=True))


def _playout(rules: Rules, rnd: random.Random) -> Match:
    """One whole match of uniformly random legal moves."""
    match = Match(rules, rnd.randbytes(32))
    while match.phase != "match_over":
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
    return match


def random_playouts(seconds: float) -> tuple[int, float]:
    """Moves applied while choosing each at random from ``legal_moves()``."""
    rnd, moves, started = random.Random(1), 0, _clock()
    while _clock() - started < seconds:
        moves += len(_playout(TABLES[moves % len(TABLES)], rnd).history)
    return moves, _clock() - started


def replays(seconds: float) -> tuple[int, float]:
    """Moves applied (each validated) when replaying recorded matches: ``apply`` alone."""
    rnd = random.Random(2)
    games: list[tuple[Rules, bytes, list[Move]]] = []
    for rules in TABLES:
        seed = rnd.randbytes(32)
        match = Match(rules, seed)
        play = random.Random(seed)
        while match.phase != "match_over":
            legal = match.legal_moves()
            match.apply(legal[play.randrange(len(legal))])
        games.append((rules, seed, list(match.history)))
    moves, elapsed = 0, 0.0
    while elapsed < seconds:
        for rules, seed, history in games:
            match = Match(rules, seed)
            started = _clock()
            for move in history:
                match.apply(move)
            elapsed += _clock() - started
            moves += len(history)
    return moves, elapsed


def _positions(rules: Rules, count: int) -> list[Match]:
    """Snapshots of one random match, for timing views of varied positions."""
    rnd = random.Random(3)
    match = Match(rules, rnd.randbytes(32))
    out: list[Match] = []
    while len(out) < count and match.phase != "match_over":
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
        if len(match.history) % 7 == 0:
            fresh = Match(rules, match.seed)
            for move in match.history:
                fresh.apply(move)
            out.append(fresh)
    return out


def per_call_us(call: Callable[[], object], seconds: float) -> float:
    calls, started = 0, _clock()
    while _clock() - started < seconds:
        for _ in range(200):
            call()
        calls += 200
    return (_clock() - started) / calls * 1e6


def view_costs(rules: Rules, seconds: float) -> tuple[float, float, float]:
    """Microseconds per ``observe``, per ``View.to_dict`` and per JSON text of a view."""
    positions = _positions(rules, 40)
    views: list[View] = [observe(m, seat) for m in positions for seat in range(rules.players)]
    state = {"i": 0}

    def one_observe() -> object:
        i = state["i"] = state["i"] + 1
        match = positions[i % len(positions)]
        return observe(match, i % rules.players)

    def one_to_dict() -> object:
        i = state["i"] = state["i"] + 1
        return views[i % len(views)].to_dict()

    def one_json() -> object:
        i = state["i"] = state["i"] + 1
        return json.dumps(views[i % len(views)].to_dict())

    return (
        per_call_us(one_observe, seconds),
        per_call_us(one_to_dict, seconds),
        per_call_us(one_json, seconds),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU time, one core")

    moves, elapsed = random_playouts(args.seconds)
    rate = moves / elapsed
    verdict = "meets" if rate >= GOAL_MOVES_PER_SECOND else "BELOW"
    print(f"random playouts (legal_moves + choice + apply): {rate:,.0f} moves/s  ({verdict} goal)")
    moves, elapsed = replays(args.seconds)
    print(f"replay (apply alone, validated):                {moves / elapsed:,.0f} moves/s")
    for rules in (Rules(players=2), Rules(players=4, visible_center=True)):
        obs, to_dict, text = view_costs(rules, args.seconds / 3)
        print(
            f"{rules.players} players: observe() {obs:.1f} µs/call, "
            f"View.to_dict() {to_dict:.1f} µs, json.dumps(to_dict) {text:.1f} µs"
        )


if __name__ == "__main__":
    main()
