"""What an open connection and a seated player cost ``rackem up``, in Python allocations.

The server runs in this process under ``tracemalloc``; the clients run in another process,
so what is traced here is the server's alone: what it allocated and still holds per
connection once the connections are open (and, seated, once both players of each table
have its first view). The budgets sit a few KB above today's figures and well under what
the same connections cost before the per-connection objects were slimmed
(docs/performance.md, *Memory*: deques in asyncio's events and queues, the handshake's
headers, the ASGI layers under the WebSocket): a change that brings any of it back fails.
RSS, which these budgets keep down, is measured by ``bench/memory_bench.py`` and
``bench/load.py``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rackem.up import System, start

IDLE_BUDGET_KB = 24.0  # today ~19 KB; ~36 KB before
SEATED_BUDGET_KB = 36.0  # today ~29 KB (no move yet); ~50 KB before

CLIENTS = r"""
import asyncio, sys
from rackem.client import Client

async def main(url: str, count: int, seated: bool) -> None:
    clients = [Client(url) for _ in range(count)]
    for client in clients:
        await client.connect()
    if seated:
        for host, guest in zip(clients[::2], clients[1::2]):
            table = await host.create_table("Host", {"players": 2})
            await guest.join(table["code"], "Guest")
        for client in clients:
            await client.wait_for("view", timeout=60)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for client in clients:
        await client.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"))
"""

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def system() -> AsyncIterator[System]:
    running = await start("127.0.0.1", 0, None, env={"GAMES_PER_IP": "0", "LOG_LEVEL": "WARNING"})
    yield running
    await running.stop()


async def _held_per_client_kb(url: str, count: int, seated: bool) -> float:
    """KB the server allocated and holds per client while ``count`` clients stay open."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    clients = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENTS,
        url,
        str(count),
        "1" if seated else "0",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert clients.stdin is not None and clients.stdout is not None
    try:
        assert await asyncio.wait_for(clients.stdout.readline(), 120) == b"ready\n"
        await asyncio.sleep(0.5)  # the last frames are handled
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        clients.stdin.close()
        await asyncio.wait_for(clients.wait(), 60)
    return held / count / 1024


async def test_an_idle_and_a_seated_client_stay_within_their_budgets(system: System) -> None:
    tracemalloc.start()
    try:
        await _held_per_client_kb(system.url, 4, seated=True)  # first uses: caches, imports
        idle = await _held_per_client_kb(system.url, 80, seated=False)
        seated = await _held_per_client_kb(system.url, 80, seated=True)
    finally:
        tracemalloc.stop()
    print(f"held per client: idle {idle:.1f} KB, seated {seated:.1f} KB")
    assert 0 < idle <= IDLE_BUDGET_KB
    assert idle < seated <= SEATED_BUDGET_KB
