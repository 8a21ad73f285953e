"""A round: a few matches played by ``Player`` pairs while one fault comes and goes,
then every match played out and checked (``checker.check``). Used by
tests/partition/test_partitions.py and bench/nemesis.py.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterable
from typing import Any

from .checker import Report, Window, check, fetch_logs
from .faults import Nemesis
from .netstack import NetStack
from .players import RETRY_S, Player, play_pair

__all__ = [
    "AFTER_HEAL_S",
    "LEASE_S",
    "RULES",
    "SETTINGS",
    "TAKEOVER_S",
    "Table",
    "finish",
    "play_round",
    "start_tables",
]

LEASE_MS = 1_500  # the table service's default LEASE_MS
LEASE_S = LEASE_MS / 1000
TAKEOVER_S = 2.0  # a dead owner's table served again elsewhere (issue 34's goal: p99 ≤ 2 s)
AFTER_HEAL_S = LEASE_S + TAKEOVER_S + RETRY_S
"""The longest a table in play may go without a move after a heal (or, for the two
replica cuts, after the cut began): its lease, the takeover, and the client's resend
of a move left unanswered (``players.RETRY_S``)."""

SETTINGS = {
    "LEASE_MS": str(LEASE_MS),
    # Clocks long enough that a few seconds of fault do not run them out; bots at once.
    "DECISION_MS": "10000",
    "BOT_DELAY_MS": "0",
    "CONTINUE_MS": "1000",
    "MSG_RATE": "200",
    "MSG_BURST": "400",
    "GAMES_PER_IP": "0",
    # A busy CI machine is not overload to turn these clients away for.
    "OVERLOAD_LAG_MS": "0",
    "OVERLOAD_ANSWER_MS": "0",
}
RULES: dict[str, Any] = {"players": 2, "target": 250}

_names = itertools.count()


class Table:
    """Two players at a private table of their own, on different gateways, playing."""

    def __init__(self, stack: NetStack, pace: float, rules: dict[str, Any]) -> None:
        n = next(_names)
        self.players = [
            Player(f"p{n}a", stack.wss, home=0, pace=pace, seed=2 * n),
            Player(f"p{n}b", stack.wss, home=1, pace=pace, seed=2 * n + 1),
        ]
        self.task = asyncio.create_task(play_pair(self.players[0], self.players[1], rules))

    @property
    def table_id(self) -> str | None:
        return self.players[0].table_id

    def version(self) -> int:
        return max((v for p in self.players for _, v in p.views), default=-1)

    def set_pace(self, pace: float) -> None:
        for player in self.players:
            player.pace = pace


async def start_tables(
    stack: NetStack, count: int, pace: float, rules: dict[str, Any] = RULES, moves: int = 6
) -> list[Table]:
    """``count`` tables in play, each past ``moves`` moves."""
    tables = [Table(stack, pace, rules) for _ in range(count)]
    async with asyncio.timeout(60):
        while min(t.version() for t in tables) < moves:
            for table in tables:
                if table.task.done():
                    table.task.result()  # its error, if any
            await asyncio.sleep(0.05)
    return tables


async def finish(tables: list[Table], timeout: float = 240.0) -> None:
    """Every table played out, quickly."""
    for table in tables:
        table.set_pace(0.0)
    try:
        async with asyncio.timeout(timeout):
            await asyncio.gather(*(t.task for t in tables))
    finally:
        for table in tables:
            for player in table.players:
                await player.close()


def checked(stack: NetStack, players: list[Player], windows: Iterable[Window]) -> Report:
    """``checker.check`` over ``players``' tables: their final logs, every match record."""
    table_ids = {p.table_id for p in players if p.table_id is not None}
    logs = fetch_logs(stack.urls, table_ids)
    records = [r for _, r in stack.records("table") if r.get("event") == "match_record"]
    return check(players, logs, records, windows)


async def play_round(
    stack: NetStack,
    nemesis: Nemesis,
    kind: str,
    seconds: float,
    tables: int = 3,
    pace: float = 0.08,
    after_s: float = AFTER_HEAL_S + 1.0,
) -> tuple[Report, Window]:
    """``tables`` matches in play, the fault ``kind`` for ``seconds``, then healed; play
    goes on at ``pace`` for ``after_s`` (the after-heal measure), then at full speed to
    the end of every match; the report over this round's matches and its window."""
    playing = await start_tables(stack, tables, pace)
    try:
        ids = {t.table_id for t in playing if t.table_id}
        window = await nemesis.apply(kind, seconds, ids)
        await asyncio.sleep(max(0.0, window.end + after_s - time.monotonic()))
    finally:
        await finish(playing)
    players = [p for t in playing for p in t.players]
    report = await asyncio.to_thread(checked, stack, players, [window])
    return report, window
