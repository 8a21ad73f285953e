"""The gateway's ``Link`` client, over a real gRPC channel to a real table replica.

Each typed call (``submit``, ``continue_round``, ``leave``) gets its own answer or its
own refusal however many share the stream; subscriptions take their views by handler or
by iteration and let the seat go when closed; a call nobody answers fails
``unavailable`` in time; a replica that stops breaks the link and everything on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from feeds import reading

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.pacing import TABLES
from services.common.registry import MemoryRegistry
from services.common.running import Running as BotRunning
from services.common.running import Running as TableRunning
from services.gateway.metrics import Metrics
from services.gateway.table_client import Link, Stream, dial
from services.table.server import create_server as create_table_server
from services.table.store.memory import MemoryStore
from tests.services.table.decoded import message_of, view_of

from .conftest import table_settings


class Replica:
    """A table replica on a free port and a stub on a channel to it."""

    def __init__(self, running: TableRunning, channel: grpc.aio.Channel) -> None:
        self.running = running
        self.channel = channel
        self.stub = table_pb2_grpc.TableStub(channel)

    async def table(self, humans: int = 2, code: str = "LINK42") -> table_pb2.CreateTableReply:
        rules = game_pb2.Rules(players=humans, target=50)
        seats = [table_pb2.SeatSpec(name=f"P{i}") for i in range(humans)]
        request = table_pb2.CreateTableRequest(code=code, rules=rules, seats=seats)
        reply: table_pb2.CreateTableReply = await self.stub.CreateTable(request, timeout=5)
        return reply


@pytest.fixture
async def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
async def registry() -> MemoryRegistry:
    return MemoryRegistry()


@pytest.fixture
async def replica(
    bot_server: BotRunning, store: MemoryStore, registry: MemoryRegistry
) -> AsyncIterator[Replica]:
    running = await create_table_server(
        table_settings(), store=store, registry=registry, bot_addr=bot_server.addr
    )
    async with open_channel(running.addr) as channel:
        yield Replica(running, channel)
    if not running.service.tables.draining:
        await running.stop(0)


@pytest.fixture
async def link(replica: Replica) -> AsyncIterator[Link]:
    opened = dial(replica.stub)
    yield opened
    await opened.close()


def seat(created: table_pb2.CreateTableReply, n: int) -> table_pb2.SeatRequest:
    return table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[n])


async def first_view(link: Link, request: table_pb2.SeatRequest) -> game_pb2.TableView:
    views = reading(link.subscribe, request)
    try:
        async with asyncio.timeout(10):
            return await anext(views)
    finally:
        views.close()


async def test_a_move_answers_the_new_version_once_per_move_id(
    replica: Replica, link: Link
) -> None:
    created = await replica.table()
    views = [await first_view(link, seat(created, n)) for n in (0, 1)]
    mover = next(n for n, tv in enumerate(views) if view_of(tv).turn == view_of(tv).seat)
    draw = table_pb2.SubmitMoveRequest(
        table_id=created.table_id,
        token=created.tokens[mover],
        move=game_pb2.Move(act="draw", source="stock"),
        move_id="draw-1",
        expected_version=0,
    )
    assert await link.submit(draw, 5) == 1
    assert await link.submit(draw, 5) == 1  # the same move_id: the same answer, not a 2nd move
    summary = await replica.stub.GetSummary(table_pb2.SummaryRequest(table_id=created.table_id))
    assert summary.version == 1
    again = table_pb2.SubmitMoveRequest()
    again.CopyFrom(draw)
    again.move_id = "draw-2"
    with pytest.raises(ServiceError) as stale:
        await link.submit(again, 5)
    assert stale.value.code == "stale_version"
    await link.leave(seat(created, 1 - mover), 5)
    summary = await replica.stub.GetSummary(table_pb2.SummaryRequest(table_id=created.table_id))
    assert summary.seats[1 - mover].left  # a bot plays the seat that left
    assert link.broken is None


async def test_calls_in_flight_together_each_get_their_own_answer(
    replica: Replica, link: Link
) -> None:
    created = await replica.table()
    stranger = table_pb2.SeatRequest(table_id=created.table_id, token="0" * 32)
    nowhere = table_pb2.SeatRequest(table_id="t0000000000000000", token=created.tokens[0])
    calls = [
        link.continue_round(stranger, 5)
        if n % 3 == 0
        else link.leave(nowhere, 5)
        if n % 3 == 1
        else link.continue_round(seat(created, 0), 5)
        for n in range(60)
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    for n, result in enumerate(results):
        if n % 3 == 2:  # the seat's own continue (nothing to do mid-round) is done
            assert result is None, (n, result)
        else:
            expected = "bad_token" if n % 3 == 0 else "no_table"
            assert isinstance(result, ServiceError) and result.code == expected, (n, result)
    assert link.broken is None and not link.busy


async def test_a_replica_that_does_not_own_the_table_refuses_with_the_owner(
    replica: Replica, bot_server: BotRunning, store: MemoryStore, registry: MemoryRegistry
) -> None:
    created = await replica.table()
    other = await create_table_server(
        table_settings(), store=store, registry=registry, bot_addr=bot_server.addr
    )
    try:
        async with open_channel(other.addr) as channel:
            elsewhere = dial(table_pb2_grpc.TableStub(channel))
            try:
                with pytest.raises(ServiceError) as moved:
                    await elsewhere.continue_round(seat(created, 0), 5)
                assert (moved.value.code, moved.value.owner) == (
                    "wrong_replica",
                    replica.running.addr,
                )
                with pytest.raises(ServiceError) as watched:
                    await anext(reading(elsewhere.subscribe, seat(created, 0)))
                assert (watched.value.code, watched.value.owner) == (
                    "wrong_replica",
                    replica.running.addr,
                )
            finally:
                await elsewhere.close()
    finally:
        await other.stop(0)


async def test_views_by_handler_or_by_iteration_and_a_closed_subscription_lets_the_seat_go(
    replica: Replica, link: Link
) -> None:
    created = await replica.table()
    seen: list[game_pb2.TableView] = []
    both = asyncio.Event()

    def on_view(view: game_pb2.TableView) -> None:
        seen.append(view)
        if message_of(view)["seats"][1]["connected"]:
            both.set()

    handled = link.subscribe(seat(created, 0), on_view)
    iterated = reading(link.subscribe, seat(created, 1))
    async with asyncio.timeout(10):
        mine = await anext(iterated)
        await both.wait()
        assert link.busy
        iterated.close()
        while message_of(seen[-1])["seats"][1]["connected"]:  # the replica let seat 1 go
            await asyncio.sleep(0.01)
    assert view_of(mine).seat == 1 and all(view_of(v).seat == 0 for v in seen)
    handled.close()
    await handled.finished()  # closed by its reader: a clean end
    assert link.broken is None


class _SlowTable(table_pb2_grpc.TableServicer):
    """A ``Table.Link`` that answers call 1 only once ``release`` is set, others at once."""

    def __init__(self, release: asyncio.Event) -> None:
        self._release = release

    async def Link(
        self, request_iterator: AsyncIterator[table_pb2.LinkUp], context: object
    ) -> AsyncIterator[table_pb2.LinkDown]:
        async for up in request_iterator:
            for call in up.calls:
                if call.id == 1:
                    await self._release.wait()
                yield table_pb2.LinkDown(events=[table_pb2.LinkEvent(id=call.id, moved=call.id)])


async def test_a_call_nobody_answers_times_out_unavailable_and_a_late_answer_is_dropped() -> None:
    release = asyncio.Event()
    server = grpc.aio.server()
    table_pb2_grpc.add_TableServicer_to_server(_SlowTable(release), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with open_channel(f"127.0.0.1:{port}") as channel:
            link = dial(table_pb2_grpc.TableStub(channel))
            try:
                with pytest.raises(ServiceError) as late:
                    async with asyncio.timeout(5):
                        await link.submit(table_pb2.SubmitMoveRequest(), 0.05)
                assert late.value.code == "unavailable" and "in time" in late.value.message
                release.set()  # its answer comes now, to nobody; the next call gets its own
                assert await link.submit(table_pb2.SubmitMoveRequest(), 5) == 2
                assert link.broken is None
            finally:
                await link.close()
    finally:
        await server.stop(0)


async def test_a_stopping_replica_breaks_the_link_and_everything_on_it_fails_unavailable(
    replica: Replica, link: Link
) -> None:
    created = await replica.table()
    views = reading(link.subscribe, seat(created, 0))
    async with asyncio.timeout(10):
        await anext(views)
    await replica.running.stop(0)
    with pytest.raises(ServiceError) as ended:
        async with asyncio.timeout(10):
            async for _ in views:
                pass
    assert ended.value.code in ("unavailable", "shutting_down")
    async with asyncio.timeout(10):
        while link.broken is None:
            await asyncio.sleep(0.01)
    assert not link.busy
    for call in (link.continue_round(seat(created, 0), 5), link.leave(seat(created, 0), 5)):
        with pytest.raises(ServiceError) as refused:
            await call
        assert refused.value.code == "unavailable"
    with pytest.raises(ServiceError) as refused:
        await anext(reading(link.subscribe, seat(created, 0)))
    assert refused.value.code == "unavailable"


class _Counted:
    """A ``Table.Link`` call whose messages are counted: calls per message written up,
    events per message read down."""

    def __init__(self, call: Stream) -> None:
        self._call = call
        self.up: list[int] = []
        self.down: list[int] = []

    async def write(self, message: table_pb2.LinkUp) -> None:
        self.up.append(len(message.calls))
        await self._call.write(message)

    def __aiter__(self) -> AsyncIterator[table_pb2.LinkDown]:
        return self._read()

    async def _read(self) -> AsyncIterator[table_pb2.LinkDown]:
        async for message in self._call:
            self.down.append(len(message.events))
            yield message

    def cancel(self) -> object:
        return self._call.cancel()


async def _tables(replica: Replica) -> list[table_pb2.SeatRequest]:
    """A seat at each of as many tables as make a link busy (``services/common/pacing.py``)."""
    return [seat(await replica.table(code=f"LINK4{n}"), 0) for n in range(TABLES)]


async def _one_by_one(link: Link, seats: list[table_pb2.SeatRequest]) -> list[None]:
    """A call at the first seat alone, then one at each seat in turn, twice, each in a
    loop turn of its own, 10 ms apart; their answers."""
    await link.continue_round(seats[0], 5)
    calls = []
    for request in seats * 2:
        calls.append(asyncio.ensure_future(link.continue_round(request, 5)))
        await asyncio.sleep(0.01)
    return await asyncio.gather(*calls)


# Unpaced, every call goes on its own; paced, the first ones too while fewer than TABLES
# tables had traffic, then what queues while the pace holds the next message back.
ALONE = [1] * (1 + 2 * TABLES)
PACED = [1] * TABLES + [TABLES + 1]


@pytest.mark.parametrize("pace_s", [0.0, 0.3])
async def test_a_busy_paced_link_sends_the_calls_that_queued_meanwhile_in_one_message(
    replica: Replica, pace_s: float
) -> None:
    seats = await _tables(replica)
    stream = _Counted(replica.stub.Link())  # type: ignore[call-arg]
    link = Link(stream, pace_s)
    try:
        assert await _one_by_one(link, seats) == [None] * 2 * TABLES
    finally:
        await link.close()
    assert stream.up == (ALONE if pace_s == 0 else PACED)


@pytest.mark.parametrize("pace_ms", [0, 300])
async def test_a_busy_paced_replica_sends_the_answers_that_queued_meanwhile_in_one_message(
    bot_server: BotRunning, store: MemoryStore, registry: MemoryRegistry, pace_ms: int
) -> None:
    settings = table_settings(link_pace_ms=pace_ms)
    running = await create_table_server(
        settings, store=store, registry=registry, bot_addr=bot_server.addr
    )
    try:
        async with open_channel(running.addr) as channel:
            seats = await _tables(Replica(running, channel))
            stream = _Counted(table_pb2_grpc.TableStub(channel).Link())  # type: ignore[call-arg]
            link = Link(stream)
            try:
                assert await _one_by_one(link, seats) == [None] * 2 * TABLES
            finally:
                await link.close()
    finally:
        await running.stop(0)
    assert stream.up == ALONE  # the gateway's side is not paced here
    assert stream.down == (ALONE if pace_ms == 0 else PACED)


async def test_one_tables_calls_are_never_held_back(replica: Replica) -> None:
    """A single table's calls come one after another: pacing them would only delay them."""
    seats = [seat(await replica.table(), 0)] * TABLES
    stream = _Counted(replica.stub.Link())  # type: ignore[call-arg]
    link = Link(stream, 0.3)
    try:
        assert await _one_by_one(link, seats) == [None] * 2 * TABLES
    finally:
        await link.close()
    assert stream.up == ALONE


async def test_the_gateways_metrics_count_a_links_messages_and_what_they_carry(
    replica: Replica,
) -> None:
    seats = await _tables(replica)
    stream = _Counted(replica.stub.Link())  # type: ignore[call-arg]
    metrics = Metrics()
    link = Link(stream, 0.3, metrics.link_counts)
    try:
        assert await _one_by_one(link, seats) == [None] * 2 * TABLES
    finally:
        await link.close()

    def counted(name: str, direction: str) -> float | None:
        return metrics.registry.get_sample_value(
            f"rackem_gateway_{name}_total", {"direction": direction}
        )

    assert stream.up == PACED and len(stream.down) >= 2
    assert counted("link_messages", "up") == len(stream.up)
    assert counted("link_items", "up") == sum(stream.up) == 1 + 2 * TABLES
    assert counted("link_messages", "down") == len(stream.down)
    assert counted("link_items", "down") == sum(stream.down) == 1 + 2 * TABLES
