"""Seats followed through the gateway to real matchmaker, table and bot services."""

from __future__ import annotations

import asyncio
import secrets
import socket

import httpx
import pytest

from rackcore import Rules, verify
from rackem.client import Client, ConnectionLost, ServerError, play_match
from services.common.running import Running
from services.gateway.protocol import schemas
from services.gateway.state import REPLACED
from services.table.server import create_server as create_table_server

from .conftest import Services, StartGateway, http_url, table_settings, ws_url
from .test_messages import MALFORMED

FAST = {"players": 2, "target": 50}


def assert_private(view: dict[str, object], seat: int) -> None:
    assert schemas()["view"].error(view) is None
    inner = view["view"]
    assert isinstance(inner, dict)
    assert inner["seat"] == seat
    if view["status"] == "playing":
        assert inner["racks"] is None and inner["seed"] is None


async def test_a_match_against_the_computer_plays_to_the_end_and_its_log_verifies(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as client:
        seated = await client.create_table("Ann", FAST, level="easy", start_now=True)
        assert schemas()["seated"].error(seated) is None
        lobby = await client.wait_for("lobby")
        assert schemas()["lobby"].error(lobby) is None
        assert (lobby["status"], lobby["you"], lobby["code"]) == ("started", 0, seated["code"])
        final = await play_match(client, timeout=60)
    assert_private(final, seated["seat"])
    assert final["status"] == "finished" and final["ended_reason"] == "finished"
    assert final["view"]["seed"] is not None and final["view"]["winner"] is not None
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(system, f"/match/{seated['table_id']}.json"))
    assert response.status_code == 200
    log = response.json()
    assert log["seed"] == final["view"]["seed"]
    assert verify(log)["valid"]


async def test_a_running_match_has_no_log_yet(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        seated = await client.create_table("Ann", FAST, level="easy", start_now=True)
        await client.wait_for("view")
        async with httpx.AsyncClient(trust_env=False) as http:
            response = await http.get(http_url(system, f"/match/{seated['table_id']}.json"))
            assert response.status_code == 404
            assert response.json()["error"]["code"] == "not_found"
            unknown = await http.get(http_url(system, "/match/t0000000000000000.json"))
            assert unknown.status_code == 404


async def test_two_people_quick_match_and_each_sees_only_their_own_rack(system: Running) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        first = await ann.quick_match("Ann", 2)
        second = await bob.quick_match("Bob", 2)
        assert first["table_id"] == second["table_id"]
        assert {first["seat"], second["seat"]} == {0, 1}
        views = await asyncio.gather(ann.wait_for("view"), bob.wait_for("view"))
        for client, view in zip((ann, bob), views, strict=True):
            assert_private(view, client.seat or 0)
            assert [s["kind"] for s in view["seats"]] == ["human", "human"]
        assert views[0]["view"]["rack"] != views[1]["view"]["rack"]
        await ann.leave()
        view = await bob.wait_view(lambda v: v["seats"][first["seat"]]["kind"] == "bot")
        assert view["seats"][first["seat"]]["left"]


async def test_a_lone_quick_match_player_is_joined_by_computer_players(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        await client.quick_match("Ann", 3)
        lobby = await client.wait_for("lobby")
        assert (lobby["status"], lobby["public"], lobby["creator_seat"]) == ("waiting", True, -1)
        started = await client.wait_for("lobby", lambda m: m["status"] == "started", timeout=10)
        assert [s["bot"] for s in started["seats"]].count(True) == 2
        view = await client.wait_for("view")
        assert [s["kind"] for s in view["seats"]].count("bot") == 2


async def test_a_private_table_is_joined_by_code_and_started_by_its_creator(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        created = await ann.create_table("Ann", {"players": 3}, level="easy")
        waiting = await ann.wait_for("lobby")
        assert (waiting["status"], waiting["creator_seat"], waiting["public"]) == (
            "waiting",
            0,
            False,
        )
        joined = await bob.join(created["code"].lower(), "Bob")
        assert joined["table_id"] == created["table_id"] and joined["seat"] != created["seat"]
        await ann.wait_for("lobby", lambda m: sum(s["taken"] for s in m["seats"]) == 2)
        await bob.start()
        with pytest.raises(ServerError) as refused:
            await bob.wait_for("view", timeout=5)
        assert refused.value.code == "not_creator"
        await ann.start()
        for client in (ann, bob):
            view = await client.wait_for("view", timeout=10)
            assert [s["kind"] for s in view["seats"]] == ["human", "human", "bot"]
        await ann.send({"type": "join", "code": created["code"], "name": "Ann"})
        assert (await ann.wait_for("error"))["code"] == "already_seated"


async def test_joining_needs_an_open_table(system: Running) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        with pytest.raises(ServerError) as refused:
            await bob.join("ZZZZZZ", "Bob")
        assert refused.value.code == "no_code"
        created = await ann.create_table("Ann", FAST, level="easy", start_now=True)
        with pytest.raises(ServerError) as refused:
            await bob.join(created["code"], "Bob")
        assert refused.value.code in ("already_started", "table_full", "no_code")


async def test_moves_are_checked_by_the_table_and_answered_exactly_once(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        await client.create_table("Ann", FAST, level="easy", start_now=True)
        view = await client.wait_view(lambda v: bool(v["legal"]))
        version = view["version"]
        refusals: list[tuple[dict[str, object], int, str]] = [
            ({"act": "place", "slot": 3}, version, "illegal_move"),
            ({"act": "draw", "from": "stock"}, version - 1 if version else 99, "stale_version"),
        ]
        # The gateway relays a move field by field; the table says it is none.
        refusals += [(move, version, "malformed_move") for move in MALFORMED]
        for n, (move, at, code) in enumerate(refusals):
            with pytest.raises(ServerError) as refused:
                await client.move(move, move_id=f"bad-{n}", version=at)
            assert (refused.value.code, refused.value.move_id) == (code, f"bad-{n}")
            assert refused.value.message and refused.value.message != "internal error"
        moved = await client.move({"act": "draw", "from": "stock"}, move_id="d1", version=version)
        again = await client.move({"act": "draw", "from": "stock"}, move_id="d1", version=version)
        assert moved == again == {"type": "moved", "id": "d1", "version": version + 1}


async def test_rules_the_gateway_relays_are_judged_by_the_matchmaker(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        for rules, problem in (
            ({"players": 9}, "players must be an integer from 2 to 4"),
            ({"players": 2, "partners": True}, "partners needs exactly 4 players"),
            ({"tiebreak": "coin"}, "tiebreak must be one of went_out, extra_round"),
        ):
            with pytest.raises(ServerError) as refused:
                await client.create_table("Ann", rules, start_now=True)
            assert (refused.value.code, refused.value.message) == ("bad_rules", problem)
        seated = await client.create_table("Ann", {"players": 3, "run_to_go_out": None})
        lobby = await client.wait_for("lobby")
        assert lobby["table_id"] == seated["table_id"]
        assert lobby["rules"] == Rules(players=3).to_dict(full=True)


async def test_a_move_out_of_turn_is_refused(system: Running) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        await ann.quick_match("Ann", 2)
        await bob.quick_match("Bob", 2)
        view = await ann.wait_for("view")
        waiting = bob if view["view"]["turn"] == ann.seat else ann
        with pytest.raises(ServerError) as refused:
            await waiting.move({"act": "draw", "from": "stock"})
        assert refused.value.code == "not_your_turn"


async def test_a_dropped_player_resumes_the_seat_from_another_gateway(
    system: Running, services: Services, start_gateway: StartGateway
) -> None:
    other = await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )
    async with Client(ws_url(system)) as first:
        seated = await first.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        view = await first.wait_for("view")
    async with Client(ws_url(other)) as second:
        again = await second.resume(seated["token"])
        assert again == seated | {"type": "seated"}
        resumed = await second.wait_for("view")
        assert resumed["table_id"] == seated["table_id"]
        assert resumed["version"] >= view["version"]
        assert resumed["view"]["rack"] == view["view"]["rack"]  # only this seat changes it
        await second.send({"type": "quick_match", "name": "Ann", "players": 2})
        assert (await second.wait_for("error"))["code"] == "already_seated"


async def test_a_forged_token_is_refused(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        with pytest.raises(ServerError) as refused:
            await client.resume(secrets.token_hex(16))
        assert refused.value.code == "bad_token"
        seated = await client.create_table("Ann", FAST, level="easy", start_now=True)
        assert seated["seat"] == 0


async def test_a_newer_connection_takes_the_seat_over(
    system: Running, services: Services, start_gateway: StartGateway
) -> None:
    other = await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )

    async def close_code(client: Client) -> int | None:
        with pytest.raises(ConnectionLost) as lost:
            await client.wait_for("never", timeout=10)
        return lost.value.code

    async with Client(ws_url(system)) as first:
        seated = await first.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        await first.wait_for("view")
        async with Client(ws_url(system)) as second:  # on the same gateway
            await second.resume(seated["token"])
            await second.wait_for("view")
            assert await close_code(first) == REPLACED
            async with Client(ws_url(other)) as third:  # on another gateway
                await third.resume(seated["token"])
                await third.wait_for("view")
                assert await close_code(second) == REPLACED
                assert (await third.ping())["type"] == "pong"


async def test_leaving_a_match_frees_the_connection_for_a_new_game(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        seated = await client.create_table("Ann", FAST, level="easy", start_now=True)
        await client.wait_for("view")
        assert await client.leave() == {"type": "left"}
        with pytest.raises(ServerError) as refused:
            await client.resume(seated["token"])
        assert refused.value.code == "bad_token"
        again = await client.create_table("Ann", FAST, level="easy", start_now=True)
        assert again["table_id"] != seated["table_id"]


async def test_leaving_a_waiting_room_closes_it_for_its_creator(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        await client.create_table("Ann", {"players": 4}, level="easy")
        await client.wait_for("lobby")
        assert await client.leave() == {"type": "left"}
        await client.send({"type": "start"})
        assert (await client.wait_for("error"))["code"] == "not_seated"


def _held_port() -> socket.socket:
    """A loopback port for a table replica started later, held until then: bound, not
    listening (a connection there is refused, as where nothing is). Close it just before
    the replica binds the port: free only in between (a port picked by bind and release
    could be taken by another server meanwhile; a replica cannot take this socket over)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    return probe


async def test_a_table_moving_replicas_is_followed_through_table_addr(
    services: Services, start_gateway: StartGateway
) -> None:
    """Its owner shuts down; TABLE_ADDR routes the gateway to the replica that takes it over."""
    with _held_port() as probe:  # the second replica's port
        port = probe.getsockname()[1]
        gateway = await start_gateway(
            matchmaker_addr=services.matchmaker.addr, table_addr=f"127.0.0.1:{port}"
        )
        async with Client(ws_url(gateway)) as client:
            await client.create_table("Ann", FAST, level="easy", start_now=True)
            await client.wait_for("view")  # placed on the only replica, services.table
            probe.close()
            backup = await create_table_server(
                table_settings(port=port),
                store=services.store,
                registry=services.registry,
                bot_addr=services.bot.addr,
            )
            try:
                await services.table.stop(0)
                final = await play_match(client, timeout=60)
            finally:
                await backup.stop(0)
    assert final["status"] == "finished"


async def test_a_seat_whose_table_cannot_be_reached_is_let_go_and_can_be_resumed(
    services: Services, start_gateway: StartGateway
) -> None:
    with _held_port() as probe:  # TABLE_ADDR: nothing answers there until later
        port = probe.getsockname()[1]
        gateway = await start_gateway(
            matchmaker_addr=services.matchmaker.addr,
            table_addr=f"127.0.0.1:{port}",
            resubscribe_backoff_s=0.1,  # gives up after about 1.5 s
        )
        async with Client(ws_url(gateway)) as client:
            seated = await client.create_table("Ann", FAST, level="easy", start_now=True)
            await client.wait_for("view")
            await services.table.stop(0)
            lost = await client.wait_for("error", timeout=15)
            assert lost["code"] == "unavailable"
            probe.close()
            backup = await create_table_server(
                table_settings(port=port),
                store=services.store,
                registry=services.registry,
                bot_addr=services.bot.addr,
            )
            try:
                again = await client.resume(seated["token"])
                assert again["table_id"] == seated["table_id"]
                final = await play_match(client, timeout=60)
                assert final["status"] == "finished"
            finally:
                await backup.stop(0)
