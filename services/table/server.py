"""The table service's process: ``create_server`` → ``Running``, ``serve``, ``main``."""

from __future__ import annotations

import logging
import secrets

from grpc_health.v1 import health_pb2

from services._gen.rackem.v1 import table_pb2_grpc
from services.archive.schema import SchemaBehind
from services.archive.settings import ArchiveSettings
from services.archive.tier import open_profiles, open_records
from services.common import logs, loop, running
from services.common.archive import Archive, data_file
from services.common.dial import dial_addr
from services.common.grpc_metrics import client_interceptors, server_interceptors
from services.common.grpc_server import add_health, bind, new_server, set_serving
from services.common.metrics_http import check_port, start_metrics
from services.common.redis_client import Durability, connect
from services.common.redis_metrics import RedisOps
from services.common.registry import REGISTRY_OPS, MemoryRegistry, RedisRegistry, Registry
from services.common.running import Running, Shutdown
from services.common.settings import from_env
from services.table.archiver import Archiver
from services.table.bot_client import BotClient, Bots
from services.table.clocks import Timing
from services.table.daily import Daily, parse_secret
from services.table.leases import owner_string
from services.table.metrics import TableMetrics
from services.table.service import TableService
from services.table.servicer import TableServicer
from services.table.settings import TableSettings
from services.table.store import TableStore
from services.table.store.memory import MemoryStore
from services.table.store.redis import OPS, RedisStore
from services.table.table import TableConfig
from services.table.tables import Tables

__all__ = ["ALIVE", "ARCHIVE_HEALTH", "SERVICE_NAME", "create_server", "main", "serve"]

ALIVE = "alive"
log = logging.getLogger("rackem.table")

SERVICE_NAME = "rackem.v1.Table"
# The archiver's health, apart from the replica's readiness (``SERVICE_NAME``, and the
# overall ""): SERVING while the archive answers. A replica whose archive is away still
# plays (records wait in the store), so readiness never follows it.
ARCHIVE_HEALTH = "rackem.archive"


async def create_server(
    settings: TableSettings,
    store: TableStore | None = None,
    registry: Registry | None = None,
    bot_addr: str | None = None,
    bots: Bots | None = None,
    archive: ArchiveSettings | None = None,
    daily: Daily | None = None,
) -> Running[TableService]:
    """Build, bind and start a table replica (``settings.port`` 0 picks a free port).

    Without ``store``/``registry`` it uses Redis at ``settings.redis_url``, or the
    in-process implementations when that is unset. ``bot_addr`` overrides
    ``settings.bot_addr``; ``bots`` is the bot service to call instead of dialing one (the
    one in this process under ``rackem up``, rackem/seam/bots.py). ``Running.service`` is
    the replica's operations (``TableService``, and through it the ``Tables`` it owns), for
    callers in this process (``rackem up``'s seam, rackem/seam/tables.py).

    ``archive`` with a ``database_url``: finished matches' records go to the archive
    there (archiver.py), which must be at this release's schema (``SchemaBehind`` if it is
    behind: run ``rackem migrate``), and finished matches' results to its profile
    store. /metrics is served on ``settings.metrics_port`` if set
    (``Running.metrics_port``). ``daily``: the Daily Rack to offer instead of the one
    ``settings.daily_secret`` makes (a test's, with its own clock; daily.py).
    """
    check_port(settings.metrics_port, settings.port)
    metrics = TableMetrics()
    keep_finished = False
    async with Shutdown() as shutdown:
        if store is None or registry is None:
            if settings.redis_url:
                client = connect(settings.redis_url)
                shutdown.push_close(client.aclose)
                durability = Durability(settings.redis_wait_replicas, settings.redis_wait_ms)
                ops = RedisOps((*OPS, *REGISTRY_OPS), metrics.registry)
                if store is None:
                    redis_store = RedisStore(
                        client,
                        durability=durability,
                        index_shards=settings.lease_index_shards,
                        ops=ops,
                    )
                    # Tables a replica of before the lease index listed: swept from now on.
                    await redis_store.index.import_live_set()
                    store = redis_store
                registry = registry or RedisRegistry(client, ops)
            else:
                keep_finished = store is None  # its file keeps them (archiver.py)
                store = store or MemoryStore(Archive(data_file(settings.data_dir, "tables")))
                registry = registry or MemoryRegistry()
        records = profiles = None
        if archive is not None and archive.database_url:
            records = await open_records(archive)
            shutdown.push_close(records.close)
            profiles = await open_profiles(archive)  # results of matches played with profiles
            shutdown.push_close(profiles.close)
        metrics_host = settings.metrics_host or settings.host
        metrics_port = await start_metrics(shutdown, metrics, metrics_host, settings.metrics_port)
        server = new_server(server_interceptors(metrics.registry))
        port = bind(server, settings.host, settings.port)
        addr = settings.advertise_addr or dial_addr(settings.host, port)
        replica_id = settings.replica_id or secrets.token_hex(6)
        config = TableConfig(
            store=store,
            owner=owner_string(replica_id, addr),
            replica=addr,
            decision_ms=settings.decision_ms,
            continue_ms=settings.continue_ms,
            stream_queue=settings.stream_queue,
            spectators_cap=settings.spectators_per_table,
            timing=Timing(settings.bot_delay_ms, settings.abandon_ms, settings.reconnect_grace_ms),
            lease_ms=settings.lease_ms,
            store_hold_ms=settings.store_hold_ms,
            metrics=metrics,
            daily=daily or Daily(parse_secret(settings.daily_secret)),
        )
        bot_client = BotClient(
            settings.bot_addr if bot_addr is None else bot_addr,
            settings.bot_timeout_ms,
            settings.bot_retry_ms,
            bots,
            client_interceptors(metrics.registry),
        )
        shutdown.push_close(bot_client.close)
        tables = Tables(settings, config, registry, bot_client, replica_id)
        if records is not None:
            retention = archive.record_retention_ms if archive is not None else 0
            tables.archiver = Archiver(
                store, records, config, settings, retention, metrics, profiles, keep_finished
            )
        service = TableService(tables)
        servicer = TableServicer(service, settings.link_queue, settings.link_pace_ms / 1000)
        table_pb2_grpc.add_TableServicer_to_server(servicer, server)
        health = add_health(server, [SERVICE_NAME])
        if tables.archiver is not None:

            async def archive_up(up: bool) -> None:  # the archiver's own health only
                status = health_pb2.HealthCheckResponse
                await health.set(ARCHIVE_HEALTH, status.SERVING if up else status.NOT_SERVING)

            tables.archiver.on_up = archive_up
            await archive_up(True)

        async def reachable(up: bool) -> None:  # ready only while this replica reaches Redis
            await set_serving(health, [SERVICE_NAME], up)

        tables.on_reachable = reachable
        # Liveness asks for ALIVE: SERVING while the process runs, through a Redis outage or
        # a hand-over, so the kubelet never restarts a replica that only waits for Redis.
        await health.set(ALIVE, health_pb2.HealthCheckResponse.SERVING)
        await server.start()
        shutdown.push(server.stop)
        await tables.start()
        # On stop, before the server stops: NOT_SERVING, then every table handed over
        # (leases released, streams ended).
        shutdown.push(lambda _grace: tables.drain())
        await set_serving(health, [SERVICE_NAME], True)
        shutdown.push(lambda _grace: set_serving(health, [SERVICE_NAME], False))
    logs.event(log, "table_serving", port=port, addr=addr, replica=replica_id)
    return Running(
        port,
        addr,
        service,
        shutdown,
        grace=settings.stop_grace_ms / 1000,
        log=log,
        stopping="table_stopping",
        stopped="table_stopped",
        fields={"replica": replica_id},
        metrics_port=metrics_port,
    )


async def serve(settings: TableSettings, archive: ArchiveSettings | None = None) -> None:
    """Serve until SIGTERM or SIGINT, then hand the tables over and stop."""
    await running.serve(create_server(settings, archive=archive))


def main() -> None:
    settings = from_env(TableSettings)
    logs.configure("table", settings.log_level)
    try:
        loop.run(serve(settings, from_env(ArchiveSettings)))
    except SchemaBehind as exc:  # refused to start: said once, plainly, without a trace
        logs.event(log, "archive_schema_behind", logging.ERROR, message=str(exc))
        raise SystemExit(1) from None
