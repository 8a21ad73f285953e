"""The matchmaker on a real 3-primary Redis Cluster (tests/redis_engines.py): its keys
spread over many slots and every node, and every flow works across two replicas there."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import grpc
import pytest
from redis.asyncio.cluster import RedisCluster
from redis_engines import Cluster as RedisClusterEngine
from redis_engines import Engines

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.registry import MemoryRegistry
from services.matchmaker.store.redis_keys import Layout

from .clients import refused, sha, until_status
from .conftest import SLOW_FILL, Cluster, RedisFactory
from .tableserver import RecordingTable, recording_table, register

FOUR = game_pb2.Rules(players=4)


@pytest.fixture
async def engine(redis_engines: Engines) -> RedisClusterEngine:
    found = redis_engines.get("cluster")
    assert isinstance(found, RedisClusterEngine)
    return found


@pytest.fixture
async def factory(engine: RedisClusterEngine) -> AsyncIterator[RedisFactory]:
    made = RedisFactory(engine.url)
    yield made
    await made.close()


@pytest.fixture
async def replicas(factory: RedisFactory) -> AsyncIterator[tuple[Cluster, RecordingTable]]:
    """Matchmaker replicas on the cluster, each with its own client; one table replica."""
    registry = MemoryRegistry()
    async with AsyncExitStack() as stack, recording_table() as table:
        await register(registry, table, "r1")
        yield Cluster(stack, registry, factory.store), table


def keys_per_node(engine: RedisClusterEngine, namespace: str) -> dict[str, int]:
    """How many of the namespace's keys each primary holds, read from each node itself."""
    counts = {}
    for server in engine.servers:
        with server.client() as client:
            counts[server.addr] = sum(1 for _ in client.scan_iter(match=f"{namespace}*"))
    return counts


async def test_rooms_codes_tokens_and_queues_spread_over_slots_and_every_node(
    engine: RedisClusterEngine,
    factory: RedisFactory,
    replicas: tuple[Cluster, RecordingTable],
) -> None:
    cluster, _ = replicas
    _, stub = await cluster.start(SLOW_FILL)
    rooms = [await stub.CreateTable(pb.CreatePrivateRequest(name=f"P{i}")) for i in range(24)]
    quick = [
        await stub.QuickMatch(pb.QuickMatchRequest(name=f"Q{players}", players=players))
        for players in (2, 3, 4)
    ]
    layout = Layout(factory.namespace)
    client = factory.clients[0]
    assert isinstance(client, RedisCluster)
    await client.initialize()

    def where(keys: list[str]) -> tuple[set[int], set[str]]:
        """The slots and the nodes of ``keys``, as the cluster's own slot map says."""
        nodes = {node.name for node in map(client.get_node_from_key, keys) if node}
        return {client.keyslot(key) for key in keys}, nodes

    tables = [layout.room(s.table_id).table(s.table_id) for s in rooms]
    tables += [layout.quick(p).table(s.table_id) for p, s in zip((2, 3, 4), quick, strict=True)]
    queues = [layout.quick(p).queue(p) for p in (2, 3, 4)]
    codes = [layout.code(s.code) for s in (*rooms, *quick)]
    tokens = [layout.token(sha(s.token)) for s in (*rooms, *quick)]
    for group in (tables, queues, codes, tokens):
        assert [await client.exists(key) for key in group] == [1] * len(group)  # as laid out
        slots, nodes = where(group)
        assert len(slots) > 1 and len(nodes) > 1
    # Redis agrees with the slots: CLUSTER KEYSLOT on a node for every key.
    with engine.servers[0].client() as node:
        for key in (*tables, *queues, *codes[:4], *tokens[:4]):
            assert node.execute_command("CLUSTER", "KEYSLOT", key) == client.keyslot(key)
    room_slots, room_nodes = where(tables[:24])
    assert len(room_slots) >= 8 and len(room_nodes) == 3  # 24 rooms over 16 homes
    counts = keys_per_node(engine, factory.namespace)
    assert all(count > 0 for count in counts.values()), counts  # every primary holds some
    # Nothing else: each quick home adds its queue and due set (a room is due only once
    # it is claimed or timed).
    assert sum(counts.values()) == len(tables) + len(codes) + len(tokens) + 2 * len(queues)


async def test_every_flow_works_across_replicas_on_the_cluster(
    replicas: tuple[Cluster, RecordingTable],
) -> None:
    cluster, table = replicas
    _, a = await cluster.start(SLOW_FILL)
    _, b = await cluster.start(SLOW_FILL)

    # A private room opened to spectators, watched by code on the other replica.
    ann = await a.CreateTable(pb.CreatePrivateRequest(name="Ann", rules=FOUR, spectators="public"))
    watch = b.WatchCode(pb.LobbyRequest(code=ann.code.lower()))
    first = await watch.read()
    assert isinstance(first, pb.Lobby) and [s.taken for s in first.seats] == [
        True,
        False,
        False,
        False,
    ]
    bob = await b.JoinByCode(pb.JoinRequest(code=ann.code.lower(), name="Bob"))
    assert bob.table_id == ann.table_id and bob.seat == 1
    joined = await watch.read()
    assert isinstance(joined, pb.Lobby) and [s.name for s in joined.seats] == ["Ann", "Bob", "", ""]
    cy = await a.JoinByCode(pb.JoinRequest(code=ann.code, name="Cy"))
    await watch.read()
    left = await b.Leave(pb.TokenRequest(token=cy.token))
    assert [s.name for s in left.seats] == ["Ann", "Bob", "", ""]
    assert await refused(a.Locate(pb.TokenRequest(token=cy.token))) == "bad_token"
    assert (await a.Locate(pb.TokenRequest(token=bob.token))).seat == 1
    assert await refused(b.Start(pb.TokenRequest(token=bob.token))) == "not_creator"
    started = await b.Start(pb.TokenRequest(token=ann.token))
    assert started.status == "started" and started.replica == table.addr
    while (update := await watch.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
        last = update
    assert isinstance(last, pb.Lobby) and last.status == "started"
    assert await refused(b.JoinByCode(pb.JoinRequest(code=ann.code, name="Di"))) == (
        "already_started"
    )

    # Quick match: two replicas, one table; the one who fills it starts it.
    di = await a.QuickMatch(pb.QuickMatchRequest(name="Di", players=2))
    eve = await b.QuickMatch(pb.QuickMatchRequest(name="Eve", players=2))
    assert eve.table_id == di.table_id and eve.lobby.status == "started"
    assert (await until_status(a, di.token, "started")).replica == table.addr
    assert await refused(a.JoinByCode(pb.JoinRequest(code=di.code, name="Fay"))) == "no_code"

    # A rematch of the private room: each player asks on another replica.
    offers = a.WatchRematch(pb.TokenRequest(token=bob.token))
    again = await a.Rematch(pb.TokenRequest(token=ann.token))
    assert again.table_id != ann.table_id and again.lobby.status == "waiting"
    offer = await offers.read()
    assert isinstance(offer, pb.Lobby) and offer.table_id == again.table_id
    bobs = await b.Rematch(pb.TokenRequest(token=bob.token))
    assert bobs.table_id == again.table_id and bobs.lobby.status == "started"
    assert [call.table_id for call in table.calls] == [ann.table_id, di.table_id, again.table_id]
