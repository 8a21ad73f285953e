"""A background loop ends though Python 3.11's ``wait_for`` swallows its first
cancellation (services/common/cancelling.py)."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import pytest

from services.common.cancelling import cancel_until_done


class Calls:
    """A loop's calls, as redis-py makes them: each waits in ``wait_for``; ``finish``
    answers the one under way."""

    def __init__(self) -> None:
        self.pending: asyncio.Future[int] | None = None
        self.answered = 0
        self.started = asyncio.Event()

    async def call(self) -> int:
        self.pending = asyncio.get_running_loop().create_future()
        self.started.set()
        return await asyncio.wait_for(self.pending, timeout=60)

    def finish(self) -> None:
        assert self.pending is not None
        self.pending.set_result(1)


async def _carry_on(calls: Calls) -> None:
    """A loop that goes on past its calls' results and errors, as a heartbeat does."""
    while True:
        with contextlib.suppress(Exception):
            calls.answered += await calls.call()


async def _loop_cancelled_as_its_call_finishes() -> tuple[asyncio.Task[None], Calls]:
    calls = Calls()
    task = asyncio.create_task(_carry_on(calls))
    await calls.started.wait()
    calls.finish()
    task.cancel()  # in the same loop turn as the answer
    await asyncio.sleep(0.05)
    return task, calls


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12's wait_for loses nothing")
async def test_on_python_3_11_one_cancellation_is_lost_and_the_loop_goes_on() -> None:
    """Why ``cancel_until_done`` exists: the loop took the answer instead of the cancel."""
    task, calls = await _loop_cancelled_as_its_call_finishes()
    assert not task.done() and calls.answered == 1 and task.cancelling() == 1
    await cancel_until_done(task)


async def test_cancel_until_done_ends_the_loop_whatever_a_cancellation_met() -> None:
    task, _ = await _loop_cancelled_as_its_call_finishes()
    async with asyncio.timeout(5):
        await cancel_until_done(task, again_s=0.01)
    assert task.cancelled()


async def test_a_task_that_ended_of_itself_is_left_as_it_ended() -> None:
    async def fails() -> None:
        raise RuntimeError("its own failure")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    await cancel_until_done(task)
    assert not task.cancelled() and isinstance(task.exception(), RuntimeError)
