"""Bytes a match costs where it is kept: in Redis while it is played and while its finished
record waits for the archive, and in the archive once it is there. For scripts/capacity.py's
memory and disk model (docs/capacity.md).

    python bench/record_bytes.py [--tables 30] [--rows 3000] [--level easy]
                                 [--json bench/results/record_bytes.json]

Starts its own durable ``redis-server`` (AOF, a password; bench/redis_memory.py's) and a
table replica in this process on it. Each table is the load benchmark's shape: one human
seat, played over the gateway's link client on real gRPC at ``--level`` (each move answered,
so its move-id reply is stored as in play), against a table bot of ``--level`` chosen in
process; played to the end, one table after another. Measured on Redis:

- a live table: ``MEMORY USAGE`` of its keys (meta, log, state, replies, lease) every 10 of
  the human's moves, averaged over the match (the pace is even, so that is its average
  over time), and the most;
- a finished table, as it waits for the archive (the backlog): its keys at the end;
- ``used_memory`` before the first table and after the last, per finished table: what
  ``MEMORY USAGE`` leaves out (the expiry entries, the allocator's size classes);
- the lease index, per live table: ``MEMORY USAGE`` of one shard holding 20,000 entries
  noted by the store's own ``RedisLeaseIndex`` (a big sorted set, as in production);
- the matchmaker, per started table against the computer: its table record, room code
  and seat token (its own store, ``create_private`` started and ``finish``-ed), which stay
  ``DONE_TTL_MS``/``TOKEN_TTL_MS`` (24 h) whatever the archive does.

Then in the archive, through ``services/archive``'s own ``open_records`` after ``rackem
migrate``'s ``schema.migrate``: ``--rows`` records, the played matches' records over and
over under new table ids (rows as the table service will write them, enough of them that
pages average out), on an SQLite file (its size, WAL checkpointed) and on Debian's
PostgreSQL (tests/postgres_engine.py; ``pg_total_relation_size``: heap, TOAST and indexes),
each less the empty schema's. Prints the figures and the load average before and after
each part (the machine may be shared); ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from redis_memory import PASSWORD, start_redis, usage  # noqa: E402
from seat_views import view_of, views  # noqa: E402

from rackcore import Rules  # noqa: E402
from rackcore.bots import choose  # noqa: E402
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc  # noqa: E402
from services.archive import schema  # noqa: E402
from services.archive.codec import pack  # noqa: E402
from services.archive.records import MatchRecord  # noqa: E402
from services.archive.settings import ArchiveSettings, parse_database_url  # noqa: E402
from services.archive.tier import open_records  # noqa: E402
from services.common.errors import ServiceError  # noqa: E402
from services.common.redis_client import connect  # noqa: E402
from services.common.registry import RedisRegistry  # noqa: E402
from services.convert import move_to_pb  # noqa: E402
from services.gateway.table_client import dial  # noqa: E402
from services.matchmaker.ids import hash_token, new_table_id, new_token  # noqa: E402
from services.matchmaker.records import NewTable, Sitter, Timings  # noqa: E402
from services.matchmaker.store.redis import RedisStore as MatchmakerStore  # noqa: E402
from services.matchmaker.store.redis_keys import Layout  # noqa: E402
from services.table.server import create_server  # noqa: E402
from services.table.settings import TableSettings  # noqa: E402
from services.table.store.lease_index import RedisLeaseIndex  # noqa: E402
from services.table.store.redis import RedisStore, keys  # noqa: E402

LOCAL = "127.0.0.1"
SAMPLE_EVERY = 10  # human moves between two samples of a live table's bytes
INDEX_ENTRIES = 20_000


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


async def play(
    stub: table_pb2_grpc.TableAsyncStub, sync: redis.Redis, level: str, n: int
) -> dict[str, Any]:
    """One table, the human seat played to the end: its bytes along the way and at the end,
    its moves, and its record."""
    created = await stub.CreateTable(
        table_pb2.CreateTableRequest(
            code=f"C{n:05d}",
            rules=game_pb2.Rules(players=2),
            seats=[table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(bot=True, level=level)],
        )
    )
    table_id, token = created.table_id, created.tokens[0]
    names = keys(table_id)
    samples: list[int] = []
    human_moves = 0
    request = table_pb2.SeatRequest(table_id=table_id, token=token)
    link = dial(stub)
    done: set[tuple[int, str]] = set()
    try:
        async for tv in views(link, request):
            if tv.status == "round_over":
                if (tv.version, "continue") not in done:
                    done.add((tv.version, "continue"))
                    await link.continue_round(request, 5)
                continue
            view = view_of(tv)
            if tv.status != "playing" or not view.my_turn or (tv.version, "move") in done:
                continue
            done.add((tv.version, "move"))
            try:
                await link.submit(
                    table_pb2.SubmitMoveRequest(
                        table_id=table_id,
                        token=token,
                        move=move_to_pb(choose(view, level, seed=tv.version)),
                        move_id=f"m{tv.version}-{secrets.token_hex(4)}",
                        expected_version=tv.version,
                    ),
                    5,
                )
            except ServiceError:
                continue  # overtaken by a newer view: answer that one
            human_moves += 1
            if human_moves % SAMPLE_EVERY == 1:
                samples.append(usage(sync, names))
    finally:
        await link.close()
    record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=table_id))
    return {
        "live_mean": statistics.fmean(samples),
        "live_max": max(samples),
        "finished": usage(sync, names),
        "moves": int(sync.llen(names[1])),
        "human_moves": human_moves,
        "finished_ttl_ms": int(sync.pttl(names[1])),
        "record": MatchRecord(
            table_id=record.table_id,
            code=record.code,
            reason="finished",
            finished_at_ms=int(time.time() * 1000),
            log_json=record.log_json,
        ),
    }


async def lease_index_bytes(url: str, sync: redis.Redis) -> float:
    """Bytes per entry of one lease index shard holding ``INDEX_ENTRIES`` live tables."""
    client = connect(url)
    try:
        index = RedisLeaseIndex(client, shards=1, prefix="bench")
        ids = [new_table_id() for _ in range(INDEX_ENTRIES)]
        for table_id in ids:
            await index.add(table_id, 1_500)
        await index.note([(table_id, 0) for table_id in ids], 1_500)
        return usage(sync, index.keys) / INDEX_ENTRIES
    finally:
        await client.aclose()


async def matchmaker_bytes(url: str, sync: redis.Redis, tables: int) -> float:
    """The matchmaker's keys per started game against the computer (median), once finished."""
    client = connect(url)
    try:
        store, timings, layout = MatchmakerStore(client), Timings(), Layout()
        sizes = []
        for _ in range(tables):
            table = NewTable(
                new_table_id(), secrets.token_hex(3).upper(), False, Rules(), "easy", 0
            )
            sitter = Sitter("Ann", hash_token(new_token()))
            now = int(time.time() * 1000)
            owner = f"mm-{secrets.token_hex(4)}"
            placed = await store.create_private(table, sitter, now, timings, owner)
            if placed is None:
                continue
            await store.finish(table.id, owner, "replica-1 10.0.0.1:50052", [(1, "Bot")], timings)
            names = [layout.room(table.id).table(table.id), layout.code(table.code)]
            names.append(layout.token(sitter.token_hash))
            sizes.append(usage(sync, names))
        return float(statistics.median(sizes))
    finally:
        await client.aclose()


async def fill(url: str, records: list[MatchRecord], rows: int) -> None:
    """``rows`` records through the archive's own store: the played ones over and over, each
    under a new table id."""
    store = await open_records(ArchiveSettings(database_url=url))
    try:
        for n in range(rows):
            base = records[n % len(records)]
            await store.put_record(
                MatchRecord(
                    new_table_id(), base.code, base.reason, base.finished_at_ms, base.log_json
                )
            )
    finally:
        await store.close()


def sqlite_size(path: Path) -> int:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


async def sqlite_bytes(workdir: Path, records: list[MatchRecord], rows: int) -> dict[str, Any]:
    path = workdir / "archive.sqlite3"
    url = f"sqlite:///{path}"
    schema.migrate(parse_database_url(url))
    empty = sqlite_size(path)
    before = load_average()
    started = time.monotonic()
    await fill(url, records, rows)
    seconds = time.monotonic() - started
    full = sqlite_size(path)
    return {
        "rows": rows,
        "bytes_empty": empty,
        "bytes_full": full,
        "bytes_per_record": (full - empty) / rows,
        "put_ms": seconds * 1000 / rows,
        "load_average": [before, load_average()],
    }


async def postgres_bytes(records: list[MatchRecord], rows: int) -> dict[str, Any]:
    from postgres_engine import Postgres

    server = Postgres()
    server.start()
    try:
        url = server.database("records")
        schema.migrate(parse_database_url(url))

        def sizes() -> dict[str, int]:
            import psycopg

            with psycopg.connect(url, autocommit=True) as db:
                db.execute("VACUUM ANALYZE match_records")
                row = db.execute(
                    "SELECT pg_total_relation_size('match_records'),"
                    " pg_relation_size('match_records'),"
                    " pg_table_size('match_records') - pg_relation_size('match_records'),"
                    " pg_indexes_size('match_records'),"
                    " coalesce(sum(octet_length(log)), 0)::bigint,"
                    " current_setting('server_version_num')::int"
                    " FROM match_records"
                ).fetchone()
            assert row is not None
            names = ("total", "heap", "toast_and_maps", "indexes", "log_bytes", "version")
            return dict(zip(names, (int(v) for v in row), strict=True))

        empty = sizes()
        before = load_average()
        started = time.monotonic()
        await fill(url, records, rows)
        seconds = time.monotonic() - started
        full = sizes()
    finally:
        server.stop()
    per = {k: (full[k] - empty[k]) / rows for k in ("total", "heap", "toast_and_maps", "indexes")}
    return {
        "rows": rows,
        "server_version_num": full["version"],
        "bytes_empty": empty["total"],
        "bytes_full": full["total"],
        "bytes_per_record": per["total"],
        "bytes_per_record_by_part": per,
        "log_bytes_per_record": full["log_bytes"] / rows,
        "put_ms": seconds * 1000 / rows,
        "load_average": [before, load_average()],
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="rackem-record-bytes-"))
    server, port = start_redis(str(workdir))
    url = f"redis://:{PASSWORD}@{LOCAL}:{port}/0"
    client = connect(url)
    sync = redis.Redis(port=port, password=PASSWORD)
    settings = TableSettings(
        host=LOCAL, port=0, bot_delay_ms=0, decision_ms=600_000, bot_addr="", redis_url=url
    )
    running = await create_server(
        settings, store=RedisStore(client), registry=RedisRegistry(client)
    )
    redis_load = [load_average()]
    try:
        async with grpc.aio.insecure_channel(running.addr) as channel:
            stub = table_pb2_grpc.TableStub(channel)
            await play(stub, sync, args.level, -1)  # warm: scripts loaded, buffers grown
            base = int(sync.info("memory")["used_memory"])
            tables = [await play(stub, sync, args.level, n) for n in range(args.tables)]
            grown = int(sync.info("memory")["used_memory"])
        index = await lease_index_bytes(url, sync)
        mm = await matchmaker_bytes(url, sync, args.tables)
        redis_load.append(load_average())
        version = str(sync.info("server")["redis_version"])
    finally:
        await running.stop(0)
        await client.aclose()
        sync.close()
        server.terminate()
        server.wait(10)
    records = [t["record"] for t in tables]
    logs = [r.log_json.encode() for r in records]
    packed = [len(pack(r.log_json)[1]) for r in records]
    finished = statistics.median(t["finished"] for t in tables)
    report: dict[str, Any] = {
        "bench": "record_bytes",
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpus": os.cpu_count(),
        "note": "loopback; the machine may be shared (load averages by part)",
        "level": args.level,
        "tables": args.tables,
        "redis": {
            "version": version,
            "load_average": redis_load,
            "moves_per_match": statistics.median(t["moves"] for t in tables),
            "human_moves_per_match": statistics.median(t["human_moves"] for t in tables),
            "live_table_bytes_mean": statistics.median(t["live_mean"] for t in tables),
            "live_table_bytes_max": statistics.median(t["live_max"] for t in tables),
            "finished_table_bytes": finished,
            "finished_ttl_ms": tables[0]["finished_ttl_ms"],
            "used_memory_per_finished_table": (grown - base) / args.tables,
            "lease_index_bytes_per_table": index,
            "matchmaker_bytes_per_started_table": mm,
        },
        "record": {
            "json_bytes_mean": statistics.fmean(len(b) for b in logs),
            "zlib_bytes_mean": statistics.fmean(packed),
        },
        "archive": {"sqlite": await sqlite_bytes(workdir, records, args.rows)},
    }
    if args.postgres:
        report["archive"]["postgresql"] = await postgres_bytes(records, args.rows)
    shutil.rmtree(workdir, ignore_errors=True)
    return report


def show(r: dict[str, Any]) -> None:
    red, rec, arc = r["redis"], r["record"], r["archive"]
    kib = 1024
    print(
        f"{r['tables']} two-seat tables (a human and a bot, {r['level']}) played to the end "
        f"over gRPC on redis-server {red['version']} (AOF, password)"
    )
    print(f"  moves per match (median):            {red['moves_per_match']:8.0f}")
    print(f"  the human's moves per match:         {red['human_moves_per_match']:8.0f}")
    print(f"  live table, mean over its match:     {red['live_table_bytes_mean'] / kib:8.1f} KiB")
    print(f"  live table, at its last move:        {red['live_table_bytes_max'] / kib:8.1f} KiB")
    print(f"  finished table (its keys):           {red['finished_table_bytes'] / kib:8.1f} KiB")
    used = red["used_memory_per_finished_table"]
    print(f"  used_memory per finished table:      {used / kib:8.1f} KiB")
    print(f"  lease index, per live table:         {red['lease_index_bytes_per_table']:8.0f} B")
    mm = red["matchmaker_bytes_per_started_table"]
    print(f"  matchmaker, per started table:       {mm / kib:8.1f} KiB")
    print(f"  load average, before / after:        {red['load_average']}")
    print(
        f"a record: {rec['json_bytes_mean']:,.0f} B of JSON, {rec['zlib_bytes_mean']:,.0f} B zlib"
    )
    for name, a in arc.items():
        print(
            f"  {name:10} {a['rows']:,} rows: {a['bytes_per_record']:7.0f} B a record "
            f"(table, indexes, pages), {a['put_ms']:.2f} ms a put; load {a['load_average']}"
        )
        for part, value in a.get("bytes_per_record_by_part", {}).items():
            print(f"    {part:16} {value:7.0f} B")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=30, help="matches played (default 30)")
    parser.add_argument("--rows", type=int, default=3000, help="archive rows (default 3000)")
    parser.add_argument("--level", default="easy", help="both seats' play (load.py's: easy)")
    parser.add_argument("--no-postgres", dest="postgres", action="store_false", help="SQLite only")
    parser.add_argument("--json", default="", help="write the figures here too")
    args = parser.parse_args()
    report = asyncio.run(bench(args))
    show(report)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.json}")


if __name__ == "__main__":
    main()
