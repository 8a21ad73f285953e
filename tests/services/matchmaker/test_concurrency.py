"""Many clients and many replicas at once, on a real Redis: seats, codes and starts are
each handed out exactly once."""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from dataclasses import replace

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb

from .clients import LIMIT_S, refused, sha, until_status
from .conftest import FAST, Cluster
from .tableserver import recording_table, register

CLIENTS = 200
QUICK = replace(FAST, fill_ms=300, fill_lone_ms=600)


async def test_concurrent_quick_matches_on_two_replicas_take_every_seat_once(
    redis_cluster: Cluster,
) -> None:
    async with recording_table() as one, recording_table() as two:
        await register(redis_cluster.registry, one, "one")
        await register(redis_cluster.registry, two, "two")
        replicas = [await redis_cluster.start(QUICK) for _ in range(2)]
        # Every client its own channel, alternating between the two matchmaker replicas.
        stubs = [await redis_cluster.client(replicas[i % 2][0]) for i in range(CLIENTS)]
        wanted = {f"P{i:03d}": 2 + i % 3 for i in range(CLIENTS)}
        async with asyncio.timeout(LIMIT_S):
            seated = await asyncio.gather(
                *(
                    stub.QuickMatch(pb.QuickMatchRequest(name=name, players=players))
                    for stub, (name, players) in zip(stubs, wanted.items(), strict=True)
                )
            )
        by_table: dict[str, list[tuple[str, pb.Seated]]] = defaultdict(list)
        for (name, _), seat in zip(wanted.items(), seated, strict=True):
            by_table[seat.table_id].append((name, seat))
        # Wait for every table to start, watching from the other replica than the one asked.
        firsts = [(i, entries[0][1]) for i, entries in enumerate(by_table.values())]
        started = await asyncio.gather(
            *(until_status(stubs[i], seat.token, "started") for i, seat in firsts)
        )
        calls = one.calls + two.calls

    assert len({s.token for s in seated}) == CLIENTS
    assert len({(s.table_id, s.seat) for s in seated}) == CLIENTS
    assert len({s.code for s in seated}) == len(by_table)
    assert {lobby.replica for lobby in started} == {one.addr, two.addr}
    # Each table was created exactly once, on one replica, with exactly its players.
    assert sorted(Counter(c.table_id for c in calls).values()) == [1] * len(by_table)
    assert {c.table_id for c in calls} == set(by_table)
    seen_names: Counter[str] = Counter()
    for call in calls:
        entries = by_table[call.table_id]
        players = {wanted[name] for name, _ in entries}
        assert players == {len(call.seats)}
        humans = {seat.seat: (name, sha(seat.token)) for name, seat in entries}
        for index, spec in enumerate(call.seats):
            if index in humans:
                assert (spec.name, spec.token_hash, spec.bot) == (*humans[index], False)
                seen_names[spec.name] += 1
            else:
                assert spec.bot and spec.name.startswith("Bot ") and not spec.token_hash
    assert seen_names == Counter(list(wanted))  # every player in exactly one table


async def test_forced_code_collisions_never_hand_a_code_out_twice(redis_cluster: Cluster) -> None:
    pool = [f"{c}{c}{c}{d}{d}{d}" for c in "ABCDEFGHJK" for d in "234567"]  # 60 codes
    draws = random.Random(7)
    drawn: list[str] = []

    def repeating() -> str:
        drawn.append(draws.choice(pool))
        return drawn[-1]

    replicas = [await redis_cluster.start(FAST, codes=repeating) for _ in range(2)]
    stubs = [await redis_cluster.client(replicas[i % 2][0]) for i in range(30)]
    rules = game_pb2.Rules(players=4)
    async with asyncio.timeout(LIMIT_S):
        created = await asyncio.gather(
            *(
                stub.CreateTable(pb.CreatePrivateRequest(name=f"C{i}", rules=rules))
                for i, stub in enumerate(stubs)
            )
        )
    assert len(drawn) > len(created)  # collisions did happen
    assert len({c.code for c in created}) == len(created) == len({c.table_id for c in created})
    for i, table in enumerate(created):
        lobby = await stubs[-1 - i].GetLobby(pb.LobbyRequest(code=table.code))
        assert lobby.table_id == table.table_id and lobby.seats[0].name == f"C{i}"
        joined = await stubs[i].JoinByCode(pb.JoinRequest(code=table.code, name="J"))
        assert joined.table_id == table.table_id


async def test_a_code_that_is_always_taken_is_refused_not_shared(redis_cluster: Cluster) -> None:
    _, stub = await redis_cluster.start(FAST, codes=lambda: "SAMEXX")
    first = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    assert first.code == "SAMEXX"
    second = stub.CreateTable(pb.CreatePrivateRequest(name="Bob"))
    assert await refused(second) == "unavailable"
    third = stub.QuickMatch(pb.QuickMatchRequest(name="Cy", players=2))
    assert await refused(third) == "unavailable"
    lobby = await stub.GetLobby(pb.LobbyRequest(code="SAMEXX"))
    assert lobby.table_id == first.table_id and [s.name for s in lobby.seats] == ["Ann", ""]


async def test_a_watcher_on_one_replica_sees_changes_made_on_another(
    redis_cluster: Cluster,
) -> None:
    (_, here), (_, there) = [await redis_cluster.start(FAST) for _ in range(2)]
    ann = await here.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=3))
    )
    stream = here.WatchLobby(pb.TokenRequest(token=ann.token))
    assert isinstance(await stream.read(), pb.Lobby)
    await there.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    async with asyncio.timeout(LIMIT_S):
        update = await stream.read()
    assert isinstance(update, pb.Lobby) and [s.name for s in update.seats] == ["Ann", "Bob", ""]
    await there.Leave(pb.TokenRequest(token=ann.token))
    async with asyncio.timeout(LIMIT_S):
        closed = await stream.read()
    assert isinstance(closed, pb.Lobby) and closed.status == "closed"
