"""``eager.start``: a coroutine runs at once, and a task takes over only if it waits.

Each case is checked against what a plain task does with the same coroutine: the same
result, the same error, the same cancellation, in the same order of events.
"""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from services.common import eager

var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outer")


async def no_wait(log: list[str]) -> str:
    log.append("ran")
    return "done"


async def test_a_coroutine_that_never_waits_finishes_in_the_callers_turn() -> None:
    log: list[str] = []
    future = eager.start(no_wait(log))
    assert log == ["ran"]  # before anything else could run
    assert future.done() and future.result() == "done"
    assert asyncio.all_tasks() == {asyncio.current_task()}  # no task was made


async def test_an_error_before_the_first_wait_is_the_futures() -> None:
    async def fails() -> None:
        raise ValueError("bad")

    future = eager.start(fails())
    assert future.done()
    with pytest.raises(ValueError, match="bad"):
        future.result()


async def test_a_coroutine_that_waits_is_resumed_with_each_outcome() -> None:
    loop = asyncio.get_running_loop()
    first: asyncio.Future[int] = loop.create_future()
    second: asyncio.Future[int] = loop.create_future()
    log: list[object] = []

    async def waits() -> int:
        log.append("started")
        got = await first
        log.append(got)
        try:
            await second
        except KeyError as exc:
            log.append(f"caught {exc}")
        await asyncio.sleep(0)  # a bare yield
        await asyncio.sleep(0.001)
        return got * 2

    future = eager.start(waits())
    assert log == ["started"] and not future.done()
    first.set_result(21)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert log == ["started", 21]
    second.set_exception(KeyError("x"))
    assert await future == 42
    assert log == ["started", 21, "caught 'x'"]


async def test_an_error_after_a_wait_is_the_tasks() -> None:
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[None] = loop.create_future()

    async def fails_later() -> None:
        await gate
        raise ValueError("later")

    future = eager.start(fails_later())
    gate.set_result(None)
    with pytest.raises(ValueError, match="later"):
        await future


async def test_cancelling_the_task_cancels_what_the_coroutine_waits_for() -> None:
    loop = asyncio.get_running_loop()
    never: asyncio.Future[None] = loop.create_future()
    cleaned: list[str] = []

    async def waits_forever() -> None:
        try:
            await never
        finally:
            cleaned.append("finally")

    future = eager.start(waits_forever())
    await asyncio.sleep(0)
    future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await future
    assert never.cancelled() and cleaned == ["finally"]


async def test_a_cancellation_that_lands_as_the_wait_ends_is_thrown_into_the_coroutine() -> None:
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[int] = loop.create_future()
    log: list[str] = []

    async def waits() -> None:
        try:
            await gate
            log.append("resumed")
        except asyncio.CancelledError:
            log.append("cancelled")
            raise

    future = eager.start(waits())
    await asyncio.sleep(0)
    gate.set_result(1)  # done, its task not yet woken...
    future.cancel()  # ...so the cancellation cannot go through ``gate``
    with pytest.raises(asyncio.CancelledError):
        await future
    assert log == ["cancelled"]


async def test_a_coroutine_may_catch_its_cancellation_and_go_on() -> None:
    async def stubborn() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0)
            return "went on"
        return "slept"

    future = eager.start(stubborn())
    await asyncio.sleep(0)
    future.cancel()
    assert await future == "went on"


async def test_the_coroutine_runs_in_its_own_context_throughout() -> None:
    seen: list[str] = []

    async def sets() -> None:
        var.set("inner")
        seen.append(var.get())
        await asyncio.sleep(0)
        seen.append(var.get())

    await eager.start(sets())
    assert seen == ["inner", "inner"]
    assert var.get() == "outer"  # the caller's context is untouched


async def test_a_coroutine_that_yields_something_else_gets_an_error_as_under_a_task() -> None:
    class Odd:
        def __await__(self):  # type: ignore[no-untyped-def]
            yield "not a future"

    async def odd() -> None:
        await Odd()

    with pytest.raises(RuntimeError, match="bad yield: 'not a future'"):  # asyncio's words
        await eager.start(odd())
