"""Every service's ``Running`` and ``serve``: the shutdown undoes the start, last first, once."""

from __future__ import annotations

import asyncio
import logging
import os
import signal

import pytest

from services.common import running
from services.common.running import Running, Shutdown

log = logging.getLogger("rackem.test")


class Steps:
    """A shutdown's steps as they run: ``(name, grace)`` in order."""

    def __init__(self) -> None:
        self.done: list[tuple[str, float]] = []

    def step(self, name: str, fails: bool = False) -> running.Step:
        async def undo(grace: float) -> None:
            await asyncio.sleep(0)
            self.done.append((name, grace))
            if fails:
                raise RuntimeError(name)

        return undo


async def test_a_shutdown_undoes_the_last_thing_started_first_with_the_grace() -> None:
    steps, shutdown = Steps(), Shutdown()
    closed: list[str] = []

    async def close() -> None:
        closed.append("client")

    shutdown.push_close(close)
    shutdown.push(steps.step("server"))
    shutdown.push(steps.step("readiness"))
    await shutdown.run(2.5)
    assert steps.done == [("readiness", 2.5), ("server", 2.5)]
    assert closed == ["client"]
    await shutdown.run(2.5)  # each step once
    assert len(steps.done) == 2 and closed == ["client"]


async def test_a_step_that_fails_is_logged_the_rest_run_and_the_first_failure_is_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    steps, shutdown = Steps(), Shutdown()
    shutdown.push(steps.step("client"))
    shutdown.push(steps.step("server", fails=True))
    shutdown.push(steps.step("hand-over", fails=True))
    with pytest.raises(RuntimeError, match="hand-over"):
        await shutdown.run(1)
    assert [name for name, _ in steps.done] == ["hand-over", "server", "client"]
    assert [r.getMessage() for r in caplog.records].count("stop_step_failed") == 2


async def test_a_start_that_fails_undoes_what_it_had_started_with_no_grace() -> None:
    steps = Steps()
    with pytest.raises(OSError, match="cannot bind"):
        async with Shutdown() as shutdown:
            shutdown.push(steps.step("client"))
            shutdown.push(steps.step("server"))
            raise OSError("cannot bind 127.0.0.1:1")
    assert steps.done == [("server", 0), ("client", 0)]


async def test_a_start_that_succeeds_undoes_nothing_until_stopped() -> None:
    steps = Steps()
    async with Shutdown() as shutdown:
        shutdown.push(steps.step("server"))
    assert steps.done == []
    await shutdown.run(0)
    assert steps.done == [("server", 0)]


def _running(steps: Steps, grace: float = 4.0) -> Running[str]:
    shutdown = Shutdown()
    shutdown.push(steps.step("server"))
    return Running(
        7,
        "127.0.0.1:7",
        "what this process reaches",
        shutdown,
        grace=grace,
        log=log,
        stopping="thing_stopping",
        stopped="thing_stopped",
        fields={"port": 7},
    )


async def test_stop_uses_the_service_s_own_grace_unless_given_one() -> None:
    first, second = Steps(), Steps()
    await _running(first, grace=4.0).stop()
    await _running(second, grace=4.0).stop(0.5)
    assert first.done == [("server", 4.0)]
    assert second.done == [("server", 0.5)]


async def test_stop_runs_once_and_a_second_stop_waits_for_the_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem.test")
    steps = Steps()
    started = _running(steps)
    assert (started.port, started.addr, started.service) == (7, "127.0.0.1:7", started.service)
    await asyncio.gather(started.stop(), started.stop(1))
    await started.stop()
    assert steps.done == [("server", 4.0)]
    told = [(r.getMessage(), getattr(r, "fields", None)) for r in caplog.records]
    assert told == [("thing_stopping", {"port": 7}), ("thing_stopped", {"port": 7})]


async def test_stopped_is_logged_even_when_a_step_fails(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="rackem.test")
    shutdown = Shutdown()
    shutdown.push(Steps().step("server", fails=True))
    failing = Running(1, "127.0.0.1:1", None, shutdown, grace=0, log=log)
    with pytest.raises(RuntimeError):
        await failing.stop()
    assert [r.getMessage() for r in caplog.records][-1] == "stopped"


async def test_serve_stops_the_service_on_sigterm() -> None:
    steps = Steps()
    started = asyncio.Event()

    async def start() -> Running[str]:
        started.set()
        return _running(steps, grace=3.0)

    serving = asyncio.create_task(running.serve(start()))
    await started.wait()
    await asyncio.sleep(0)
    assert not serving.done()
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(serving, 30)
    assert steps.done == [("server", 3.0)]


async def test_a_signal_while_the_service_starts_stops_it_once_started() -> None:
    steps = Steps()

    async def start() -> Running[str]:
        os.kill(os.getpid(), signal.SIGINT)  # handled: it does not interrupt the test
        await asyncio.sleep(0.01)
        return _running(steps, grace=1.0)

    await asyncio.wait_for(running.serve(start()), 30)
    assert steps.done == [("server", 1.0)]


@pytest.mark.parametrize(
    ("metrics_port", "ports"), [(0, {"port": 7}), (9, {"port": 7, "metrics_port": 9})]
)
@pytest.mark.parametrize("log_level", [logging.INFO, logging.WARNING])
async def test_serve_logs_the_ports_the_service_listens_on_once_it_serves(
    caplog: pytest.LogCaptureFixture, metrics_port: int, ports: dict[str, int], log_level: int
) -> None:
    """What a caller that started the process with PORT=0 reads (tests/system/stack.py),
    whatever LOG_LEVEL says (a bench runs its services at WARNING)."""
    caplog.set_level(logging.INFO, logger="rackem.running")
    logging.getLogger("rackem.running").setLevel(log_level)  # the handler still takes INFO
    steps = Steps()

    async def start() -> Running[str]:
        os.kill(os.getpid(), signal.SIGTERM)  # stops it as soon as it serves
        await asyncio.sleep(0.01)
        shutdown = Shutdown()
        shutdown.push(steps.step("server"))
        return Running(7, "127.0.0.1:7", "", shutdown, grace=0, log=log, metrics_port=metrics_port)

    await asyncio.wait_for(running.serve(start()), 30)
    told = [(r.getMessage(), getattr(r, "fields", None)) for r in caplog.records]
    assert told[0] == ("listening", ports)
    assert steps.done == [("server", 0)]
