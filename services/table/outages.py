"""A table's store calls while the store cannot serve: held back a while, then the table closes.

Every store call a table makes (its appends, its state saves, its look-ups of earlier
move ids) goes through ``store_call``. While the store raises ``StoreUnavailable`` with
``again`` (unreachable, failing over, loading), the call is tried again, 0.05 s later at
first and up to 0.5 s apart, for up to the table's ``store_hold_ms``; the table's lock
stays held, so its moves wait instead of failing. A write that may be on the primary
alone, a full store, an outage that outlasts the hold, or any other error closes the
table instead: it may be ahead of the store, so it is dropped here and rebuilt from the
store by the next request or sweep. A table that closes meanwhile (it stepped aside: its
lease ran out while the store did not answer, leases.py) stops trying at once, answering
what it closed with; so does a call under way when it closes (``StoreWait``): a store
that does not answer would otherwise hold it, and the table's lock, for the whole socket
timeout, and the move it carries unanswered as long.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from functools import partial
from typing import Any, Protocol, TypeVar

from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event

__all__ = ["StoreWait", "store_call"]

log = logging.getLogger("rackem.table")

T = TypeVar("T")


class _Config(Protocol):
    @property
    def store_hold_ms(self) -> int: ...


class StoreWait:
    """What a table's store call under way waits on, so that the table's ``close`` can cut
    it short (``interrupt``) from elsewhere: a table that stepped aside while its store
    does not answer (leases.py) answers the call at once, and its lock is free.

    The call's coroutine is driven through ``_cut_short``, which notes each future it
    waits on; ``interrupt`` cancels that future, so the call raises ``CancelledError``
    where it waits (a Redis read drops its connection, a batched script's answer is left
    out of its batch: services/common/script_batch.py) and ``store_call`` answers what
    the table closed with instead. The task that runs the call is not cancelled: nothing
    else it does is cut short, whichever task (or eager start) drives it."""

    __slots__ = ("cut", "waiting")

    def __init__(self) -> None:
        self.waiting: Any = None  # the future the call waits on now, if it waits
        self.cut = False  # ``interrupt`` cancelled it

    def interrupt(self) -> None:
        waiting = self.waiting
        if waiting is not None and not waiting.done():
            self.cut = True
            waiting.cancel()


class _Table(Protocol):
    """What a store call reads of its table (``Table``, table.py)."""

    @property
    def table_id(self) -> str: ...
    @property
    def config(self) -> _Config: ...
    @property
    def closed(self) -> ServiceError | None: ...
    @property
    def storing(self) -> StoreWait: ...
    def close(self, error: ServiceError) -> None: ...


class _CutShort:
    """Await ``coro``, noting in ``wait`` each future it waits on (the protocol a task
    drives a coroutine with: what it yields is what it waits for; the outcome goes back
    in, as a value or an exception)."""

    __slots__ = ("_coro", "_wait")

    def __init__(self, coro: Awaitable[T], wait: StoreWait) -> None:
        self._coro = coro.__await__()
        self._wait = wait

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, wait = self._coro, self._wait
        wait.cut = False
        sent: Any = None
        thrown: BaseException | None = None
        try:
            while True:
                try:
                    awaited = coro.send(sent) if thrown is None else coro.throw(thrown)
                except StopIteration as stop:
                    return stop.value
                wait.waiting = awaited
                sent, thrown = None, None
                try:
                    sent = yield awaited
                except BaseException as exc:  # handed to the call, as a task does
                    thrown = exc
                finally:
                    wait.waiting = None
        finally:
            wait.waiting = None


async def store_call(table: _Table, call: Callable[[], Awaitable[T]]) -> T:
    """Await ``call``, tried again while the store is unreachable for up to the table's
    ``store_hold_ms`` (its moves are held back meanwhile); if it still fails, close
    ``table`` (it may be ahead of the store: it is rebuilt from it later). A table that
    closes meanwhile (``StoreWait``) ends it at once, with what it closed with."""
    hold_until = time.monotonic() + table.config.store_hold_ms / 1000
    pause = 0.05
    while True:
        try:
            return await _until_closed(table, call)
        except StoreUnavailable as exc:
            # A write on the primary alone is not sent again, nor one to a full store
            # (``again`` is False): the table closes and is rebuilt from what the store has
            # (retried by its id, a move is kept once). A retried append that finds its
            # own earlier attempt stored answers "conflict" and closes the same way.
            if exc.again and time.monotonic() < hold_until and table.closed is None:
                if pause == 0.05:
                    event(log, "store_unavailable", logging.WARNING, table=table.table_id)
                await _until_closed(table, partial(asyncio.sleep, pause))
                pause = min(pause * 2, 0.5)
                continue
            if exc.full:
                event(log, "store_full", logging.ERROR, table=table.table_id)
            else:
                event(
                    log,
                    "store_unavailable_closing",
                    logging.WARNING,
                    table=table.table_id,
                    error_type=exc.reason,
                )
        except ServiceError as exc:
            if exc is table.closed:  # it closed while the call waited: its own answer
                raise
            log.error("store_error", extra={"fields": {"table": table.table_id}}, exc_info=True)
        except Exception:
            log.error("store_error", extra={"fields": {"table": table.table_id}}, exc_info=True)
        if table.closed is not None:  # it closed meanwhile: its own answer
            raise table.closed from None
        error = ServiceError("unavailable", "the table store did not answer; try again")
        table.close(error)
        raise error


async def _until_closed(table: _Table, call: Callable[[], Awaitable[T]]) -> T:
    """``call``'s outcome; what ``table`` closed with if it closes first (or had)."""
    if table.closed is not None:
        raise table.closed
    storing = table.storing
    try:
        return await _CutShort(call(), storing)  # type: ignore[no-any-return]
    except asyncio.CancelledError:
        closed = table.closed
        if not storing.cut or closed is None:
            raise  # the caller's own cancellation
        storing.cut = False
        raise closed from None  # it closed (stepped aside) while it waited
