"""Finished records leave Redis for the archive (PostgreSQL), through every service as its
own process: written once, served from there, the table's keys dropped; across a
replica's crash and a PostgreSQL outage (docs/tables.md, *Archiving*)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import psycopg
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from postgres_engine import Postgres
from redis_engines import Engines

from rackem.client import Client, play_match
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import OWN_CONNECTIONS
from services.table.store.redis import keys

from .conftest import SETTINGS
from .on_postgres import stack_on_postgres
from .stack import Service, Stack

ARCHIVE = {
    "ARCHIVE_SWEEP_MS": "200",
    "ARCHIVE_CLAIM_MS": "1000",
    "ARCHIVE_BACKOFF_MAX_MS": "1000",
    "DATABASE_TIMEOUT_MS": "1000",
    "METRICS_PORT": "0",
}


class Archived:
    """The stack, its PostgreSQL (this module's own, to stop and start) and its Redis."""

    def __init__(self, stack: Stack, server: Postgres, url: str, redis_url: str) -> None:
        self.stack = stack
        self.server = server
        self.url = url
        self.redis = redis.Redis.from_url(redis_url)

    def rows(self, table_id: str) -> int:
        with psycopg.connect(self.url) as connection:
            found = connection.execute(
                "SELECT count(*) FROM match_records WHERE table_id = %s", (table_id,)
            ).fetchone()
        assert found is not None
        return int(found[0])

    def keys_left(self, table_id: str) -> int:
        return int(self.redis.exists(*keys(table_id)))

    def replica(self, name: str = "table0") -> Service:
        return self.stack.services[name]

    def health(self, name: str, service: str) -> int:
        with grpc.insecure_channel(self.replica(name).addr, options=OWN_CONNECTIONS) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service=service)
            return int(stub.Check(request, timeout=5).status)

    def metrics(self, name: str = "table0") -> dict[str, float]:
        url = f"http://127.0.0.1:{self.replica(name).metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode()
        out = {}
        for line in text.splitlines():
            if line.startswith("rackem_archive"):
                name_, value = line.rsplit(" ", 1)
                out[name_] = float(value)
        return out

    def get_record(self, name: str, table_id: str) -> str:
        """``GetRecord`` of replica ``name``: the log's JSON text."""
        request = table_pb2.SummaryRequest(table_id=table_id)
        with grpc.insecure_channel(self.replica(name).addr, options=OWN_CONNECTIONS) as channel:
            reply = table_pb2_grpc.TableStub(channel).GetRecord(request, timeout=10)
        return str(reply.log_json)

    def bot_table(self, name: str = "table0") -> str:
        """An all-bot table on replica ``name``: it plays itself to the end in moments."""
        seats = [table_pb2.SeatSpec(name=f"Bot {i}", bot=True, level="easy") for i in (1, 2)]
        request = table_pb2.CreateTableRequest(
            code="ARCH1", rules=game_pb2.Rules(players=2), seats=seats
        )
        with grpc.insecure_channel(self.replica(name).addr, options=OWN_CONNECTIONS) as channel:
            reply = table_pb2_grpc.TableStub(channel).CreateTable(request, timeout=10)
        return str(reply.table_id)

    def recorded(self, table_id: str) -> dict[str, Any] | None:
        """The ``match`` of the ``match_record`` line logged for ``table_id``, if any."""
        for record in self.stack.match_records():
            if record.get("table") == table_id:
                match: dict[str, Any] = record["match"]
                return match
        return None


def _served(stack: Stack, table_id: str) -> Any:
    """``/match/{table_id}.json``, or None while a service answers 503 (try again)."""
    try:
        return stack.get_json(f"/match/{table_id}.json")
    except urllib.error.HTTPError as exc:
        if exc.code != 503:
            raise
        return None


def _until(check: Callable[[], bool], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {within_s} s: {what}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def archived(
    redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Archived]:
    with stack_on_postgres(
        redis_engines, tmp_path_factory, "archive", {**SETTINGS, **ARCHIVE}, 2
    ) as on:
        yield Archived(on.stack, on.server, on.url, on.redis_url)


async def test_a_finished_match_is_archived_served_from_there_and_leaves_redis(
    archived: Archived,
) -> None:
    stack = archived.stack
    async with Client(stack.ws) as ann, Client(stack.ws) as bob:
        await asyncio.gather(ann.quick_match("Ann", 2), bob.quick_match("Bob", 2))
        await asyncio.gather(*(play_match(c, timeout=240) for c in (ann, bob)))
    table_id = ann.table_id
    assert table_id
    _until(lambda: archived.keys_left(table_id) == 0, 60, "the table's keys dropped")
    assert archived.rows(table_id) == 1
    served = stack.get_json(f"/match/{table_id}.json")
    assert served == archived.recorded(table_id)  # what Redis served before, as it was
    assert archived.health("table0", "rackem.archive") == health_pb2.HealthCheckResponse.SERVING
    metrics = archived.metrics()
    assert metrics["rackem_archive_up"] == 1
    written = sum(
        archived.metrics(name).get('rackem_archive_writes_total{result="stored"}', 0)
        for name in ("table0", "table1")
    )
    assert written >= 1


async def test_postgres_down_play_goes_on_and_the_backlog_drains_once_it_is_back(
    archived: Archived,
) -> None:
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    archived.server.stop_server()
    try:
        ids = [archived.bot_table() for _ in range(2)]
        _until(lambda: all(archived.recorded(t) for t in ids), 60, "the matches finished")
        _until(
            lambda: archived.health("table0", "rackem.archive") == not_serving,
            30,
            "the archive's health NOT_SERVING",
        )
        # Readiness (what Kubernetes checks) stays: the replica plays on.
        assert (
            archived.health("table0", "rackem.v1.Table") == health_pb2.HealthCheckResponse.SERVING
        )
        assert archived.health("table0", "") == health_pb2.HealthCheckResponse.SERVING
        _until(lambda: archived.metrics()["rackem_archive_pending"] >= 2, 10, "pending shown")
        metrics = archived.metrics()
        assert metrics["rackem_archive_up"] == 0
        # (No write was tried: the sweep's ping had found the archive away first.)
        for table_id in ids:  # served from Redis meanwhile, and its keys kept
            assert archived.stack.get_json(f"/match/{table_id}.json") == archived.recorded(table_id)
            assert (
                archived.keys_left(table_id) >= 4
            )  # meta, log, state, lease (no replies: bots only)
        # A match played on while it is away.
        stack = archived.stack
        async with Client(stack.ws) as ann:
            await ann.quick_match("Ann", 2)  # the fill timer seats bots
            await play_match(ann, timeout=240)
        assert ann.table_id
        ids.append(ann.table_id)
    finally:
        archived.server.start_server()
    _until(lambda: archived.metrics()["rackem_archive_pending"] == 0, 60, "the backlog drained")
    for table_id in ids:
        assert archived.rows(table_id) == 1
        assert archived.keys_left(table_id) == 0
        # Served from the archive now. A replica whose pool is still reconnecting answers
        # 503 (try again), never 404: the record is there.
        _until(
            lambda table_id=table_id: (
                _served(archived.stack, table_id) == archived.recorded(table_id)
            ),
            30,
            "served from the archive",
        )
    _until(
        lambda: (
            archived.health("table0", "rackem.archive") == health_pb2.HealthCheckResponse.SERVING
        ),
        10,
        "the archive's health SERVING again",
    )
    assert archived.metrics()["rackem_archive_up"] == 1


async def test_a_record_left_by_a_replica_killed_before_writing_it_is_archived_once(
    archived: Archived,
) -> None:
    stack, table0 = archived.stack, archived.replica("table0")
    port = table0.port
    archived.server.stop_server()
    try:
        table_id = archived.bot_table("table0")
        _until(lambda: archived.recorded(table_id) is not None, 60, "the match finished")
        table0.stop(signal.SIGKILL)  # between the finish and the write
        assert archived.keys_left(table_id) >= 4  # meta, log, state, lease (bots: no replies)
    finally:
        archived.server.start_server()
    # The survivor's sweep takes it once its claim has run out and PostgreSQL answers.
    _until(lambda: archived.keys_left(table_id) == 0, 60, "archived by the survivor, keys dropped")
    assert archived.rows(table_id) == 1
    assert json.loads(archived.get_record("table1", table_id)) == archived.recorded(table_id)
    _until(lambda: archived.metrics("table1")["rackem_archive_pending"] == 0, 10, "none pending")
    stack.launch(table0, port=port)  # back, for whatever runs after
