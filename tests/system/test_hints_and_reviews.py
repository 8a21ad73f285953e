"""Hints and reviews through every service as its own process: the gateway asks the bot
process (``BOT_ADDR``), which reviews in a worker process of its own."""

from __future__ import annotations

import asyncio
from typing import Any

from rackem.client import Client, play_match

from .stack import Stack


async def _hint(client: Client, hint_id: str) -> dict[str, Any]:
    await client.send({"type": "hint", "id": hint_id})
    while True:
        message = await client.recv(timeout=15)
        if message["type"] in ("hint", "error") and message.get("id") == hint_id:
            return message


async def test_a_player_alone_with_bots_is_hinted_then_reviewed(stack: Stack) -> None:
    async with Client(stack.ws) as ann:
        seated = await ann.create_table("Ann", {"players": 3, "target": 50}, "easy", True)
        version = -1
        for n in range(3):  # the hard bot's move, played, for each of Ann's first decisions
            view = await ann.wait_view(
                lambda v, after=version: bool(v["legal"]) and v["version"] > after
            )
            hint = await _hint(ann, f"h{n}")
            assert hint["type"] == "hint", hint
            assert hint["version"] == view["version"]
            version = view["version"]
            await ann.move(hint["move"], version=version)
        final = await play_match(ann, timeout=120)
    assert final["status"] == "finished"
    table_id, seat = seated["table_id"], seated["seat"]
    log = await asyncio.to_thread(stack.get_json, f"/match/{table_id}.json")
    review = await asyncio.to_thread(stack.get_json, f"/review/{table_id}.json?seat={seat}")
    assert (review["format"], review["seat"]) == ("rackem-review/1", seat)
    own = [at for at, move in enumerate(log["moves"]) if move["seat"] == seat]
    assert review["summary"]["decisions"] == len(own)
    assert [d["at"] for d in review["decisions"][:3]] == own[:3]
    assert [d["by"] for d in review["decisions"][:3]] == ["human"] * 3
