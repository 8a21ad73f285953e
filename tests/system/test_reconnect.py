"""A dropped connection keeps its seat; a silent seat is covered and returned."""

from __future__ import annotations

import asyncio

from rackem.client import Client, ServerError, choose_move, play_match

from .stack import Stack


async def test_a_dropped_client_resumes_its_seat_and_rack(stack: Stack) -> None:
    async with Client(stack.ws) as ann:
        await ann.create_table("Ann", rules={"players": 2, "target": 100}, start_now=True)
        view = await ann.next_view(0)
        while not view["legal"]:
            view = await ann.next_view(ann.views_seen)
        await ann.move(choose_move(view), version=view["version"])
        before = ann.latest_view
        assert before is not None
        token, seat, table_id = ann.token, ann.seat, ann.table_id
    # The first connection is gone; a new one on the same gateway resumes with the token.
    async with Client(stack.ws) as again:
        seated = await again.resume(token)
        assert (seated["seat"], seated["table_id"]) == (seat, table_id)
        view = await again.next_view(0)
        # The rack is the one the seat had (bots may have moved, but never this seat's cards).
        assert view["view"]["seat"] == seat
        assert view["view"]["round_no"] >= before["view"]["round_no"]
        if view["view"]["round_no"] == before["view"]["round_no"]:
            assert view["view"]["rack"] == before["view"]["rack"]
        final = await play_match(again, timeout=240)
        assert final["status"] == "finished"


async def test_a_silent_seat_is_covered_by_a_bot_and_returned_when_it_acts(stack: Stack) -> None:
    async with Client(stack.ws) as quiet:
        await quiet.create_table("Quiet", rules={"players": 2, "target": 300}, start_now=True)
        seat = quiet.seat
        # Say nothing until a bot covers the seat (the system runs with a 2.5 s clock).
        async with asyncio.timeout(60):
            while True:
                view = await quiet.next_view(quiet.views_seen)
                if view["seats"][seat]["kind"] == "cover":
                    break
        cover_moves = []
        async with asyncio.timeout(60):
            while not cover_moves:
                view = await quiet.next_view(quiet.views_seen)
                last = view["last_move"]
                if last and last["seat"] == seat and last.get("by") == "cover":
                    cover_moves.append(last)
        # Acting again takes the seat back.
        async with asyncio.timeout(60):
            while True:
                view = quiet.latest_view
                assert view is not None
                if view["legal"]:
                    try:
                        await quiet.move(choose_move(view), version=view["version"])
                        break
                    except ServerError as err:  # overtaken by the cover bot: try again
                        if err.code not in ("stale_version", "not_your_turn", "illegal_move"):
                            raise
                await quiet.next_view(quiet.views_seen)
        # The view of that move (it may arrive just after `moved`) shows the human back.
        view = await quiet.wait_view(
            lambda v: (
                v["last_move"]
                and v["last_move"]["seat"] == seat
                and v["last_move"].get("by") == "human"
            ),
            timeout=30,
        )
        assert view["seats"][seat]["kind"] == "human"
        await quiet.leave()
