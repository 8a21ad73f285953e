"""Running the gateway: a port, a clean stop that sends clients elsewhere, and SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from rackem.client import Client, ConnectionLost
from services.common.dial import dial_host, socket_host
from services.gateway.server import _listen, create_server

from .conftest import NOWHERE, StartGateway, settings, ws_url


async def test_stopping_closes_every_socket_with_1001(start_gateway: StartGateway) -> None:
    gateway = await start_gateway()
    async with Client(ws_url(gateway)) as first, Client(ws_url(gateway)) as second:
        await gateway.stop()
        for client in (first, second):
            with pytest.raises(ConnectionLost) as lost:
                await client.recv(timeout=5)
            assert lost.value.code == 1001


async def test_a_port_in_use_is_an_error_at_start() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            await create_server(settings(port=port))


def test_rackem_serve_gateway_serves_until_sigterm_and_exits_cleanly() -> None:
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "METRICS_PORT": "0",
        "MATCHMAKER_ADDR": NOWHERE,
        "TABLE_ADDR": NOWHERE,
    }
    command = [sys.executable, "-m", "rackem.cli", "serve", "gateway"]
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            record = json.loads(line)
            if record["event"] == "listening":
                assert record["service"] == "gateway"
                break
        with socket.create_connection(("127.0.0.1", record["port"]), timeout=5):
            pass
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        assert proc.wait(timeout=10) == 0
    events = [json.loads(line)["event"] for line in rest.splitlines()]
    assert events[-1] == "stopped"


@pytest.mark.parametrize("host", ["", "0.0.0.0", "127.0.0.1", "::", "[::]", "::1", "[::1]"])
def test_the_gateway_listens_on_host_as_every_service_takes_it(host: str) -> None:
    """``HOST`` means what it means to the gRPC services: IPv6 with or without brackets."""
    if ":" in host and not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    sock = _listen(host, 0, 8)
    try:
        port = sock.getsockname()[1]
        with socket.create_connection((socket_host(dial_host(host)), port), timeout=5):
            pass
    finally:
        sock.close()


async def test_accepted_connections_have_nagles_algorithm_off() -> None:
    """Small frames written back to back (a view, then ``moved``) must not wait for an ACK."""
    sock = _listen("127.0.0.1", 0, 8)
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("socket")
            accepted.set_result(peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
        assert await accepted == 1
        writer.close()
