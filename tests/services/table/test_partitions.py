"""Partitions simulated at the process level, over a real Redis and real gRPC: a TCP proxy
that stops forwarding (its connections kept open, the bytes dropped, as a firewall's DROP
rule does) stands between a replica and Redis, or between the gateway and a replica.

- **A replica cut from Redis steps aside** within its lease: its table answers
  ``wrong_replica`` with no owner, and the gateway's client (``Backends``, with the
  balanced address spread over both replicas) reaches the replica that took it over.
- **An owner the gateway cannot reach loses its table** to the replica the gateway can
  reach, once the gateway's complaints have stood the hold; the old owner's writes are
  refused by the store from then on (fencing), and it closes the table.
- **The clock restarts at adoption**: the human to move is not covered for the time a
  change of owner cost.

tests/partition/ runs the same cases with real network namespaces (docs/design.md,
*A failover*).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from redis_engines import Single

from rackcore import observe
from rackcore.bots import choose
from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.redis_client import RedisClient, connect
from services.common.registry import MemoryRegistry, RedisRegistry
from services.common.running import Running
from services.convert import move_to_pb
from services.gateway.backends import Backends
from services.table.store.memory import MemoryStore
from services.table.store.redis import RedisStore
from services.table.table import Table
from table.table_players import ServerFactory, create_table

LEASE_MS = 900


class Proxy:
    """A TCP proxy on loopback that forwards to ``target`` until ``cut``: then every byte
    either way is dropped (connections stay open, new ones are accepted and starve) until
    ``heal``."""

    def __init__(self) -> None:
        self.target = ("127.0.0.1", 0)
        self.forwarding = True
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cut(self) -> None:
        self.forwarding = False

    def heal(self) -> None:
        self.forwarding = True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pumps = [
            asyncio.create_task(self._pump(reader, up_writer)),
            asyncio.create_task(self._pump(up_reader, writer)),
        ]
        self._tasks.update(pumps)
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for task in pumps:
            task.cancel()
            self._tasks.discard(task)
        for w in (writer, up_writer):
            w.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            if self.forwarding:
                writer.write(data)
                await writer.drain()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def proxy_to(host: str, port: int) -> AsyncIterator[Proxy]:
    proxy = Proxy()
    proxy.target = (host, port)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()


def _move(table: Table, seat: int, move_id: str, token: str) -> table_pb2.SubmitMoveRequest:
    """The seat's move now, chosen as a bot would from the owner's own copy of the match."""
    move = choose(observe(table.match, seat), "easy")
    return table_pb2.SubmitMoveRequest(
        table_id=table.table_id, token=token, move=move_to_pb(move), move_id=move_id
    )


async def _until(check: Callable[[], bool], seconds: float) -> None:
    async with asyncio.timeout(seconds):
        while not check():
            await asyncio.sleep(0.02)


@dataclass
class CutPair:
    """Two replicas on one Redis, ``cut`` reaching it through ``proxy``; a two-human table
    on ``cut``, the ``request`` of its first move, and a gateway's client whose balanced
    address spreads over both replicas, as a headless Service does."""

    proxy: Proxy
    cut: Running
    other: Running
    client: RedisClient
    table_id: str
    table: Table
    request: table_pb2.SubmitMoveRequest
    backends: Backends


@contextlib.asynccontextmanager
async def cut_pair(own_redis: Single, start_table_server: ServerFactory) -> AsyncIterator[CutPair]:
    async with proxy_to("127.0.0.1", own_redis.server.port) as proxy:
        cut_url = own_redis.url.replace(own_redis.server.addr, proxy.addr)
        cut_client, client = connect(cut_url), connect(own_redis.url)
        settings = {"lease_ms": LEASE_MS, "sweep_ms": 100, "store_hold_ms": 4_000}
        cut = await start_table_server(
            store=RedisStore(cut_client), registry=RedisRegistry(cut_client), **settings
        )
        other = await start_table_server(
            store=RedisStore(client), registry=RedisRegistry(client), **settings
        )
        async with open_channel(cut.addr) as channel:
            reply = await create_table(table_pb2_grpc.TableStub(channel), humans=2, bots=0)
        table = cut.service.tables.live[reply.table_id]
        seat = table.match.turn
        request = _move(table, seat, "m1", reply.tokens[seat])
        balanced = f"ipv4:127.0.0.1:{cut.port},127.0.0.1:{other.port}"
        backends = Backends("127.0.0.1:1", balanced, timeout=3.0)
        try:
            yield CutPair(proxy, cut, other, client, reply.table_id, table, request, backends)
        finally:
            proxy.heal()
            await backends.close()
            await cut.stop(0)
            await other.stop(0)
            await cut_client.aclose()
            await client.aclose()


async def test_a_replica_cut_from_redis_steps_aside_and_the_gateway_finds_the_new_owner(
    own_redis: Single, start_table_server: ServerFactory
) -> None:
    async with cut_pair(own_redis, start_table_server) as pair:
        cut, table, table_id = pair.cut, pair.table, pair.table_id
        pair.proxy.cut()
        cut_at = asyncio.get_running_loop().time()
        await _until(lambda: table.closed is not None, LEASE_MS / 1000 + 1.0)
        stepped = asyncio.get_running_loop().time() - cut_at
        assert stepped <= LEASE_MS / 1000 + 0.5  # within its lease (plus a watch)
        assert table.closed is not None and table.closed.code == "wrong_replica"
        assert not table.closed.owner  # no owner known: the gateway asks the balanced one
        with pytest.raises(ServiceError) as refused:
            await (await cut.service.tables.get(table_id)).summary()
        assert refused.value.code == "wrong_replica" and not refused.value.owner
        # The gateway sends the move to the old owner, as a player's seat remembers it.
        async with asyncio.timeout(15):
            version = await _retrying(lambda: pair.backends.submit(cut.addr, pair.request))
        assert version == 1
        assert table_id in pair.other.service.tables.live
        holder = await RedisStore(pair.client).holder(table_id)
        assert holder == pair.other.service.tables.config.owner


async def test_a_move_under_way_when_the_cut_begins_is_answered_when_its_table_steps_aside(
    own_redis: Single, start_table_server: ServerFactory
) -> None:
    """The append of a move sent just as the cut begins never gets an answer from Redis
    (its bytes are dropped): it would hold the table's lock, and leave the move unanswered,
    for the whole socket timeout (``SOCKET_TIMEOUT_S``, 5 s). The step-aside cuts it short:
    answered ``wrong_replica`` within the lease, the lock free, and the move, sent again
    by its id, kept once on the new owner."""
    async with cut_pair(own_redis, start_table_server) as pair:
        cut, table, request = pair.cut, pair.table, pair.request
        loop = asyncio.get_running_loop()
        pair.proxy.cut()
        sent_at = loop.time()
        under_way = asyncio.ensure_future(cut.service.submit(request))
        await _until(lambda: table.lock.locked(), 1.0)  # its append waits on Redis
        with pytest.raises(ServiceError) as refused:
            async with asyncio.timeout(LEASE_MS / 1000 + 1.5):  # well short of 5 s
                await under_way
        answered = loop.time() - sent_at
        assert refused.value.code == "wrong_replica" and not refused.value.owner
        assert answered <= LEASE_MS / 1000 + 0.6, answered
        assert not table.lock.locked()
        async with asyncio.timeout(15):
            version = await _retrying(lambda: pair.backends.submit(cut.addr, request))
        assert version == 1
        stored = await RedisStore(pair.client).load(pair.table_id)
        assert len(stored.moves) == 1  # type: ignore[union-attr]


async def test_a_retried_move_is_never_answered_from_a_reply_its_log_does_not_hold(
    own_redis: Single, start_table_server: ServerFactory
) -> None:
    """The answer kept for a move id (``replies``) and the log are written in one script,
    so they disagree only where the answer was read from another copy of the store than
    the log: a primary that a failover replaced, holding a write that no replica has. Such
    an answer is never given: the retry is ``unavailable`` and the table rebuilt."""
    client = connect(own_redis.url)
    store = RedisStore(client)
    first = await start_table_server(store=store, registry=RedisRegistry(client))
    second = await start_table_server(store=store, registry=RedisRegistry(client))
    try:
        async with open_channel(first.addr) as channel:
            reply = await create_table(table_pb2_grpc.TableStub(channel), humans=2, bots=0)
        table_id = reply.table_id
        table = first.service.tables.live[table_id]
        seat = table.match.turn
        request = _move(table, seat, "m1", reply.tokens[seat])
        # The kept answer of a write the log never got (as on a demoted primary).
        await client.hset(f"rackem:{{t:{table_id}}}:replies", f"{seat}:m1", 1)
        await first.stop(0)  # the table changes owner: the second reads earlier ids
        with pytest.raises(ServiceError) as refused:
            await second.service.submit(request)
        assert refused.value.code == "unavailable"
        assert (await store.load(table_id)).moves == []  # type: ignore[union-attr]
        # The answer kept for it is real once the log holds it: then it is given.
        await client.hdel(f"rackem:{{t:{table_id}}}:replies", f"{seat}:m1")
        async with asyncio.timeout(10):
            version = await _retrying(lambda: second.service.submit(request))
        assert version == 1
        assert await second.service.submit(request) == 1  # the retry, from the log's answer
    finally:
        await second.stop(0)
        await client.aclose()


async def _retrying(call: Callable[[], Awaitable[int]]) -> int:
    """What a client does: the move again by its id while it is ``unavailable``."""
    while True:
        try:
            return await call()
        except ServiceError as err:
            assert err.code == "unavailable", err
            await asyncio.sleep(0.2)


async def test_an_owner_the_gateway_cannot_reach_loses_its_table_and_is_fenced_off(
    own_redis: Single, start_table_server: ServerFactory
) -> None:
    client = connect(own_redis.url)
    store = RedisStore(client)
    settings = {"lease_ms": LEASE_MS, "sweep_ms": 100, "complaint_hold_ms": 600}
    async with proxy_to("127.0.0.1", 1) as proxy:
        # The owner is known to everyone by the proxy's address: the gateway's only path.
        owner = await start_table_server(
            store=store, registry=RedisRegistry(client), advertise_addr=proxy.addr, **settings
        )
        proxy.target = ("127.0.0.1", owner.port)
        other = await start_table_server(store=store, registry=RedisRegistry(client), **settings)
        async with open_channel(owner.addr) as channel:
            reply = await create_table(table_pb2_grpc.TableStub(channel), humans=2, bots=0)
        table_id = reply.table_id
        table = owner.service.tables.live[table_id]
        owner_string = owner.service.tables.config.owner
        seat = table.match.turn
        request = _move(table, seat, "m1", reply.tokens[seat])
        backends = Backends("127.0.0.1:1", other.addr, timeout=1.0)  # balanced: the other
        try:
            proxy.cut()  # the gateway cannot reach the owner; Redis still can
            version = 0
            tries = 0
            async with asyncio.timeout(20):
                while not version:
                    tries += 1
                    try:
                        version = await backends.submit(proxy.addr, request)
                    except ServiceError as err:
                        assert err.code == "unavailable", err
                        await asyncio.sleep(0.2)  # the client's retry, by the move's id
            assert version == 1 and tries >= 2  # one complaint is never enough
            assert table_id in other.service.tables.live
            assert await store.holder(table_id) == other.service.tables.config.owner
            # The old owner's writes are refused by the store: it closes the table.
            assert await store.save_state(table_id, owner_string, table.state, LEASE_MS) is False
            await _until(lambda: table.closed is not None, LEASE_MS / 1000 + 1.0)
            # Nor may it take the table back while the complaint cools.
            with pytest.raises(ServiceError):
                await owner.service.tables.adoption.get(table_id, sweeping=False)
        finally:
            proxy.heal()
            await backends.close()
            await owner.stop(0)
            await other.stop(0)
            await client.aclose()


async def test_the_human_to_move_gets_a_whole_clock_again_when_the_table_changes_owner(
    start_table_server: ServerFactory,
) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    clocks = {"decision_ms": 1_500, "reconnect_grace_ms": 0, "abandon_ms": 60_000}
    first = await start_table_server(store=store, registry=registry, **clocks)
    second = await start_table_server(store=store, registry=registry, **clocks)
    async with open_channel(first.addr) as channel:
        created = await create_table(table_pb2_grpc.TableStub(channel), humans=2, bots=0)
    table = first.service.tables.live[created.table_id]
    to_move = table.match.turn
    deadline = table.state.deadline_ms
    await asyncio.sleep(1.0)  # most of the clock gone, through no fault of the player's
    await first.stop(0)  # the table changes owner
    await _until(lambda: created.table_id in second.service.tables.live, 5)
    adopted = second.service.tables.live[created.table_id]
    assert adopted.state.deadline_ms >= deadline + 900  # a whole clock from the adoption
    await asyncio.sleep(1.0)  # past the first owner's deadline
    assert adopted.kind(to_move) == "human" and not adopted.state.covered[to_move]
