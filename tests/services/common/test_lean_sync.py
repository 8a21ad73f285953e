"""``lean_sync``'s Event and Queue behave as asyncio's do, without a deque per instance."""

from __future__ import annotations

import asyncio
import collections
import gc

import pytest

from services.common.lean_sync import Event, Queue


async def test_an_event_wakes_every_waiter_and_stays_set_until_cleared() -> None:
    event = Event()
    assert not event.is_set()
    waiters = [asyncio.create_task(event.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    event.set()
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert event.is_set() and await event.wait()  # set: no wait at all
    event.clear()
    late = asyncio.create_task(event.wait())
    await asyncio.sleep(0)
    assert not late.done()
    event.set()
    assert await late


async def test_a_cancelled_or_timed_out_wait_leaves_the_event_usable() -> None:
    event = Event()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await event.wait()
    cancelled = asyncio.create_task(event.wait())
    waiting = asyncio.create_task(event.wait())
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    event.set()
    assert await waiting
    assert cancelled.cancelled()


async def test_a_queue_is_fifo_bounded_and_reports_its_size() -> None:
    queue: Queue[int] = Queue(maxsize=3)
    assert queue.empty() and queue.qsize() == 0 and not queue.full()
    for i in range(3):
        queue.put_nowait(i)
    assert queue.full() and queue.qsize() == 3
    with pytest.raises(asyncio.QueueFull):
        queue.put_nowait(3)
    assert [queue.get_nowait(), await queue.get()] == [0, 1]
    queue.put_nowait(3)
    assert [await queue.get(), queue.get_nowait()] == [2, 3]
    with pytest.raises(asyncio.QueueEmpty):
        queue.get_nowait()


async def test_an_unbounded_queue_keeps_order_across_many_items_taken_and_added() -> None:
    queue: Queue[int] = Queue()
    expected = collections.deque[int]()
    n = 0
    for round_ in range(50):  # takes fewer than it adds, so its head is cut off often
        for _ in range(round_ % 7 + 3):
            queue.put_nowait(n)
            expected.append(n)
            n += 1
        for _ in range(round_ % 5 + 1):
            assert queue.get_nowait() == expected.popleft()
        assert queue.qsize() == len(expected)
    while expected:
        assert await queue.get() == expected.popleft()
    assert queue.empty()


async def test_waiting_getters_each_get_one_item_in_the_order_they_asked() -> None:
    queue: Queue[str] = Queue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    for item in "abc":
        queue.put_nowait(item)
    assert await asyncio.gather(*getters) == ["a", "b", "c"]


async def test_an_item_for_a_getter_cancelled_after_it_was_woken_goes_to_the_next() -> None:
    queue: Queue[str] = Queue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.put_nowait("x")  # wakes ``first``...
    first.cancel()  # ...which is cancelled before it runs
    assert await second == "x"
    assert first.cancelled() and queue.empty()


async def test_neither_makes_a_deque() -> None:
    event, queue = Event(), Queue[int](maxsize=8)
    waiting = asyncio.create_task(event.wait())
    getting = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    held = [*gc.get_referents(event), *gc.get_referents(queue)]
    held += [r for h in held for r in gc.get_referents(h)]
    assert not any(isinstance(r, collections.deque) for r in held)
    asyncio_held = gc.get_referents(asyncio.Event())
    assert any(isinstance(r, collections.deque) for r in asyncio_held)  # what they avoid
    event.set()
    queue.put_nowait(1)
    assert await waiting and await getting == 1
