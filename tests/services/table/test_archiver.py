"""A replica with an archive (SQLite here; PostgreSQL in tests/system/test_archive.py):
finished records go there and leave the store, served from there, purged past the
retention; a schema behind refuses to start."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from postgres_engine import Postgres

from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.archive import ArchiveSettings, SchemaBehind, migrate, parse_database_url
from services.archive.tier import open_records
from services.common.channels import open_channel
from services.common.registry import MemoryRegistry
from services.table.server import ARCHIVE_HEALTH
from services.table.store.memory import MemoryStore
from table.table_players import ServerFactory, create_table


def _archive(tmp_path: Path, **settings: int) -> ArchiveSettings:
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    migrate(parse_database_url(url))
    return ArchiveSettings(database_url=url, **settings)


async def _until_gone(store: MemoryStore, table_id: str, within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while await store.load(table_id) is not None or await store.pending_count():
        assert time.monotonic() < deadline, "the finished table stayed in the store"
        await asyncio.sleep(0.05)


async def test_a_finished_record_is_archived_then_served_from_there_alone(
    start_table_server: ServerFactory, tmp_path: Path
) -> None:
    store = MemoryStore()
    archive = _archive(tmp_path)
    running = await start_table_server(
        store=store, registry=MemoryRegistry(), archive=archive, archive_sweep_ms=50
    )
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(service=ARCHIVE_HEALTH))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        table_id = (await create_table(stub, humans=0, bots=2)).table_id
        await _until_gone(store, table_id)
        served = await stub.GetRecord(table_pb2.SummaryRequest(table_id=table_id))
        records = await open_records(archive)
        try:
            record = await records.get_record(table_id)
        finally:
            await records.close()
        assert record is not None
        assert (record.code, record.reason) == ("ROOM42", "finished")
        assert served == table_pb2.MatchRecord(
            table_id=table_id, code="ROOM42", log_json=record.log_json
        )
        with pytest.raises(grpc.aio.AioRpcError) as gone:  # nothing else of it is left
            await stub.GetSummary(table_pb2.SummaryRequest(table_id=table_id))
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_records_past_the_retention_are_purged(
    start_table_server: ServerFactory, tmp_path: Path
) -> None:
    store = MemoryStore()
    archive = _archive(tmp_path, record_retention_ms=200)
    running = await start_table_server(
        store=store, registry=MemoryRegistry(), archive=archive, archive_sweep_ms=50, purge_ms=100
    )
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        table_id = (await create_table(stub, humans=0, bots=2)).table_id
        await _until_gone(store, table_id)
        records = await open_records(archive)
        try:
            deadline = time.monotonic() + 10
            while await records.get_record(table_id) is not None:
                assert time.monotonic() < deadline, "the record outlived its retention"
                await asyncio.sleep(0.05)
        finally:
            await records.close()


async def test_a_replica_refuses_an_archive_whose_schema_is_behind(
    start_table_server: ServerFactory, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()  # a database, without the schema
    with pytest.raises(SchemaBehind, match="rackem migrate"):
        await start_table_server(archive=ArchiveSettings(database_url=f"sqlite:///{empty}"))


async def test_a_replica_that_believes_the_archive_away_still_serves_what_another_wrote(
    start_table_server: ServerFactory, own_postgres: Postgres
) -> None:
    """The archive comes back; one replica drains the backlog while another still backs
    off. The second serves the records all the same: the store no longer has them, so it
    asks the archive it believes away (and, answered, believes it back)."""
    url = own_postgres.database("replicas")
    migrate(parse_database_url(url))
    archive = ArchiveSettings(database_url=url, database_timeout_ms=2_000)
    store, registry = MemoryStore(), MemoryRegistry()
    writer = await start_table_server(
        store=store, registry=registry, archive=archive,
        archive_sweep_ms=50, archive_backoff_max_ms=200,
    )  # fmt: skip
    reader = await start_table_server(
        store=store, registry=registry, archive=archive,
        archive_sweep_ms=600_000, archive_backoff_max_ms=600_000,
    )  # fmt: skip
    async with open_channel(writer.addr) as w, open_channel(reader.addr) as r:
        writes, reads = table_pb2_grpc.TableStub(w), table_pb2_grpc.TableStub(r)
        reader_health = health_pb2_grpc.HealthStub(r)
        own_postgres.stop_server()
        try:
            table_id = (await create_table(writes, humans=0, bots=2)).table_id
            # The reader asks the archive once, finds it away, and backs off for minutes.
            with pytest.raises(grpc.aio.AioRpcError):
                await reads.GetRecord(table_pb2.SummaryRequest(table_id="t" * 12))
            away = await reader_health.Check(health_pb2.HealthCheckRequest(service=ARCHIVE_HEALTH))
            assert away.status == health_pb2.HealthCheckResponse.NOT_SERVING
            deadline = time.monotonic() + 60
            while await store.pending_count() == 0:  # finished, waiting for the archive
                assert time.monotonic() < deadline, "the match did not finish"
                await asyncio.sleep(0.05)
        finally:
            own_postgres.start_server()
        await _until_gone(store, table_id, within_s=60)  # the writer drained it
        served = await reads.GetRecord(table_pb2.SummaryRequest(table_id=table_id))
        assert served.table_id == table_id and served.code == "ROOM42"
        back = await reader_health.Check(health_pb2.HealthCheckRequest(service=ARCHIVE_HEALTH))
        assert back.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_record_the_archive_cannot_serve_now_is_unavailable_never_unknown(
    start_table_server: ServerFactory, own_postgres: Postgres
) -> None:
    """Archived, then PostgreSQL stops: asking for the record is ``unavailable`` (try
    again) whether the replica still believes the archive there or already away, never
    NOT_FOUND; once it is back the record is served again."""
    url = own_postgres.database("unavailable")
    migrate(parse_database_url(url))
    archive = ArchiveSettings(database_url=url, database_timeout_ms=1_000)
    store = MemoryStore()
    running = await start_table_server(
        store=store, registry=MemoryRegistry(), archive=archive,
        archive_sweep_ms=600_000, archive_backoff_max_ms=600_000,
    )  # fmt: skip
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        table_id = (await create_table(stub, humans=0, bots=2)).table_id
        await _until_gone(store, table_id)  # archived at its finish
        request = table_pb2.SummaryRequest(table_id=table_id)
        assert (await stub.GetRecord(request)).table_id == table_id
        own_postgres.stop_server()
        try:
            for _believed in ("there", "away"):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.GetRecord(request)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            own_postgres.start_server()
        deadline = time.monotonic() + 30
        while True:
            try:
                assert (await stub.GetRecord(request)).table_id == table_id
                break
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAVAILABLE
                assert time.monotonic() < deadline, "the record was not served again"
                await asyncio.sleep(0.2)
