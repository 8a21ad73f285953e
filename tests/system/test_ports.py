"""Every service of the stack binds port 0 and reports the port it got: no port is picked
by the tests and bound later by a service (another server could take it meanwhile, as
a gRPC server once did a gateway's: its /readyz answered with an HTTP/2 frame)."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import OWN_CONNECTIONS
from services.common.redis_client import connect
from services.common.registry import RedisRegistry

from .stack import Service, Stack


def _environ(service: Service) -> dict[str, str]:
    """The environment the service's process was started with (Linux's /proc)."""
    assert service.process is not None
    raw = Path(f"/proc/{service.process.pid}/environ").read_bytes()
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {key.decode(): value.decode(errors="replace") for key, _, value in pairs}


def _listening(service: Service) -> dict[str, object]:
    return next(r for r in service.records() if r.get("event") == "listening")


def test_every_service_binds_port_0_and_serves_on_the_port_it_logs(stack: Stack) -> None:
    assert [s.name for s in stack.services.values()] == ["bot", "table", "matchmaker", "gateway"]
    for service in stack.services.values():
        assert _environ(service)["PORT"] == "0"
        told = _listening(service)
        assert told["port"] == service.port != 0
        assert set(told) <= {"ts", "level", "service", "event", "port", "metrics_port"}
        assert _environ(service)["METRICS_PORT"] == "0"
        assert told["metrics_port"] == service.metrics_port not in (0, service.port)
        if service.name == "gateway":
            for url in (f"{stack.url}/readyz", stack.metrics_urls["gateway"]):
                with urllib.request.urlopen(url, timeout=5) as reply:
                    assert reply.status == 200
            continue
        with grpc.insecure_channel(service.addr, options=OWN_CONNECTIONS) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_the_addresses_services_dial_are_the_ports_the_others_bound(stack: Stack) -> None:
    bot, table, mm, gateway = (
        stack.services[n] for n in ("bot", "table0", "matchmaker", "gateway")
    )
    assert _environ(table)["BOT_ADDR"] == bot.addr
    assert _environ(mm)["TABLE_ADDR"] == table.addr
    assert (_environ(gateway)["MATCHMAKER_ADDR"], _environ(gateway)["TABLE_ADDR"]) == (
        mm.addr,
        table.addr,
    )


async def test_a_replica_on_port_0_advertises_the_address_it_listens_on(stack: Stack) -> None:
    table = stack.services["table0"]
    assert "ADVERTISE_ADDR" not in _environ(table)  # its default: HOST and the port bound
    serving = next(r for r in table.records() if r.get("event") == "table_serving")
    assert serving["addr"] == table.addr
    client = connect(stack.redis_url)
    try:
        async with asyncio.timeout(10):
            replicas = await RedisRegistry(client).live()
    finally:
        await client.aclose()
    assert [(r.id, r.addr) for r in replicas] == [("replica-0", table.addr)]
