"""A profile under ``rackem up`` lives in the SQLite archive under ``--data``: it survives a
restart on that directory, with its key, name and the match it played."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

from rackem.client import Client, play_match
from tests.rackem.test_up import rackem_up


async def _ask(client: Client, message: dict[str, Any]) -> dict[str, Any]:
    await client.send(message)
    answer = await client.wait_for(message["type"], timeout=15)
    return answer


async def _history(client: Client, table_id: str) -> list[dict[str, Any]]:
    """The profile's history once it holds ``table_id`` (the table's archiver applies a
    finished match's result just after the match)."""
    for _ in range(100):
        matches: list[dict[str, Any]] = (await _ask(client, {"type": "history"}))["matches"]
        if any(m["table_id"] == table_id for m in matches):
            return matches
        await asyncio.sleep(0.1)
    raise AssertionError("the match never reached the profile's history")


async def test_a_profile_survives_rackem_up_restarting_on_its_data_dir(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    with rackem_up("--data", data) as (proc, url):
        async with Client(url) as client:
            made = await _ask(client, {"type": "profile", "name": "Ann", "public": True})
            seated = await client.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            assert (await play_match(client, timeout=60))["status"] == "finished"
            before = await _history(client, seated["table_id"])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    assert (Path(data) / "archive.sqlite3").is_file()
    with rackem_up("--data", data) as (proc, url):
        async with Client(url) as client:
            bound = await _ask(client, {"type": "profile", "key": made["key"]})
            assert (bound["id"], bound["name"], bound["public"]) == (made["id"], "Ann", True)
            assert bound["stats"]["played"] == 1
            assert (await _ask(client, {"type": "history"}))["matches"] == before
            assert before[0]["replay"] == f"/replay/{seated['table_id']}"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
