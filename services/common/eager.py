"""Start a coroutine at once, in the caller's turn; a task takes over only if it waits.

An eager task (Python 3.12's own, and one driven by hand on 3.11): a call that can finish
without waiting (a move on a table whose store answers in memory) should not cost a loop
turn and a task of its own, which under load is a turn's length of latency more (the
figures: docs/dependencies.md, "Held internals"). It is used where work must go on on its
own if it waits, yet usually does not: a replica's link starting each call it reads
(services/table/link.py), ``rackem up``'s seam calling a table's operations for the
gateway, which a caller's timeout or cancellation must never cut short
(rackem/seam/tables.py), and a connection writing a frame when its send loop is idle
(services/gateway/connection.py).

``start`` runs the coroutine up to its first real wait, as the caller's own code
would; if it finished there, nothing more is made. If it waits, a task resumes it each
time what it waits for is done, with the outcome (result, error or cancellation) read
by the coroutine itself, as a task's coroutine reads it; cancelling that task cancels
what the coroutine waits for, or is thrown into it, as ``Task.cancel`` does.

On Python 3.12 and later ``start`` is asyncio's own eager task (``asyncio.Task(...,
eager_start=True)``, public since 3.12). On 3.11, which has none, the coroutine is driven
by hand with the protocol a task uses on its coroutine (``send``/``throw`` and the
awaited future's ``_asyncio_future_blocking``, asyncio's private flag:
tests/contracts/test_asyncio_eager.py names it). One difference from a task, on 3.11
only: until its first wait, ``asyncio.current_task()`` is the caller's task, so a
coroutine started here must not use ``asyncio.timeout`` or anything else that takes hold
of the current task before it first waits (on 3.12 the eager task is the current task).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["start"]

T = TypeVar("T")


def start(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """Run ``coro`` now, up to its first wait: a done future if it finished (or raised)
    there, else the task that runs the rest of it."""
    if sys.version_info >= (3, 12):
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)
    return _start_by_hand(coro)


def _start_by_hand(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """``start`` where asyncio has no eager task (3.11)."""
    context = contextvars.copy_context()  # its own, as a task's would be
    loop = asyncio.get_running_loop()
    try:
        awaited = context.run(coro.send, None)
    except StopIteration as stop:
        done: asyncio.Future[T] = loop.create_future()
        done.set_result(stop.value)
        return done
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        failed: asyncio.Future[T] = loop.create_future()
        if isinstance(exc, asyncio.CancelledError):
            failed.cancel()
        else:
            failed.set_exception(exc)
        return failed
    return loop.create_task(_rest(coro, awaited), context=context)


async def _rest(coro: Coroutine[Any, Any, T], awaited: object) -> T:
    """Drive ``coro`` from a wait on: await what it waits for, then resume it."""
    while True:
        step: Callable[[], object] = _resume(coro)
        future = awaited if asyncio.isfuture(awaited) else None
        try:
            if future is not None:
                future._asyncio_future_blocking = False  # as a task resets it
                await future
            elif awaited is None:  # a bare yield (``asyncio.sleep(0)``): one loop turn
                await asyncio.sleep(0)
            else:
                step = _throw(coro, RuntimeError(f"Task got bad yield: {awaited!r}"))
        except asyncio.CancelledError as exc:
            if future is None or not future.cancelled():  # this task was cancelled
                step = _throw(coro, exc)
        except BaseException:  # the coroutine reads the outcome itself
            pass
        try:
            awaited = step()
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]


def _resume(coro: Coroutine[Any, Any, Any]) -> Callable[[], object]:
    return lambda: coro.send(None)


def _throw(coro: Coroutine[Any, Any, Any], exc: BaseException) -> Callable[[], object]:
    return lambda: coro.throw(exc)
