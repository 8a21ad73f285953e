"""rackem.client against the whole system started in this process (rackem.up.start)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from rackem.client import Client, ConnectionLost, ServerError, choose_move, play_match, ws_url
from rackem.up import System, start

FAST_ENV = {
    "BOT_DELAY_MS": "0",
    "FILL_MS": "200",
    "FILL_LONE_MS": "200",
    "TICK_MS": "50",
    "MSG_RATE": "200",  # bots that answer at once: faster than the limit for a person
    "MSG_BURST": "400",
}


@pytest.fixture
async def system() -> AsyncIterator[System]:
    running = await start("127.0.0.1", 0, None, env=FAST_ENV)
    yield running
    await running.stop()


def test_urls_become_websocket_urls() -> None:
    assert ws_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert ws_url("https://rack.example/") == "wss://rack.example/ws"
    assert ws_url("ws://rack.example/ws") == "ws://rack.example/ws"
    assert ws_url("127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"


async def test_a_client_says_hello_and_keeps_what_it_is_told(system: System) -> None:
    async with Client(system.url) as client:
        assert client.welcome is not None and client.welcome["version"] == 1
        seated = await client.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        assert (client.token, client.seat, client.table_id, client.code) == (
            seated["token"],
            seated["seat"],
            seated["table_id"],
            seated["code"],
        )
        view = await client.wait_for("view")
        assert (await client.wait_view(lambda v, new=seated["table_id"]: v["table_id"] == new))[
            "code"
        ]
        assert client.latest_lobby is not None and client.latest_lobby["status"] == "started"
        assert client.latest_view is not None and client.views_seen >= 1
        assert client.latest_view["version"] >= view["version"]


async def test_play_match_plays_a_seat_to_the_end(system: System) -> None:
    async with Client(system.url) as client:
        await client.create_table("Ann", {"players": 3, "target": 50}, level="easy", start_now=True)
        final = await play_match(client, timeout=60)
        assert final["status"] == "finished"
        assert final == client.latest_view


async def test_two_clients_play_each_other_to_the_end(system: System) -> None:
    async with Client(system.url) as ann, Client(system.url) as bob:
        created = await ann.create_table("Ann", {"players": 2, "target": 50})
        await bob.join(created["code"], "Bob")  # the table is full: it starts
        finals = await asyncio.gather(
            play_match(ann, lambda v: choose_move(v, "medium", 1), timeout=60),
            play_match(bob, lambda v: choose_move(v, "easy", 2), timeout=60),
        )
        assert finals[0]["view"]["scores"] == finals[1]["view"]["scores"]
        assert finals[0]["view"]["seed"] == finals[1]["view"]["seed"]


async def test_refusals_raise_server_errors_unless_asked_for(system: System) -> None:
    async with Client(system.url) as client:
        with pytest.raises(ServerError) as refused:
            await client.join("AAAAAA", "Ann")
        assert refused.value.code == "no_code"
        await client.send({"type": "start"})
        error = await client.wait_for("error")
        assert error["code"] == "not_seated"
        await client.send({"type": "leave"})
        await client.send({"type": "ping", "t": 2})
        assert await client.wait_for("pong", errors=False) == {"type": "pong", "t": 2}


async def test_a_token_resumes_the_seat_on_a_new_connection(system: System) -> None:
    async with Client(system.url) as first:
        seated = await first.quick_match("Ann", 2)
        token = first.token
    async with Client(system.url) as second:
        again = await second.resume(token)
        assert (again["seat"], again["table_id"]) == (seated["seat"], seated["table_id"])
        assert await second.ping(1.5) == {"type": "pong", "t": 1.5}
        assert (await second.leave())["type"] == "left"
        assert second.seat is None


async def test_messages_can_be_iterated_until_the_connection_closes(system: System) -> None:
    client = Client(system.url)
    await client.connect()
    await client.send({"type": "ping", "t": 1})
    async for message in client:
        assert message == {"type": "pong", "t": 1}
        break
    await client.close()
    assert [m async for m in client] == []
    with pytest.raises(ConnectionLost):
        await client.recv()
    assert client.closed


async def test_a_new_game_sent_right_after_the_final_view_is_not_refused(system: System) -> None:
    # The final view lets the seat go (docs/protocol.md): the next game on the same
    # connection, sent the moment that view arrives, is seated, never ``already_seated``.
    async with Client(system.url) as client:
        for _ in range(8):
            seated = await client.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            await client.wait_view(lambda v, new=seated["table_id"]: v["table_id"] == new)
            final = await play_match(client, timeout=60)
            assert final["status"] == "finished" and final["table_id"] == seated["table_id"]
