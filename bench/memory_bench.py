"""Memory against history: ``rackem up``'s RSS after 100 finished matches and after many more.

    python3 bench/memory_bench.py                       # 10,000 matches, 100 idle connections
    python3 bench/memory_bench.py --matches 2000 --json

It starts ``rackem up`` (bench/load_servers.py: a fresh ``--data`` directory,
``GAMES_PER_IP=0``) with bots that move at once and no reconnect grace, then
``--workers`` clients each loop: ``create_table`` against the computer (2 seats, target
50, easy bots, ``start_now``, open to spectators), ``leave`` at once, so the left seat's
bot plays the match out inside the table service, ``watch`` it to its final view, and
read its record (``GET /match/{id}.json``).
After ``--baseline`` matches and at each checkpoint, once the matchmaker's sweep has
moved what is done out of memory (``--settle`` s), it samples the server's RSS. At the
end it fetches every record again (each must verify with rackcore) and opens
``--idle`` connections that say hello and stay: RSS per idle connection. What a seated
player costs is ``bench/load.py``'s ``server_kb_per_client`` (docs/performance.md).

Figures are RSS from /proc, not CPU time: a busy machine slows the run, not the figure;
``uptime`` is printed with each run anyway.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from load_servers import Processes, Servers, start_servers

from rackcore import verify
from rackem.client import FINAL, Client, ServerError

SERVER_ENV = {
    "BOT_DELAY_MS": "0",
    "RECONNECT_GRACE_MS": "0",
    "MSG_RATE": "1000",
    "MSG_BURST": "1000",
    "OVERLOAD_LAG_MS": "0",
    "OVERLOAD_ANSWER_MS": "0",
}


RULES = {"players": 2, "target": 50}
_RETRY = ("unavailable", "busy", "watching", "already_seated", "rate_limited")


def _over(table_id: str, view: dict[str, Any]) -> bool:
    return bool(view["table_id"] == table_id and view["status"] in FINAL)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _rss_mb(processes: Processes) -> float:
    return round(sum(processes.sample().rss.values()) / 2**20, 1)


async def _served(http: httpx.AsyncClient, base: str, table_id: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        answer = await http.get(f"{base}/match/{table_id}.json")
        if answer.status_code == 200:
            return answer.json()
        if time.monotonic() > deadline:
            raise RuntimeError(f"match {table_id} not served: {answer.status_code}")
        await asyncio.sleep(0.2)


async def _again(call: Callable[[], Awaitable[Any]], tries: int = 100) -> Any:
    """``call``, retried while the server is busy or the last table is still letting go."""
    for attempt in range(tries):
        try:
            return await call()
        except ServerError as err:
            if err.code not in _RETRY or attempt == tries - 1:
                raise
        await asyncio.sleep(0.1)


async def _play(url: str, base: str, count: int, ids: list[str]) -> None:
    """``count`` matches on one connection, one after the other; their ids into ``ids``.

    Each: a table against the computer, open to spectators; the seat left at once (its
    bot plays the match out in the table service); the match watched to its final view
    (so nothing asks the table for a record before it exists), then its record read."""
    async with Client(url) as client, httpx.AsyncClient(trust_env=False, timeout=30) as http:
        for _ in range(count):
            seated = await _again(
                lambda: client.create_table(
                    "Ann", RULES, level="easy", start_now=True, spectators="public"
                )
            )
            table_id = seated["table_id"]
            await _again(client.leave)
            await _again(functools.partial(client.watch, seated["code"]))
            await client.wait_view(functools.partial(_over, table_id), timeout=300)
            await _served(http, base, table_id, 60)
            ids.append(table_id)


async def _matches(url: str, base: str, count: int, workers: int, ids: list[str]) -> None:
    shares = [count // workers + (i < count % workers) for i in range(workers)]
    await asyncio.gather(*(_play(url, base, n, ids) for n in shares if n))


async def _check_all(base: str, ids: list[str], workers: int) -> int:
    """Fetch every record again; how many verify (each must)."""
    valid = 0
    queue = list(ids)

    async def fetch(http: httpx.AsyncClient) -> None:
        nonlocal valid
        while queue:
            table_id = queue.pop()
            log = await _served(http, base, table_id, 10)
            valid += bool(verify(log)["valid"])

    async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
        await asyncio.gather(*(fetch(http) for _ in range(workers)))
    return valid


async def _idle(url: str, count: int, processes: Processes) -> float:
    """KB of server RSS per connection that said hello and stays idle."""
    before = sum(processes.sample().rss.values())
    clients = [Client(url) for _ in range(count)]
    for i in range(0, count, 50):
        await asyncio.gather(*(c.connect() for c in clients[i : i + 50]))
    await asyncio.sleep(2)
    after = sum(processes.sample().rss.values())
    await asyncio.gather(*(c.close() for c in clients))
    return round((after - before) / count / 1024, 1)


async def run(args: argparse.Namespace, servers: Servers) -> dict[str, Any]:
    processes = Processes(servers.pids)
    base = servers.url.replace("ws://", "http://").removesuffix("/ws")
    ids: list[str] = []
    out: dict[str, Any] = {"uptime_before": _uptime(), "rss_mb_empty": _rss_mb(processes)}
    started = time.monotonic()
    await _matches(servers.url, base, args.baseline, args.workers, ids)
    await asyncio.sleep(args.settle)
    out["rss_mb"] = {str(len(ids)): _rss_mb(processes)}
    print(f"{len(ids)} matches: RSS {out['rss_mb'][str(len(ids))]} MB", file=sys.stderr)
    checkpoints = sorted({*args.checkpoints, args.matches})
    for mark in (c for c in checkpoints if c > args.baseline):
        await _matches(servers.url, base, mark - len(ids), args.workers, ids)
        await asyncio.sleep(args.settle)
        out["rss_mb"][str(len(ids))] = _rss_mb(processes)
        print(f"{len(ids)} matches: RSS {out['rss_mb'][str(len(ids))]} MB", file=sys.stderr)
    out["matches_s"] = round(time.monotonic() - started, 1)
    out["records_valid"] = await _check_all(base, ids, args.workers)
    out["records"] = len(ids)
    out["rss_mb_after_reading_all"] = _rss_mb(processes)
    out["kb_per_idle_connection"] = await _idle(servers.url, args.idle, processes)
    first, last = out["rss_mb"][str(args.baseline)], out["rss_mb"][str(len(ids))]
    out["growth"] = round(last / first - 1, 3)
    out["uptime_after"] = _uptime()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add = parser.add_argument
    add("--matches", type=int, default=10_000, help="finished matches in all (default 10000)")
    add("--baseline", type=int, default=100, help="the first RSS sample after this many")
    add("--checkpoints", type=int, nargs="*", default=[1_000, 2_500, 5_000])
    add("--workers", type=int, default=8, help="connections playing at once (default 8)")
    add("--settle", type=float, default=12.0, help="s before each sample (a sweep is 10 s)")
    add("--idle", type=int, default=500, help="idle connections at the end (default 500)")
    add("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    servers = start_servers("up", SERVER_ENV)
    try:
        out = asyncio.run(run(args, servers))
    finally:
        servers.stop()
    if args.json:
        print(json.dumps(out))
        return
    print(f"load before: {out['uptime_before']}")
    print(f"RSS with no match yet: {out['rss_mb_empty']} MB")
    for count, rss in out["rss_mb"].items():
        print(f"after {count} finished matches: RSS {rss} MB")
    print(f"growth from {args.baseline} to {out['records']}: {out['growth'] * 100:.1f}%")
    print(f"records served and valid: {out['records_valid']} of {out['records']}")
    print(f"RSS after reading every record: {out['rss_mb_after_reading_all']} MB")
    print(f"server RSS per idle connection: {out['kb_per_idle_connection']} KB")
    print(f"matches took {out['matches_s']} s; load after: {out['uptime_after']}")


if __name__ == "__main__":
    main()
