"""A table's store calls while the store cannot serve: held back a while, then the table closes.

Every store call a table makes (its appends, its state saves, its look-ups of earlier
move ids) goes through ``store_call``. While the store raises ``StoreUnavailable`` with
``again`` (unreachable, failing over, loading), the call is tried again, 0.05 s later at
first and up to 0.5 s apart, for up to the table's ``store_hold_ms``; the table's lock
stays held, so its moves wait instead of failing. A write that may be on the primary
alone, a full store, an outage that outlasts the hold, or any other error closes the
table instead: it may be ahead of the store, so it is dropped here and rebuilt from the
store by the next request or sweep.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event

__all__ = ["store_call"]

log = logging.getLogger("rackem.table")

T = TypeVar("T")


class _Config(Protocol):
    @property
    def store_hold_ms(self) -> int: ...


class _Table(Protocol):
    """What a store call reads of its table (``Table``, table.py)."""

    @property
    def table_id(self) -> str: ...
    @property
    def config(self) -> _Config: ...
    def close(self, error: ServiceError) -> None: ...


async def store_call(table: _Table, call: Callable[[], Awaitable[T]]) -> T:
    """Await ``call``, tried again while the store is unreachable for up to the table's
    ``store_hold_ms`` (its moves are held back meanwhile); if it still fails, close
    ``table`` (it may be ahead of the store: it is rebuilt from it later)."""
    hold_until = time.monotonic() + table.config.store_hold_ms / 1000
    pause = 0.05
    while True:
        try:
            return await call()
        except StoreUnavailable as exc:
            # A write on the primary alone is not sent again, nor one to a full store
            # (``again`` is False): the table closes and is rebuilt from what the store has
            # (retried by its id, a move is kept once). A retried append that finds its
            # own earlier attempt stored answers "conflict" and closes the same way.
            if exc.again and time.monotonic() < hold_until:
                if pause == 0.05:
                    event(log, "store_unavailable", logging.WARNING, table=table.table_id)
                await asyncio.sleep(pause)
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
        except Exception:
            log.error("store_error", extra={"fields": {"table": table.table_id}}, exc_info=True)
        error = ServiceError("unavailable", "the table store did not answer; try again")
        table.close(error)
        raise error
