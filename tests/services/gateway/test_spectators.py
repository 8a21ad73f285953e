"""Spectators through the gateway to real matchmaker, table and bot services.

Every message a spectator is sent over many whole matches is checked against the
finished match's log: each view is exactly ``observe(state, SPECTATOR)`` at its version
(public information only), and nothing before the end carries the seed or a hidden
stock order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from rackcore import SPECTATOR, Move, match_from_log, observe, verify
from rackem.client import FINAL, Client, ServerError, play_match
from services.common.running import Running
from services.gateway.protocol import encode, schemas

from .conftest import Services, StartGateway, StartServices, http_url, ws_url

Message = dict[str, Any]


async def watch_to_the_end(client: Client, timeout: float = 120) -> list[Message]:
    """Every message the spectator is sent, up to the final view."""
    seen: list[Message] = []
    async with asyncio.timeout(timeout):
        async for message in client:
            seen.append(message)
            if message["type"] == "view" and message["status"] in FINAL:
                return seen
    raise AssertionError(f"the spectator's stream ended before the match did: {seen[-1:]}")


async def match_log(gateway: Running, table_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(gateway, f"/match/{table_id}.json"))
    assert response.status_code == 200
    log: dict[str, Any] = response.json()
    assert verify(log)["valid"]
    return log


def assert_public_only(log: dict[str, Any], messages: list[Message]) -> int:
    """Each spectator message matches its schema; each view is the spectator's ``observe``
    view of the match at its version; no text before the end holds the seed or a hidden
    stock order. The number of views checked."""
    match = match_from_log(log)
    moves = [Move.from_dict(m) for m in log["moves"]]
    applied = 0
    views = 0
    for message in messages:
        assert schemas()[message["type"]].error(message) is None, message
        text = encode(message).decode()
        if message["type"] != "view":
            assert log["seed"] not in text
            continue
        views += 1
        while applied < message["version"]:
            match.apply(moves[applied])
            applied += 1
        if match.phase == "round_over" and message["view"]["round_no"] > match.round_no:
            match.next_round()
        assert message["view"] == observe(match, SPECTATOR).to_dict()
        assert message["legal"] == [] and message["view"]["rack"] == []
        if match.phase != "match_over":
            assert log["seed"] not in text, "the seed before the end"
            assert message["view"]["racks"] is None or match.phase == "round_over"
        if not match.stock_public and len(match.stock) >= 2:
            assert orjson.dumps(match.stock).decode() not in text, "a hidden stock order"
    assert applied == len(moves), "the spectator missed the end of the match"
    return views


async def _watched_match(gateway: Running, n: int) -> tuple[int, int]:
    """One match watched from its waiting room (even ``n``) or from its first moves (odd):
    the number of spectator views checked, and the moves of the match."""
    players = 2 + n % 3
    rules = {"players": players, "target": 50, "repair_token": n % 2 == 0, "bonus": n % 3 == 1}
    async with Client(ws_url(gateway)) as host, Client(ws_url(gateway)) as spectator:
        from_the_start = n % 2 == 0
        seated = await host.create_table(
            "Host", rules, level="easy", start_now=not from_the_start, spectators="public"
        )
        watching = await spectator.watch(seated["code"].lower())
        assert (watching["table_id"], watching["code"]) == (seated["table_id"], seated["code"])
        if from_the_start:
            lobby = await spectator.wait_for("lobby")
            assert (lobby["status"], lobby["you"], lobby["spectators"]) == (
                "waiting",
                SPECTATOR,
                "public",
            )
            await host.start()
        played, seen = await asyncio.gather(
            play_match(host, timeout=120), watch_to_the_end(spectator)
        )
    assert played["status"] == "finished"
    assert seen[-1]["view"]["scores"] == played["view"]["scores"]
    log = await match_log(gateway, seated["table_id"])
    return assert_public_only(log, seen), len(log["moves"])


async def test_spectators_of_many_whole_matches_are_sent_public_information_only(
    system: Running,
) -> None:
    results = await asyncio.gather(*(_watched_match(system, n) for n in range(4)))
    views = sum(v for v, _ in results)
    moves = sum(m for _, m in results)
    assert views >= moves // 2  # a view per change, many per match: not a handful


async def test_a_spectator_sends_no_move_and_leave_stops_watching(system: Running) -> None:
    async with Client(ws_url(system)) as host, Client(ws_url(system)) as spectator:
        seated = await host.create_table("Host", {"players": 3}, spectators="public")
        await spectator.watch(seated["code"])
        await spectator.wait_for("lobby")
        await spectator.send({"type": "move", "move": {"act": "draw", "from": "stock"}, "id": "m1"})
        refused = await spectator.wait_for("error")
        assert (refused["code"], refused["id"]) == ("watching", "m1")
        for kind in ("continue", "start"):
            await spectator.send({"type": kind})
            assert (await spectator.wait_for("error"))["code"] == "watching"
        for message in (
            {"type": "join", "code": seated["code"], "name": "Eve"},
            {"type": "create_table", "name": "Eve"},
            {"type": "watch", "code": seated["code"]},
        ):
            await spectator.send(message)
            assert (await spectator.wait_for("error"))["code"] == "watching"
        await host.start()
        view = await spectator.wait_for("view")
        assert view["legal"] == [] and view["view"]["seat"] == SPECTATOR
        host_view = await host.wait_view(lambda v: v["watchers"] == 1)
        assert all(s["kind"] != "human" or s["seat"] == 0 for s in host_view["seats"])
        assert schemas()["left"].error(await spectator.leave()) is None
        await host.wait_view(lambda v: v["watchers"] == 0)
        await spectator.send({"type": "continue"})
        assert (await spectator.wait_for("error"))["code"] == "not_seated"
        again = await spectator.watch(seated["code"])  # and may watch again
        assert again["table_id"] == seated["table_id"]


async def test_tables_are_closed_to_spectators_unless_their_creator_opens_them(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as host, Client(ws_url(system)) as quick:
        private = await host.create_table("Host", {"players": 3})
        lobby = await host.wait_for("lobby")
        assert lobby["spectators"] == "off"
        public_table = await quick.quick_match("Quick", 3)
        async with Client(ws_url(system)) as spectator:
            for code, expected in (
                (private["code"], "no_spectators"),
                (public_table["code"], "no_spectators"),
                ("ZZZZZZ", "no_code"),
                ("not a code", "no_code"),
            ):
                with pytest.raises(ServerError) as refused:
                    await spectator.watch(code)
                assert refused.value.code == expected
            await spectator.send({"type": "create_table", "name": "Eve", "spectators": "all"})
            assert (await spectator.wait_for("error"))["code"] == "bad_request"


async def test_a_table_takes_spectators_up_to_its_cap_and_they_keep_no_table_alive(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    services: Services = await start_services(spectators_per_table=1, abandon_ms=1_500)
    gateway = await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )
    async with Client(ws_url(gateway)) as host, Client(ws_url(gateway)) as first:
        seated = await host.create_table(
            "Host", {"players": 2, "target": 500}, start_now=True, spectators="public"
        )
        await host.wait_for("view")
        await first.watch(seated["code"])
        await first.wait_for("view")
        async with Client(ws_url(gateway)) as second:
            with pytest.raises(ServerError) as refused:
                await second.watch(seated["code"])
            assert refused.value.code == "spectators_full"
        view = await host.wait_view(lambda v: v["watchers"] == 1)
        assert [s["connected"] for s in view["seats"]] == [True, False]
        await host.close()  # the only human goes: a spectator is no reason to go on
        final = await first.wait_view(lambda v: v["status"] in FINAL, timeout=30)
    assert (final["status"], final["ended_reason"]) == ("ended", "abandoned")
    assert not final["seats"][0]["connected"]
