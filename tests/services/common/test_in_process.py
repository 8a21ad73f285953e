"""The in-process stream ``rackem up`` links the gateway to its table replica with.

It must behave as the gRPC stream it stands in for: messages arrive as their own
objects, the handler's error ends the stream for the caller, a cancelled caller cancels
the handler, a withdrawn address ends its streams, and a writer nobody reads waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError
from services.common.in_process import DEPTH, Pipe, TableLinks, Writer

ADDR = "127.0.0.1:1"
Up = table_pb2.LinkUp
Down = table_pb2.LinkDown


def _down(call_id: int) -> Down:
    return Down(events=[table_pb2.LinkEvent(id=call_id, moved=call_id)])


async def echo(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
    """Answer every call with ``moved`` = its id; refuse id 0 with ``bad_request``."""
    async for up in requests:
        for call in up.calls:
            if call.id == 0:
                raise ServiceError("bad_request", "id 0")
            await out.write(_down(call.id))


async def _read_one(stream: AsyncIterator[Down]) -> Down:
    async with asyncio.timeout(5):
        return await anext(stream)


def open_echo() -> Pipe[Up, Down]:
    """A stream to ``echo``, served at ``ADDR`` by a registry of its own."""
    links = TableLinks()
    links.serve(ADDR, echo)
    stream = links.open(ADDR)
    assert stream is not None
    return stream


async def test_calls_and_answers_cross_as_copies() -> None:
    stream = open_echo()
    down = aiter(stream)
    sent = Up(calls=[table_pb2.LinkCall(id=7)])
    await stream.write(sent)
    sent.calls[0].id = 8  # the caller's message is its own: what was written stays written
    answer = await _read_one(down)
    assert [e.moved for e in answer.events] == [7]
    stream.cancel()


async def test_an_unknown_address_is_not_served_here() -> None:
    links = TableLinks()
    assert links.open(ADDR) is None


async def test_a_handler_error_ends_the_stream_with_it() -> None:
    stream = open_echo()
    down = aiter(stream)
    await stream.write(Up(calls=[table_pb2.LinkCall(id=1), table_pb2.LinkCall(id=0)]))
    assert [e.moved for e in (await _read_one(down)).events] == [1]
    with pytest.raises(ServiceError) as ended:
        await _read_one(down)
    assert ended.value.code == "bad_request"
    with pytest.raises(ServiceError):
        await stream.write(Up(calls=[table_pb2.LinkCall(id=2)]))


async def test_a_cancelled_caller_cancels_the_handler() -> None:
    links = TableLinks()
    cancelled = asyncio.Event()

    async def waits(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    links.serve(ADDR, waits)
    stream = links.open(ADDR)
    assert stream is not None
    await asyncio.sleep(0)  # the handler starts
    stream.cancel()
    async with asyncio.timeout(5):
        await cancelled.wait()
    with pytest.raises(ServiceError) as ended:
        await _read_one(aiter(stream))
    assert ended.value.code == "unavailable"


async def test_a_withdrawn_address_ends_its_streams_unavailable() -> None:
    links = TableLinks()
    links.serve(ADDR, echo)
    streams = [links.open(ADDR) for _ in range(3)]
    await links.withdraw(ADDR)
    assert links.open(ADDR) is None
    for stream in streams:
        assert stream is not None
        with pytest.raises(ServiceError) as ended:
            await _read_one(aiter(stream))
        assert ended.value.code == "unavailable"


async def test_a_writer_nobody_reads_waits_once_the_pipe_is_full() -> None:
    links = TableLinks()
    written = 0

    async def floods(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        nonlocal written
        for i in range(10 * DEPTH):
            await out.write(_down(i))
            written += 1

    links.serve(ADDR, floods)
    stream = links.open(ADDR)
    assert stream is not None
    for _ in range(20):
        await asyncio.sleep(0)
    assert written == DEPTH  # held back, as gRPC's flow control holds a handler back
    down = aiter(stream)
    assert [e.moved for e in (await _read_one(down)).events] == [0]
    for _ in range(20):
        await asyncio.sleep(0)
    assert written == DEPTH + 1
    stream.cancel()


async def test_write_nowait_sends_while_there_is_room_and_never_after_the_end() -> None:
    got: list[Up] = []
    release = asyncio.Event()

    async def slow(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        await release.wait()
        async for up in requests:
            got.append(up)

    links = TableLinks()
    links.serve(ADDR, slow)
    stream = links.open(ADDR)
    assert stream is not None
    sent = [stream.write_nowait(Up(calls=[table_pb2.LinkCall(id=n)])) for n in range(DEPTH + 5)]
    assert sent == [True] * DEPTH + [False] * 5  # full: the caller must wait (``write``)
    release.set()
    async with asyncio.timeout(5):
        while len(got) < DEPTH:
            await asyncio.sleep(0.01)
    assert [up.calls[0].id for up in got] == list(range(DEPTH))
    stream.cancel()
    assert stream.write_nowait(Up()) is False


async def test_the_handler_writes_at_once_while_the_caller_has_room_and_never_after_the_end() -> (
    None
):
    outcomes: list[bool] = []
    out_side: list[Writer[Down]] = []
    ended = asyncio.Event()

    async def hands_over(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        out_side.append(out)
        outcomes.extend(out.write_nowait(_down(i)) for i in range(DEPTH + 3))  # type: ignore[attr-defined]
        await out.write(_down(DEPTH + 3))  # waits: the caller's room is full
        outcomes.append(True)
        await ended.wait()

    links = TableLinks()
    links.serve(ADDR, hands_over)
    stream = links.open(ADDR)
    assert stream is not None
    for _ in range(5):
        await asyncio.sleep(0)
    assert outcomes == [True] * DEPTH + [False] * 3  # no room: the handler must ``write``
    down = aiter(stream)
    seen = [e.moved for e in (await _read_one(down)).events]
    async with asyncio.timeout(5):
        while len(outcomes) < DEPTH + 4:  # a message read makes room for the waiting write
            await asyncio.sleep(0)
    for _ in range(DEPTH):
        seen += [e.moved for e in (await _read_one(down)).events]
    assert seen == [*range(DEPTH), DEPTH + 3]  # in order, the refused ones never sent
    stream.cancel()
    assert out_side[0].write_nowait(_down(99)) is False  # type: ignore[attr-defined]


async def test_messages_taken_directly_go_both_ways_within_the_writers_call() -> None:
    """A call written with ``write_nowait`` is answered before ``write_nowait`` returns."""
    seen_up: list[int] = []

    async def answers(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        def take(up: Up) -> None:
            for call in up.calls:
                seen_up.append(call.id)
                assert out.write_nowait(_down(call.id))  # type: ignore[attr-defined]

        out.take_directly(take)  # type: ignore[attr-defined]
        async for up in requests:  # what was queued, and the end
            take(up)

    links = TableLinks()
    links.serve(ADDR, answers)
    stream = links.open(ADDR)
    assert stream is not None
    answered: list[int] = []
    stream.take_directly(lambda down: answered.extend(e.moved for e in down.events))
    await asyncio.sleep(0)  # the handler starts and takes its messages directly
    for n in range(1, 4):
        sent = Up(calls=[table_pb2.LinkCall(id=n)])
        assert stream.write_nowait(sent)
        assert answered == list(range(1, n + 1))  # answered within the call
        sent.calls[0].id = 99  # the handler got its own copy
    assert seen_up == [1, 2, 3]
    stream.cancel()


async def test_a_direct_hand_over_never_overtakes_a_queued_message_or_nests() -> None:
    got: list[int] = []
    release = asyncio.Event()

    async def records(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        def take(up: Up) -> None:
            got.extend(call.id for call in up.calls)
            if up.calls[0].id == 10:  # a hand-over under way: this one must queue
                assert stream is not None and stream.write_nowait(
                    Up(calls=[table_pb2.LinkCall(id=11)])
                )
                got.append(-1)  # ...and not be taken inside this one

        out.take_directly(take)  # type: ignore[attr-defined]
        await release.wait()
        async for up in requests:
            take(up)

    links = TableLinks()
    links.serve(ADDR, records)
    stream = links.open(ADDR)
    assert stream is not None
    assert stream.write_nowait(Up(calls=[table_pb2.LinkCall(id=1)]))  # before take_directly
    await asyncio.sleep(0)
    assert got == []  # queued: the handler has not read yet
    assert stream.write_nowait(Up(calls=[table_pb2.LinkCall(id=2)]))
    assert got == []  # queued behind 1, not handed over ahead of it
    release.set()
    async with asyncio.timeout(5):
        while len(got) < 2:
            await asyncio.sleep(0)
    assert got == [1, 2]
    assert stream.write_nowait(Up(calls=[table_pb2.LinkCall(id=10)]))  # nothing queued now
    assert got == [1, 2, 10, -1]
    async with asyncio.timeout(5):
        while len(got) < 5:
            await asyncio.sleep(0)
    assert got == [1, 2, 10, -1, 11]
    stream.cancel()


async def test_a_direct_receiver_that_raises_ends_the_stream() -> None:
    async def breaks(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        def take(up: Up) -> None:
            raise ValueError("the handler broke")

        out.take_directly(take)  # type: ignore[attr-defined]
        async for _ in requests:
            pass

    links = TableLinks()
    links.serve(ADDR, breaks)
    stream = links.open(ADDR)
    assert stream is not None
    await asyncio.sleep(0)
    assert stream.write_nowait(Up(calls=[table_pb2.LinkCall(id=1)]))
    with pytest.raises(ServiceError) as ended:
        await _read_one(aiter(stream))
    assert ended.value.code == "internal"
    assert stream.write_nowait(Up()) is False
    assert links.streams(ADDR) == 0


async def test_a_callers_direct_receiver_that_raises_cancels_the_stream() -> None:
    handler_done = asyncio.Event()

    async def answers(requests: AsyncIterator[Up], out: Writer[Down]) -> None:
        try:
            async for up in requests:
                out.write_nowait(_down(up.calls[0].id))  # type: ignore[attr-defined]
        finally:
            handler_done.set()

    links = TableLinks()
    links.serve(ADDR, answers)
    stream = links.open(ADDR)
    assert stream is not None

    def broken(down: Down) -> None:
        raise ValueError("the caller's reader broke")

    stream.take_directly(broken)
    await stream.write(Up(calls=[table_pb2.LinkCall(id=1)]))
    async with asyncio.timeout(5):
        await handler_done.wait()  # the handler is let go, as a cancelled call's would be
    with pytest.raises(ServiceError) as ended:
        await _read_one(aiter(stream))
    assert ended.value.code == "unavailable"
    assert links.streams(ADDR) == 0
