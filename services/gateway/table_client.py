"""The gateway's client of the table service: its link to one table replica, one stream for
every call and seat it has there (each service's client of the next one down is
``<service>_client.py``: matchmaker_client.py here, the table's bot_client.py, the
matchmaker's table_client.py).

``Link`` numbers each call, sends it up the replica's ``Table.Link`` stream (as many to
a message as have queued up) and wakes the caller when its answer comes down; a
subscription gets its seat's views until its table ends it. When the stream breaks,
every call waiting on it fails ``unavailable`` and every subscription ends with that
error, exactly as a failed call or stream of their own would: the caller retries (a
move by its ``move_id``, so never twice) and the follower subscribes again, through a
new link. ``Backends`` keeps one link per replica address and replaces a broken one.

With tracing on, a sampled move (the session's ``move`` span) has a ``link submit`` span
here, from its call up the link to its answer down; its context rides up in the call's
``traceparent`` for the replica's ``apply move`` span to continue (docs/tracing.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Protocol

import grpc

from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common import tracing
from services.common.errors import CODES, ServiceError, from_rpc_error
from services.common.lean_sync import Event
from services.common.pacing import Pacer

if TYPE_CHECKING:
    from services._gen.rackem.v1.table_pb2_grpc import TableAsyncStub

__all__ = ["Counts", "Link", "LinkFeed", "LocalLinks", "Stream", "TableLink", "dial"]


class Stream(Protocol):
    """A ``Table.Link`` call: a gRPC stream-stream call."""

    async def write(self, message: table_pb2.LinkUp) -> None: ...
    def __aiter__(self) -> AsyncIterator[table_pb2.LinkDown]: ...
    def cancel(self) -> object: ...


class Counts(Protocol):
    """Where a link counts its messages (the gateway's metrics): one sent up carrying
    ``calls``, one read down carrying ``events``."""

    def up(self, calls: int) -> None: ...
    def down(self, events: int) -> None: ...


class _NotCounted:
    def up(self, calls: int) -> None:
        pass

    def down(self, events: int) -> None:
        pass


class TableLink(Protocol):
    """A link to one table replica, as ``Backends`` uses it: ``Link`` over gRPC, or what
    ``LocalLinks`` opens to a replica in this process (``rackem up``)."""

    @property
    def broken(self) -> ServiceError | None: ...
    @property
    def busy(self) -> bool: ...
    async def submit(self, request: table_pb2.SubmitMoveRequest, timeout: float) -> int: ...
    async def continue_round(self, request: table_pb2.SeatRequest, timeout: float) -> None: ...
    async def leave(self, request: table_pb2.SeatRequest, timeout: float) -> None: ...
    def subscribe(
        self, request: table_pb2.SeatRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed: ...
    def watch(
        self, request: table_pb2.SummaryRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed: ...
    async def close(self) -> None: ...


LocalLinks = Callable[[str], "TableLink | None"]
"""A link to the replica at an address if it runs in this process, else None (gRPC)."""


def _failure(failed: table_pb2.LinkFailure) -> ServiceError:
    code = failed.code if failed.code in CODES else "internal"
    return ServiceError(code, failed.message or code, failed.owner or None)


def _expire(answer: asyncio.Future[table_pb2.LinkEvent]) -> None:
    if not answer.done():
        answer.set_exception(ServiceError("unavailable", "the table did not answer in time"))


class LinkFeed:
    """One seat's views over a link: each goes to ``on_view``; await ``finished`` for the
    end, and ``close`` it when done.

    ``on_view`` is called with each view as the link reads it, so no task stands between
    the link and the follower; if it raises, the feed ends with that error.
    ``on_close`` tells the link's far side that its reader is gone (once, on ``close``).
    """

    def __init__(
        self, on_close: Callable[[], None], on_view: Callable[[game_pb2.TableView], None]
    ) -> None:
        self._on_close = on_close
        self._on_view = on_view
        self._wake = Event()  # lean_sync's: no deque (~760 bytes) per seat
        self._over = False
        self._error: BaseException | None = None

    def put(self, view: game_pb2.TableView) -> None:
        if self._over:
            return
        try:
            self._on_view(view)
        except Exception as exc:
            self.close()
            self._error = exc
            self._wake.set()

    async def finished(self) -> None:
        """Wait for the end; raises what it ended with, if anything."""
        while not self._over:
            self._wake.clear()
            await self._wake.wait()
        if self._error is not None:
            raise self._error

    def end(self, error: ServiceError | None) -> None:
        self._over = True
        self._error = error
        self._wake.set()

    def close(self) -> None:
        """Stop the views (the replica lets go of the seat's subscription)."""
        if not self._over:
            self._over = True
            self._on_close()


class Link:
    def __init__(self, call: Stream, pace_s: float = 0.0, counts: Counts | None = None) -> None:
        self._call = call
        self._pacer = Pacer(pace_s)  # services/common/pacing.py
        self._counts = counts or _NotCounted()
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[table_pb2.LinkEvent]] = {}
        self._feeds: dict[int, LinkFeed] = {}
        self._outbox: list[table_pb2.LinkCall] = []
        self._wake = asyncio.Event()
        self.broken: ServiceError | None = None
        self._writer = asyncio.create_task(self._write())
        self._reader = asyncio.create_task(self._read())

    @property
    def busy(self) -> bool:
        """True while a subscription or a call is open on the link."""
        return self.broken is None and bool(self._feeds or self._waiting)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _send(self, call: table_pb2.LinkCall) -> None:
        self._outbox.append(call)
        self._wake.set()

    async def submit(self, request: table_pb2.SubmitMoveRequest, timeout: float) -> int:
        """Submit a move: the table's version after it (exactly once per ``move_id``).

        Like every call: raises its ``ServiceError``, or ``unavailable`` when the link breaks
        or no answer comes within ``timeout`` seconds.
        """
        with tracing.child("link submit", tracing.CLIENT) as current:
            call = table_pb2.LinkCall(submit=request)
            if current is not None:  # the move's trace is sampled: the table continues it
                call.traceparent = tracing.traceparent()
            event = await self._ask(call, request.table_id, timeout)
            return event.moved

    async def continue_round(self, request: table_pb2.SeatRequest, timeout: float) -> None:
        """Round over: the seat is ready for the next round."""
        await self._ask(table_pb2.LinkCall(continue_round=request), request.table_id, timeout)

    async def leave(self, request: table_pb2.SeatRequest, timeout: float) -> None:
        """Leave the table for good: a bot takes the seat."""
        await self._ask(table_pb2.LinkCall(leave=request), request.table_id, timeout)

    async def _ask(
        self, call: table_pb2.LinkCall, table_id: str, timeout: float
    ) -> table_pb2.LinkEvent:
        """Send ``call`` (for table ``table_id``) under a new id; its answer (or its
        failure raised)."""
        if self.broken is not None:
            raise self.broken
        self._pacer.saw(table_id)
        call.id = call_id = self._new_id()
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[table_pb2.LinkEvent] = loop.create_future()
        self._waiting[call_id] = answer
        self._send(call)
        # A timer rather than ``asyncio.wait_for``, whose own callback would cost the
        # answer one more loop turn on its way to the caller.
        timer = loop.call_later(timeout, _expire, answer)
        try:
            event = await answer
        finally:
            timer.cancel()
            self._waiting.pop(call_id, None)
        if event.HasField("failed"):
            raise _failure(event.failed)
        return event

    def subscribe(
        self, request: table_pb2.SeatRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed:
        """The seat's views to ``on_view``, from its current one on (``close`` it when done)."""
        return self._stream(on_view, lambda id: table_pb2.LinkCall(id=id, subscribe=request))

    def watch(
        self, request: table_pb2.SummaryRequest, on_view: Callable[[game_pb2.TableView], None]
    ) -> LinkFeed:
        """A spectator's views of the table, as ``subscribe``'s (``close`` it when done)."""
        return self._stream(on_view, lambda id: table_pb2.LinkCall(id=id, watch=request))

    def _stream(
        self,
        on_view: Callable[[game_pb2.TableView], None],
        call: Callable[[int], table_pb2.LinkCall],
    ) -> LinkFeed:
        """A subscription for the stream that ``call(id)`` opens (ended at once if the link is)."""
        call_id = self._new_id()
        sub = LinkFeed(partial(self.unsubscribe, call_id), on_view)
        if self.broken is not None:
            sub.end(self.broken)
            return sub
        self._feeds[call_id] = sub
        self._send(call(call_id))
        return sub

    def unsubscribe(self, call_id: int) -> None:
        if self._feeds.pop(call_id, None) is not None and self.broken is None:
            self._send(table_pb2.LinkCall(id=call_id, unsubscribe=table_pb2.Ack()))

    async def _write(self) -> None:
        try:
            while True:
                if not self._outbox:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                await self._pacer.ready()
                batch, self._outbox = self._outbox, []
                self._counts.up(len(batch))
                await self._call.write(table_pb2.LinkUp(calls=batch))
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            self._break(from_rpc_error(exc))
        except Exception:  # the call is over (write after the stream ended)
            self._break(ServiceError("unavailable", "the table link closed"))

    async def _read(self) -> None:
        try:
            async for down in self._call:
                events = down.events
                self._counts.down(len(events))
                self._deliver(events)
            error = ServiceError("unavailable", "the table link closed")
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            error = from_rpc_error(exc)
        self._break(error)

    def _deliver(self, events: Sequence[table_pb2.LinkEvent]) -> None:
        """One message's events, in the order the table sent them, as its clients get them.

        An answer's caller resumes on the loop's next turn, while a view reaches its
        follower at once. So the answers are resolved first, then the views before the
        last of them are handed on, and the events after it on the next turn, behind the
        callers' own messages: a mover's ``view`` and ``moved`` are written in one turn
        (``ws_protocol``: one socket write), and a later view still comes after them.
        """
        waiting = self._waiting
        last = -1
        for n, event in enumerate(events):
            answer = waiting.get(event.id)
            if answer is not None:
                last = n
                if not answer.done():
                    answer.set_result(event)
        if last < 0:
            self._hand_on(events)
            return
        self._hand_on(events[:last])
        if last + 1 < len(events):
            asyncio.get_running_loop().call_soon(self._hand_on, events[last + 1 :])

    def _hand_on(self, events: Sequence[table_pb2.LinkEvent]) -> None:
        """Views to their subscriptions; a subscription's end ends it."""
        for event in events:
            sub = self._feeds.get(event.id)
            if sub is None:
                continue
            kind = event.WhichOneof("event")
            if kind == "view":
                sub.put(event.view)
            else:
                del self._feeds[event.id]
                sub.end(_failure(event.failed) if kind == "failed" else None)

    def _break(self, error: ServiceError) -> None:
        if self.broken is not None:
            return
        if error.code not in ("unavailable", "shutting_down"):
            error = ServiceError("unavailable", "the table link failed")
        self.broken = error
        self._call.cancel()
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(error)
        self._waiting.clear()
        subs, self._feeds = self._feeds, {}
        for sub in subs.values():
            sub.end(error)
        for task in (self._writer, self._reader):
            if task is not asyncio.current_task():
                task.cancel()

    async def close(self) -> None:
        self._break(ServiceError("unavailable", "the gateway closed the link"))
        for task in (self._writer, self._reader):
            with contextlib.suppress(asyncio.CancelledError):
                await task


def dial(stub: TableAsyncStub, pace_s: float = 0.0, counts: Counts | None = None) -> Link:
    """A new link over the replica's channel that ``stub`` calls through, writing at most
    one message every ``pace_s`` (``Pacer``), counting its messages in ``counts``."""
    return Link(stub.Link(), pace_s, counts)  # type: ignore[call-arg]  # written to, not fed
