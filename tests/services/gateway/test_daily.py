"""The Daily Rack end to end over real sockets: a profile asks for the day (its commitment),
plays the day's match against the hard computer through the gateway, the matchmaker and a
table replica (gRPC), and finds its score and own turns on the board; a second try is
``daily_played``. While the day is open the match's log (``/match/<id>.json``) has no
seed; once it closed (the table service's clock moved on) the day's seed is published
(``daily``'s ``previous``) and the log carries it, and ``rackem verify`` accepts it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rackem.client import Client, ServerError, play_match
from services.archive import ArchiveSettings, migrate, parse_database_url
from services.common.registry import MemoryRegistry
from services.common.running import Running
from services.common.running import Running as BotRunning
from services.matchmaker.server import create_server as create_matchmaker
from services.matchmaker.settings import MatchmakerSettings
from services.table.daily import Daily, utc_day
from services.table.server import create_server as create_table_server
from services.table.store.memory import MemoryStore

from .conftest import StartGateway, http_url, table_settings, ws_url

SECRET = b"the daily secret of this test"
DAY_S = 86_400


class Clock:
    """The table service's wall clock, moved by hand (unix seconds)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _seed(day: str) -> str:
    return hmac.new(SECRET, f"rackem-daily/{day}".encode(), hashlib.sha256).hexdigest()


def _commitment(day: str) -> str:
    return hashlib.sha256(bytes.fromhex(_seed(day))).hexdigest()


@pytest.fixture
def clock() -> Clock:
    return Clock(time.time())


@pytest.fixture
async def daily_gateway(
    bot_server: BotRunning, start_gateway: StartGateway, clock: Clock, tmp_path: Path
) -> AsyncIterator[Running]:
    """A gateway with a profile store in front of a matchmaker and a table replica that
    offers the Daily Rack on ``clock`` and applies results to the same SQLite archive."""
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    migrate(parse_database_url(url))
    archive = ArchiveSettings(database_url=url)
    registry = MemoryRegistry()
    table = await create_table_server(
        table_settings(archive_sweep_ms=50),
        store=MemoryStore(),
        registry=registry,
        bot_addr=bot_server.addr,
        archive=archive,
        daily=Daily(SECRET, clock),
    )
    matchmaker = await create_matchmaker(
        MatchmakerSettings(host="127.0.0.1", port=0, table_addr=table.addr, tick_ms=50),
        registry=registry,
    )
    try:
        yield await start_gateway(
            matchmaker_addr=matchmaker.addr,
            table_addr=table.addr,
            bot_addr=bot_server.addr,
            archive=archive,
        )
    finally:
        await matchmaker.stop(0)
        await table.stop(0)


async def _ask(client: Client, message: dict[str, Any]) -> dict[str, Any]:
    await client.send(message)
    return await client.wait_for(message["type"], timeout=10)


async def _log(gateway: Running, table_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(gateway, f"/match/{table_id}.json"))
    assert response.status_code == 200, response.text
    log: dict[str, Any] = response.json()
    return log


async def _finished_entry(client: Client) -> dict[str, Any]:
    """The ``daily`` answer once the player's entry is filled in (the table service applies
    the result as the match is archived, within moments of its end)."""
    deadline = time.monotonic() + 20
    while True:
        answer = await _ask(client, {"type": "daily"})
        if answer["you"] is not None and answer["you"]["finished"]:
            return answer
        assert time.monotonic() < deadline, answer
        await asyncio.sleep(0.1)


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


async def test_a_profile_plays_the_daily_rack_once_and_its_entry_verifies_after_the_day(
    daily_gateway: Running, clock: Clock, tmp_path: Path
) -> None:
    today = utc_day(clock.now)
    async with Client(ws_url(daily_gateway)) as ann:
        made = await _ask(ann, {"type": "profile", "name": "Ann", "public": True})
        opened = await _ask(ann, {"type": "daily"})
        assert opened["day"] == today and opened["commitment"] == _commitment(today)
        yesterday = utc_day(clock.now - DAY_S)
        assert opened["previous"] == {
            "day": yesterday,
            "seed": _seed(yesterday),
            "commitment": _commitment(yesterday),
        }
        assert opened["you"] is None and opened["board"] == []

        await ann.send({"type": "play_daily"})
        seated = await ann.wait_for("seated", timeout=10)
        final = await play_match(ann, timeout=240)
        assert final["status"] == "finished"
        assert final["view"]["seed"] is None  # not until the day closes
        assert final["view"]["commitment"] == _commitment(today)
        table_id = seated["table_id"]
        seat = seated["seat"]

        answer = await _finished_entry(ann)
        score = final["view"]["scores"][seat]
        you = answer["you"]
        assert (you["score"], you["table_id"], you["place"]) == (score, table_id, 1)
        assert you["won"] == (final["view"]["winner"] == seat)
        (entry,) = answer["board"]
        assert entry == {
            "place": 1,
            "name": "Ann",
            "score": score,
            "own_turns": you["own_turns"],
            "table_id": table_id,
        }

        with pytest.raises(ServerError) as again:
            await _ask(ann, {"type": "play_daily"})
        assert again.value.code == "daily_played"
        with pytest.raises(ServerError) as rematch:  # one a day: no rematch either
            await ann.rematch()
        assert rematch.value.code == "no_rematch"

        hidden = await _log(daily_gateway, table_id)
        assert "seed" not in hidden and hidden["commitment"] == _commitment(today)
        assert made["id"] not in json.dumps(hidden)

        clock.now += DAY_S  # the day closes: its seed is out, and the entry checks
        after = await _ask(ann, {"type": "daily"})
        assert after["day"] == utc_day(clock.now) and after["board"] == []
        assert after["previous"] == {
            "day": today,
            "seed": _seed(today),
            "commitment": _commitment(today),
        }
    log = await _log(daily_gateway, table_id)
    assert log["seed"] == _seed(today) and log["commitment"] == _commitment(today)
    verdict = _rackem_verify(log, tmp_path / "daily.json")
    assert verdict["valid"] and verdict["finished"]
    assert verdict["scores"][seat] == score


async def test_the_daily_rack_needs_a_profile(daily_gateway: Running) -> None:
    async with Client(ws_url(daily_gateway)) as anonymous:
        answer = await _ask(anonymous, {"type": "daily"})  # anyone may look
        assert answer["you"] is None
        with pytest.raises(ServerError) as refused:
            await _ask(anonymous, {"type": "play_daily"})
        assert refused.value.code == "no_profile"
        for field in ("commitment", "board"):
            with pytest.raises(ServerError) as bad:
                await _ask(anonymous, {"type": "daily", field: []})
            assert bad.value.code == "bad_request"
