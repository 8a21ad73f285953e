"""Bad input gets clear errors, leaves every table intact, and never takes a service down."""

from __future__ import annotations

import asyncio
import json
import urllib.request

from rackem.client import Client, ConnectionLost, ServerError, choose_move

from .stack import Stack


async def _seated_with_turn(stack: Stack) -> tuple[Client, dict]:  # type: ignore[type-arg]
    client = Client(stack.ws)
    await client.connect()
    await client.create_table("Probe", rules={"players": 2, "target": 100}, start_now=True)
    view = await client.next_view(0)
    while not view["legal"]:
        view = await client.next_view(client.views_seen)
    return client, view


async def _error(client: Client, frame: str | bytes) -> dict:  # type: ignore[type-arg]
    await client.send_raw(frame)
    return await client.wait_for("error", errors=False, timeout=10)


async def test_garbage_and_wrong_types_get_errors_and_leave_the_table_intact(
    stack: Stack,
) -> None:
    client, view = await _seated_with_turn(stack)
    try:
        version = view["version"]
        rack = view["view"]["rack"]
        cases = {
            "not json {": "bad_frame",
            "[1, 2, 3]": "bad_frame",
            json.dumps({"type": "fly"}): "bad_request",
            json.dumps({"type": "move", "move": {"act": "draw", "from": "stock"}}): "bad_request",
            json.dumps({"type": "move", "id": 5, "move": {"act": "draw"}}): "bad_request",
            json.dumps({"type": "move", "id": "x", "move": {"act": "jump"}}): "malformed_move",
            json.dumps({"type": "ping", "t": 1, "extra": True}): "bad_request",
            json.dumps({"type": "quick_match", "name": "Again", "players": 2}): "already_seated",
        }
        for frame, code in cases.items():
            error = await _error(client, frame)
            assert error["code"] == code, (frame, error)
            assert error["message"]
        huge = json.dumps({"type": "ping", "t": 1, "pad": "x" * 5000})
        assert (await _error(client, huge))["code"] in ("bad_frame", "bad_request")
        # An illegal move (a throw before drawing) is refused and changes nothing.
        with_id = {"type": "move", "id": "bad-1", "move": {"act": "throw"}}
        assert (await _error(client, json.dumps(with_id)))["code"] == "illegal_move"
        # A move with the seat of someone else is not a field at all.
        forged_seat = {
            "type": "move",
            "id": "bad-2",
            "move": {"act": "draw", "from": "stock", "seat": 1 - client.seat},
        }
        assert (await _error(client, json.dumps(forged_seat)))["code"] in (
            "bad_request",
            "malformed_move",
        )
        await client.ping(1)
        assert client.latest_view is not None
        assert client.latest_view["version"] == version
        assert client.latest_view["view"]["rack"] == rack
        # And the table plays on: a legal move is accepted.
        moved = await client.move(choose_move(view), version=version)
        assert moved["version"] == version + 1
    finally:
        await client.close()


async def test_out_of_turn_stale_and_duplicate_moves_are_refused(stack: Stack) -> None:
    client, view = await _seated_with_turn(stack)
    try:
        move = choose_move(view)
        first = await client.move(move, move_id="once", version=view["version"])
        # The same id again returns the earlier result; nothing is applied twice.
        again = await client.move(move, move_id="once", version=view["version"])
        assert again["version"] == first["version"]
        # A stale version is refused.
        with_stale = {"act": "place", "slot": 0}
        try:
            await client.move(with_stale, move_id="stale", version=view["version"])
            raise AssertionError("a stale move was accepted")
        except ServerError as err:
            assert err.code == "stale_version"
        # Out of turn: wait until it is the bot's turn, then try to draw.
        async with asyncio.timeout(30):
            while True:
                latest = client.latest_view
                assert latest is not None
                if latest["view"]["turn"] != client.seat and latest["status"] == "playing":
                    break
                seen = client.views_seen  # (the move's own view may come before its answer)
                if latest["legal"]:
                    await client.move(choose_move(latest), version=latest["version"])
                await client.next_view(seen)
        try:
            await client.move({"act": "draw", "from": "stock"}, move_id="eager")
        except ServerError as err:
            assert err.code in ("not_your_turn", "stale_version", "illegal_move")
        else:
            # The bot moved first and it became our turn again: that is a legal draw.
            assert client.latest_view is not None
    finally:
        await client.close()


async def test_forged_and_replayed_tokens_are_refused(stack: Stack) -> None:
    async with Client(stack.ws) as owner:
        await owner.create_table("Owner", rules={"players": 2, "target": 100}, start_now=True)
        token = owner.token
        assert token is not None
        async with Client(stack.ws) as thief:
            for forged in ("0" * 32, token[:-1] + ("0" if token[-1] != "0" else "1"), "zz"):
                await thief.send({"type": "resume", "token": forged})
                error = await thief.wait_for("error", errors=False)
                assert error["code"] in ("bad_token", "bad_request")
            # Moves without a seat are refused.
            await thief.send({"type": "move", "id": "m", "move": {"act": "draw", "from": "stock"}})
            assert (await thief.wait_for("error", errors=False))["code"] == "not_seated"
        await owner.leave()
    # A token whose seat was given up no longer moves anything.
    async with Client(stack.ws) as late:
        await late.send({"type": "resume", "token": token})
        message = await late.wait_for("error", errors=False, timeout=15)
        assert message["code"] in ("bad_token", "match_over")


async def test_flooding_is_limited_and_abuse_closes_only_that_connection(stack: Stack) -> None:
    async with Client(stack.ws) as flood, Client(stack.ws) as bystander:
        codes = []
        try:
            for _ in range(400):
                await flood.send_raw("{nope")
            async with asyncio.timeout(15):
                while True:
                    message = await flood.recv(timeout=None)
                    if message["type"] == "error":
                        codes.append(message["code"])
        except (ConnectionLost, TimeoutError):
            pass
        assert "bad_frame" in codes
        assert flood.closed  # repeated abuse closed it
        assert flood.close_code == 1008
        # The service is up for everyone else.
        assert (await bystander.ping(7))["t"] == 7
    with urllib.request.urlopen(stack.url + "/healthz", timeout=5) as reply:
        assert reply.status == 200
