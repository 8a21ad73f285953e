"""The protocol fuzz at length: a million frames at a live ``rackem up`` while players play.

    python3 bench/fuzz_bench.py [--frames 1000000] [--fuzzers 8] [--players 4] [--pool 5000]

The same fuzz as ``tests/system/test_fuzz.py`` (``tests/system/fuzz.py``: frames drawn
by Hypothesis from the protocol's JSON schemas, and byte-level garbage; hundreds of
connections from 127.0.0.2; players playing whole matches against bots from 127.0.0.1,
each verified from its log; ``/healthz`` every quarter second), only longer. Prints the
figures as JSON, with the load average before and after: the machine is usually shared,
so compare frames per second only within one run. Exits 1 if anything the CI test
asserts did not hold (an ``internal`` answer, an unexpected close, a traceback or an
unexpected error in the server's log, a match that did not finish or verify, a health
check that failed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.system.fuzz import log_problems, rackem_up, run_fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--fuzzers", type=int, default=8, help="concurrent fuzz connections")
    parser.add_argument("--players", type=int, default=4, help="concurrent protocol players")
    parser.add_argument("--pool", type=int, default=5000, help="distinct frames drawn")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    before = os.getloadavg()
    started = time.time()
    with rackem_up() as (proc, url, log):
        report = asyncio.run(
            run_fuzz(
                url,
                args.frames,
                fuzzers=args.fuzzers,
                players=args.players,
                pool=args.pool,
                seed=args.seed,
            )
        )
        alive = proc.poll() is None
        logged = log_problems(log)
    out = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)),
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "frames": report.frames,
        "distinct_frames_drawn": report.pool,
        "connections": report.connections,
        "seated_connections": report.seated_connections,
        "answers": report.answers,
        "accepted_moves_by_the_fuzz": report.accepted_moves,
        "seconds": round(report.seconds, 1),
        "frames_per_s": round(report.frames / report.seconds),
        "closes": dict(sorted(report.closes.items())),
        "error_codes": dict(report.codes.most_common()),
        "matches_played": report.matches,
        "matches_verified": report.verified,
        "health_checks": report.health_checks,
        "health_slowest_ms": round(report.health_max_s * 1000, 1),
        "server_alive": alive,
        "log_problems": logged[:10],
        "problems": report.problems,
    }
    print(json.dumps(out, indent=2))
    good = (
        alive
        and not logged
        and not report.problems
        and "internal" not in report.codes
        and report.verified == report.matches > 0
    )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
