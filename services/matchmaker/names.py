"""Player names (validated) and the names bots get when they fill empty seats."""

from __future__ import annotations

import unicodedata
from collections.abc import Collection

from services.common.errors import ServiceError

__all__ = ["BOT_NAMES", "MAX_NAME", "bot_names", "clean_name"]

MAX_NAME = 20
BOT_NAMES = (
    "Bot Ada",
    "Bot Bea",
    "Bot Cyd",
    "Bot Dot",
    "Bot Eli",
    "Bot Flo",
    "Bot Gus",
    "Bot Hal",
    "Bot Ivy",
    "Bot Jo",
    "Bot Kit",
    "Bot Lou",
)
# Control, format (bidi overrides, zero-width), surrogate, private-use and unassigned
# characters, and line/paragraph separators: nothing a name needs, all of them trouble.
_REFUSED = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def clean_name(raw: str) -> str:
    """The name trimmed; ``bad_name`` unless it has 1-20 characters and no control ones."""
    name = raw.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise ServiceError("bad_name", f"a name has 1 to {MAX_NAME} characters")
    if any(unicodedata.category(c) in _REFUSED for c in name):
        raise ServiceError("bad_name", "a name cannot contain control characters")
    return name


def bot_names(table_id: str, count: int, taken: Collection[str]) -> list[str]:
    """``count`` distinct bot names, none in ``taken``, varied by table."""
    start = sum(table_id.encode()) % len(BOT_NAMES)
    ring = BOT_NAMES[start:] + BOT_NAMES[:start]
    return [name for name in ring if name not in taken][:count]
