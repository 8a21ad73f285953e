"""Our own fuzz, in every CI run: 100,000 frames (from the protocol's JSON schemas, and
byte-level garbage) over hundreds of connections at a live ``rackem up``, while players
play whole matches on it (tests/system/fuzz.py; the longer run is bench/fuzz_bench.py)."""

from __future__ import annotations

import os

import httpx

from tests.system.fuzz import log_problems, rackem_up, run_fuzz

FRAMES = 100_000


async def test_the_gateway_survives_a_fuzz_while_matches_are_played() -> None:
    with rackem_up() as (proc, url, log):
        report = await run_fuzz(url, FRAMES, fuzzers=8, players=4, pool=1500, seed=21)
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            assert (await http.get(f"{url}/healthz")).status_code == 200
        assert proc.poll() is None  # still up
        logged = log_problems(log)  # no traceback, no unexpected error
    figures = (
        f"{report.frames} frames, {report.connections} connections, {report.answers} answers "
        f"in {report.seconds:.0f} s (load {os.getloadavg()[0]:.1f}); closes {dict(report.closes)}"
    )
    assert report.problems == [], figures
    assert report.frames >= FRAMES and report.connections >= 100, figures
    assert "internal" not in report.codes, figures
    # The fuzz reached the parser, the schemas, the services and live tables.
    for code in ("bad_frame", "bad_request", "bad_name", "not_seated", "malformed_move"):
        assert report.codes[code] > 0, (code, figures)
    assert report.closes[1007] > 0 and report.seated_connections > 0, figures
    assert report.accepted_moves > 0, figures
    # Every concurrent match finished and verified; /healthz answered all along.
    assert report.matches >= 4 and report.verified == report.matches, figures
    assert report.health_checks > 0, figures
    assert logged == []
