"""A small REAL gRPC server that implements only ``Table.CreateTable`` and records each call.

It is a real server on a real port, reached over real channels, and stands in for the
table service only to observe placement: which replica got which table, with which
seats. (The table service is being written alongside the matchmaker; these tests move
to ``services.table.server`` once it lands.) Its other RPCs answer UNIMPLEMENTED.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc

from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.errors import ServiceError, abort
from services.common.registry import Registry, Replica


class RecordingTable(table_pb2_grpc.TableServicer):
    def __init__(self, refuse: bool = False) -> None:
        self.calls: list[table_pb2.CreateTableRequest] = []
        self.refuse = refuse
        self.addr = ""

    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> table_pb2.CreateTableReply:
        if self.refuse:
            await abort(context, ServiceError("unavailable", "this replica refuses tables"))
        self.calls.append(request)
        return table_pb2.CreateTableReply(table_id=request.table_id, replica=self.addr)


@asynccontextmanager
async def recording_table(refuse: bool = False) -> AsyncIterator[RecordingTable]:
    """A started recording table server on 127.0.0.1, any free port."""
    server = grpc.aio.server()
    table = RecordingTable(refuse)
    table_pb2_grpc.add_TableServicer_to_server(table, server)
    port = server.add_insecure_port("127.0.0.1:0")
    table.addr = f"127.0.0.1:{port}"
    await server.start()
    try:
        yield table
    finally:
        await server.stop(None)


async def register(
    registry: Registry,
    table: RecordingTable,
    replica_id: str,
    load: int = 0,
    draining: bool = False,
    ttl_ms: int = 60_000,
) -> None:
    await registry.heartbeat(Replica(replica_id, table.addr, load, draining), ttl_ms)
