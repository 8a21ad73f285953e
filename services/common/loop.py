"""How every service process runs its event loop: uvloop, and the startup heap frozen.

Measured under load (docs/performance.md), uvloop takes about a sixth off the CPU a
move costs across gateway and table: their time is mostly event-loop and socket work
around gRPC and WebSocket messages, which uvloop does in C.

Before the loop starts, ``gc.freeze()`` moves everything alive (modules, protobuf
descriptors, settings: 30,000 to 45,000 objects a service) out of the cyclic
collector's reach. Those live as long as the process, and a full collection would
otherwise walk them every time with the loop stopped (such pauses were 200 to 500 ms
in a gateway serving 2,000 players; docs/performance.md).
"""

from __future__ import annotations

import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

__all__ = ["run"]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new uvloop event loop (as ``asyncio.run`` would)."""
    gc.collect()
    gc.freeze()  # what is alive now lives as long as the process
    return uvloop.run(main)
