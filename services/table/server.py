"""The table service's process shape: ``create_server`` → ``Running``, ``serve``, ``main``."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2

from services._gen.rackem.v1 import table_pb2_grpc
from services.common import logs, loop
from services.common.archive import Archive, data_file
from services.common.grpc_server import add_health, bind, new_server, set_serving, wait_for_signal
from services.common.redis_client import Durability, RedisClient, connect
from services.common.registry import MemoryRegistry, RedisRegistry, Registry
from services.common.settings import from_env
from services.table.bot_client import BotClient
from services.table.clocks import Timing
from services.table.service import TableService
from services.table.servicer import TableServicer
from services.table.settings import TableSettings
from services.table.store import TableStore
from services.table.store.memory import MemoryStore
from services.table.store.redis import RedisStore
from services.table.table import TableConfig
from services.table.tables import Tables, owner_string

__all__ = ["SERVICE_NAME", "Running", "create_server", "main", "serve"]

ALIVE = "alive"
log = logging.getLogger("rackem.table")

SERVICE_NAME = "rackem.v1.Table"


@dataclass(slots=True)
class Running:
    """A started table replica: ``port`` bound, ``addr`` advertised, ``tables`` it owns,
    ``service`` (its operations, for callers in this process)."""

    server: grpc.aio.Server
    health: health_aio.HealthServicer
    tables: Tables
    bots: BotClient
    redis: RedisClient | None
    port: int
    addr: str
    service: TableService

    async def stop(self, grace: float | None = None) -> None:
        """NOT_SERVING, hand every table over (leases released, streams ended), then stop."""
        logs.event(log, "table_stopping", replica=self.tables.replica_id)
        await set_serving(self.health, [SERVICE_NAME], False)
        try:
            await self.tables.drain()
        finally:
            await self.server.stop(grace)
            await self.bots.close()
            if self.redis is not None:
                await self.redis.aclose()
        logs.event(log, "table_stopped", replica=self.tables.replica_id)


def _dial_host(host: str) -> str:
    return "127.0.0.1" if host in ("", "0.0.0.0", "::", "[::]") else host


async def create_server(
    settings: TableSettings,
    store: TableStore | None = None,
    registry: Registry | None = None,
    bot_addr: str | None = None,
) -> Running:
    """Build, bind and start a table replica (``settings.port`` 0 picks a free port).

    Without ``store``/``registry`` it uses Redis at ``settings.redis_url``, or the
    in-process implementations when that is unset. ``bot_addr`` overrides
    ``settings.bot_addr``. ``Running.service`` is the replica's operations, for callers
    in this process (``rackem up``'s seam, rackem/seam/tables.py).
    """
    client = None
    if store is None or registry is None:
        if settings.redis_url:
            client = connect(settings.redis_url)
            durability = Durability(settings.redis_wait_replicas, settings.redis_wait_ms)
            if store is None:
                redis_store = RedisStore(
                    client, durability=durability, index_shards=settings.lease_index_shards
                )
                # Tables a replica of before the lease index listed: swept from now on.
                await redis_store.index.import_live_set()
                store = redis_store
            registry = registry or RedisRegistry(client)
        else:
            store = store or MemoryStore(Archive(data_file(settings.data_dir, "tables")))
            registry = registry or MemoryRegistry()
    server = new_server()
    port = bind(server, settings.host, settings.port)
    addr = settings.advertise_addr or f"{_dial_host(settings.host)}:{port}"
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
    )
    bots = BotClient(
        settings.bot_addr if bot_addr is None else bot_addr,
        settings.bot_timeout_ms,
        settings.bot_retry_ms,
    )
    tables = Tables(settings, config, registry, bots, replica_id)
    service = TableService(tables)
    table_pb2_grpc.add_TableServicer_to_server(TableServicer(service, settings.link_queue), server)
    health = add_health(server, [SERVICE_NAME])

    async def reachable(up: bool) -> None:  # ready only while this replica reaches Redis
        await set_serving(health, [SERVICE_NAME], up)

    tables.on_reachable = reachable
    # Liveness asks for ALIVE: SERVING while the process runs, through a Redis outage or
    # a hand-over, so the kubelet never restarts a replica that only waits for Redis.
    await health.set(ALIVE, health_pb2.HealthCheckResponse.SERVING)
    await server.start()
    await tables.start()
    await set_serving(health, [SERVICE_NAME], True)
    logs.event(log, "table_serving", port=port, addr=addr, replica=replica_id)
    return Running(server, health, tables, bots, client, port, addr, service)


async def serve(settings: TableSettings) -> None:
    """Serve until SIGTERM or SIGINT, then hand the tables over and stop."""
    running = await create_server(settings)
    await wait_for_signal()
    await running.stop(settings.stop_grace_ms / 1000)


def main() -> None:
    settings = from_env(TableSettings)
    logs.configure("table", settings.log_level)
    loop.run(serve(settings))
