"""The gateway's HTTP surface and WebSocket handshake, over a real socket."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from rackem.client import Client
from services.common.grpc_server import add_health, bind, new_server, set_serving

from .conftest import StartGateway, http_url, ws_url


@pytest.fixture
async def grpc_addr() -> AsyncIterator[str]:
    """A real gRPC server (standard health only) to point the gateway's channels at."""
    server = new_server()
    health = add_health(server, [])
    port = bind(server, "127.0.0.1", 0)
    await server.start()
    await set_serving(health, [], True)
    yield f"127.0.0.1:{port}"
    await server.stop(None)


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        return await http.get(url)


async def test_healthz_answers_while_the_process_is_up(start_gateway: StartGateway) -> None:
    gateway = await start_gateway()
    response = await get(http_url(gateway, "/healthz"))
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


async def test_readyz_says_whether_this_gateway_can_serve_not_whether_its_backends_do(
    start_gateway: StartGateway, grpc_addr: str
) -> None:
    """A matchmaker restarting (here: nothing at its address) leaves every gateway ready:
    it serves the web client and its sessions; overload makes it unready
    (test_admission.py)."""
    alone = await start_gateway()  # its matchmaker and table addresses answer nothing
    response = await get(http_url(alone, "/readyz"))
    assert (response.status_code, response.json()) == (200, {"ready": True})
    up = await start_gateway(matchmaker_addr=grpc_addr, table_addr=grpc_addr)
    response = await get(http_url(up, "/readyz"))
    assert (response.status_code, response.json()) == (200, {"ready": True})


async def test_metrics_count_connections_and_errors_per_app(start_gateway: StartGateway) -> None:
    first = await start_gateway()
    second = await start_gateway()  # a registry of its own: no clash, no shared counts
    async with Client(ws_url(first)) as client:
        await client.send_raw("nope")
        await client.recv()
        text = (await get(http_url(first, "/metrics"))).text
        assert "rackem_gateway_connections 1.0" in text
        assert 'rackem_gateway_errors_total{code="bad_frame"} 1.0' in text
    other = await get(http_url(second, "/metrics"))
    assert other.headers["content-type"].startswith("text/plain")
    assert "rackem_gateway_connections_accepted_total 0.0" in other.text
    assert "rackem_gateway_move_latency_seconds_bucket" in other.text


async def test_metrics_time_the_garbage_collectors_pauses(start_gateway: StartGateway) -> None:
    gateway = await start_gateway()
    gc.collect(0)
    gc.collect(2)
    text = (await get(http_url(gateway, "/metrics"))).text
    for generation in ("0", "2"):
        counts = [
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith(
                f'rackem_gateway_gc_pause_seconds_count{{generation="{generation}"}}'
            )
        ]
        assert counts and counts[0] >= 1, generation


async def test_a_match_log_needs_a_finished_match(start_gateway: StartGateway) -> None:
    gateway = await start_gateway()
    response = await get(http_url(gateway, "/match/no%20such.json"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    response = await get(http_url(gateway, "/match/t0123456789abcdef.json"))
    assert response.status_code == 503  # nothing answers at TABLE_ADDR here
    assert response.json() == {
        "error": {"code": "unavailable", "message": "a service is unavailable; try again"}
    }


async def test_the_web_client_is_served_at_the_root(
    start_gateway: StartGateway, tmp_path: Path
) -> None:
    (tmp_path / "index.html").write_text("<title>rackem</title>", encoding="utf-8")
    gateway = await start_gateway(static_dir=str(tmp_path))
    response = await get(http_url(gateway, "/"))
    assert (response.status_code, response.text) == (200, "<title>rackem</title>")
    assert (await get(http_url(gateway, "/missing.js"))).status_code == 404


async def test_browsers_from_other_origins_need_the_allowlist(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(allowed_origins=("https://play.example",))
    url = ws_url(gateway)
    for origin in (None, "https://play.example", f"http://127.0.0.1:{gateway.port}"):
        async with Client(url, origin=origin) as client:
            assert client.welcome is not None
    with pytest.raises(InvalidStatus) as refused:
        async with connect(url, origin="https://evil.example", proxy=None):  # type: ignore[arg-type]
            pass
    assert refused.value.response.status_code == 403


async def test_without_an_allowlist_only_the_same_origin_is_allowed(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway()
    async with Client(ws_url(gateway), origin=f"http://127.0.0.1:{gateway.port}") as client:
        assert client.welcome is not None
    with pytest.raises(InvalidStatus):
        async with connect(ws_url(gateway), origin="http://127.0.0.1:1", proxy=None):  # type: ignore[arg-type]
            pass
