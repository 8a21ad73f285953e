"""``hint`` over a real WebSocket, from a real gateway to a real bot service (over gRPC, and
in process as ``rackem up`` wires it): for a player alone with the computer, on its turn."""

from __future__ import annotations

from typing import Any

import pytest

from rackem.client import Client, ServerError, choose_move
from services.common.running import Running
from services.gateway.protocol import schemas

from .conftest import Services, StartGateway, StartServices, ws_url


def _plain(move: dict[str, Any]) -> dict[str, Any]:
    """A move as ``legal`` lists it (its go_out forms left out)."""
    return {k: v for k, v in move.items() if k != "go_out"}


async def _answer(client: Client, hint_id: str, **fields: Any) -> dict[str, Any]:
    """The answer to a hint: the ``hint``, or the ``error`` that refuses it (by its id)."""
    await client.send({"type": "hint", "id": hint_id, **fields})
    while True:
        message = await client.recv(timeout=15)
        if message["type"] in ("hint", "error") and message.get("id") == hint_id:
            assert schemas()[message["type"]].error(message) is None
            return message


async def test_a_player_alone_with_bots_gets_a_legal_hint_for_its_decision(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as ann:
        await ann.create_table("Ann", {"players": 3}, level="easy", start_now=True)
        version = -1
        for n in range(4):  # draws and what each drawn card is for
            view = await ann.wait_view(
                lambda v, after=version: bool(v["legal"]) and v["version"] > after
            )
            answer = await _answer(ann, f"h{n}", version=view["version"])
            assert answer["type"] == "hint", answer
            assert answer["version"] == view["version"]
            assert _plain(answer["move"]) in view["legal"]
            version = view["version"]
            await ann.move(answer["move"], version=version)  # as a client sends it: taken


async def test_a_hint_is_refused_where_another_human_plays(system: Running) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        seated = await ann.create_table("Ann", {"players": 3}, level="easy")
        await bob.join(seated["code"], "Bob")
        await ann.start()
        for client in (ann, bob):
            await client.wait_for("view")
            answer = await _answer(client, "h1")
            assert (answer["type"], answer["code"]) == ("error", "hint_unavailable")
        view = await ann.wait_view(lambda v: True)
        mover = ann if view["legal"] else bob  # refused on its turn too
        assert (await _answer(mover, "h2"))["code"] == "hint_unavailable"


async def test_a_hint_needs_a_seat_and_the_seats_decision(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    services: Services = await start_services(bot_delay_ms=4_000)  # the bots' turns last
    gateway = await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        bot_addr=services.bot.addr,
    )
    async with Client(ws_url(gateway)) as idle, Client(ws_url(gateway)) as ann:
        assert (await _answer(idle, "h0"))["code"] == "hint_unavailable"  # no seat
        await ann.create_table("Ann", {"players": 2}, level="easy")
        assert (await _answer(ann, "h1"))["code"] == "not_your_turn"  # not started
        await ann.start()
        view = await ann.wait_view(lambda v: v["status"] == "playing")
        while view["legal"]:  # Ann first: her draw and its card, then the bot's turn
            await ann.move(choose_move(view), version=view["version"])
            view = await ann.wait_view(lambda v, after=view["version"]: v["version"] > after)
        refused = await _answer(ann, "h2")
        assert (refused["code"], refused["id"]) == ("not_your_turn", "h2")


async def test_a_hint_for_an_older_view_is_stale_and_a_client_sends_no_move(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as ann:
        await ann.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        view = await ann.wait_view(lambda v: bool(v["legal"]))
        stale = await _answer(ann, "h1", version=view["version"] + 1)
        assert stale["code"] == "stale_version"
        with pytest.raises(ServerError) as bad:
            await ann.send({"type": "hint", "id": "h2", "move": {"act": "throw"}})
            await ann.wait_for("hint")
        assert bad.value.code == "bad_request"
