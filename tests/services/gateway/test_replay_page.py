"""/replay/{table_id}: the replay viewer's page, over a real socket, running and finished."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx

from rackcore import verify
from rackem.client import Client, choose_move

from .conftest import Services, StartGateway, http_url

STATIC = Path(__file__).resolve().parents[3] / "services/gateway/static"
PAGE = (STATIC / "replay.html").read_text()


def the_page(text: str) -> bool:
    """``replay.html`` as the site sends it: its files under the page's version."""
    return re.sub(r'(href|src)="/v/[0-9a-f]{12}/', r'\1="/', text) == PAGE and "/v/" in text


async def test_the_replay_page_is_served_for_any_table_and_reveals_nothing(
    services: Services, start_gateway: StartGateway
) -> None:
    gateway = await start_gateway(
        matchmaker_addr=services.matchmaker.addr, table_addr=services.table.addr
    )
    async with (
        Client(http_url(gateway, "")) as client,
        httpx.AsyncClient(trust_env=False, timeout=10) as http,
    ):
        seated = await client.create_table("Ann", {"target": 50}, level="easy", start_now=True)
        table_id = seated["table_id"]
        view = await client.wait_view(lambda v: bool(v["legal"]))
        await client.move(choose_move(view), version=view["version"])

        # while the match runs: the same static page, and no log to fetch
        running = await http.get(http_url(gateway, f"/replay/{table_id}"))
        assert running.status_code == 200
        assert running.headers["content-type"].startswith("text/html")
        assert the_page(running.text)
        assert running.headers["cache-control"] == "no-cache"
        assert '<h1 id="replay-title">' in running.text
        assert (await http.get(http_url(gateway, f"/match/{table_id}.json"))).status_code == 404

        # once it is over (the seat left to the computer): the log the page replays
        await client.leave()
        async with asyncio.timeout(30):
            while (
                log := await http.get(http_url(gateway, f"/match/{table_id}.json"))
            ).status_code != 200:
                await asyncio.sleep(0.1)
        assert verify(log.json())["valid"]
        assert log.json()["seed"] not in running.text
        finished = await http.get(http_url(gateway, f"/replay/{table_id}"))
        assert (finished.status_code, finished.text) == (200, running.text)
        again = await http.get(
            http_url(gateway, f"/replay/{table_id}"),
            headers={"if-none-match": running.headers["etag"]},
        )
        assert again.status_code == 304

        # the file viewer, an unknown id (the page says so), and what cannot be an id
        for path in ("/replay/", "/replay", "/replay/t0123456789abcdef"):
            response = await http.get(http_url(gateway, path))
            assert (response.status_code, response.text) == (200, running.text), path
        bad = await http.get(http_url(gateway, "/replay/no%20such%21"))
        assert (bad.status_code, bad.text) == (404, running.text)


async def test_without_the_viewer_in_static_dir_the_route_is_not_found(
    start_gateway: StartGateway, tmp_path: Path
) -> None:
    gateway = await start_gateway(static_dir=str(tmp_path))
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        response = await http.get(http_url(gateway, "/replay/t0123456789abcdef"))
    assert response.status_code == 404
