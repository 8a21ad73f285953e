"""What a hung test waits on: every thread's stack and every pending asyncio task's.

``tests/conftest.py`` installs ``dump_tasks`` for SIGUSR1: ``kill -USR1 <pytest's pid>``
writes ``rackem-tasks-<pid>.txt`` in the temporary directory. A stack of threads alone
shows only an idle event loop; the tasks' chains of awaits show what each waits for.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["dump_tasks"]


def dump_tasks(signum: int = 0, frame: object = None) -> Path:
    """Every thread's stack and every pending asyncio task's, into a file of its own
    (``rackem-tasks-<pid>.txt`` in the temporary directory): what a hung test waits on.
    ``kill -USR1 <pytest's pid>`` calls it; a stack of threads alone shows an idle loop."""
    path = Path(tempfile.gettempdir()) / f"rackem-tasks-{os.getpid()}.txt"
    with path.open("w") as out:
        faulthandler.dump_traceback(out, all_threads=True)
        try:
            tasks = asyncio.all_tasks()
        except RuntimeError:  # no loop runs
            tasks = set()
        out.write(f"\n{len(tasks)} asyncio tasks\n")
        for task in tasks:
            out.write(f"\n{task!r}\n")
            awaited: Any = task.get_coro()
            while awaited is not None:  # the chain of awaits, innermost last
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                if frame is None:
                    out.write(f"  {awaited!r}\n")
                else:
                    code = frame.f_code
                    out.write(f"  {code.co_filename}:{frame.f_lineno} {code.co_name}\n")
                inner = getattr(awaited, "cr_await", None)
                awaited = inner if inner is not None else getattr(awaited, "gi_yieldfrom", None)
    return path
