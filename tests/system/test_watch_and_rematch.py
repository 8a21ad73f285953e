"""A spectator and a rematch through every service as its own process, on a real Redis."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rackcore import SPECTATOR, Move, match_from_log, observe
from rackem.client import FINAL, Client, play_match

from .stack import Stack


def _verify(log: dict[str, Any], path: Path) -> dict[str, Any]:
    path.write_text(json.dumps(log))
    done = subprocess.run(
        [sys.executable, "-m", "rackem.cli", "verify", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    verdict: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 0, verdict
    return verdict


async def _watch(client: Client) -> list[dict[str, Any]]:
    views = []
    async with asyncio.timeout(240):
        async for message in client:
            if message["type"] == "view":
                views.append(message)
                if message["status"] in FINAL:
                    return views
    raise AssertionError("the spectator's stream ended early")


def _public_only(log: dict[str, Any], views: list[dict[str, Any]]) -> None:
    match = match_from_log(log)
    moves = [Move.from_dict(m) for m in log["moves"]]
    applied = 0
    for tv in views:
        while applied < tv["version"]:
            match.apply(moves[applied])
            applied += 1
        if match.phase == "round_over" and tv["view"]["round_no"] > match.round_no:
            match.next_round()
        assert tv["view"] == observe(match, SPECTATOR).to_dict()
        assert tv["legal"] == []


async def test_a_watched_match_and_its_rematch_both_verify(stack: Stack, tmp_path: Path) -> None:
    rules = {"players": 3, "target": 100}
    async with Client(stack.ws) as ann, Client(stack.ws) as bob, Client(stack.ws) as fan:
        created = await ann.create_table("Ann", rules, level="easy", spectators="public")
        await fan.watch(created["code"])
        await fan.wait_for("lobby")
        await bob.join(created["code"], "Bob")
        await ann.start()
        finals = await asyncio.gather(play_match(ann, timeout=240), play_match(bob, timeout=240))
        watched = await _watch(fan)
        log = stack.get_json(f"/match/{created['table_id']}.json")
        _public_only(log, watched)
        assert watched[-1]["view"]["scores"] == finals[0]["view"]["scores"]

        asked = await ann.rematch()
        offer = await bob.wait_for("rematch_offer")
        assert offer["table_id"] == asked["table_id"]
        await bob.rematch()
        again = await asyncio.gather(
            play_match_on(ann, asked["table_id"]), play_match_on(bob, asked["table_id"])
        )
    assert all(f["status"] == "finished" for f in again)
    rematch = stack.get_json(f"/match/{asked['table_id']}.json")
    verdict = _verify(rematch, tmp_path / "rematch.json")
    assert verdict["scores"] == again[0]["view"]["scores"]
    assert rematch["rules"] == log["rules"] and rematch["seed"] != log["seed"]
    codes = {r.get("code") for r in stack.match_records()}
    assert {created["code"], asked["code"]} <= codes


async def play_match_on(client: Client, table_id: str) -> dict[str, Any]:
    await client.wait_view(lambda v: v["table_id"] == table_id, timeout=60)
    return await play_match(client, timeout=240)
