"""What a screen must not do at any window size: spill out of the window, or out of a box
that clips it (a part of the table cut off, scrolled away, or drawn over the edge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

# Every visible element inside `root`: its box must lie within the window and within every
# ancestor that clips it (overflow other than visible), to a pixel. Screen-reader-only
# text (clipped on purpose to 1 px) is left out. The page must not scroll either way.
_OVERFLOWS = (Path(__file__).parent / "layout.js").read_text(encoding="utf-8")


def overflows(page: Page, root: str, slack: float = 0.5) -> list[str]:
    """What inside ``root`` is cut off or outside the window (empty when all is in view)."""
    found: list[Any] = page.evaluate(_OVERFLOWS, [root, slack])
    return [str(line) for line in found]
