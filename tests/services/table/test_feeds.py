from __future__ import annotations

import asyncio

import pytest

from services._gen.rackem.v1 import game_pb2
from services.common.errors import ServiceError
from services.table.feeds import Feed


def _view(version: int) -> game_pb2.TableView:
    return game_pb2.TableView(table_id="t1", version=version)


async def test_views_come_out_in_order_then_a_clean_end() -> None:
    sub = Feed(0, limit=4)
    assert sub.push(_view(1)) and sub.push(_view(2))
    sub.end()
    assert [(await sub.next()).version for _ in range(2)] == [1, 2]  # type: ignore[union-attr]
    assert await sub.next() is None


async def test_a_reader_waits_for_the_next_view() -> None:
    sub = Feed(0, limit=4)
    reader = asyncio.create_task(sub.next())
    await asyncio.sleep(0)
    assert not reader.done()
    sub.push(_view(7))
    view = await reader
    assert view is not None and view.version == 7


async def test_a_full_queue_refuses_instead_of_waiting() -> None:
    sub = Feed(0, limit=2)
    assert sub.push(_view(1)) and sub.push(_view(2))
    assert not sub.push(_view(3))


async def test_ending_with_an_error_drops_queued_views_and_raises_it() -> None:
    sub = Feed(0, limit=4)
    sub.push(_view(1))
    sub.end(ServiceError("shutting_down", "bye"))
    with pytest.raises(ServiceError) as caught:
        await sub.next()
    assert caught.value.code == "shutting_down"


async def test_nothing_is_queued_after_the_end() -> None:
    sub = Feed(0, limit=4)
    sub.end()
    sub.push(_view(1))
    assert sub.ended and await sub.next() is None


async def test_a_reader_that_never_waits_is_called_at_each_push_and_takes_what_is_queued() -> None:
    taken: list[list[int]] = []
    ends: list[tuple[bool, str | None]] = []
    sub: Feed

    def notify() -> None:
        taken.append([v.version for v in sub.take()])
        if sub.ended:
            ends.append((True, sub.error.code if sub.error else None))

    sub = Feed(0, limit=4, notify=notify)
    sub.push(_view(1))
    sub.push(_view(2))
    assert taken == [[1], [2]] and not ends
    sub.end()
    assert ends == [(True, None)]
    other = Feed(1, limit=4, notify=lambda: None)
    other.push(_view(3))
    other.end(ServiceError("unavailable", "gone"))
    assert other.take() == [] and other.error is not None and other.error.code == "unavailable"
