"""A service's loop: uvloop, with what was alive at startup frozen out of the collector."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import asyncio, gc
import uvloop
from services.common import loop

async def main():
    return type(asyncio.get_running_loop()).__module__, gc.get_freeze_count()

print(*loop.run(main()))
"""


def test_a_service_runs_on_uvloop_with_its_startup_objects_frozen() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    module, frozen = out.stdout.split()
    assert module.startswith("uvloop")
    assert int(frozen) > 1_000  # the interpreter's and the imports' objects
