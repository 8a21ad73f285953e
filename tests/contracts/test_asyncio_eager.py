"""asyncio's task protocol, as services/common/eager.py holds it on Python 3.11.

Python 3.12 made eager tasks public (``asyncio.Task(..., eager_start=True)``) and
``eager.start`` is one there. 3.11 has none, so ``eager.start`` drives the coroutine by
hand as a task does (what it buys: docs/dependencies.md#held-internals): it sends into the
coroutine, takes what it yields as the future it waits for (asyncio's private
``_asyncio_future_blocking`` flag set on it) or, yielding ``None``, as a bare loop turn,
and resets the flag before awaiting that future itself. These tests name that protocol,
on asyncio's loop and on uvloop's, and check that the hand-driven path is taken only
where asyncio has no public one. What ``start`` does is tested in
tests/services/common/test_eager.py."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable

import uvloop

from services.common import eager

LOOPS: list[Callable[[], asyncio.AbstractEventLoop]] = [
    asyncio.new_event_loop,
    uvloop.new_event_loop,
]


def moved(what: str) -> str:
    return (
        f"Python {sys.version.split()[0]} moved {what}: services/common/eager.py drives "
        "coroutines by hand with it on 3.11; see docs/dependencies.md#held-internals"
    )


async def _waits(future: asyncio.Future[int]) -> int:
    return await future


def test_a_waiting_coroutine_yields_its_future_flagged_as_blocking() -> None:
    assert hasattr(asyncio.Future, "_asyncio_future_blocking"), moved(
        "asyncio.Future._asyncio_future_blocking"
    )
    for new_loop in LOOPS:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            future: asyncio.Future[int] = runner.get_loop().create_future()
            assert asyncio.isfuture(future)
            coro = _waits(future)
            yielded = coro.send(None)
            assert yielded is future, moved("what a coroutine awaiting a future yields")
            assert future._asyncio_future_blocking is True, moved("_asyncio_future_blocking")
            future._asyncio_future_blocking = False  # as a task resets it, and eager.py
            future.set_result(21)
            try:
                coro.send(None)
            except StopIteration as stop:
                assert stop.value == 21, moved("a resumed coroutine's result")
            else:
                raise AssertionError(moved("a coroutine resumed after its future is done"))


def test_a_bare_loop_turn_is_a_yield_of_none() -> None:
    coro = asyncio.sleep(0)
    assert coro.send(None) is None, moved("asyncio.sleep(0)'s bare yield")
    coro.close()


def test_the_hand_driven_path_is_taken_only_where_asyncio_has_no_eager_task() -> None:
    public = "eager_start" in inspect.signature(asyncio.Task).parameters
    assert public == (sys.version_info >= (3, 12)), "asyncio.Task's eager_start moved"

    async def which() -> asyncio.Task[object] | None:
        return asyncio.current_task()

    async def main() -> None:
        caller = asyncio.current_task()
        started = eager.start(which())
        assert started.done()
        if public:  # asyncio's own eager task: it is the current task as it runs
            assert isinstance(started, asyncio.Task) and started.result() is started
        else:  # driven by hand, in the caller's task until it first waits
            assert not isinstance(started, asyncio.Task) and started.result() is caller

    asyncio.run(main())
