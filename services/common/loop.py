"""How every service process runs its event loop: uvloop.

Measured under load (docs/performance.md), uvloop takes about a sixth off the CPU a
move costs across gateway and table: their time is mostly event-loop and socket work
around gRPC and WebSocket messages, which uvloop does in C.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

__all__ = ["run"]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new uvloop event loop (as ``asyncio.run`` would)."""
    return uvloop.run(main)
