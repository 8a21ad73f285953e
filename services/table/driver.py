"""The one task per table that runs its clocks and plays its bots. It sleeps between steps.

Each turn of the loop asks ``clocks.next_step`` what is due and when, then waits
for that moment or for the table's next change, whichever comes first: no polling.
While it waits, a move wakes it only if it brings the next step sooner
(``Table.planned_at``): a human's move that resets the clock lets it sleep on to its
planned time, where it looks again. It returns when the table is over or closed.
"""

from __future__ import annotations

import asyncio
from math import inf

from services.common.errors import ServiceError
from services.table.bot_client import BotClient
from services.table.clocks import next_step, now_ms
from services.table.table import Table

__all__ = ["drive"]


async def drive(table: Table, bots: BotClient) -> None:
    while table.closed is None:
        table.changed.clear()
        if table.seats_dirty:
            await table.flush_seats()
        step = next_step(table.facts(), table.config.timing)
        if step.action == "done":
            return
        delay = None if step.action == "wait" else (step.at_ms - now_ms()) / 1000
        if delay is None or delay > 0:
            table.planned_at = inf if delay is None else step.at_ms
            try:
                async with asyncio.timeout(delay):
                    await table.changed.wait()
            except TimeoutError:
                pass
            finally:
                table.planned_at = None
            continue
        try:
            await table.act(bots)
        except ServiceError:
            return  # the table closed itself (its store failed or its lease was lost)
        await asyncio.sleep(0)  # let requests in between back-to-back bot moves
