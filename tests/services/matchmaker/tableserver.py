"""A small REAL gRPC server that implements only ``Table.CreateTable`` and records each call.

It is a real server on a real port, reached over real channels, used only to observe
placement exactly: which replica got which table, how many times, with which seats.
Everything a table does with those seats is tested against the real table service
(``test_with_tables.py``). Its other RPCs answer UNIMPLEMENTED.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc

from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError, abort
from services.common.grpc_server import new_server
from services.common.registry import Registry, Replica


class RecordingTable:
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
    server = new_server()
    table = RecordingTable(refuse)
    create = grpc.unary_unary_rpc_method_handler(
        table.CreateTable,
        request_deserializer=table_pb2.CreateTableRequest.FromString,
        response_serializer=table_pb2.CreateTableReply.SerializeToString,
    )
    handler = grpc.method_handlers_generic_handler("rackem.v1.Table", {"CreateTable": create})
    server.add_generic_rpc_handlers((handler,))
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
