"""A service's loop: uvloop, under the garbage-collection policy."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import asyncio, gc
from services.common import loop

async def main():
    kind = type(asyncio.get_running_loop()).__module__
    hooked = any(getattr(cb, "__self__", None).__class__.__name__ == "GcPolicy"
                 for cb in gc.callbacks)
    return kind, gc.get_freeze_count(), hooked

print(*loop.run(main()))
print(gc.get_freeze_count(), len(gc.callbacks))
"""


def test_a_service_runs_on_uvloop_under_the_gc_policy_and_leaves_none_behind() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    during, after = out.stdout.splitlines()
    kind, frozen, hooked = during.split()
    assert kind.startswith("uvloop")
    assert int(frozen) > 1_000  # what was alive at startup: the interpreter's, the imports'
    assert hooked == "True"
    assert after.split() == ["0", "0"]  # stopped: unfrozen, unhooked
