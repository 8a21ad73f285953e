"""How every service process runs its event loop: uvloop, under ``GcPolicy``.

uvloop, because a move's time in gateway and table is mostly event-loop and socket work
around gRPC and WebSocket messages, which uvloop does in C (what it saves:
docs/performance.md). ``GcPolicy`` keeps the
garbage collector's full collections, which stop the loop for as long as they walk the
heap, to one every ten minutes.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

from services.common.gc_policy import GcPolicy

__all__ = ["run"]

T = TypeVar("T")


async def _under_policy(main: Coroutine[Any, Any, T]) -> T:
    policy = GcPolicy()
    policy.start()
    try:
        return await main
    finally:
        await policy.stop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new uvloop event loop (as ``asyncio.run`` would)."""
    return uvloop.run(_under_policy(main))
