"""Player names (validated) and the names bots get when they fill empty seats."""

from __future__ import annotations

from collections.abc import Collection

from services.common.errors import ServiceError
from services.common.names import MAX_NAME, name_problem

__all__ = ["BOT_NAMES", "MAX_NAME", "bot_names", "clean_name"]

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


def clean_name(raw: str) -> str:
    """The name trimmed; ``bad_name`` unless it keeps the rule of ``services.common.names``."""
    name = raw.strip()
    problem = name_problem(name)
    if problem is not None:
        raise ServiceError("bad_name", problem)
    return name


def bot_names(table_id: str, count: int, taken: Collection[str]) -> list[str]:
    """``count`` distinct bot names, none in ``taken``, varied by table."""
    start = sum(table_id.encode()) % len(BOT_NAMES)
    ring = BOT_NAMES[start:] + BOT_NAMES[:start]
    return [name for name in ring if name not in taken][:count]
