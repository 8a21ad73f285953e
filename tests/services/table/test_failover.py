"""Two table replica processes on one real Redis: a killed owner's table is taken over and
finishes; a replica stopped with SIGTERM hands its table over and no match ends."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from rackcore import verify
from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.running import Running as BotRunning
from table.table_players import SeatPlayer, create_table

pytestmark = pytest.mark.containers

ROOT = Path(__file__).resolve().parents[3]
RETRY = ("unavailable", "shutting_down", "wrong_replica")


class Replica:
    """``python -m services.table`` in its own process, its log in a file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.table"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._out,
        )
        self.addr = ""
        self.metrics_port = 0

    def events(self) -> list[dict[str, object]]:
        out = []
        for line in self.log.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    async def serving(self) -> str:
        async with asyncio.timeout(30):
            while not self.addr:
                assert self.process.poll() is None, self.log.read_text()
                for item in self.events():
                    if item.get("event") == "table_serving":
                        self.addr = str(item["addr"])
                    if item.get("event") == "listening":
                        self.metrics_port = int(str(item["metrics_port"]))
                await asyncio.sleep(0.05)
        return self.addr

    def metric(self, name: str) -> float:
        """A metric of no labels, from its /metrics."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode()
        return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._out.close()


@pytest.fixture
async def replicas(
    redis_url: str, bot_server: BotRunning, tmp_path: Path
) -> AsyncIterator[Callable[[], Awaitable[Replica]]]:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "METRICS_PORT": "0",
        "BOT_ADDR": bot_server.addr,
        "BOT_DELAY_MS": "0",
        "DECISION_MS": "20000",
        "LEASE_MS": "1200",
        "SWEEP_MS": "100",
        "HEARTBEAT_MS": "100",
        "HEARTBEAT_TTL_MS": "400",
    }
    started: list[Replica] = []

    async def start() -> Replica:
        replica = Replica(env, tmp_path / f"replica-{len(started)}.log")
        started.append(replica)
        await replica.serving()
        return replica

    yield start
    for replica in started:
        replica.close()


async def _play_until(players: list[SeatPlayer], version: int) -> list[asyncio.Task[None]]:
    tasks = [asyncio.create_task(p.run()) for p in players]
    async with asyncio.timeout(30):
        while max((v.version for p in players for v in p.views), default=0) < version:
            await asyncio.sleep(0.005)
    return tasks


async def _resume(player: SeatPlayer) -> None:
    """Play on after the old owner went away, subscribing again until a replica serves."""
    while True:
        try:
            await player.run()
            return
        except ServiceError as exc:
            if exc.code not in RETRY:
                raise
        await asyncio.sleep(0.05)


async def _finish_elsewhere(
    players: list[SeatPlayer], stub: table_pb2_grpc.TableAsyncStub, table_id: str, moved: int
) -> None:
    for player in players:
        player.stub = stub
    async with asyncio.timeout(60):
        await asyncio.gather(*(_resume(p) for p in players))
    record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=table_id))
    log = json.loads(record.log_json)
    verdict = verify(log)
    assert verdict["valid"] and verdict["finished"]
    assert len(log["moves"]) > moved
    assert all(p.views[-1].status == "finished" for p in players)


async def test_a_killed_replicas_table_is_taken_over_and_finishes(
    replicas: Callable[[], Awaitable[Replica]],
) -> None:
    first, second = await asyncio.gather(replicas(), replicas())
    async with (
        open_channel(first.addr) as a,
        open_channel(second.addr) as b,
    ):
        created = await create_table(table_pb2_grpc.TableStub(a), humans=2, bots=0, target=100)
        assert created.replica == first.addr
        stub_a = table_pb2_grpc.TableStub(a)
        players = [SeatPlayer(stub_a, created.table_id, created.tokens[s], s) for s in range(2)]
        tasks = await _play_until(players, 10)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()
        await asyncio.gather(*tasks, return_exceptions=True)
        moved = max(v.version for p in players for v in p.views)
        await _finish_elsewhere(players, table_pb2_grpc.TableStub(b), created.table_id, moved)
    adopted = [e for e in second.events() if e.get("event") == "table_adopted"]
    assert [e["table"] for e in adopted] == [created.table_id]
    assert second.metric("rackem_table_adoptions_total ") == 1
    # Timed from the lease's expiry (as its owner last noted it) to the adoption: at most
    # a few sweeps and resubscriptions after it, never the whole lease before it.
    assert second.metric("rackem_table_takeover_seconds_count ") == 1
    assert 0 <= second.metric("rackem_table_takeover_seconds_sum ") < 5


async def test_a_replica_stopped_by_sigterm_hands_its_table_over(
    replicas: Callable[[], Awaitable[Replica]],
) -> None:
    first, second = await asyncio.gather(replicas(), replicas())
    async with (
        open_channel(first.addr) as a,
        open_channel(second.addr) as b,
    ):
        stub_a = table_pb2_grpc.TableStub(a)
        created = await create_table(stub_a, humans=2, bots=0, target=100)
        players = [SeatPlayer(stub_a, created.table_id, created.tokens[s], s) for s in range(2)]
        tasks = await _play_until(players, 10)
        first.process.send_signal(signal.SIGTERM)
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(o, ServiceError) for o in outcomes)
        assert await asyncio.to_thread(first.process.wait, 20) == 0
        moved = max(v.version for p in players for v in p.views)
        await _finish_elsewhere(players, table_pb2_grpc.TableStub(b), created.table_id, moved)
    events = [e.get("event") for e in first.events()]
    assert "tables_handed_over" in events and "table_stopped" in events
    assert not any(e.get("event") == "table_abandoned" for e in second.events())
