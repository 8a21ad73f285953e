"""Bytes per profile and per history entry in the archive, on SQLite and PostgreSQL.

    python3 bench/profile_bytes.py            # N=2000 profiles, PER=20 matches each

Makes N profiles through the profile store (each with a key), then applies N*PER/2 rated
two-player results (0 to 2 bots beside, names and stats as play gives them), and reads
each table's size, indexes included: PostgreSQL's ``pg_total_relation_size`` after
VACUUM, SQLite's ``dbstat`` pages. Writes bench/results/profile_bytes.json, which
scripts/capacity.py turns into docs/capacity.md, *Profiles*.
"""

import asyncio
import json
import os
import random
import secrets
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # after ROOT: tests/services is not services

from postgres_engine import Postgres  # noqa: E402

from services.archive import (  # noqa: E402
    ArchiveSettings,
    MatchResult,
    SeatResult,
    migrate,
    open_profiles,
)
from services.archive.settings import parse_database_url  # noqa: E402
from services.profiles import keys  # noqa: E402

TABLES = (
    "profiles",
    "profile_keys",
    "link_codes",
    "applied_results",
    "profile_history",
    "daily_entries",
)
N, PER = int(os.environ.get("N", 1000)), int(os.environ.get("PER", 20))


def sizes(url):
    p = parse_database_url(url)
    if p.backend == "sqlite":
        with sqlite3.connect(p.path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            rows = db.execute(
                "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table','index')"
            ).fetchall()
            by = {}
            for name, tbl in rows:
                n = db.execute(
                    "SELECT coalesce(sum(pgsize),0) FROM dbstat WHERE name = ?", (name,)
                ).fetchone()[0]
                by[tbl] = by.get(tbl, 0) + n
            return {t: by.get(t, 0) for t in TABLES}
    with psycopg.connect(p.conninfo, autocommit=True) as c:
        c.execute("VACUUM ANALYZE")
        return {
            t: c.execute("SELECT pg_total_relation_size(%s)", (t,)).fetchone()[0] for t in TABLES
        }


def seat(i, pid, score, bot=False):
    turns = tuple(random.randint(6, 20) for _ in range(random.randint(0, 3)))
    return SeatResult(
        i,
        "Hard bot" if bot else random.choice(["Player", "Ada", "Grace Hopper", "Zoë"]),
        pid,
        bot,
        False,
        score,
        1,
        False,
        len(turns),
        turns,
        random.randint(0, 6),
    )


async def run(url):
    store = await open_profiles(ArchiveSettings(database_url=url))
    base = sizes(url)
    ids = []
    for _ in range(N):
        ids.append(
            (
                await store.create_profile(
                    "Player", keys.hash_key(keys.new_key()), 1_800_000_000_000
                )
            ).id
        )
    made = sizes(url)
    fresh = sum(made[t] - base[t] for t in ("profiles", "profile_keys")) / N
    t0 = time.time()
    for r in range(PER * N // 2):
        a, b = random.sample(ids, 2)
        bots = [
            seat(2 + k, "", random.randint(0, 600), bot=True) for k in range(random.randint(0, 2))
        ]
        res = MatchResult(
            f"t{secrets.token_hex(8)}",
            1_800_000_000_000 + r,
            2 + len(bots),
            True,
            "",
            (seat(0, a, random.randint(0, 600)), seat(1, b, random.randint(0, 600)), *bots),
        )
        await store.apply_result(res)
    took = time.time() - t0
    after = sizes(url)
    hist_rows = PER * N
    await store.close()
    return {
        "fresh_profile": fresh,
        "profile_after": (
            after["profiles"] + after["profile_keys"] - base["profiles"] - base["profile_keys"]
        )
        / N,
        "history_entry": (after["profile_history"] - made["profile_history"]) / hist_rows,
        "applied_result": (after["applied_results"] - made["applied_results"]) / (hist_rows // 2),
        "apply_ms": 1000 * took / (hist_rows // 2),
        "raw": after,
    }


async def main():
    random.seed(1)
    d = tempfile.mkdtemp()
    out = {"profiles": N, "matches_per_profile": PER}
    url = f"sqlite:///{d}/a.sqlite3"
    migrate(parse_database_url(url))
    out["sqlite"] = await run(url)
    print("sqlite", out["sqlite"], flush=True)
    pg = Postgres()
    pg.start()
    try:
        url = pg.database("m")
        migrate(parse_database_url(url))
        out["postgresql"] = await run(url)
        print("postgresql", out["postgresql"], flush=True)
    finally:
        pg.stop()
    (ROOT / "bench" / "results" / "profile_bytes.json").write_text(json.dumps(out, indent=2) + "\n")


asyncio.run(main())
