"""What every service's ``create_server`` returns, and how every service's process serves.

``Running`` is a started service, the same for all four: the ``port`` it listens on,
the ``addr`` to dial it at (``services.common.dial``), ``service`` — what callers in
this same process reach (``rackem up``, tests; ``None`` when there is nothing to
reach) — and ``stop(grace)``, its graceful shutdown.

A service's shutdown is the steps it took to start, undone in the reverse order
(as ``contextlib.AsyncExitStack`` does): ``create_server`` pushes onto a ``Shutdown``
each thing it starts (a client, the server, its readiness) as it starts it, so a
failure half-way through undoes what had started, and ``stop`` later undoes it all:
readiness off first, then the service's own hand-over, then the server, then its
clients. ``serve`` is every service's ``serve``: SIGTERM or SIGINT, handled from before
the port opens, stops it with its own grace; once the service serves, it logs
``listening`` with the ports it bound (``port``, and ``metrics_port`` if it has one), so
that whoever started the process with ``PORT=0`` learns its port from the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from types import TracebackType
from typing import Any, Generic, TypeVar

from services.common.logs import event

__all__ = ["Running", "Shutdown", "Step", "serve"]

T = TypeVar("T")
Step = Callable[[float], Awaitable[object]]  # one step of a shutdown, given the grace (s)

log = logging.getLogger("rackem.running")


class Shutdown:
    """What a starting service has to undo, the last thing started undone first.

    ``async with Shutdown() as shutdown:`` around the start undoes, with no grace,
    whatever was pushed if the start fails; ``run(grace)`` undoes it all later.
    """

    def __init__(self) -> None:
        self._steps: list[Step] = []

    def push(self, step: Step) -> None:
        """Undo ``step`` at shutdown, before everything pushed earlier (given the grace)."""
        self._steps.append(step)

    def push_close(self, close: Callable[[], Awaitable[object]]) -> None:
        """Call ``close()`` at shutdown, before everything pushed earlier (no grace needed)."""
        self._steps.append(lambda _grace: close())

    async def run(self, grace: float) -> None:
        """Every step, the last pushed first, each once. A step that fails is logged and
        the rest still run; the first failure is raised once they have."""
        failure: BaseException | None = None
        while self._steps:
            step = self._steps.pop()
            try:
                await step(grace)
            except Exception as exc:
                event(log, "stop_step_failed", logging.ERROR, error_type=type(exc).__name__)
                failure = failure or exc
        if failure is not None:
            raise failure

    async def __aenter__(self) -> Shutdown:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            with contextlib.suppress(Exception):  # the start's own failure is the one raised
                await self.run(0)


class Running(Generic[T]):
    """A started service: ``port``, ``addr`` to dial, ``service`` for this process,
    ``metrics_port`` (0 unless it serves /metrics on a port of its own), and
    ``await stop(grace)``.

    ``stop`` runs the service's ``Shutdown`` once (a second call waits for the first),
    with ``grace`` seconds for calls in flight to finish, by default the service's own
    (its settings); it logs ``stopping`` (if named) before and ``stopped`` after, with
    ``fields``, on the service's logger.
    """

    def __init__(
        self,
        port: int,
        addr: str,
        service: T,
        shutdown: Shutdown,
        *,
        grace: float,
        log: logging.Logger,
        stopping: str | None = None,
        stopped: str = "stopped",
        fields: Mapping[str, Any] | None = None,
        metrics_port: int = 0,
    ) -> None:
        self.port = port
        self.addr = addr
        self.service = service
        self.metrics_port = metrics_port
        self.grace = grace
        self._shutdown = shutdown
        self._log = log
        self._events = (stopping, stopped)
        self._fields = dict(fields or {})
        self._stop: asyncio.Future[None] | None = None

    async def stop(self, grace: float | None = None) -> None:
        """Stop gracefully: readiness off, hand-over, the server, its clients."""
        if self._stop is None:
            self._stop = asyncio.ensure_future(self._run(self.grace if grace is None else grace))
        await asyncio.shield(self._stop)

    async def _run(self, grace: float) -> None:
        stopping, stopped = self._events
        if stopping is not None:
            event(self._log, stopping, **self._fields)
        try:
            await self._shutdown.run(grace)
        finally:
            event(self._log, stopped, **self._fields)


async def serve(start: Coroutine[Any, Any, Running[Any]]) -> None:
    """Run the service ``start`` starts until SIGTERM or SIGINT, then stop it with its
    own grace. The signals are handled from before its port opens: one that comes while
    it starts stops it as soon as it has. Once it serves, ``listening`` is logged with the
    ports it bound (a port setting of 0 binds any free one: this line says which)."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, signalled.set)
    try:
        running = await start
        _announce(running)
        try:
            await signalled.wait()
        finally:
            await running.stop()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def _announce(running: Running[Any]) -> None:
    """Log ``listening`` whatever ``LOG_LEVEL`` filters (its record is handed to the
    handlers directly): whoever started the process with ``PORT=0`` reads its port here."""
    fields = _ports(running)
    record = log.makeRecord(
        log.name, logging.INFO, __file__, 0, "listening", (), None, extra={"fields": fields}
    )
    log.handle(record)


def _ports(running: Running[Any]) -> dict[str, int]:
    """The ports ``running`` listens on, as ``listening`` logs them (a port, never a host)."""
    ports = {"port": running.port}
    if running.metrics_port:
        ports["metrics_port"] = running.metrics_port
    return ports
