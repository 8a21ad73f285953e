"""A table's store calls while its store cannot serve (services/table/outages.py): held
back through an outage, else the table closes; and what the Redis store raises then, the
project's own ``StoreUnavailable``, never a Redis error."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, ResponseError

from services.common.errors import ServiceError, StoreUnavailable
from services.common.redis_client import NotReplicated, connect, raise_store_error
from services.table.outages import StoreWait, store_call
from services.table.store.redis import RedisStore
from services.table.stored import TableState

if TYPE_CHECKING:
    from services.table.table import Table


class _Table:
    """What ``store_call`` uses of a table: its id, its hold, ``close``."""

    def __init__(self, hold_ms: int) -> None:
        self.table_id = "t1"
        self.config = SimpleNamespace(store_hold_ms=hold_ms)
        self.closed: ServiceError | None = None
        self.storing = StoreWait()

    def close(self, error: ServiceError) -> None:
        self.closed = error
        self.storing.interrupt()


def _failing(
    times: int, error: Callable[[], Exception]
) -> tuple[list[int], Callable[[], Awaitable[int]]]:
    """A store call that raises ``error()`` ``times`` times, then answers 7."""
    calls: list[int] = []

    async def call() -> int:
        calls.append(1)
        if len(calls) <= times:
            raise error()
        return 7

    return calls, call


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


async def test_a_call_is_tried_again_while_the_store_is_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    table = _Table(hold_ms=5_000)
    calls, call = _failing(2, lambda: StoreUnavailable("ConnectionError"))
    assert await store_call(cast("Table", table), call) == 7
    assert len(calls) == 3 and table.closed is None
    assert _messages(caplog).count("store_unavailable") == 1  # said once, not per try


@pytest.mark.parametrize(
    ("error", "logged"),
    [
        (StoreUnavailable("NotReplicated", again=False), "store_unavailable_closing"),
        (StoreUnavailable("OutOfMemoryError", again=False, full=True), "store_full"),
        (ValueError("a bug"), "store_error"),
    ],
)
async def test_a_call_that_may_not_be_sent_again_closes_the_table_at_once(
    error: Exception, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    table = _Table(hold_ms=5_000)
    calls, call = _failing(1, lambda: error)
    with pytest.raises(ServiceError) as refused:
        await store_call(cast("Table", table), call)
    assert refused.value.code == "unavailable" and table.closed is refused.value
    assert len(calls) == 1
    assert logged in _messages(caplog)


async def test_an_outage_longer_than_the_hold_closes_the_table(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    table = _Table(hold_ms=120)
    calls, call = _failing(1_000, lambda: StoreUnavailable("ConnectionError"))
    with pytest.raises(ServiceError) as refused:
        await store_call(cast("Table", table), call)
    assert refused.value.code == "unavailable" and table.closed is refused.value
    assert len(calls) > 1
    assert "store_unavailable_closing" in _messages(caplog)


@pytest.mark.parametrize(
    ("error", "again", "full"),
    [
        (RedisConnectionError(), True, False),
        (NotReplicated("0 of 1 replicas"), False, False),
        (OutOfMemoryError(), False, True),
    ],
)
def test_a_redis_outage_is_raised_as_store_unavailable(
    error: Exception, again: bool, full: bool
) -> None:
    try:
        raise error
    except Exception as exc:
        with pytest.raises(StoreUnavailable) as raised:
            raise_store_error(exc)
    assert (raised.value.again, raised.value.full) == (again, full)
    assert raised.value.reason == type(error).__name__ and raised.value.__cause__ is error


def test_a_redis_error_that_is_no_outage_is_raised_as_it_is() -> None:
    error = ResponseError("a script's bug")
    with pytest.raises(ResponseError) as raised:
        raise_store_error(error)
    assert raised.value is error


async def test_the_redis_store_raises_store_unavailable_when_redis_is_gone() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = connect(f"redis://127.0.0.1:{port}/0")
    store = RedisStore(client)
    try:
        with pytest.raises(StoreUnavailable) as loading:
            await store.load("t1")
        assert loading.value.again
        with pytest.raises(StoreUnavailable):
            await store.append("t1", "a 127.0.0.1:1", 0, {"seat": 0}, TableState.new(2))
        with pytest.raises(StoreUnavailable):
            await store.expired_count()
    finally:
        await client.aclose()


async def test_a_call_held_back_gives_up_at_once_when_its_table_steps_aside() -> None:
    """A table whose lease ran out while the store did not answer closes (leases.py): the
    call it held back answers what it closed with, not after the whole hold."""
    table = _Table(hold_ms=60_000)
    _, call = _failing(1_000, lambda: StoreUnavailable("ConnectionError"))
    aside = ServiceError("wrong_replica", "stepped aside")
    loop = asyncio.get_running_loop()
    loop.call_later(0.2, table.close, aside)
    async with asyncio.timeout(2):
        with pytest.raises(ServiceError) as raised:
            await store_call(table, call)
    assert raised.value is aside


async def test_a_call_under_way_answers_at_once_when_its_table_closes() -> None:
    """A store call that the store never answers (a cut: its bytes dropped) ends when its
    table closes from elsewhere (it stepped aside), with what it closed with; the future
    it waited on is cancelled, nothing else."""
    table = _Table(hold_ms=60_000)
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def call() -> int:
        return await never

    aside = ServiceError("wrong_replica", "stepped aside")
    asyncio.get_running_loop().call_later(0.1, table.close, aside)
    async with asyncio.timeout(2):
        with pytest.raises(ServiceError) as raised:
            await store_call(table, call)
    assert raised.value is aside and never.cancelled()
    assert table.storing.waiting is None and not table.storing.cut


async def test_a_call_under_way_is_still_cancelled_by_its_caller() -> None:
    """Cancelling the task that makes a store call cancels it as ever (the close's cut is
    only for a table that closes)."""
    table = _Table(hold_ms=60_000)
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def call() -> int:
        return await never

    task = asyncio.ensure_future(store_call(table, call))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert table.closed is None and table.storing.waiting is None
    assert await store_call(table, _failing(0, RuntimeError)[1]) == 7  # and it serves on
