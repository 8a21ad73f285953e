"""Calls reach every server behind a name, also a server that came up after the channel
connected: what a headless Service gives the gateway's channel to the matchmakers and a
table's channel to the bots while the autoscaler adds pods.

``open_channel`` balances ``round_robin`` over what the name resolves to, and
``new_server``'s connections age (``max_connection_age``): the client dials again, its
resolver asks the DNS again, and finds the new server. The DNS here is the test's own
(``dns_server``), asked by gRPC's c-ares resolver, which answers the name with one
address and then with two, as a cluster's DNS answers a headless Service's name with its
ready pods. The servers are on 127.0.0.1 and 127.0.0.2, the same port (two pods).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc

from services.common.channels import OWN_CONNECTIONS, open_channel
from services.common.grpc_server import MAX_CONNECTION_AGE_MS, bind, new_server
from tests.services.common.dns_server import DnsServer, answer, dns_server

FIRST, SECOND = "127.0.0.1", "127.0.0.2"
AGE_MS = 300  # the servers' max_connection_age here; the services': MAX_CONNECTION_AGE_MS
# The resolver asks again at most this often (c-ares: 30 s by default, the services').
RESOLVER = (("grpc.dns_min_time_between_resolutions_ms", 100),)
Who = Callable[[bytes], Any]


def _answering_as(name: str) -> grpc.GenericRpcHandler:
    async def who(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return name.encode()

    return grpc.method_handlers_generic_handler(
        "test.Who", {"Name": grpc.unary_unary_rpc_method_handler(who)}
    )


@asynccontextmanager
async def _server(host: str, port: int, age_ms: int) -> AsyncIterator[int]:
    server = new_server(max_connection_age_ms=age_ms)
    server.add_generic_rpc_handlers((_answering_as(host),))
    bound = bind(server, host, port)
    await server.start()
    try:
        yield bound
    finally:
        await server.stop(None)


async def _answers(who: Who, seconds: float) -> dict[str, int]:
    """Which servers answered calls made one after another for ``seconds``, how often."""
    counts: dict[str, int] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        name = (await who(b"", timeout=5)).decode()
        counts[name] = counts.get(name, 0) + 1
        await asyncio.sleep(0.01)
    return counts


def _ours(target: str) -> grpc.aio.Channel:
    return open_channel(target, RESOLVER)


def _grpc_s_default(target: str) -> grpc.aio.Channel:
    """A channel as gRPC makes it by default (pick_first), with a pool of its own."""
    return grpc.aio.insecure_channel(target, options=[*OWN_CONNECTIONS, *RESOLVER])


async def _after_a_server_is_added(
    dns: DnsServer, age_ms: int, channel_to: Callable[[str], grpc.aio.Channel] = _ours
) -> dict[str, int]:
    """A channel to the name connects while the DNS names one server; a second comes up
    and the DNS names both: which answer the calls made in the next seconds."""
    async with (
        _server(FIRST, 0, age_ms) as port,
        channel_to(dns.authority("bot", port)) as channel,
    ):
        who = channel.unary_unary("/test.Who/Name")
        assert (await who(b"", timeout=5)) == FIRST.encode()
        async with _server(SECOND, port, age_ms):
            dns.addresses = (FIRST, SECOND)
            return await _answers(who, 3.0)


async def test_a_server_added_behind_the_name_gets_calls_once_connections_age() -> None:
    with dns_server([FIRST]) as dns:
        answers = await _after_a_server_is_added(dns, AGE_MS)
    assert set(answers) == {FIRST, SECOND}
    assert min(answers.values()) > sum(answers.values()) / 4  # spread, not a stray call


async def test_without_an_age_the_channel_never_asks_the_dns_again() -> None:
    """Why the servers age their connections: the same channel, servers that keep theirs."""
    with dns_server([FIRST]) as dns:
        answers = await _after_a_server_is_added(dns, age_ms=2**31 - 1)
    assert set(answers) == {FIRST}


async def test_without_round_robin_the_new_address_is_known_and_unused() -> None:
    """Why every channel balances: gRPC's default (pick_first) re-resolves on the age too,
    finds both servers and keeps to the first."""
    with dns_server([FIRST]) as dns:
        answers = await _after_a_server_is_added(dns, AGE_MS, _grpc_s_default)
        asked = dns.queries
    assert asked > 2  # asked again, more than once: the new address was known
    assert set(answers) == {FIRST}


async def test_calls_are_spread_over_every_address_given() -> None:
    async with (
        _server(FIRST, 0, MAX_CONNECTION_AGE_MS) as port,
        _server(SECOND, port, MAX_CONNECTION_AGE_MS),
        open_channel(f"ipv4:{FIRST}:{port},{SECOND}:{port}") as channel,
    ):
        who = channel.unary_unary("/test.Who/Name")
        await channel.channel_ready()
        answers = await _answers(who, 1.0)
    assert set(answers) == {FIRST, SECOND}
    assert abs(answers[FIRST] - answers[SECOND]) <= 2  # in turn


async def test_a_stream_outlives_its_connection_s_age() -> None:
    """A long stream (the gateway's ``Table.Link``, a waiting room's ``WatchLobby``) is
    never cut for its connection's age: only new calls go to a new connection."""

    async def echo(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request

    server = new_server(max_connection_age_ms=AGE_MS)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "test.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(echo)}
            ),
        )
    )
    port = bind(server, FIRST, 0)
    await server.start()
    try:
        async with open_channel(f"{FIRST}:{port}") as channel:
            stream = channel.stream_stream("/test.Echo/Stream")()
            deadline = time.monotonic() + 8 * AGE_MS / 1000
            sent = 0
            while time.monotonic() < deadline:
                await stream.write(b"%d" % sent)
                assert await stream.read() == b"%d" % sent
                sent += 1
                await asyncio.sleep(0.02)
            await stream.done_writing()
            assert await stream.code() == grpc.StatusCode.OK
            assert sent > 50
    finally:
        await server.stop(None)


def test_the_test_dns_answers_a_queries_only() -> None:
    """The helper itself: an A query gets each address, an AAAA query none."""

    def query(qtype: int) -> bytes:
        return (
            b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
            + b"\x03bot\x00"
            + qtype.to_bytes(2, "big")
            + b"\x00\x01"
        )

    a = answer(query(1), ["10.0.0.1", "10.0.0.2"])
    assert a[:2] == b"\x12\x34" and int.from_bytes(a[6:8], "big") == 2
    assert a.endswith(bytes([10, 0, 0, 2]))
    aaaa = answer(query(28), ["10.0.0.1"])
    assert int.from_bytes(aaaa[6:8], "big") == 0
