"""Placement over real gRPC: recording table replicas registered in a registry."""

from __future__ import annotations

import asyncio

import pytest

from rackcore import Rules
from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError
from services.common.registry import MemoryRegistry, Replica
from services.convert import rules_to_pb
from services.matchmaker.placement import Placer

from .tableserver import recording_table, register


def request(table_id: str = "t0000000000000001") -> table_pb2.CreateTableRequest:
    return table_pb2.CreateTableRequest(table_id=table_id, rules=rules_to_pb(Rules()))


async def test_places_on_the_least_loaded_live_replica() -> None:
    registry = MemoryRegistry()
    async with recording_table() as busy, recording_table() as idle:
        await register(registry, busy, "busy", load=7)
        await register(registry, idle, "idle", load=2)
        placer = Placer(registry, 2.0)
        try:
            reply, addr = await placer.create(request())
        finally:
            await placer.close()
    assert addr == idle.addr == reply.replica
    assert [c.table_id for c in idle.calls] == ["t0000000000000001"] and not busy.calls


async def test_draining_replicas_get_no_tables() -> None:
    registry = MemoryRegistry()
    async with recording_table() as draining, recording_table() as busy:
        await register(registry, draining, "draining", load=0, draining=True)
        await register(registry, busy, "busy", load=50)
        placer = Placer(registry, 2.0)
        try:
            _, addr = await placer.create(request())
        finally:
            await placer.close()
    assert addr == busy.addr and not draining.calls


async def test_a_replica_that_stops_heartbeating_gets_no_tables() -> None:
    registry = MemoryRegistry()
    async with recording_table() as table:
        await register(registry, table, "r1", ttl_ms=50)
        await asyncio.sleep(0.1)
        placer = Placer(registry, 2.0)
        try:
            with pytest.raises(ServiceError) as caught:
                await placer.create(request())
        finally:
            await placer.close()
    assert caught.value.code == "no_replica" and not table.calls


async def test_no_replica_is_refused() -> None:
    placer = Placer(MemoryRegistry(), 2.0)
    with pytest.raises(ServiceError) as caught:
        await placer.create(request())
    assert caught.value.code == "no_replica"


async def test_a_failed_create_tries_the_next_replica() -> None:
    registry = MemoryRegistry()
    async with recording_table(refuse=True) as refusing, recording_table() as working:
        await register(registry, refusing, "a", load=0)
        await register(registry, working, "b", load=9)
        # A replica whose address answers nothing at all (its process died just now).
        await registry.heartbeat(Replica("0", "127.0.0.1:9", 0), 60_000)
        placer = Placer(registry, 1.0)
        try:
            _, addr = await placer.create(request())
        finally:
            await placer.close()
    assert addr == working.addr and len(working.calls) == 1 and not refusing.calls


async def test_the_fallback_address_is_the_last_resort() -> None:
    registry = MemoryRegistry()
    async with recording_table(refuse=True) as refusing, recording_table() as service:
        await register(registry, refusing, "a")
        placer = Placer(registry, 1.0, fallback_addr=service.addr)
        try:
            _, addr = await placer.create(request())
        finally:
            await placer.close()
    assert addr == service.addr and len(service.calls) == 1


async def test_every_replica_failing_is_no_replica() -> None:
    registry = MemoryRegistry()
    async with recording_table(refuse=True) as refusing:
        await register(registry, refusing, "a")
        placer = Placer(registry, 1.0)
        try:
            with pytest.raises(ServiceError) as caught:
                await placer.create(request())
        finally:
            await placer.close()
    assert caught.value.code == "no_replica"


async def test_a_burst_of_tables_spreads_over_replicas_between_heartbeats() -> None:
    registry = MemoryRegistry()
    async with recording_table() as one, recording_table() as two:
        await register(registry, one, "one", load=3)
        await register(registry, two, "two", load=0)
        placer = Placer(registry, 2.0)
        try:
            for i in range(9):
                await placer.create(request(f"t{i:016x}"))
        finally:
            await placer.close()
    # Loads as placed: two takes three tables to catch up with one, then they alternate.
    assert (len(one.calls), len(two.calls)) == (3, 6)
