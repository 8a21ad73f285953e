"""Rematches over real sockets, through the gateway to real matchmaker, table and bot
services: the new match is played to the end and its record verifies."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from rackem.client import Client, ServerError, play_match
from services.common.running import Running
from services.gateway.protocol import schemas

from .conftest import http_url, ws_url

RULES = {"players": 3, "target": 50, "bonus": True}


async def _record(gateway: Running, table_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(gateway, f"/match/{table_id}.json"))
    assert response.status_code == 200
    log: dict[str, Any] = response.json()
    return log


def _rackem_verify(log: dict[str, Any], path: Path) -> dict[str, Any]:
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


async def _play_new_table(client: Client, table_id: str) -> dict[str, Any]:
    await client.wait_view(lambda v: v["table_id"] == table_id, timeout=30)
    return await play_match(client, timeout=120)


async def test_two_players_play_again_and_the_rematch_is_played_and_verifies(
    system: Running, tmp_path: Path
) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        created = await ann.create_table("Ann", RULES, level="easy")
        await bob.join(created["code"], "Bob")
        await ann.start()
        finals = await asyncio.gather(play_match(ann), play_match(bob))
        assert all(f["status"] == "finished" for f in finals)
        first = await _record(system, created["table_id"])

        asked = await ann.rematch()
        assert schemas()["seated"].error(asked) is None
        assert asked["table_id"] != created["table_id"] and asked["code"] != created["code"]
        assert asked["seat"] == created["seat"] and asked["token"] != created["token"]
        lobby = await ann.wait_for("lobby")
        assert lobby["status"] == "waiting" and lobby["table_id"] == asked["table_id"]
        offer = await bob.wait_for("rematch_offer")
        assert schemas()["rematch_offer"].error(offer) is None
        assert offer["table_id"] == asked["table_id"] and offer["deadline_ms"] > 0
        assert [(s["name"], s["answered"], s["bot"]) for s in offer["seats"]] == [
            ("Ann", True, False),
            ("Bob", False, False),
            (finals[0]["seats"][2]["name"], False, True),
        ]

        accepted = await bob.rematch()
        assert (accepted["table_id"], accepted["seat"]) == (asked["table_id"], bob.seat)
        started = await bob.wait_for("lobby")
        assert started["status"] == "started"
        again = await asyncio.gather(
            _play_new_table(ann, asked["table_id"]), _play_new_table(bob, asked["table_id"])
        )
    assert all(f["status"] == "finished" for f in again)
    assert [s["kind"] for s in again[0]["seats"]] == ["human", "human", "bot"]
    log = await _record(system, asked["table_id"])
    verdict = _rackem_verify(log, tmp_path / "rematch.json")
    assert verdict["valid"] and verdict["scores"] == again[0]["view"]["scores"]
    assert log["rules"] == first["rules"]
    assert [s["name"] for s in again[0]["seats"]] == [s["name"] for s in finals[0]["seats"]]
    assert log["seed"] != first["seed"] and log["commitment"] != first["commitment"]


async def test_play_again_against_the_computer_starts_at_once_and_only_after_a_match(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as ann:
        with pytest.raises(ServerError) as refused:
            await ann.rematch()
        assert refused.value.code == "no_rematch"
        created = await ann.create_table("Ann", RULES, level="easy", start_now=True)
        await ann.wait_for("view")
        await ann.send({"type": "rematch"})
        assert (await ann.wait_for("error"))["code"] == "already_seated"
        await play_match(ann)
        asked = await ann.rematch()
        assert (await ann.wait_for("lobby"))["status"] == "started"
        final = await _play_new_table(ann, asked["table_id"])
        assert final["status"] == "finished" and final["table_id"] != created["table_id"]
        # A match left half way is not the leaver's to play again.
        await ann.rematch()
        await ann.wait_for("view")
        await ann.leave()
        with pytest.raises(ServerError) as refused:
            await ann.rematch()
        assert refused.value.code == "no_rematch"


async def test_a_rematch_nobody_else_answers_starts_with_a_bot_in_the_seat(
    system: Running,
) -> None:
    async with Client(ws_url(system)) as ann, Client(ws_url(system)) as bob:
        created = await ann.create_table("Ann", {**RULES, "players": 2}, level="easy")
        await bob.join(created["code"], "Bob")
        await asyncio.gather(play_match(ann), play_match(bob))
        asked = await ann.rematch()
        offer = await bob.wait_for("rematch_offer")
        assert offer["status"] == "waiting"
        # Bob does not answer: after the matchmaker's REMATCH_MS a bot takes his seat.
        view = await ann.wait_view(lambda v: v["table_id"] == asked["table_id"], timeout=30)
        assert [s["kind"] for s in view["seats"]] == ["human", "bot"]
        assert view["seats"][1]["name"] != "Bob"
        late = await bob.wait_for("rematch_offer", lambda m: m["status"] == "started")
        assert late["table_id"] == asked["table_id"]
        with pytest.raises(ServerError) as refused:
            await bob.rematch()
        assert refused.value.code == "already_started"
