"""A dropped connection never costs the match: the table waits for a covered human to come back.

Over real sockets (a gateway, a table replica, a matchmaker, the bot service): the only
human at a table against the computer lets the clock run out (the computer covers the
seat), then the connection drops. The clocks are the production ones scaled down (the
grace 60 s → 3 s, the bot pace 1 s → 0.25 s), so the drop of a third of the grace stands
for "20 s in a 60 s grace".
"""

from __future__ import annotations

import asyncio

from rackem.client import Client
from services.table.clocks import now_ms

from .conftest import StartGateway, StartServices, ws_url

GRACE_MS = 3_000
PACE_MS = 250


async def test_a_covered_human_who_drops_is_waited_for_then_the_bots_keep_their_pace(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    services = await start_services(
        decision_ms=300, bot_delay_ms=PACE_MS, reconnect_grace_ms=GRACE_MS, lease_ms=30_000
    )
    gateway = await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )
    async with Client(ws_url(gateway)) as ann:
        await ann.create_table("Ann", {"players": 2, "target": 500}, start_now=True)
        # Ann says nothing until the computer plays for her.
        await ann.wait_view(lambda v: v["seats"][ann.seat]["kind"] == "cover", timeout=30)
        token, seat = ann.token, ann.seat
        assert token is not None and seat is not None and ann.table_id is not None
        table = services.table.service.tables.live[ann.table_id]
    # The connection drops (the client closed without `leave`).
    dropped_at, dropped_version = now_ms(), table.version
    while now_ms() < dropped_at + GRACE_MS // 3:  # a third of the grace: "20 s of 60"
        assert table.version - dropped_version <= 1  # at most the move a bot was making
        await asyncio.sleep(0.02)
    async with Client(ws_url(gateway)) as again:
        seated = await again.resume(token)
        assert seated["seat"] == seat
        view = await again.next_view(0)
        assert view["version"] - dropped_version <= 1
        assert view["seats"][seat]["kind"] == "cover" and view["seats"][seat]["connected"]
        resumed_version = view["version"]
    # Dropped again, for longer than the grace: the table plays on without Ann, at the
    # bots' pace (one move per PACE_MS after the last), never all at once.
    dropped_at = now_ms()
    async with asyncio.timeout(30):
        while table.version < resumed_version + 6 and not table.over:
            after_grace = now_ms() - (dropped_at + GRACE_MS)
            paced = 0 if after_grace < 0 else 1 + after_grace // PACE_MS
            assert table.version - resumed_version <= 1 + paced
            await asyncio.sleep(0.02)
    assert now_ms() >= dropped_at + GRACE_MS  # nothing was played for her before the grace
