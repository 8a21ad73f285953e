"""``/review/{table_id}.json?seat=N`` on a real gateway: the record from the table service,
the review from the real bot service (over gRPC, and in process as ``rackem up`` wires it)."""

from __future__ import annotations

import httpx

from rackem.client import Client, play_match
from services.common.running import Running

from .conftest import NOWHERE, Services, StartGateway, http_url, ws_url

FAST = {"players": 2, "target": 50}


async def _finished(gateway: Running) -> str:
    """The id of a match Ann played against the computer to its end."""
    async with Client(ws_url(gateway)) as ann:
        seated = await ann.create_table("Ann", FAST, level="easy", start_now=True)
        final = await play_match(ann, timeout=60)
    assert final["status"] == "finished"
    return str(seated["table_id"])


async def test_a_finished_match_is_reviewed_for_each_seat(system: Running) -> None:
    table_id = await _finished(system)
    async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
        log = (await http.get(http_url(system, f"/match/{table_id}.json"))).json()
        for seat in (0, 1):
            response = await http.get(http_url(system, f"/review/{table_id}.json?seat={seat}"))
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/json"
            assert response.headers["cache-control"] == "public, max-age=3600"
            review = response.json()
            assert (review["format"], review["seat"]) == ("rackem-review/1", seat)
            own = [at for at, move in enumerate(log["moves"]) if move["seat"] == seat]
            assert [d["at"] for d in review["decisions"]] == own
            again = await http.get(http_url(system, f"/review/{table_id}.json?seat={seat}"))
            assert again.text == response.text  # kept: the same review, not made again


async def test_a_review_needs_a_finished_match_and_a_seat_at_it(system: Running) -> None:
    table_id = await _finished(system)
    async with Client(ws_url(system)) as bob, httpx.AsyncClient(trust_env=False) as http:
        running = await bob.create_table("Bob", FAST, level="easy", start_now=True)
        await bob.wait_for("view")
        for path in (
            f"/review/{running['table_id']}.json?seat=0",  # still being played
            "/review/t0000000000000000.json?seat=0",  # no such match
            "/review/no%20such.json?seat=0",
        ):
            response = await http.get(http_url(system, path))
            assert response.status_code == 404, path
            assert response.json()["error"]["code"] == "not_found"
        for query in ("?seat=2", "?seat=99", "?seat=-1", "?seat=x", "?seat=", ""):
            response = await http.get(http_url(system, f"/review/{table_id}.json{query}"))
            assert response.status_code == 400, query
            assert response.json()["error"]["code"] == "bad_request"


async def test_a_review_is_unavailable_while_the_bot_service_does_not_answer(
    services: Services, start_gateway: StartGateway
) -> None:
    playing = await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        bot_addr=services.bot.addr,
    )
    table_id = await _finished(playing)
    botless = await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        bot_addr=NOWHERE,
    )
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(botless, f"/review/{table_id}.json?seat=0"))
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
