"""A connection's behaviour over a real socket: framing, validation, limits, errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Sequence

import pytest
from websockets.asyncio.client import ClientConnection, connect

from rackem.client import Client, ConnectionLost
from services.common.running import Running

from .conftest import StartGateway, metrics_text, ws_url


async def small_window_client(gateway: Running) -> ClientConnection:
    """A WebSocket client with a 4 KiB receive buffer that queues at most one message:
    not reading, it fills the gateway's socket after a few answers."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", gateway.port))
    return await connect(ws_url(gateway), sock=sock, proxy=None, max_queue=1, compression=None)


async def errors_for(client: Client, frames: Sequence[str | bytes]) -> list[str]:
    codes = []
    for frame in frames:
        await client.send_raw(frame)
        message = await client.recv(timeout=5)
        assert message["type"] == "error"
        codes.append(message["code"])
    return codes


async def test_hello_is_answered_with_welcome(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        assert client.welcome == {"type": "welcome", "version": 1, "server": "rackem-gateway/1"}
        assert await client.ping(t=12.5) == {"type": "pong", "t": 12.5}
        assert await client.ping() == {"type": "pong"}


async def test_messages_before_hello_and_other_versions_are_refused(gateway: Running) -> None:
    client = Client(ws_url(gateway))
    await client.connect(hello=False)
    frames = [
        '{"type": "ping"}',
        '{"type": "quick_match", "name": "Ann", "players": 2}',
        '{"type": "hello", "version": 2}',
    ]
    assert await errors_for(client, frames) == ["hello_first", "hello_first", "bad_version"]
    await client.send({"type": "hello", "version": 1})
    assert (await client.recv())["type"] == "welcome"
    assert await errors_for(client, ['{"type": "hello", "version": 1}']) == ["bad_request"]
    await client.close()


async def test_bad_frames_are_refused_and_the_connection_stays_open(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        frames: list[str | bytes] = [
            "not json",
            b'{"type": "ping"}',
            "[1]",
            json.dumps({"type": "ping", "pad": "x" * 4096}),
        ]
        assert await errors_for(client, frames) == ["bad_frame"] * 4
        assert (await client.ping())["type"] == "pong"


async def test_a_frame_too_big_to_read_closes_the_connection_with_1009(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        await client.send_raw(json.dumps({"type": "ping", "pad": "x" * 70_000}))
        with pytest.raises(ConnectionLost) as lost:
            await client.recv(timeout=5)
        assert lost.value.code == 1009


async def test_unknown_types_and_bad_fields_are_bad_requests(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        frames = [
            '{"type": "cheat"}',
            '{"type": "quick_match", "name": "Ann", "players": "2"}',
            '{"type": "quick_match", "name": "Ann", "players": 2, "seat": 1}',
            '{"type": "move", "move": {"act": "place", "slot": 3, "seat": 1}, "id": "m1"}',
        ]
        assert await errors_for(client, frames) == ["bad_request"] * 4
        # A move is judged by a table only where there is one: with no seat, not_seated.
        await client.send({"type": "move", "move": {"act": "place"}, "id": "m2"})
        refusal = await client.recv()
        assert (refusal["type"], refusal["code"], refusal["id"]) == ("error", "not_seated", "m2")


async def test_table_messages_need_a_seat(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        frames = [
            '{"type": "start"}',
            '{"type": "continue"}',
            '{"type": "leave"}',
            '{"type": "move", "move": {"act": "draw", "from": "stock"}, "id": "m1"}',
        ]
        assert await errors_for(client, frames) == ["not_seated"] * 4
        await client.send({"type": "move", "move": {"act": "draw", "from": "stock"}, "id": "m9"})
        refusal = await client.recv()
        assert (refusal["code"], refusal["id"]) == ("not_seated", "m9")


async def test_names_rules_and_tokens_are_checked_before_any_service_is_asked(
    gateway: Running,
) -> None:
    """What no service message could hold (rules out of range go on to the matchmaker:
    tests/services/gateway/test_follow.py)."""
    async with Client(ws_url(gateway)) as client:
        frames = [
            '{"type": "quick_match", "name": "   ", "players": 2}',
            '{"type": "create_table", "name": "A\\u0007", "start_now": true}',
            '{"type": "create_table", "name": "Ann", "rules": {"players": "9"}}',
            '{"type": "create_table", "name": "Ann", "rules": {"jokers": true}}',
            '{"type": "resume", "token": "not-a-token"}',
            '{"type": "join", "code": "AB", "name": "Ann"}',
        ]
        codes = ["bad_name", "bad_name", "bad_rules", "bad_rules", "bad_token", "no_code"]
        assert await errors_for(client, frames) == codes


async def test_an_unreachable_service_is_reported_as_unavailable(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        await client.send({"type": "quick_match", "name": "Ann", "players": 2})
        refusal = await client.recv(timeout=10)
        assert (refusal["type"], refusal["code"]) == ("error", "unavailable")


async def test_a_flood_of_messages_is_rate_limited(start_gateway: StartGateway) -> None:
    gateway = await start_gateway(msg_rate=0.01, msg_burst=4, abuse_limit=100)
    async with Client(ws_url(gateway)) as client:  # hello takes one token
        for _ in range(5):
            await client.send({"type": "ping"})
        replies = [(await client.recv())["type"] for _ in range(5)]
        assert replies == ["pong", "pong", "pong", "error", "error"]


async def test_a_move_refused_for_a_flood_carries_its_id(start_gateway: StartGateway) -> None:
    gateway = await start_gateway(msg_rate=0.01, msg_burst=1, abuse_limit=100)
    async with Client(ws_url(gateway)) as client:  # hello took the one token
        move = {"act": "draw", "from": "stock"}
        await client.send({"type": "move", "move": move, "id": "m7", "version": 3})
        await client.send({"type": "ping"})
        await client.send_raw('{"type": "move", "id": ["not", "an", "id"]}')
        refusals = [await client.recv() for _ in range(3)]
        assert [(r["code"], r.get("id")) for r in refusals] == [
            ("rate_limited", "m7"),
            ("rate_limited", None),
            ("rate_limited", None),
        ]


async def test_repeated_abuse_closes_the_connection_with_1008(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(abuse_limit=3, abuse_window_s=60.0)
    async with Client(ws_url(gateway)) as client:
        for frame in ("x", "y", "z", "w"):
            await client.send_raw(frame)
        messages = []
        with pytest.raises(ConnectionLost) as lost:
            while True:
                messages.append(await client.recv(timeout=5))
        assert [m["code"] for m in messages] == ["bad_frame"] * 3
        assert lost.value.code == 1008


async def test_new_games_are_limited_per_address_across_connections(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(games_per_ip=2)
    quick = {"type": "quick_match", "name": "Ann", "players": 2}
    async with Client(ws_url(gateway)) as first, Client(ws_url(gateway)) as second:
        await first.send({"type": "quick_match", "name": "", "players": 2})  # not a game
        assert (await first.recv(timeout=10))["code"] == "bad_name"
        for client in (first, second):
            await client.send(quick)
            assert (await client.recv(timeout=10))["code"] == "unavailable"
        await second.send({"type": "create_table", "name": "Ann", "start_now": True})
        refusal = await second.recv(timeout=10)
        assert (refusal["code"], refusal["message"]) == (
            "rate_limited",
            "too many new games from this address; wait a while",
        )
        await first.send({"type": "join", "code": "ABCDEF", "name": "Ann"})
        assert (await first.recv(timeout=10))["code"] == "rate_limited"


async def test_a_client_that_does_not_read_is_dropped(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(
        msg_rate=1e6, msg_burst=10**6, outbound_queue=4, socket_sndbuf=4096
    )
    ws = await small_window_client(gateway)
    ping = json.dumps({"type": "ping", "t": 1.0e300})

    async def flood() -> None:
        await ws.send('{"type": "hello", "version": 1}')
        while True:
            await ws.send(ping)
            await asyncio.sleep(0)  # the gateway runs in this event loop too

    flooding = asyncio.create_task(flood())
    try:
        async with asyncio.timeout(30):
            while 'gateway_dropped_total{reason="slow"} 1.0' not in await metrics(gateway):
                await asyncio.sleep(0.05)
            while "rackem_gateway_connections 0.0" not in await metrics(gateway):
                await asyncio.sleep(0.05)
    finally:
        flooding.cancel()
        ws.transport.abort()
        with contextlib.suppress(BaseException):
            await flooding


async def metrics(gateway: Running) -> str:
    return await metrics_text(gateway)


async def test_messages_written_at_once_and_queued_behind_a_full_socket_keep_their_order(
    start_gateway: StartGateway,
) -> None:
    """A client that reads nothing for a while: the first answers are written at once, then
    the socket fills, a write waits and the rest queue behind it; all come, in order."""
    gateway = await start_gateway(
        msg_rate=1e6, msg_burst=10**6, outbound_queue=100_000, socket_sndbuf=4096
    )
    ws = await small_window_client(gateway)
    try:
        await ws.send('{"type": "hello", "version": 1}')
        welcome = json.loads(await ws.recv())
        assert welcome["type"] == "welcome"
        count = 3_000  # ~100 KB of answers: far more than both socket buffers hold
        for n in range(count):
            await ws.send(json.dumps({"type": "ping", "t": n}))
        async with asyncio.timeout(30):
            seen = [json.loads(await ws.recv())["t"] for _ in range(count)]
        assert seen == list(range(count))
    finally:
        await ws.close()
