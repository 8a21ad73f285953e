"""Admission control: the lag monitor's states from explicit samples, then a real gateway
that is full or overloaded refusing newcomers while its games go on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from rackem.client import Client, choose_move
from services.common.running import Running
from services.gateway.admission import TICK_S, Admission
from services.gateway.metrics import Metrics

from .conftest import StartGateway, StartServices, http_url, ws_url

LIMIT = 0.25
WINDOW = 2.0
BUSY = {
    "type": "error",
    "code": "busy",
    "message": "the server is busy; try again in a moment",
}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def admission(
    max_connections: int = 0, limit: float = LIMIT, answer_limit: float = 0.0
) -> tuple[Admission, Clock, Metrics]:
    clock, metrics = Clock(), Metrics()
    subject = Admission(metrics, max_connections, limit, WINDOW, clock, answer_limit_s=answer_limit)
    return subject, clock, metrics


def feed(subject: Admission, clock: Clock, lag: float, ticks: int = 1) -> None:
    """``ticks`` monitor wake-ups, each ``lag`` seconds late."""
    for _ in range(ticks):
        clock.now += TICK_S + lag
        subject.observe(lag)


def gauge(metrics: Metrics, name: str) -> float | None:
    return metrics.registry.get_sample_value(name)


# -- the monitor's states, from explicit samples -------------------------------------------


def test_a_small_lag_is_not_overload() -> None:
    subject, clock, metrics = admission()
    feed(subject, clock, 0.002, ticks=50)
    assert not subject.overloaded
    assert subject.lag == pytest.approx(0.002, rel=0.01)
    assert gauge(metrics, "rackem_gateway_loop_lag_seconds") == pytest.approx(0.002, rel=0.01)
    assert gauge(metrics, "rackem_gateway_overloaded") == 0.0
    # The same samples, unsmoothed, in the histogram every service has.
    assert gauge(metrics, "rackem_event_loop_lag_seconds_count") == 50


def test_a_lone_hiccup_is_smoothed_away() -> None:
    subject, clock, _ = admission()
    feed(subject, clock, 0.002, ticks=10)
    feed(subject, clock, 0.3)  # above the limit once, then gone
    assert 0.002 < subject.lag < LIMIT
    feed(subject, clock, 0.002, ticks=10)
    assert not subject.overloaded


def test_sustained_lag_overloads_and_only_a_calm_window_ends_it() -> None:
    subject, clock, metrics = admission()
    feed(subject, clock, 0.4, ticks=5)
    assert subject.overloaded and subject.lag > LIMIT
    assert gauge(metrics, "rackem_gateway_overloaded") == 1.0
    ticks = 0
    while subject.lag > LIMIT:  # the smoothed lag comes down over a few samples
        feed(subject, clock, 0.0)
        ticks += 1
        assert ticks < 100
    calm_from = clock.now
    while subject.overloaded:
        feed(subject, clock, 0.0)
        ticks += 1
        assert ticks < 100
    assert WINDOW <= clock.now - calm_from < WINDOW + 2 * TICK_S
    assert gauge(metrics, "rackem_gateway_overloaded") == 0.0


def test_lag_back_above_the_limit_starts_the_calm_window_again() -> None:
    subject, clock, _ = admission()
    feed(subject, clock, 1.0)
    assert subject.overloaded
    while subject.lag > LIMIT:
        feed(subject, clock, 0.0)
    feed(subject, clock, 0.0, ticks=int(WINDOW / TICK_S) - 3)  # most of the window
    feed(subject, clock, 1.0)  # a relapse
    assert subject.overloaded
    while subject.lag > LIMIT:
        feed(subject, clock, 0.0)
    feed(subject, clock, 0.0, ticks=int(WINDOW / TICK_S) - 3)
    assert subject.overloaded  # the first calm stretch did not count
    feed(subject, clock, 0.0, ticks=5)
    assert not subject.overloaded


def test_a_zero_lag_limit_never_overloads_but_the_lag_is_still_measured() -> None:
    subject, clock, metrics = admission(limit=0.0)
    feed(subject, clock, 5.0, ticks=10)
    assert not subject.overloaded and subject.admits(0)
    assert gauge(metrics, "rackem_gateway_loop_lag_seconds") == pytest.approx(5.0, rel=0.01)


def answers(subject: Admission, clock: Clock, times: list[float], ticks: int = 1) -> None:
    """``ticks`` monitor wake-ups on time, each after moves answered in ``times`` seconds."""
    for _ in range(ticks):
        for took in times:
            subject.answered(took)
        feed(subject, clock, 0.0)


def test_tables_slow_to_answer_overload_a_gateway_whose_own_loop_is_quick() -> None:
    subject, clock, metrics = admission(answer_limit=LIMIT)
    answers(subject, clock, [0.004, 0.006, 0.005], ticks=20)
    assert not subject.overloaded and subject.answer == pytest.approx(0.005, rel=0.05)
    answers(subject, clock, [0.8, 1.2], ticks=40)  # the tables fall behind; the loop does not
    assert subject.overloaded and subject.lag == 0.0
    assert gauge(metrics, "rackem_gateway_table_answer_seconds") == pytest.approx(1.0, rel=0.05)
    ticks = 0
    while subject.overloaded:  # quick answers again, then a calm window
        answers(subject, clock, [0.005])
        ticks += 1
        assert ticks < 100
    assert ticks * TICK_S >= WINDOW


def test_one_slow_answer_among_many_quick_ones_is_not_overload() -> None:
    subject, clock, _ = admission(answer_limit=LIMIT)
    answers(subject, clock, [0.005] * 50, ticks=5)
    answers(subject, clock, [5.0] + [0.005] * 50)  # one move timed out at its deadline
    answers(subject, clock, [0.005] * 50, ticks=5)
    assert not subject.overloaded


def test_no_moves_is_calm_and_a_zero_answer_limit_never_overloads() -> None:
    subject, clock, _ = admission(answer_limit=LIMIT)
    answers(subject, clock, [2.0], ticks=10)
    assert subject.overloaded
    feed(subject, clock, 0.0, ticks=int(WINDOW / TICK_S) + 20)  # nothing answered: no signal
    assert not subject.overloaded
    off, off_clock, _ = admission(answer_limit=0.0)
    answers(off, off_clock, [5.0], ticks=20)
    assert not off.overloaded and off.answer == pytest.approx(5.0, rel=0.05)


def _refusals(metrics: Metrics) -> dict[str, float | None]:
    name = "rackem_gateway_admission_refusals_total"
    reasons = ("overloaded", "max_connections", "games_per_ip")
    return {r: metrics.registry.get_sample_value(name, {"reason": r}) for r in reasons}


def test_connections_are_admitted_under_the_limit_and_never_while_overloaded() -> None:
    subject, _, metrics = admission(max_connections=2)
    assert _refusals(metrics) == {"overloaded": 0, "max_connections": 0, "games_per_ip": 0}
    assert subject.admits(0) and subject.admits(1)
    assert not subject.admits(2)
    assert _refusals(metrics) == {"overloaded": 0, "max_connections": 1, "games_per_ip": 0}
    unlimited, unlimited_clock, unlimited_metrics = admission(max_connections=0)
    assert unlimited.admits(10**6)
    assert not unlimited.refuses_new()
    feed(unlimited, unlimited_clock, 1.0)
    assert not unlimited.admits(0)
    assert unlimited.refuses_new()
    assert _refusals(unlimited_metrics)["overloaded"] == 2


def test_overload_logs_one_event_when_it_starts_and_one_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    subject, clock, _ = admission(max_connections=1)
    with caplog.at_level(logging.INFO, logger="rackem.gateway"):
        feed(subject, clock, 0.5, ticks=30)
        for _ in range(1000):  # refusals are never logged
            assert not subject.admits(5)
        feed(subject, clock, 0.0, ticks=100)
    assert not subject.overloaded
    records = [r for r in caplog.records if r.name == "rackem.gateway"]
    assert [r.getMessage() for r in records] == ["overload_started", "overload_ended"]
    started, ended = (getattr(r, "fields", {}) for r in records)
    assert set(started) == {"lag_ms", "answer_ms"} and started["lag_ms"] > LIMIT * 1000
    assert set(ended) == {"lag_ms", "answer_ms", "seconds"} and ended["lag_ms"] < LIMIT * 1000


# -- a real gateway --------------------------------------------------------------------


async def get(server: Running, path: str) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        return await http.get(http_url(server, path))


async def until(
    server: Running, path: str, ok: Callable[[httpx.Response], bool], timeout: float = 30
) -> None:
    """Poll ``path`` until its response is ``ok``."""
    async with asyncio.timeout(timeout):
        while not ok(await get(server, path)):
            await asyncio.sleep(0.05)


def status(code: int) -> Callable[[httpx.Response], bool]:
    return lambda response: response.status_code == code


def holds(text: str) -> Callable[[httpx.Response], bool]:
    return lambda response: text in response.text


async def refusal(server: Running) -> tuple[int, str]:
    """Open a WebSocket that the gateway accepts and closes at once: its close code and reason."""
    async with connect(ws_url(server), proxy=None) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), timeout=10)
    frame = closed.value.rcvd
    assert frame is not None
    return frame.code, frame.reason


async def test_connections_past_max_connections_are_closed_with_1013_until_one_leaves(
    start_gateway: StartGateway,
) -> None:
    gateway = await start_gateway(max_connections=2)
    async with Client(ws_url(gateway)) as first, Client(ws_url(gateway)) as second:
        assert await refusal(gateway) == (1013, "server busy, try again shortly")
        assert (await first.ping())["type"] == "pong"  # the open ones stay open
        await first.close()
        await until(gateway, "/metrics", holds("rackem_gateway_connections 1.0"))
        async with Client(ws_url(gateway)) as third:
            assert (await third.ping())["type"] == "pong"
            assert (await second.ping())["type"] == "pong"
    text = (await get(gateway, "/metrics")).text
    assert 'rackem_gateway_dropped_total{reason="busy"} 1.0' in text
    assert "rackem_gateway_connections_accepted_total 3.0" in text


@contextlib.asynccontextmanager
async def stalled_loop() -> AsyncIterator[None]:
    """Block this event loop, the one the gateway runs in, 0.3 s at a time: real lag."""

    async def stall() -> None:
        while True:
            time.sleep(0.3)
            await asyncio.sleep(0.05)

    task = asyncio.create_task(stall())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_an_overloaded_gateway_refuses_newcomers_and_keeps_its_games_going(
    start_services: StartServices, start_gateway: StartGateway
) -> None:
    # Leases and heartbeats that outlast the stalls: the table stays where it is.
    services = await start_services(lease_ms=30_000, heartbeat_ttl_ms=30_000)
    gateway = await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        overload_lag_ms=50,
        overload_window_s=0.5,
    )
    async with Client(ws_url(gateway)) as ann, Client(ws_url(gateway)) as bob:
        await ann.create_table("Ann", {"players": 2}, level="easy", start_now=True)
        view = await ann.wait_view(lambda v: bool(v["legal"]))
        await until(gateway, "/readyz", status(200))

        async with stalled_loop():
            await until(gateway, "/readyz", status(503))
            assert (await get(gateway, "/readyz")).json() == {"ready": False}
            assert (await get(gateway, "/healthz")).status_code == 200
            for message in (
                {"type": "quick_match", "name": "Bob", "players": 2},
                {"type": "create_table", "name": "Bob", "start_now": True},
                {"type": "join", "code": "ABCDEF", "name": "Bob"},
            ):
                await bob.send(message)
                assert await bob.recv() == BUSY
            assert await refusal(gateway) == (1013, "server busy, try again shortly")
            moved = await ann.move(choose_move(view), version=view["version"])
            assert moved["version"] == view["version"] + 1
            assert (await ann.ping())["type"] == "pong"
            text = (await get(gateway, "/metrics")).text
            assert "rackem_gateway_overloaded 1.0" in text
            assert 'rackem_gateway_dropped_total{reason="busy"} 1.0' in text
            assert 'rackem_gateway_errors_total{code="busy"} 3.0' in text

        await until(gateway, "/readyz", status(200))
        assert "rackem_gateway_overloaded 0.0" in (await get(gateway, "/metrics")).text
        seated = await bob.create_table("Bob", {"players": 2}, level="easy", start_now=True)
        assert seated["table_id"] != ann.table_id
        async with Client(ws_url(gateway)) as newcomer:
            assert (await newcomer.ping())["type"] == "pong"
