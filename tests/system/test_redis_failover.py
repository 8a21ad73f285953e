"""The Redis primary SIGKILLed under Sentinel while matches are played over WebSockets:
the Sentinels promote the replica, the services follow it (``redis+sentinel://``), and
every match finishes, every record verifies, and every move a client saw acknowledged
is in the log, because an append is acknowledged only once the replica has it
(``REDIS_WAIT_REPLICAS=1``). The whole system runs as its own processes
(tests/system/stack.py) on a Sentinel group of its own (tests/redis_engines.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis_engines import SentinelGroup

from rackem.client import Client, Message, play_match

from .conftest import SETTINGS
from .stack import Stack
from .test_matches import _verify

MATCHES = 4


class Recording(Client):
    """A client that keeps every move the server acknowledged (``moved``)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.acknowledged: list[tuple[int, Message]] = []

    async def move(
        self, move: Message, *, move_id: str | None = None, version: int | None = None
    ) -> Message:
        moved = await super().move(move, move_id=move_id, version=version)
        self.acknowledged.append((int(moved["version"]), move))
        return moved


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelGroup]:
    group = SentinelGroup(tmp_path_factory.mktemp("sentinel"))
    try:
        group.start()
        yield group
    finally:
        group.stop()


@pytest.fixture(scope="module")
def failover_stack(
    sentinel: SentinelGroup, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    settings = {
        **SETTINGS,
        "REDIS_WAIT_REPLICAS": "1",
        "REDIS_WAIT_MS": "2000",
        # The gateway's default RESUBSCRIBE_TRIES keeps re-opening a lost table stream
        # through the whole failover (these protocol clients do not resume, as the web
        # client does): the test would fail if the default were shorter than a failover.
    }
    system = Stack(tmp_path_factory.mktemp("failover"), sentinel.url, settings)
    system.build(tables=2)
    try:
        system.start()
        yield system
    finally:
        system.stop()


async def _fail_over(sentinel: SentinelGroup) -> None:
    """SIGKILL the primary; once the Sentinels promoted the replica, start the killed
    server again (as Kubernetes restarts a pod): they make it the new replica."""
    killed = await asyncio.to_thread(sentinel.kill_primary)
    await asyncio.to_thread(sentinel.wait_failover, killed)
    await asyncio.to_thread(sentinel.restart, killed)
    await asyncio.to_thread(sentinel.wait_synced)


async def test_the_redis_primary_killed_mid_match_loses_no_acknowledged_move(
    failover_stack: Stack, sentinel: SentinelGroup, tmp_path: Path
) -> None:
    clients = [Recording(failover_stack.ws) for _ in range(MATCHES * 2)]
    for client in clients:
        await client.connect()
    try:
        await asyncio.gather(*(c.quick_match(f"P{n}", 2) for n, c in enumerate(clients)))
        # Paced like quick people, so every match is still being played at the kill.
        games = asyncio.gather(*(play_match(c, timeout=240, min_interval=0.03) for c in clients))
        while min(len(c.acknowledged) for c in clients) < 3:
            await asyncio.sleep(0.05)
        await _fail_over(sentinel)
        finals: list[Message] = list(await games)
    finally:
        for client in clients:
            await client.close()
    assert all(final["status"] == "finished" for final in finals)
    tables = {c.table_id for c in clients}
    assert len(tables) == MATCHES
    acknowledged = 0
    for table_id in tables:
        log: dict[str, Any] = failover_stack.get_json(f"/match/{table_id}.json")
        _verify(log, tmp_path)
        for client in (c for c in clients if c.table_id == table_id):
            for version, move in client.acknowledged:
                logged = log["moves"][version - 1]
                assert logged["seat"] == client.seat
                assert {k: logged[k] for k in move} == move
                acknowledged += 1
    assert acknowledged > MATCHES * 2 * 3
    # The kill met the play: tables held moves back or were rebuilt from the new primary.
    events = {
        record.get("event")
        for name, service in failover_stack.services.items()
        if name.startswith("table")
        for record in service.records()
    }
    assert events & {"store_unavailable", "store_unavailable_closing", "table_adopted"}
