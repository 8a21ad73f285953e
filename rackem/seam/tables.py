"""``rackem up``'s table replica, reached in this process without a socket.

The gateway's link to the replica (``DirectLink``) and the matchmaker's CreateTable call
the table's operations (services/table/service.py) directly: a move is an awaited call,
and views are handed on as the table pushes them (``FeedRelay``, as the replica's side of
a gRPC link does). What the wire would do still happens here: requests and views are
copied, so neither side ever shares a message with the other; a refusal is the
``ServiceError`` the link would carry, and anything unexpected is logged and refused
``internal``; a call that outlasts its timeout is answered ``unavailable`` while the
table finishes it (a move is never cut short; its retry by ``move_id`` gets its answer).
A replica that stops refuses what comes after ``shutting_down``, as it would over gRPC.

A move on a table whose store answers at once (the memory store) runs to its end in the
caller's own turn (``eager.start``): no task, no loop turn between the gateway and the
table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from functools import partial
from typing import Any, TypeVar

from rackem.seam.wire import copied
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common import eager
from services.common.errors import ServiceError
from services.common.unexpected import refusal_for
from services.gateway.table_client import LinkFeed
from services.matchmaker.table_client import CreateTable
from services.table.feed_relay import FeedRelay, Opener
from services.table.service import TableService

__all__ = ["DirectLink", "LocalTables"]

log = logging.getLogger("rackem.up")

T = TypeVar("T")


def _retrieve(done: asyncio.Future[Any]) -> None:
    if not done.cancelled():
        done.exception()


async def _called(rpc: str, work: Coroutine[Any, Any, T], timeout: float | None) -> T:
    """``work``'s result, or its refusal; ``unavailable`` past ``timeout``. The caller's
    timeout or cancellation never cuts ``work`` short, as none would cut a remote call's."""
    running = eager.start(work)
    if not running.done():
        try:
            await asyncio.wait((running,), timeout=timeout)
        finally:
            if not running.done():
                running.add_done_callback(_retrieve)
        if not running.done():
            raise ServiceError("unavailable", "the table did not answer in time")
    if running.cancelled():
        raise ServiceError("unavailable", "the table stopped")
    try:
        return running.result()
    except ServiceError:
        raise
    except Exception as exc:
        raise refusal_for(log, rpc, exc) from None


class DirectLink:
    """The gateway's link to a replica in this process: the calls of
    ``services.gateway.table_client``'s ``Link``, made on the replica's operations. It never
    breaks: a stopped replica refuses."""

    broken: ServiceError | None = None

    def __init__(self, service: TableService) -> None:
        self._service = service
        self._relays: set[FeedRelay] = set()

    @property
    def busy(self) -> bool:
        """True while a feed is open on the link."""
        return bool(self._relays)

    async def submit(self, request: table_pb2.SubmitMoveRequest, timeout: float) -> int:
        return await _called("Link", self._service.submit(copied(request)), timeout)

    async def continue_round(self, request: table_pb2.SeatRequest, timeout: float) -> None:
        await _called("Link", self._service.continue_round(copied(request)), timeout)

    async def leave(self, request: table_pb2.SeatRequest, timeout: float) -> None:
        await _called("Link", self._service.leave(copied(request)), timeout)

    def subscribe(
        self, request: table_pb2.SeatRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed:
        return self._open(partial(self._service.subscribe, copied(request)), on_view)

    def watch(
        self, request: table_pb2.SummaryRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed:
        return self._open(partial(self._service.watch, copied(request)), on_view)

    def _open(self, opener: Opener, on_view: Callable[[game_pb2.TableView], None]) -> LinkFeed:
        views = _Views()
        feed = LinkFeed(views.close, on_view)
        views.relay = relay = FeedRelay(
            opener,
            lambda view: feed.put(copied(view)),
            lambda error: self._ended(relay, feed, error),
        )
        views.link = self
        self._relays.add(relay)
        return feed

    def _ended(self, relay: FeedRelay, feed: LinkFeed, error: ServiceError | None) -> None:
        self._relays.discard(relay)
        feed.end(error)

    def _closed(self, relay: FeedRelay) -> None:
        self._relays.discard(relay)
        relay.stop()

    async def close(self) -> None:
        """End every feed on the link (the gateway is closing)."""
        relays, self._relays = self._relays, set()
        for relay in relays:
            relay.stop()


class _Views:
    """What a feed's ``close`` stops: its ``FeedRelay``, on its link."""

    __slots__ = ("link", "relay")

    def __init__(self) -> None:
        self.relay: FeedRelay | None = None
        self.link: DirectLink | None = None

    def close(self) -> None:
        relay, link = self.relay, self.link
        self.relay = self.link = None
        if relay is not None and link is not None:
            link._closed(relay)


class LocalTables:
    """The table replicas in this process, by the address each advertises."""

    def __init__(self, services: Mapping[str, TableService]) -> None:
        self._services = dict(services)

    def link(self, addr: str) -> DirectLink | None:
        """A link to the replica at ``addr`` if it runs here (else None: link over gRPC)."""
        service = self._services.get(addr)
        return DirectLink(service) if service is not None else None

    def creators(self) -> dict[str, CreateTable]:
        """CreateTable for each replica here, for the matchmaker's placement."""
        return {addr: partial(_create, service) for addr, service in self._services.items()}


def _create(
    service: TableService, request: table_pb2.CreateTableRequest
) -> Awaitable[table_pb2.CreateTableReply]:
    return _called("CreateTable", _created(service, copied(request)), None)


async def _created(
    service: TableService, request: table_pb2.CreateTableRequest
) -> table_pb2.CreateTableReply:
    return copied(await service.create(request))
