"""The matchmaker's process: ``create_server`` → ``Running``, ``serve``, ``main``.

``create_server(settings, store=None, registry=None)`` builds what it is not given: the
Redis store and registry from ``REDIS_URL``, or the memory ones when it is unset.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Mapping

from services._gen.rackem.v1 import matchmaker_pb2_grpc
from services.common import logs, loop, running
from services.common.archive import Archive, data_file
from services.common.cancelling import cancel_until_done
from services.common.dial import dial_addr
from services.common.grpc_metrics import client_interceptors, server_interceptors
from services.common.grpc_server import add_health, bind, new_server, set_serving
from services.common.logs import event
from services.common.metrics_http import check_port, start_metrics
from services.common.redis_client import Durability, connect
from services.common.redis_metrics import RedisOps
from services.common.registry import REGISTRY_OPS, MemoryRegistry, RedisRegistry, Registry
from services.common.running import Running, Shutdown
from services.common.settings import from_env
from services.matchmaker.codes import CodeSource, new_code
from services.matchmaker.metrics import MatchmakerMetrics
from services.matchmaker.placement import Placer
from services.matchmaker.records import Timings
from services.matchmaker.seating import Matchmaker
from services.matchmaker.service import MatchmakerService
from services.matchmaker.servicer import SERVICE_NAME, MatchmakerServicer
from services.matchmaker.settings import MatchmakerSettings
from services.matchmaker.starter import Starter
from services.matchmaker.store import Store
from services.matchmaker.store.memory import MemoryStore
from services.matchmaker.store.redis import OPS, RedisStore
from services.matchmaker.table_client import CreateTable
from services.matchmaker.watchers import LobbyWatchers

__all__ = ["SERVICE_NAME", "create_server", "main", "serve"]

log = logging.getLogger("rackem.matchmaker")


def _wall_ms() -> int:
    return int(time.time() * 1000)


async def _end(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` until it ends (services/common/cancelling.py); log if it failed."""
    await cancel_until_done(task)
    if not task.cancelled() and task.exception() is not None:
        event(log, "task_failed", logging.ERROR, error_type=type(task.exception()).__name__)


async def create_server(
    settings: MatchmakerSettings,
    store: Store | None = None,
    registry: Registry | None = None,
    *,
    codes: CodeSource = new_code,
    local_tables: Mapping[str, CreateTable] | None = None,
) -> Running[MatchmakerService]:
    """Build, bind and start the matchmaker (port 0 binds any free port). ``codes`` makes
    candidate room codes (tests inject one that repeats, to force collisions);
    ``local_tables``: table replicas in this process, by address, called directly.
    /metrics is served on ``settings.metrics_port`` if set (``Running.metrics_port``)."""
    check_port(settings.metrics_port, settings.port)
    metrics = MatchmakerMetrics()
    async with Shutdown() as shutdown:
        if store is None or registry is None:
            if settings.redis_url:
                client = connect(settings.redis_url)
                shutdown.push_close(client.aclose)
                ops = RedisOps((*OPS, *REGISTRY_OPS), metrics.registry)
                durability = Durability(settings.redis_wait_replicas, settings.redis_wait_ms)
                store = store or RedisStore(client, ops=ops, durability=durability)
                registry = registry or RedisRegistry(client, ops)
            else:
                if store is None:
                    archive = Archive(data_file(settings.data_dir, "matchmaker"))
                    memory = MemoryStore(archive=archive)
                    shutdown.push_close(memory.close)
                    store = memory
                registry = registry or MemoryRegistry()
        timings = Timings(
            fill_ms=settings.fill_ms,
            fill_lone_ms=settings.fill_lone_ms,
            lobby_ttl_ms=settings.lobby_ttl_ms,
            token_ttl_ms=settings.token_ttl_ms,
            done_ttl_ms=settings.done_ttl_ms,
            claim_ms=settings.claim_ms,
            retry_ms=settings.retry_ms,
            max_attempts=settings.max_start_attempts,
            rematch_ms=settings.rematch_ms,
            level_window=settings.level_window,
            level_widen_per_s=settings.level_widen_per_s,
            level_open_ms=settings.level_open_ms,
        )
        metrics_host = settings.metrics_host or settings.host
        metrics_port = await start_metrics(shutdown, metrics, metrics_host, settings.metrics_port)
        placer = Placer(
            registry,
            settings.create_timeout_ms / 1000,
            settings.table_addr,
            local=local_tables,
            interceptors=client_interceptors(metrics.registry),
        )
        shutdown.push_close(placer.close)
        owner = secrets.token_hex(8)
        starter = Starter(store, placer, timings, owner, _wall_ms, metrics=metrics)
        watchers = LobbyWatchers()
        matchmaker = Matchmaker(
            store,
            starter,
            watchers,
            timings,
            level=settings.bot_level,
            codes=codes,
            clock=_wall_ms,
            watch_poll_s=settings.watch_poll_ms / 1000,
        )
        server = new_server(server_interceptors(metrics.registry))
        calls = MatchmakerService(matchmaker, metrics)
        matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(MatchmakerServicer(calls), server)
        health = add_health(server, [SERVICE_NAME])
        port = bind(server, settings.host, settings.port)
        await server.start()
        shutdown.push(server.stop)
        stopping = asyncio.Event()
        starter_task = asyncio.create_task(
            starter.run(settings.tick_ms / 1000, stopping), name="matchmaker-starter"
        )
        watcher_task = asyncio.create_task(
            watchers.run(store.changes()), name="matchmaker-watchers"
        )

        async def end_tasks(grace: float) -> None:
            """Let a start in progress finish (within ``grace``), end the lobby streams."""
            stopping.set()
            watchers.close()
            await asyncio.wait([starter_task], timeout=grace)
            await _end(starter_task)
            await _end(watcher_task)

        shutdown.push(end_tasks)
        await set_serving(health, [SERVICE_NAME], True)
        shutdown.push(lambda _grace: set_serving(health, [SERVICE_NAME], False))
    event(log, "serving", port=port, store=type(store).__name__)
    return Running(
        port,
        dial_addr(settings.host, port),
        calls,
        shutdown,
        grace=settings.grace_s,
        log=log,
        metrics_port=metrics_port,
    )


async def serve(
    settings: MatchmakerSettings, store: Store | None = None, registry: Registry | None = None
) -> None:
    """Run until SIGTERM or SIGINT, then stop gracefully."""
    await running.serve(create_server(settings, store, registry))


def main() -> None:
    settings = from_env(MatchmakerSettings)
    logs.configure("matchmaker", settings.log_level)
    loop.run(serve(settings))
