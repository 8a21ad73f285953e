"""Starting tables: fill timers, bots in the empty seats, retries, and one start per table
however many replicas look (both stores)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace

from services._gen.rackem.v1 import matchmaker_pb2 as pb

from .clients import refused, until_status
from .conftest import FAST, Cluster
from .tableserver import RecordingTable, recording_table, register


async def test_two_humans_start_after_the_short_timer_with_bots(
    cluster: Cluster, table: RecordingTable
) -> None:
    # The lone timer is far beyond the test's patience: only the short one can start it.
    _, stub = await cluster.start(replace(FAST, fill_ms=100, fill_lone_ms=600_000))
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=4))
    bob = await stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=4))
    assert bob.lobby.fill_deadline_ms < ann.lobby.fill_deadline_ms
    lobby = await until_status(stub, ann.token, "started")
    assert [(s.name, s.bot) for s in lobby.seats][:2] == [("Ann", False), ("Bob", False)]
    assert all(s.bot and s.taken and s.name.startswith("Bot ") for s in lobby.seats[2:])
    [call] = table.calls
    assert [(s.bot, s.level) for s in call.seats] == [(False, "medium")] * 2 + [
        (True, "medium")
    ] * 2
    assert len({s.name for s in call.seats}) == 4


async def test_a_lone_human_starts_after_the_long_timer(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(
        replace(FAST, fill_ms=600_000, fill_lone_ms=100, bot_level="hard")
    )
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=3))
    lobby = await until_status(stub, ann.token, "started")
    assert [s.bot for s in lobby.seats] == [False, True, True]
    assert [s.level for s in table.calls[0].seats] == ["hard"] * 3


async def test_a_table_waits_while_its_timer_runs(cluster: Cluster, table: RecordingTable) -> None:
    _, stub = await cluster.start(replace(FAST, fill_ms=600_000, fill_lone_ms=600_000))
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
    await asyncio.sleep(20 * FAST.tick_ms / 1000)
    found = await stub.Locate(pb.TokenRequest(token=ann.token))
    assert found.lobby.status == "waiting" and not table.calls


async def test_a_start_that_finds_no_replica_is_retried_until_one_appears(
    cluster: Cluster,
) -> None:
    _, stub = await cluster.start(replace(FAST, fill_lone_ms=50, retry_ms=30))
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
    await asyncio.sleep(0.3)  # several failed attempts
    assert (await stub.Locate(pb.TokenRequest(token=ann.token))).lobby.status == "waiting"
    async with recording_table() as table:
        await register(cluster.registry, table, "late")
        lobby = await until_status(stub, ann.token, "started")
        assert lobby.replica == table.addr and len(table.calls) == 1


async def test_a_start_that_never_finds_a_replica_closes_the_table(cluster: Cluster) -> None:
    settings = replace(FAST, fill_lone_ms=30, retry_ms=20, max_start_attempts=3)
    _, stub = await cluster.start(settings)
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
    assert (await until_status(stub, ann.token, "closed")).status == "closed"
    assert (await stub.Leave(pb.TokenRequest(token=ann.token))).status == "closed"
    assert await refused(stub.Leave(pb.TokenRequest(token=ann.token))) == "bad_token"


async def test_a_creator_start_without_a_replica_is_refused_and_can_be_retried(
    cluster: Cluster,
) -> None:
    _, stub = await cluster.start(FAST)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    assert await refused(stub.Start(pb.TokenRequest(token=ann.token))) == "no_replica"
    assert (await stub.Locate(pb.TokenRequest(token=ann.token))).lobby.status == "waiting"
    async with recording_table() as table:
        await register(cluster.registry, table, "late")
        started = await stub.Start(pb.TokenRequest(token=ann.token))
        assert started.status == "started" and len(table.calls) == 1


async def test_each_table_starts_once_with_three_replicas_looking(
    cluster: Cluster, table: RecordingTable
) -> None:
    settings = replace(FAST, fill_ms=40, fill_lone_ms=60, tick_ms=5)
    replicas = [await cluster.start(settings) for _ in range(3)]
    seated = []
    for i in range(24):  # sequential: many tables, most of them started by a timer
        _, stub = replicas[i % 3]
        seated.append(await stub.QuickMatch(pb.QuickMatchRequest(name=f"P{i}", players=2 + i % 3)))
        await asyncio.sleep(0.02 * (i % 4))
    tables = {s.table_id: s.token for s in seated}
    stub = replicas[0][1]
    await asyncio.gather(*(until_status(stub, token, "started") for token in tables.values()))
    assert Counter(c.table_id for c in table.calls) == Counter(set(tables))
