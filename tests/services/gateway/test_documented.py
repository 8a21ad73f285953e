"""What docs/protocol.md tells a client author, as a client sees it: a private table that
starts itself, tokens in any case, move ids unique for the whole match."""

from __future__ import annotations

import pytest

from rackem.client import Client, ServerError, choose_move
from services.common.running import Running

from .conftest import Services, StartGateway, ws_url


@pytest.fixture
async def live(services: Services, start_gateway: StartGateway) -> Running:
    return await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )


async def test_a_two_seat_private_table_starts_when_the_second_player_joins(live: Running) -> None:
    async with Client(ws_url(live)) as ann, Client(ws_url(live)) as bob:
        seated = await ann.create_table("Ann", {"players": 2})
        await bob.join(seated["code"].lower(), "Bob")
        started = await ann.wait_for("lobby", lambda m: m["status"] == "started", timeout=10)
        assert [s["bot"] for s in started["seats"]] == [False, False]
        await ann.start()
        refusal = await ann.wait_for("error", errors=False)
        assert refusal["code"] == "already_started"


async def test_a_token_resumes_in_any_case(live: Running) -> None:
    async with Client(ws_url(live)) as ann:
        seated = await ann.create_table("Ann", level="easy", start_now=True)
        await ann.wait_for("view")
    async with Client(ws_url(live)) as again:
        resumed = await again.resume(seated["token"].upper())
        assert (resumed["seat"], resumed["table_id"]) == (seated["seat"], seated["table_id"])
        assert resumed["token"] == seated["token"]


async def test_a_move_id_reused_after_reconnecting_gets_the_old_answer_and_moves_nothing(
    live: Running,
) -> None:
    async with Client(ws_url(live)) as ann:
        seated = await ann.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        view = await ann.wait_view(lambda v: bool(v["legal"]))
        first = await ann.move(choose_move(view), move_id="m1", version=view["version"])
    async with Client(ws_url(live)) as again:  # a client that restarted its counter
        await again.resume(seated["token"])
        view = await again.wait_view(lambda v: bool(v["legal"]))
        repeat = await again.move(choose_move(view), move_id="m1", version=view["version"])
        assert repeat["version"] == first["version"]  # the earlier move's answer
        # Nothing was applied: a new id, chosen from the same view, is not stale.
        fresh = await again.move(choose_move(view), move_id="r2-1", version=view["version"])
        assert fresh["version"] == view["version"] + 1
        with pytest.raises(ServerError) as stale:  # newer than any view: stale too
            await again.move(choose_move(view), move_id="r2-2", version=view["version"] + 50)
        assert stale.value.code == "stale_version"
