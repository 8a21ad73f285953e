"""Table requests reach the table's owner: redirects and the TABLE_ADDR fallback."""

from __future__ import annotations

import asyncio

import pytest
from feeds import reading

from rackem.seam.tables import DirectLink, LocalTables
from services._gen.rackem.v1 import table_pb2 as tb
from services.common.errors import ServiceError
from services.common.running import Running as TableRunning
from services.gateway.backends import Backends, reroute
from services.gateway.table_client import Link
from services.table.server import create_server as create_table_server

from .conftest import NOWHERE, Services, table_settings


async def create_table(backends: Backends, addr: str) -> str:
    request = tb.CreateTableRequest(
        seats=[tb.SeatSpec(name="Ann"), tb.SeatSpec(name="Bot", bot=True, level="easy")]
    )
    reply, _ = await backends.call_table(addr, lambda stub: stub.CreateTable(request, timeout=5))
    return reply.table_id


async def second_replica(services: Services) -> TableRunning:
    """Another table replica on the same store and registry as ``services.table``."""
    return await create_table_server(
        table_settings(),
        store=services.store,
        registry=services.registry,
        bot_addr=services.bot.addr,
    )


async def test_a_replica_that_does_not_own_the_table_redirects_to_the_owner(
    services: Services,
) -> None:
    other = await second_replica(services)
    backends = Backends(services.matchmaker.addr, other.addr, timeout=5)
    try:
        table_id = await create_table(backends, services.table.addr)
        summary_request = tb.SummaryRequest(table_id=table_id)
        summary, served_by = await backends.call_table(
            "", lambda stub: stub.GetSummary(summary_request, timeout=5)
        )
        assert served_by == services.table.addr != other.addr
        assert (summary.table_id, summary.replica) == (table_id, services.table.addr)
    finally:
        await backends.close()
        await other.stop(0)


async def test_a_replica_that_does_not_answer_is_retried_through_table_addr(
    services: Services,
) -> None:
    backends = Backends(services.matchmaker.addr, services.table.addr, timeout=5)
    try:
        table_id = await create_table(backends, "")
        request = tb.SummaryRequest(table_id=table_id)
        summary, served_by = await backends.call_table(
            NOWHERE, lambda stub: stub.GetSummary(request, timeout=5)
        )
        assert (summary.table_id, served_by) == (table_id, services.table.addr)
    finally:
        await backends.close()


async def test_refusals_are_not_retried(services: Services) -> None:
    backends = Backends(services.matchmaker.addr, services.table.addr, timeout=5)
    request = tb.SummaryRequest(table_id="t0000000000000000")
    try:
        with pytest.raises(ServiceError) as refused:
            await backends.call_table("", lambda stub: stub.GetSummary(request, timeout=5))
        assert refused.value.code == "no_table"
    finally:
        await backends.close()


def test_reroute_follows_the_owner_then_falls_back_to_table_addr() -> None:
    owner = ServiceError("wrong_replica", "not here", owner="10.0.0.2:50052")
    assert reroute(owner, "10.0.0.1:50052", "table:50052") == "10.0.0.2:50052"
    gone = ServiceError("unavailable", "down")
    assert reroute(gone, "10.0.0.1:50052", "table:50052") == "table:50052"
    assert reroute(gone, "table:50052", "table:50052") is None
    assert reroute(ServiceError("bad_token", "no"), "10.0.0.1:50052", "table:50052") is None


async def test_link_calls_and_subscriptions_reach_the_owner(services: Services) -> None:
    other = await second_replica(services)
    backends = Backends(services.matchmaker.addr, other.addr, timeout=5)
    try:
        table_id = await create_table(backends, services.table.addr)
        request = tb.SeatRequest(table_id=table_id, token="0" * 32)
        # A move sent to TABLE_ADDR (the other replica) is redirected to the owner...
        with pytest.raises(ServiceError) as refused:
            await backends.submit("", tb.SubmitMoveRequest(table_id=table_id, move_id="m"))
        assert refused.value.code == "bad_token"  # ...whose answer it is
        # A subscription at a replica that does not own the table names the owner.
        with pytest.raises(ServiceError) as moved:
            await anext(reading(backends.subscribe, other.addr, request))
        assert (moved.value.code, moved.value.owner) == ("wrong_replica", services.table.addr)
    finally:
        await backends.close()
        await other.stop(0)


async def test_a_link_call_to_a_replica_that_does_not_answer_goes_through_table_addr(
    services: Services,
) -> None:
    backends = Backends(services.matchmaker.addr, services.table.addr, timeout=5)
    try:
        table_id = await create_table(backends, "")
        request = tb.SeatRequest(table_id=table_id, token="0" * 32)
        with pytest.raises(ServiceError) as refused:
            await backends.continue_round(NOWHERE, request)
        assert refused.value.code == "bad_token"  # answered by the replica behind TABLE_ADDR
    finally:
        await backends.close()


async def test_a_replica_in_this_process_is_linked_in_process_and_others_over_grpc(
    services: Services,
) -> None:
    local = await second_replica(services)
    tables = LocalTables({local.addr: local.service})
    backends = Backends(services.matchmaker.addr, local.addr, timeout=5, local_links=tables.link)
    try:
        table_id = await create_table(backends, services.table.addr)  # owned by the other
        request = tb.SeatRequest(table_id=table_id, token="0" * 32)
        # In process to TABLE_ADDR, which names the owner; over gRPC to the owner, who answers.
        with pytest.raises(ServiceError) as refused:
            await backends.continue_round("", request)
        assert refused.value.code == "bad_token"
        assert isinstance(backends.link(local.addr), DirectLink)
        assert isinstance(backends.link(services.table.addr), Link)  # not here: over gRPC
    finally:
        await backends.close()
        if not local.service.tables.draining:
            await local.stop(0)


async def test_a_fleet_larger_than_the_channel_cap_keeps_every_subscription(
    services: Services,
) -> None:
    """With room for two channels, a third replica's channel closes no channel in use: the
    subscription on the second one goes on; idle channels are still closed for the cap."""
    second, third = await second_replica(services), await second_replica(services)
    backends = Backends(services.matchmaker.addr, services.table.addr, timeout=5, max_channels=2)
    try:
        request = tb.CreateTableRequest(seats=[tb.SeatSpec(name="Ann"), tb.SeatSpec(name="Bob")])
        created, _ = await backends.call_table(
            second.addr, lambda stub: stub.CreateTable(request, timeout=5)
        )
        seat = tb.SeatRequest(table_id=created.table_id, token=created.tokens[0])
        views = reading(backends.subscribe, second.addr, seat)
        await anext(views)
        link = backends.link(second.addr)
        await create_table(backends, third.addr)  # a third channel, over the cap
        assert backends.link(second.addr) is link and link.broken is None
        # Ann leaves: her subscription ends as the table does, not with a closed link.
        await backends.leave(second.addr, seat)
        async with asyncio.timeout(10):
            async for _ in views:
                pass
        views.close()
        await create_table(backends, third.addr)
        await create_table(backends, second.addr)  # now idle channels give way to new ones
        assert len(backends._channels) <= 3
    finally:
        await backends.close()
        await second.stop(0)
        await third.stop(0)
