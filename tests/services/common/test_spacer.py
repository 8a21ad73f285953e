"""A link writer's spacing: no wait when idle long enough, the rest of the gap otherwise."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest

from services.common.spacer import Spacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def finishes_at_once(wait: Coroutine[Any, Any, None]) -> bool:
    """True if ``wait`` completes without suspending (it did not sleep)."""
    try:
        wait.send(None)
    except StopIteration:
        return True
    wait.close()
    return False


def test_the_first_message_and_one_after_a_long_idle_never_wait() -> None:
    clock = Clock()
    spacer = Spacer(0.002, clock)
    assert finishes_at_once(spacer.wait())
    spacer.sent()
    clock.now += 0.002
    assert finishes_at_once(spacer.wait())


async def test_a_message_soon_after_the_last_waits_for_the_rest_of_the_gap() -> None:
    clock = Clock()
    spacer = Spacer(0.002, clock)
    spacer.sent()
    clock.now += 0.0005
    assert not finishes_at_once(spacer.wait())


async def test_the_wait_lasts_at_least_the_gap() -> None:
    spacer = Spacer(0.02)
    spacer.sent()
    started = spacer._clock()
    await spacer.wait()
    assert spacer._clock() - started >= 0.0199


def test_no_gap_never_waits_and_a_negative_one_is_refused() -> None:
    spacer = Spacer(0.0)
    spacer.sent()
    assert finishes_at_once(spacer.wait())
    with pytest.raises(ValueError):
        Spacer(-1.0)
