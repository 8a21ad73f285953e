"""What ``rackem review`` costs: CPU seconds to review one seat of a match to 500.

Run ``python3 bench/review.py [--matches M] [--seed S]``. It plays M two-player
matches to 500 between hard and medium (as ``rackem tournament`` does, seeds from
``match_seed``), keeps each as a log, and times ``review(log, seat)`` for both seats
with ``time.process_time``: CPU time, so other load on a shared machine skews it
less; the load average is printed beside it. The target is at most 2 s per review.
Last, per level, the share of decisions given each mark and the accuracy: the
distribution docs/review.md chose its thresholds from.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from rackcore import Match, Rules, observe, to_log
from rackcore.bots import choose
from rackcore.review import MARKS, review
from rackem.tournament import match_seed, seating

LEVELS = ("hard", "medium")


def played_log(seed: str, index: int) -> dict[str, Any]:
    """Match ``index`` of a hard-vs-medium tournament ``seed``, as a finished log."""
    rules = Rules(players=2, target=500)
    seats = seating(LEVELS, 2, index)
    match = Match(rules, match_seed(seed, index))
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        view = observe(match, match.turn)
        match.apply(choose(view, seats[match.turn], index).with_by("bot"))
    return to_log(match)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--seed", default="bench-review")
    args = parser.parse_args()
    worst = 0.0
    marks: dict[str, dict[str, int]] = {}
    for index in range(args.matches):
        log = played_log(args.seed, index)
        for seat in (0, 1):
            start = time.process_time()
            result = review(log, seat)
            cpu = time.process_time() - start
            worst = max(worst, cpu)
            level = seating(LEVELS, 2, index)[seat]
            for name, count in result.marks.items():
                counts = marks.setdefault(level, dict.fromkeys((m for m, _ in MARKS), 0))
                counts[name] += count
            print(
                f"match {index} seat {seat} ({level:<6}) rounds {len(log['result']['rounds']):>2} "
                f"decisions {len(result.decisions):>3}  cpu {cpu:.3f} s  "
                f"{1000 * cpu / max(1, len(result.decisions)):.2f} ms/decision"
            )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"worst review {worst:.3f} s of CPU (target 2 s); load average {load}")
    for level, counts in marks.items():
        total = sum(counts.values())
        shares = "  ".join(f"{name} {100 * n / total:.1f}%" for name, n in counts.items())
        accuracy = 100 * (counts["best"] + counts["good"]) / total
        print(f"{level:<6} {total} decisions: {shares}; accuracy {accuracy:.1f}%")


if __name__ == "__main__":
    main()
