"""``Pacer``: a message leaves at once unless the last one left less than the interval ago;
then it waits out the rest of the interval, never less."""

from __future__ import annotations

import asyncio

from services.common.pacing import Pacer


def _at_once(pacer: Pacer) -> bool:
    """Whether ``ready()`` returns without waiting (its coroutine ends on its first step)."""
    step = pacer.ready().__await__()
    try:
        next(step)
    except StopIteration:
        return True
    step.close()
    return False


async def test_the_first_message_and_one_after_a_quiet_interval_leave_at_once() -> None:
    pacer = Pacer(0.05)
    assert _at_once(pacer)
    await asyncio.sleep(0.06)
    assert _at_once(pacer)


async def test_a_message_right_after_another_waits_out_the_interval() -> None:
    loop = asyncio.get_running_loop()
    pacer = Pacer(0.05)
    await pacer.ready()
    left = loop.time()
    assert not _at_once(pacer)
    await pacer.ready()
    assert loop.time() - left >= 0.05 - 0.002  # (the loop's clock has ~1 ms steps)


async def test_no_interval_never_waits() -> None:
    pacer = Pacer(0)
    assert all(_at_once(pacer) for _ in range(3))
