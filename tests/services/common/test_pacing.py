"""``Pacer``: a message leaves at once unless the link is busy (lately, four events an
interval or more, of ``tables`` tables or more) and the last one left less than the
interval ago; then it waits out the rest."""

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


def _busy(pacer: Pacer, tables: int = 3, events: int = 24) -> None:
    for n in range(events):
        pacer.saw(f"t{n % tables}")


async def test_a_message_right_after_another_on_a_busy_link_waits_out_the_interval() -> None:
    loop = asyncio.get_running_loop()
    pacer = Pacer(0.05, tables=3)
    _busy(pacer)
    await pacer.ready()
    left = loop.time()
    assert not _at_once(pacer)
    await pacer.ready()
    assert loop.time() - left >= 0.05 - 0.002  # (the loop's clock has ~1 ms steps)


async def test_the_first_message_and_one_after_a_quiet_interval_leave_at_once() -> None:
    pacer = Pacer(0.05, tables=3)
    _busy(pacer)
    assert _at_once(pacer)
    await asyncio.sleep(0.06)
    assert _at_once(pacer)


async def test_a_link_with_fewer_tables_never_waits() -> None:
    pacer = Pacer(0.05, tables=3)
    _busy(pacer, tables=2, events=100)
    assert all(_at_once(pacer) for _ in range(3))


async def test_a_link_with_fewer_than_four_events_an_interval_never_waits() -> None:
    pacer = Pacer(0.01, tables=3)  # (a window of 0.1 s: busy from 40 events on)
    _busy(pacer, tables=10, events=39)
    assert all(_at_once(pacer) for _ in range(3))
    pacer.saw("t0")  # the 40th: now it is busy, and the last message left just now
    assert not _at_once(pacer)


async def test_a_busy_link_stays_busy_for_the_next_window_then_not() -> None:
    pacer = Pacer(0.01, tables=3, window_s=0.05)
    _busy(pacer)
    assert _at_once(pacer)  # the window starts here
    await asyncio.sleep(0.06)  # the next window: busy, from the one before
    assert _at_once(pacer) and not _at_once(pacer)
    await asyncio.sleep(0.12)  # two quiet windows later: not busy
    assert _at_once(pacer) and _at_once(pacer)


async def test_no_interval_never_waits() -> None:
    pacer = Pacer(0)
    _busy(pacer)
    assert all(_at_once(pacer) for _ in range(3))
