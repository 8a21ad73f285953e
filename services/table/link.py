"""One gateway's link to this replica: its calls in, their answers and its seats' views out.

The replica's side of ``Table.Link``. Each call starts as it arrives and, if it has to
wait (for its table's lock or its store), goes on in a task of its own, so a table
waiting on its store never holds up another (``eager.start``: a move on a table whose
store answers at once is answered without a task of its own). A subscription's views
go into the link as its table pushes them (``FeedRelay``: no task in between).
Answers and views wait in one outbox that a single writer drains, as many to a message
as have queued up. A gateway that stops reading lets the outbox grow; past ``limit``
events the link fails, and the gateway opens a new one and subscribes its seats again
(a table never waits for a reader).

Moves, continues and leaves already under way finish even if the link goes: a move is
logged before it is answered, and the gateway's retry with the same ``move_id`` gets it.

A move whose call carries a ``traceparent`` (its gateway sampled it) is applied in an
``apply move`` span that continues the gateway's trace (docs/tracing.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Protocol

from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common import eager, tracing
from services.common.errors import ServiceError
from services.common.logs import event
from services.common.pacing import Pacer
from services.common.unexpected import refusal_for
from services.table.feed_relay import FeedRelay, Opener
from services.table.feeds import Feed

__all__ = ["LinkServer", "Operations", "Writer"]

log = logging.getLogger("rackem.table")

MAX_EVENTS = 256  # events in one message down the link


class Writer(Protocol):
    """Where the link's messages go: the ``Table.Link`` call's gRPC context."""

    async def write(self, message: table_pb2.LinkDown) -> None: ...


class _Table(Protocol):
    def unsubscribe(self, sub: Feed) -> None: ...


class Operations(Protocol):
    """What a link may ask of the replica (``TableService`` provides them)."""

    async def submit(self, request: table_pb2.SubmitMoveRequest) -> int: ...
    async def continue_round(self, request: table_pb2.SeatRequest) -> None: ...
    async def leave(self, request: table_pb2.SeatRequest) -> None: ...
    async def subscribe(
        self, request: table_pb2.SeatRequest, notify: Callable[[], None]
    ) -> tuple[_Table, Feed]: ...
    async def watch(
        self, request: table_pb2.SummaryRequest, notify: Callable[[], None]
    ) -> tuple[_Table, Feed]: ...


class LinkServer:
    def __init__(self, ops: Operations, limit: int, pace_s: float = 0.0) -> None:
        self._ops = ops
        self._limit = limit
        self._pacer = Pacer(pace_s)  # services/common/pacing.py
        self._outbox: list[table_pb2.LinkEvent] = []
        self._wake = asyncio.Event()
        self._feeds: dict[int, FeedRelay] = {}
        self._calls: set[asyncio.Future[None]] = set()
        self._overflowed = asyncio.Event()
        self._reading = True

    async def run(self, requests: AsyncIterator[table_pb2.LinkUp], context: Writer) -> None:
        """Serve the link until the gateway closes it; raises ``unavailable`` if it overflows."""
        reader = asyncio.create_task(self._read(requests))
        writer = asyncio.create_task(self._write(context))
        overflow = asyncio.create_task(self._overflowed.wait())
        try:
            await asyncio.wait({writer, overflow}, return_when=asyncio.FIRST_COMPLETED)
            if self._overflowed.is_set():  # let the tables go, then end it once sent
                event(log, "link_overflow", logging.WARNING, queued=len(self._outbox))
                self._stop_following(reader)
                self._outbox.clear()
                await writer  # the write under way (a core operation) must finish first
                raise ServiceError("unavailable", "the link fell behind; link again")
            await writer
        finally:
            overflow.cancel()
            writer.cancel()
            self._stop_following(reader)

    def _stop_following(self, reader: asyncio.Task[None]) -> None:
        reader.cancel()
        for following in self._feeds.values():
            following.stop()
        self._feeds.clear()

    async def _write(self, context: Writer) -> None:
        while not self._overflowed.is_set():
            if not self._outbox:
                if not self._reading:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._pacer.ready()
            batch = self._outbox[:MAX_EVENTS]
            del self._outbox[:MAX_EVENTS]
            await context.write(table_pb2.LinkDown(events=batch))

    def _emit(self, item: table_pb2.LinkEvent) -> None:
        if self._overflowed.is_set():
            return
        self._outbox.append(item)
        if len(self._outbox) > self._limit:
            self._overflowed.set()
        self._wake.set()

    def _fail(self, call_id: int, err: ServiceError) -> None:
        failure = table_pb2.LinkFailure(code=err.code, message=err.message, owner=err.owner or "")
        self._emit(table_pb2.LinkEvent(id=call_id, failed=failure))

    async def _read(self, requests: AsyncIterator[table_pb2.LinkUp]) -> None:
        try:
            async for up in requests:
                for call in up.calls:
                    self._dispatch(call)
        finally:
            self._reading = False
            self._wake.set()

    def _dispatch(self, call: table_pb2.LinkCall) -> None:
        kind = call.WhichOneof("call")
        call_id = call.id
        if kind == "submit":
            self._pacer.saw(call.submit.table_id)
            if call.traceparent:  # set only for a move its gateway traces
                self._start(call_id, self._traced(call_id, call.submit, call.traceparent))
            else:
                self._start(call_id, self._submit(call_id, call.submit))
        elif kind in ("subscribe", "watch"):
            older = self._feeds.pop(call_id, None)
            if older is not None:
                older.stop()
            ops = self._ops
            opener: Opener = (
                partial(ops.subscribe, call.subscribe)
                if kind == "subscribe"
                else partial(ops.watch, call.watch)
            )
            self._feeds[call_id] = FeedRelay(
                opener, partial(self._view, call_id), partial(self._ended, call_id)
            )
        elif kind == "continue_round":
            self._pacer.saw(call.continue_round.table_id)
            self._start(call_id, self._done(call_id, self._ops.continue_round(call.continue_round)))
        elif kind == "leave":
            self._pacer.saw(call.leave.table_id)
            self._start(call_id, self._done(call_id, self._ops.leave(call.leave)))
        elif kind == "unsubscribe":
            wanted = self._feeds.pop(call_id, None)
            if wanted is not None:
                wanted.stop()
        else:
            self._fail(call_id, ServiceError("bad_request", "an empty link call"))

    def _start(self, call_id: int, work: Awaitable[None]) -> None:
        task = eager.start(self._guard(call_id, work))
        if not task.done():  # it waits: it goes on in its own task
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)

    async def _guard(self, call_id: int, work: Awaitable[None]) -> None:
        try:
            await work
        except ServiceError as err:
            self._fail(call_id, err)
        except Exception as exc:
            self._fail(call_id, refusal_for(log, "Link", exc))

    async def _submit(self, call_id: int, request: table_pb2.SubmitMoveRequest) -> None:
        version = await self._ops.submit(request)
        self._emit(table_pb2.LinkEvent(id=call_id, moved=version))

    async def _traced(
        self, call_id: int, request: table_pb2.SubmitMoveRequest, parent: str
    ) -> None:
        """``_submit`` in an ``apply move`` span under the gateway's ``move`` span."""
        attributes = {"rackem.move.act": request.move.act}
        context = tracing.extract({"traceparent": parent})
        with tracing.span("apply move", tracing.SERVER, attributes, context):
            await self._submit(call_id, request)

    async def _done(self, call_id: int, work: Awaitable[None]) -> None:
        await work
        self._emit(table_pb2.LinkEvent(id=call_id, done=table_pb2.Ack()))

    def _view(self, call_id: int, view: game_pb2.TableView) -> None:
        self._pacer.saw(view.table_id)
        self._emit(table_pb2.LinkEvent(id=call_id, view=view))

    def _ended(self, call_id: int, error: ServiceError | None) -> None:
        self._feeds.pop(call_id, None)
        if error is not None:
            self._fail(call_id, error)
        else:
            self._emit(table_pb2.LinkEvent(id=call_id, ended=table_pb2.Ack()))
