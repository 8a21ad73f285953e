"""``Table.Link``: one stream per gateway carrying its calls and its seats' views.

Played through the gateway's own ``Link`` client against a real replica over a real
gRPC channel and, where the semantics are the link's rather than the stream's, through
``rackem up``'s in-process seam too (``DirectLink``, rackem/seam/tables.py): whole
matches with every view checked against ``observe``, refusals with their codes,
subscriptions ending, a finished table freed; over gRPC also the link breaking when
the replica stops, and a link whose reader stalls failing without holding up its tables.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import weakref
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from feeds import reading

from rackcore import verify
from rackcore.bots import choose
from rackem.seam.tables import DirectLink
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.running import Running
from services.convert import move_to_pb
from services.gateway.table_client import Link, TableLink, dial
from table.decoded import message_of, view_of
from table.table_players import (
    ServerFactory,
    assert_views_private,
    create_table,
    error_code,
    linked,
)

_ids = itertools.count()

Replica = tuple[Running, "table_pb2_grpc.TableAsyncStub"]


@pytest.fixture(params=["grpc", "in_process"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def replica(start_table_server: ServerFactory) -> AsyncIterator[Replica]:
    """A replica, and a stub on a channel to it."""
    running = await start_table_server()
    async with open_channel(running.addr) as channel:
        yield running, table_pb2_grpc.TableStub(channel)


@pytest.fixture
def new_link(transport: str, replica: Replica) -> Callable[[], TableLink]:
    """Links to ``replica``: over its gRPC channel, or in process as under ``rackem up``."""
    running, stub = replica
    if transport == "grpc":
        return lambda: dial(stub)
    return lambda: DirectLink(running.service)


@pytest.fixture
def new_grpc_link(replica: Replica) -> Callable[[], Link]:
    return lambda: dial(replica[1])


async def play_seat(
    link: TableLink, table_id: str, token: str, seat: int, views: list[game_pb2.TableView]
) -> None:
    """Play ``seat`` over ``link`` until its table ends the subscription."""
    request = table_pb2.SeatRequest(table_id=table_id, token=token)
    done: set[tuple[int, int, str]] = set()
    sub = reading(link.subscribe, request)
    try:
        async for tv in sub:
            views.append(tv)
            if tv.status == "round_over":
                if not message_of(tv)["continued"][seat]:
                    await link.continue_round(request, 5)
                continue
            view = view_of(tv)
            key = (tv.version, view.round_no, view.phase)
            if tv.status != "playing" or not view.my_turn or key in done:
                continue
            done.add(key)
            move = table_pb2.SubmitMoveRequest(
                table_id=table_id,
                token=token,
                move=move_to_pb(choose(view, "medium", seed=tv.version)),
                move_id=f"link-{next(_ids)}",
                expected_version=tv.version,
            )
            try:
                answer = await link.submit(move, 5)
            except ServiceError as err:
                if err.code != "stale_version":
                    raise
                continue
            assert answer == tv.version + 1
    finally:
        sub.close()


async def test_a_whole_match_plays_over_one_link(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    _, stub = replica
    created = await create_table(stub, humans=2, bots=0, target=100)
    link = new_link()
    views: list[list[game_pb2.TableView]] = [[], []]
    try:
        async with asyncio.timeout(60):
            await asyncio.gather(
                *(play_seat(link, created.table_id, created.tokens[s], s, views[s]) for s in (0, 1))
            )
    finally:
        await link.close()
    record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=created.table_id))
    log = json.loads(record.log_json)
    verdict = verify(log)
    assert verdict["valid"] and verdict["finished"]
    for seat in (0, 1):
        assert views[seat][-1].status == "finished"
        assert_views_private(log, seat, views[seat])


async def test_refusals_come_back_with_their_codes_and_change_nothing(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    _, stub = replica
    created = await create_table(stub, humans=2, bots=0)
    table_id, tokens = created.table_id, created.tokens
    summary_request = table_pb2.SummaryRequest(table_id=table_id)
    before = await stub.GetSummary(summary_request)
    turn_seat = 0 if await _my_turn(stub, table_id, tokens[0]) else 1
    draw = game_pb2.Move(act="draw", source="stock")
    cases = {
        "bad_token": table_pb2.SubmitMoveRequest(
            table_id=table_id, token="0" * 32, move=draw, move_id="a"
        ),
        "not_your_turn": table_pb2.SubmitMoveRequest(
            table_id=table_id, token=tokens[1 - turn_seat], move=draw, move_id="b"
        ),
        "no_table": table_pb2.SubmitMoveRequest(
            table_id="t0000000000000000", token=tokens[0], move=draw, move_id="c"
        ),
        "malformed_move": table_pb2.SubmitMoveRequest(
            table_id=table_id, token=tokens[turn_seat], move=game_pb2.Move(act="fly"), move_id="d"
        ),
    }
    link = new_link()
    try:
        for code, request in cases.items():
            with pytest.raises(ServiceError) as refused:
                await link.submit(request, 5)
            assert refused.value.code == code, code
        sub = reading(link.subscribe, table_pb2.SeatRequest(table_id=table_id, token="f" * 32))
        with pytest.raises(ServiceError) as refused:
            await anext(sub)
        assert refused.value.code == "bad_token"
        assert link.broken is None  # refusals end their call, never the link
    finally:
        await link.close()
    after = await stub.GetSummary(summary_request)
    assert after.version == before.version and after.status == before.status


async def _my_turn(stub: table_pb2_grpc.TableAsyncStub, table_id: str, token: str) -> bool:
    request = table_pb2.SeatRequest(table_id=table_id, token=token)
    async with linked(stub) as link:
        views = reading(link.subscribe, request)
        tv = await anext(views)
        views.close()
    return view_of(tv).turn == view_of(tv).seat


async def test_a_closed_subscription_lets_the_seat_go(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    _, stub = replica
    created = await create_table(stub, humans=2, bots=0)
    link = new_link()
    try:
        watcher = reading(
            link.subscribe,
            table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0]),
        )
        other = reading(
            link.subscribe,
            table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[1]),
        )
        async with asyncio.timeout(10):
            async for tv in watcher:
                if message_of(tv)["seats"][1]["connected"]:
                    break
            other.close()
            async for tv in watcher:
                if not message_of(tv)["seats"][1]["connected"]:
                    break
        watcher.close()
    finally:
        await link.close()


async def test_a_newer_subscription_of_a_seat_ends_the_older_cleanly(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    _, stub = replica
    created = await create_table(stub, humans=2, bots=0)
    request = table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0])
    link = new_link()
    try:
        older = reading(link.subscribe, request)
        async with asyncio.timeout(10):
            first = await anext(older)
            newer = reading(link.subscribe, request)
            assert (await anext(newer)).version == first.version
            async for _ in older:  # ends without an error once the newer one is there
                pass
            other = reading(
                link.subscribe,
                table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[1]),
            )
            await anext(other)
            seen = await anext(newer)  # the newer one still gets every change
            while not message_of(seen)["seats"][1]["connected"]:
                seen = await anext(newer)
        newer.close()
        other.close()
        assert link.broken is None
    finally:
        await link.close()


async def test_views_can_be_handed_over_as_they_come_and_a_failing_handler_ends_its_stream(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    _, stub = replica
    created = await create_table(stub, humans=2, bots=0)
    seats = [
        table_pb2.SeatRequest(table_id=created.table_id, token=token) for token in created.tokens
    ]
    link = new_link()
    try:
        seen: list[game_pb2.TableView] = []
        both = asyncio.Event()

        def watch(view: game_pb2.TableView) -> None:
            seen.append(view)
            if message_of(view)["seats"][1]["connected"]:
                both.set()

        def fail(view: game_pb2.TableView) -> None:
            raise ValueError("the handler broke")

        watcher = link.subscribe(seats[0], watch)
        failing = link.subscribe(seats[1], fail)
        async with asyncio.timeout(10):
            with pytest.raises(ValueError):
                await failing.finished()  # ended with its handler's error...
            await both.wait()
            while message_of(seen[-1])["seats"][1][
                "connected"
            ]:  # ...and the seat it held was let go
                await asyncio.sleep(0.01)
        assert all(view_of(v).seat == 0 for v in seen)
        watcher.close()
        await watcher.finished()  # closed by its reader: a clean end
        assert link.broken is None
    finally:
        await link.close()


async def test_a_stopping_replica_breaks_the_link_and_everything_on_it_fails_unavailable(
    replica: Replica, new_grpc_link: Callable[[], Link]
) -> None:
    running, stub = replica
    created = await create_table(stub, humans=2, bots=0)
    link = new_grpc_link()
    try:
        sub = reading(
            link.subscribe,
            table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0]),
        )
        await anext(sub)
        await running.stop(0)
        with pytest.raises(ServiceError) as ended:
            async with asyncio.timeout(10):
                async for _ in sub:
                    pass
        assert ended.value.code in ("unavailable", "shutting_down")
        async with asyncio.timeout(10):
            while link.broken is None:
                await asyncio.sleep(0.01)
        with pytest.raises(ServiceError) as refused:
            await link.continue_round(table_pb2.SeatRequest(), 5)
        assert refused.value.code == "unavailable"
    finally:
        await link.close()


async def test_a_link_that_is_not_read_fails_and_its_table_plays_on(
    start_table_server: ServerFactory,
) -> None:
    running = await start_table_server(link_queue=50)
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=2, bots=0)
        seat = table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0])
        stalled = stub.Link()  # type: ignore[call-arg]
        # Thousands of subscriptions in one message, each answered with a view, and none of
        # them read: once the stream's window is full the replica's outbox passes its limit.
        calls = [table_pb2.LinkCall(id=i, subscribe=seat) for i in range(1, 3001)]
        await stalled.write(table_pb2.LinkUp(calls=calls))
        async with asyncio.timeout(60):
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                async for _ in stalled:  # what was sent before it failed, then the failure
                    pass
        assert error_code(failed.value) == "unavailable"
        link = dial(stub)  # the table never waited
        try:
            views: list[game_pb2.TableView] = []
            sub = reading(link.subscribe, seat)
            views.append(await anext(sub))
            assert views[0].status == "playing" and views[0].version == 0
            sub.close()
        finally:
            await link.close()


async def test_a_finished_table_is_freed_with_the_link_still_open(
    replica: Replica, new_link: Callable[[], TableLink]
) -> None:
    running, stub = replica
    created = await create_table(stub, humans=2, bots=0, target=50)
    tables = running.service._tables
    link = new_link()
    views: list[list[game_pb2.TableView]] = [[], []]
    gc.collect()
    gc.disable()  # only reference counting frees the table from here on
    try:
        seats = [play_seat(link, created.table_id, created.tokens[s], s, views[s]) for s in (0, 1)]
        playing = asyncio.gather(*seats)
        while created.table_id not in tables.live:
            await asyncio.sleep(0.01)
        table = weakref.ref(tables.live[created.table_id])
        async with asyncio.timeout(60):
            await playing
            while created.table_id in tables.live:  # retiring: finished in the store
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the subscriptions' last unsubscribe
        assert views[0][-1].status == "finished"
        assert table() is None
    finally:
        gc.enable()
        await link.close()
