"""What the public port shows, and to whom: the allowed Host names (DNS rebinding), /metrics
only on the metrics port, and X-Forwarded-For believed from the configured proxies only."""

from __future__ import annotations

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from rackem.client import Client
from services.common.running import Running
from services.gateway.server import create_server
from tests.system.raw_ws import RawWebSocket

from .conftest import StartGateway, http_url, settings, ws_url


async def get(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        return await http.get(url, headers=headers)


async def test_only_the_allowed_hosts_are_answered_but_probes_come_by_any_name(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(allowed_hosts=("127.0.0.1", "localhost"))
    assert (await get(http_url(gateway, "/"))).status_code == 200
    assert (await get(http_url(gateway, "/"), Host="localhost:1234")).status_code == 200
    refused = await get(http_url(gateway, "/"), Host="evil.example")
    assert (refused.status_code, refused.text) == (400, "Invalid host header")
    match_log = await get(http_url(gateway, "/match/t0123456789abcdef.json"), Host="evil.example")
    assert match_log.status_code == 400
    for probe in ("/healthz", "/readyz"):  # kubelet probes by the pod's address
        assert (await get(http_url(gateway, probe), Host="10.1.2.3:8000")).status_code != 400
    # The shape of DNS rebinding: the attacker's page, same-origin by its own Host.
    with pytest.raises(InvalidStatus) as caught:
        async with connect(
            ws_url(gateway),
            proxy=None,
            origin="http://evil.example",  # type: ignore[arg-type]
            additional_headers={"Host": "evil.example"},
        ):
            pass
    assert caught.value.response.status_code == 400
    async with Client(ws_url(gateway), origin=f"http://127.0.0.1:{gateway.port}") as client:
        assert (await client.ping())["type"] == "pong"


async def test_an_empty_allowed_hosts_answers_any_host(gateway: Running) -> None:
    assert (await get(http_url(gateway, "/"), Host="rack.example")).status_code == 200


async def test_metrics_are_served_on_their_own_port_only(gateway: Running) -> None:
    assert gateway.metrics_port not in (0, gateway.port)
    public = await get(f"http://127.0.0.1:{gateway.port}/metrics")
    assert public.status_code == 404
    private = await get(f"http://127.0.0.1:{gateway.metrics_port}/metrics")
    assert private.status_code == 200
    assert "rackem_gateway_connections" in private.text
    assert (await get(f"http://127.0.0.1:{gateway.metrics_port}/")).status_code == 404


async def test_the_metrics_port_must_not_be_the_public_one() -> None:
    with pytest.raises(ValueError, match="METRICS_PORT"):
        await create_server(settings(port=18_765, metrics_port=18_765))


async def games_left_after_the_cap(port: int, spoofed: str) -> list[str]:
    """With a cap of one game per address and it used up: what each of three connections
    claiming to come from another address (``X-Forwarded-For``) is told."""
    codes = []
    for i in range(3):
        ws = await RawWebSocket.open(port, headers={"X-Forwarded-For": f"{spoofed}{i}"})
        ws.send_text('{"type": "hello", "version": 1}')
        ws.send_text('{"type": "quick_match", "name": "Ann", "players": 2}')
        await ws.flush()
        assert await ws.recv() is not None  # welcome
        answer = await ws.recv()
        assert answer is not None
        codes.append(answer.split('"code":"')[1].split('"')[0])
        await ws.aclose()
    return codes


async def test_forwarded_addresses_are_not_believed_by_default(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(games_per_ip=1)
    async with Client(ws_url(gateway)) as first:
        await first.send({"type": "quick_match", "name": "Ann", "players": 2})
        assert (await first.recv(timeout=10))["code"] == "unavailable"  # a game, counted
    assert await games_left_after_the_cap(gateway.port, "198.51.100.") == ["rate_limited"] * 3


async def test_forwarded_addresses_are_believed_from_a_configured_proxy(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(games_per_ip=1, forwarded_allow_ips="127.0.0.1")
    codes = await games_left_after_the_cap(gateway.port, "198.51.100.")
    assert codes == ["unavailable"] * 3  # three addresses, each with its own game
