"""Ending a background task for sure, though one cancellation may be swallowed.

On Python 3.11, ``asyncio.wait_for`` returns its inner result (or raises its inner
error) when its task is cancelled in the same loop turn as the inner call finishes,
and the cancellation is lost (Python 3.12 rewrote ``wait_for`` on ``asyncio.timeout``).
redis-py wraps every write to the socket in ``wait_for``: a loop that calls Redis
and carries on past its errors (a heartbeat, a sweep, a tick) can have the one
``cancel()`` of a shutdown turned into a ``ConnectionError`` when Redis has just gone
away, log it, and go on forever. A table replica's stop hung so, after a Redis
restart (tests/services/table/test_outage.py).

``cancel_until_done`` cancels again until the task has ended.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["AGAIN_S", "cancel_until_done"]

AGAIN_S = 0.1  # how long a cancellation is given before the next


async def cancel_until_done(task: asyncio.Task[Any], again_s: float = AGAIN_S) -> None:
    """Cancel ``task`` every ``again_s`` until it has ended (cancelled, or ended of
    itself); its exception, if it failed, is the caller's to read."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=again_s)
