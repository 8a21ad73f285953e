"""A seated player whose client stops reading while the table plays on is dropped with 1013,
and the close frame reaches the client once it reads again; one that never reads again
does not hold its connection."""

from __future__ import annotations

import asyncio
import json

from websockets.exceptions import ConnectionClosed

from services.common.running import Running

from .conftest import StartGateway, StartServices, metrics_text
from .test_session import small_window_client


async def until_metric(gateway: Running, line: str) -> None:
    async with asyncio.timeout(60):
        while line not in await metrics_text(gateway):
            await asyncio.sleep(0.05)


async def slow_gateway(start_services: StartServices, start_gateway: StartGateway) -> Running:
    # Short decisions: the player's seat is covered at once, so the table plays on by
    # itself and its views keep coming while the client reads nothing.
    services = await start_services(decision_ms=50, bot_delay_ms=0, continue_ms=50)
    return await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        outbound_queue=4,
        socket_sndbuf=4096,
        close_grace_ms=3_000,
    )


async def test_a_seated_client_that_stops_reading_gets_1013_when_it_reads_again(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    gateway = await slow_gateway(start_services, start_gateway)
    ws = await small_window_client(gateway)
    try:
        await ws.send('{"type": "hello", "version": 1}')
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(
            json.dumps(
                {"type": "create_table", "name": "Ann", "rules": {"players": 4}, "start_now": True}
            )
        )
        # Not reading now: the views of a whole table back up until the gateway drops it,
        # and the connection is done with on the gateway's side (a second later or so).
        await until_metric(gateway, 'rackem_gateway_dropped_total{reason="slow"} 1.0')
        await until_metric(gateway, "rackem_gateway_connections 0.0")
        kinds = []
        async with asyncio.timeout(30):
            try:
                while True:
                    kinds.append(json.loads(await ws.recv())["type"])
            except ConnectionClosed as closed:
                assert closed.rcvd is not None, "the close frame never came"
                assert closed.rcvd.code == 1013
        assert "seated" in kinds and "view" in kinds  # what was sent before it, in order
    finally:
        ws.transport.abort()


async def test_a_client_that_never_reads_again_is_let_go_after_the_close_grace(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    gateway = await slow_gateway(start_services, start_gateway)
    ws = await small_window_client(gateway)
    try:
        await ws.send('{"type": "hello", "version": 1}')
        await ws.send(json.dumps({"type": "create_table", "name": "Ann", "start_now": True}))
        await until_metric(gateway, 'rackem_gateway_dropped_total{reason="slow"} 1.0')
        # Its close frame waits behind what it never read; past the grace the gateway
        # lets go of the socket (and of the buffers) all the same.
        await until_metric(gateway, "rackem_gateway_connections 0.0")
        sockets = gateway.service.server_state.connections  # uvicorn's open connections
        async with asyncio.timeout(30):
            while sockets:
                await asyncio.sleep(0.05)
    finally:
        ws.transport.abort()
