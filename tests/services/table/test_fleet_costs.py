"""A replica's background work follows its own tables: busy tables renew their lease by
their appends, sweeps claim a fair share of the expired leases, and a finished table is
never taken again (its match recorded once)."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Sequence

import pytest
from redis_engines import Engines

from services._gen.rackem.v1 import table_pb2_grpc
from services.common.channels import open_channel
from services.common.redis_client import connect
from services.common.registry import MemoryRegistry
from services.table.store.lease_index import FINISHED
from services.table.store.memory import MemoryStore
from services.table.store.redis import RedisStore
from table.table_players import ServerFactory, create_table

QUIET = 600_000  # a loop period no test waits for: the test runs that step itself


class _RenewCalls(MemoryStore):
    """The memory store, keeping the ids of each ``renew_many`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[list[str]] = []

    async def renew_many(self, table_ids: Sequence[str], owner: str, lease_ms: int) -> list[bool]:
        self.rounds.append(list(table_ids))
        return await super().renew_many(table_ids, owner, lease_ms)


async def test_a_renewal_round_renews_only_the_idle_tables(
    start_table_server: ServerFactory,
) -> None:
    store = _RenewCalls()
    server = await start_table_server(store=store, decision_ms=QUIET, lease_ms=3 * QUIET)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        ids = [(await create_table(stub, humans=1, bots=1)).table_id for _ in range(4)]
    tables = [server.service.tables.live[t] for t in ids]
    busy_at = tables[0].lease_renewed
    for table in tables[1:]:
        table.lease_renewed -= QUIET  # idle for a whole renewal period
    await server.service.tables.leases.renew()
    assert store.rounds == [ids[1:]]  # the busy table's moves renewed its lease already
    assert all(t.lease_renewed > busy_at for t in tables[1:])
    store.rounds.clear()
    await server.service.tables.leases.renew()
    assert store.rounds == []  # nothing idle long enough: no call at all


async def test_an_accepted_move_renews_its_tables_lease(start_table_server: ServerFactory) -> None:
    store = MemoryStore()
    server = await start_table_server(store=store, lease_ms=3 * QUIET)
    async with open_channel(server.addr) as channel:
        created = await create_table(table_pb2_grpc.TableStub(channel), humans=0, bots=2)
    table = server.service.tables.live[created.table_id]
    before = table.lease_renewed
    async with asyncio.timeout(10):  # the bots move at once
        while table.version < 2:
            await asyncio.sleep(0.005)
    assert table.lease_renewed > before


async def test_a_drained_replicas_tables_spread_over_the_others(
    start_table_server: ServerFactory,
) -> None:
    """Each sweep adopts at most the fair share: B takes half, C the other half, though
    B's sweep saw every orphan first."""
    store, registry = MemoryStore(), MemoryRegistry()
    kw = {"store": store, "registry": registry, "decision_ms": QUIET, "sweep_ms": QUIET}
    a, b, c = [await start_table_server(**kw) for _ in range(3)]
    async with open_channel(a.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        ids = [(await create_table(stub, humans=1, bots=1)).table_id for _ in range(30)]
    await a.stop(0)  # drains: every lease released, listed expired at once
    assert await store.expired_count() == 30
    await b.service.tables.adoption.sweep()
    assert len(b.service.tables.live) == 15
    await b.service.tables._heartbeat()
    await c.service.tables.adoption.sweep()
    assert len(c.service.tables.live) == 15
    assert set(b.service.tables.live) | set(c.service.tables.live) == set(ids)
    await b.service.tables.adoption.sweep()  # nothing expired: nothing more to take
    assert len(b.service.tables.live) == 15 and await store.expired_count() == 0


class _LateForget(RedisStore):
    """A Redis store whose removal from the live tables lags while ``late`` is set: the
    window between the finish script and the removal, held open."""

    late = True

    async def forget(self, table_id: str) -> None:
        if not self.late:
            await super().forget(table_id)


@pytest.fixture(params=["single", "cluster"])
async def late_store(
    request: pytest.FixtureRequest, redis_engines: Engines
) -> AsyncIterator[_LateForget]:
    client = connect(redis_engines.url(request.param))
    yield _LateForget(client, index_prefix=f"test-{secrets.token_hex(4)}")
    await client.aclose()


async def test_a_finished_match_is_recorded_once_though_a_fast_sweep_finds_it_listed(
    late_store: _LateForget,  # first: set up before the servers, so closed after they stop
    start_table_server: ServerFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem.table")
    registry = MemoryRegistry()
    owner = await start_table_server(store=late_store, registry=registry, lease_ms=600)
    async with open_channel(owner.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        ids = [(await create_table(stub, humans=0, bots=2)).table_id for _ in range(6)]
    async with asyncio.timeout(60):  # bots only: they play at once to the end
        while set(ids) & set(owner.service.tables.live):
            await asyncio.sleep(0.02)
    assert set(await late_store.live_tables()) == set(ids)  # finished, still listed live
    late_store.late = False
    # Another replica sweeping every 10 ms finds them as their index entries expire.
    sweeper = await start_table_server(
        store=late_store, registry=registry, lease_ms=600, sweep_ms=10
    )
    async with asyncio.timeout(30):
        while set(ids) & set(await late_store.live_tables()):
            await asyncio.sleep(0.02)
    records = [r for r in caplog.records if r.getMessage() == "match_record"]
    recorded = sorted(r.fields["table"] for r in records)  # type: ignore[attr-defined]
    assert recorded == sorted(ids)  # once each, by the owner
    assert all([await late_store.holder(t) == FINISHED for t in ids])
    assert not sweeper.service.tables.live  # it took none of them
    # Stopped here, the sweeper first, while the store's client is open (left to the
    # fixtures' teardown, a stop now and then did not return: not understood yet).
    await sweeper.stop(0)
    await owner.stop(0)


class _Notes(MemoryStore):
    """The memory store, keeping every ``note_leases`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[list[tuple[str, int]]] = []

    async def note_leases(self, ages: Sequence[tuple[str, int]], lease_ms: int) -> None:
        self.notes.append(list(ages))
        await super().note_leases(ages, lease_ms)


async def test_a_lease_its_dead_owner_still_holds_is_swept_again_at_the_next_sweep(
    start_table_server: ServerFactory,
) -> None:
    """The index says expired a moment before the lease does: the table comes round at
    the next sweep, not only after the claim (a whole lease) has run out."""
    store = _Notes()
    sweeper = await start_table_server(store=store, sweep_ms=QUIET, decision_ms=QUIET)
    async with open_channel(sweeper.addr) as channel:
        created = await create_table(table_pb2_grpc.TableStub(channel), humans=1, bots=1)
    table_id = created.table_id
    dead = "gone 10.9.9.9:50052"  # in no registry
    await sweeper.stop(0)  # hands it over: the lease is free and listed expired
    other = await start_table_server(store=store, sweep_ms=QUIET, decision_ms=QUIET)
    assert await store.acquire(table_id, dead, 60_000) is None  # a dead owner's lease
    store.notes.clear()
    await other.service.tables.adoption.sweep()
    assert table_id not in other.service.tables.live
    settings = other.service.tables.settings
    assert [(table_id, settings.lease_ms - settings.sweep_ms)] in store.notes
