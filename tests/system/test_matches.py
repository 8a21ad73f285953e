"""Whole matches between protocol clients, through every service as its own process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rackem.client import Client, play_match

from .stack import Stack


async def _play_all(clients: list[Client]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(play_match(c, timeout=240) for c in clients)))


def _verify(log: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "match.json"
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


def _check_agreement(finals: list[dict[str, Any]], players: int) -> None:
    views = [f["view"] for f in finals]
    assert all(f["status"] == "finished" for f in finals)
    assert len({json.dumps(v["scores"]) for v in views}) == 1
    assert len({v["winner"] for v in views}) == 1
    assert views[0]["winner"] is not None
    assert len(views[0]["scores"]) == players
    # At the end everyone sees the revealed seed, which matches the commitment.
    assert len({v["seed"] for v in views}) == 1 and views[0]["seed"]


async def test_two_humans_play_a_quick_match_to_the_end(stack: Stack, tmp_path: Path) -> None:
    async with Client(stack.ws) as ann, Client(stack.ws) as bob:
        await asyncio.gather(ann.quick_match("Ann", 2), bob.quick_match("Bob", 2))
        assert ann.table_id == bob.table_id
        assert {ann.seat, bob.seat} == {0, 1}
        finals = await _play_all([ann, bob])
    _check_agreement(finals, 2)
    assert all(s["kind"] == "human" for s in finals[0]["seats"])
    log = stack.get_json(f"/match/{ann.table_id}.json")
    verdict = _verify(log, tmp_path)
    assert verdict["scores"] == finals[0]["view"]["scores"]
    assert verdict["winner"] == finals[0]["view"]["winner"]


async def test_a_new_game_sent_right_after_the_final_view_is_not_refused(stack: Stack) -> None:
    # The final view lets the seat go (docs/protocol.md): the next game on the same
    # connection, sent the moment that view arrives, is seated, never ``already_seated``.
    async with Client(stack.ws) as ann:
        for _ in range(4):
            seated = await ann.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            await ann.wait_view(lambda v, new=seated["table_id"]: v["table_id"] == new)
            final = await play_match(ann, timeout=120)
            assert final["status"] == "finished" and final["table_id"] == seated["table_id"]


async def _private_match(stack: Stack, players: int, rules: dict[str, Any]) -> list[Any]:
    clients = [Client(stack.ws) for _ in range(players)]
    for client in clients:
        await client.connect()
    try:
        host = clients[0]
        await host.create_table("Host", rules={"players": players, **rules})
        assert host.code is not None
        for i, guest in enumerate(clients[1:], start=1):
            await guest.join(host.code.lower(), f"Guest {i}")
        # Full: the table starts by itself.
        finals = await _play_all(clients)
        return [finals, host.table_id, host.code]
    finally:
        for client in clients:
            await client.close()


async def test_three_humans_play_a_private_table_to_the_end(stack: Stack, tmp_path: Path) -> None:
    finals, table_id, code = await _private_match(stack, 3, {"target": 150})
    _check_agreement(finals, 3)
    verdict = _verify(stack.get_json(f"/match/{table_id}.json"), tmp_path)
    assert verdict["scores"] == finals[0]["view"]["scores"]
    # The table's own match record line carries the same match, without names or tokens.
    records = [r for r in stack.match_records() if r.get("code") == code]
    assert len(records) == 1
    record_text = json.dumps(records[0])
    assert "Host" not in record_text and "Guest" not in record_text
    _verify(records[0]["match"], tmp_path)


async def test_four_humans_play_partners_to_the_end(stack: Stack, tmp_path: Path) -> None:
    finals, table_id, _ = await _private_match(
        stack, 4, {"target": 100, "partners": True, "bonus": True}
    )
    _check_agreement(finals, 4)
    assert finals[0]["view"]["winner"] in (0, 1)  # a pair wins
    verdict = _verify(stack.get_json(f"/match/{table_id}.json"), tmp_path)
    assert verdict["winner"] == finals[0]["view"]["winner"]


async def test_a_lone_human_gets_bots_after_the_fill_timer(stack: Stack) -> None:
    async with Client(stack.ws) as solo:
        await solo.quick_match("Solo", 3)
        view = await solo.next_view(0, timeout=30)
        kinds = sorted(s["kind"] for s in view["seats"])
        assert kinds == ["bot", "bot", "human"]
        await solo.leave()
