"""Which address to dial a server at: one answer for every wildcard, every service."""

from __future__ import annotations

import socket

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import open_channel
from services.common.dial import (
    LOOPBACK,
    dial_addr,
    dial_host,
    host_port,
    is_wildcard,
    socket_host,
)
from services.common.grpc_server import add_health, bind, new_server, set_serving


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "[::]"])
def test_every_wildcard_is_dialled_on_the_loopback(host: str) -> None:
    assert is_wildcard(host)
    assert dial_host(host) == LOOPBACK
    assert dial_addr(host, 50051) == f"{LOOPBACK}:50051"


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.7", "localhost", "table-0.table", "::1"])
def test_one_address_is_dialled_where_it_listens(host: str) -> None:
    assert not is_wildcard(host)
    assert dial_host(host) == host


def test_host_port_brackets_an_ipv6_address_once() -> None:
    assert host_port("::", 0) == "[::]:0"
    assert host_port("[::]", 0) == "[::]:0"
    assert host_port("10.0.0.7", 1) == "10.0.0.7:1"


def test_a_socket_binds_an_ipv6_address_without_brackets() -> None:
    assert [socket_host(h) for h in ("[::]", "::", "[::1]", "0.0.0.0", "")] == [
        "::",
        "::",
        "::1",
        "0.0.0.0",
        "",
    ]


def test_an_ipv6_address_is_dialled_in_brackets() -> None:
    assert dial_addr("::1", 8000) == "[::1]:8000"
    assert dial_addr("[::1]", 8000) == "[::1]:8000"
    assert dial_addr("fd00::7", 50052) == "[fd00::7]:50052"
    assert dial_addr("table-0.table", 50052) == "table-0.table:50052"


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "[::]", "127.0.0.1", "::1", "[::1]"])
async def test_a_grpc_server_binds_host_as_given_and_answers_at_the_address_dialled(
    host: str,
) -> None:
    if "::1" in host and not _has_ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback")
    if "::" in host and not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    server = new_server()
    health = add_health(server, [])
    port = bind(server, host, 0)
    await server.start()
    await set_serving(health, [], True)
    try:
        async with open_channel(dial_addr(host, port)) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=10
            )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await server.stop(None)
