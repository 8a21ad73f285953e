"""Streams between services that share one process (``rackem up``), without a socket.

When the gateway and a table replica run in the same process, the replica's
``Table.Link`` handler is served here under its address as well as over gRPC, and
the gateway opens its link through ``InProcess.open`` instead of a channel. The
messages are the same protobuf messages (copied, never shared: the handler's writes
are serialized and parsed back, as gRPC would), the same handler runs, and the same
errors end a stream: a handler that raises ``ServiceError`` ends it with that error,
a replica that stops ends it ``unavailable``. What goes is the loopback socket,
HTTP/2 framing and gRPC's poller thread, two thread hand-overs a message: about
half of a lone move's round trip under ``rackem up`` (docs/performance.md).

Either side may also ``take_directly``: a message written with ``write_nowait`` is
then handed to its reader in the writer's own call when nothing is queued before it,
instead of waiting in a queue for the reader's task to be scheduled. A move then goes
from the gateway through its table and back in one loop turn. Order is kept (a
message never overtakes a queued one) and a hand-over never nests in another the
same way; anything else queues as before.

Only ``rackem up`` builds an ``InProcess`` and gives it to both services; every
other deployment, and every test of the services, links over real gRPC channels.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError

__all__ = ["DEPTH", "InProcess", "Pipe", "TableLinks", "Writer"]

log = logging.getLogger("rackem.in_process")

DEPTH = 64
"""Messages a pipe holds each way before its writer waits (gRPC's flow control, here)."""

Up = TypeVar("Up")
Down = TypeVar("Down")
Down_contra = TypeVar("Down_contra", contravariant=True)


T = TypeVar("T")


class Writer(Protocol[Down_contra]):
    """What a stream handler writes its messages to (a gRPC context, or a ``Pipe``)."""

    async def write(self, message: Down_contra) -> None: ...


Handler = Callable[[AsyncIterator[Up], Writer[Down]], Awaitable[None]]

_END = object()


def _copy(message: T) -> T:
    """A protobuf message as the other side would parse it off the wire: its own object."""
    return type(message).FromString(message.SerializeToString())  # type: ignore[attr-defined,no-any-return]


class Pipe(Generic[Up, Down]):
    """One stream: the caller writes ``Up`` and iterates ``Down``; a task runs the handler."""

    def __init__(self, handler: Handler[Up, Down], on_end: Callable[[Pipe[Up, Down]], None]):
        self._up: asyncio.Queue[object] = asyncio.Queue(DEPTH)
        self._down: asyncio.Queue[object] = asyncio.Queue()  # room for its end, always
        self._unread = 0  # messages down not yet read: at DEPTH the handler waits
        self._read_one = asyncio.Event()
        self._ended: ServiceError | None = None
        self._on_end = on_end
        # Who takes messages as they are written, when nothing is queued before them
        # (``take_directly``), each way.
        self._to_handler: _Direct[Up] = _Direct()
        self._to_caller: _Direct[Down] = _Direct()
        self._task = asyncio.ensure_future(self._serve(handler))

    # -- the caller's side (as a grpc.aio stream-stream call) -----------------------

    async def write(self, message: Up) -> None:
        """Send ``message`` up; raises the stream's error once it has ended."""
        if self._ended is not None:
            raise self._ended
        await self._up.put(_copy(message))

    def write_nowait(self, message: Up) -> bool:
        """Send ``message`` up at once if the pipe has room and has not ended: True if sent.
        (A caller with nothing queued skips a task hand-over; ``write`` when False.)"""
        if self._ended is not None:
            return False
        if self._to_handler.ready() and self._up.empty():
            self._to_handler.hand(_copy(message), self._handler_broke)
            return True
        if self._up.full():
            return False
        self._up.put_nowait(_copy(message))
        return True

    def take_directly(self, receiver: Callable[[Down], None]) -> None:
        """Hand each message down to ``receiver`` as the handler writes it, whenever nothing
        is queued before it and no hand-over is under way (else it queues for iteration,
        as before). The receiver must not wait; the caller still iterates the stream for
        the queued messages and its end."""
        self._to_caller.receiver = receiver

    def __aiter__(self) -> AsyncIterator[Down]:
        return self._read()

    async def _read(self) -> AsyncIterator[Down]:
        while True:
            item = await self._down.get()
            if item is _END:
                break
            self._unread -= 1
            self._read_one.set()
            yield item  # type: ignore[misc]
        if self._ended is not None:
            raise self._ended

    def cancel(self) -> None:
        """The caller is done: the handler is cancelled, as a cancelled call's would be."""
        _drain(self._down)  # nobody reads them now
        self._finish(ServiceError("unavailable", "the caller cancelled the stream"))
        self._task.cancel()

    # -- the handler's side ------------------------------------------------------------

    async def _requests(self) -> AsyncIterator[Up]:
        while True:
            item = await self._up.get()
            if item is _END:
                return
            yield item  # type: ignore[misc]

    async def _serve(self, handler: Handler[Up, Down]) -> None:
        end = ServiceError("unavailable", "the stream ended")
        try:
            await handler(self._requests(), _HandlerSide(self))
        except ServiceError as err:
            end = err
        except asyncio.CancelledError:
            end = ServiceError("unavailable", "the server stopped the stream")
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "in_process"}}, exc_info=True)
            end = ServiceError("internal", "internal error")
        self._finish(end)

    async def _send_down(self, message: Down) -> None:
        while self._unread >= DEPTH and self._ended is None:
            self._read_one.clear()
            await self._read_one.wait()
        if self._ended is not None:
            raise asyncio.CancelledError  # the caller went: as gRPC cancels a handler
        self._unread += 1
        self._down.put_nowait(_copy(message))

    def _send_down_nowait(self, message: Down) -> bool:
        if self._ended is not None:
            return False
        if self._to_caller.ready() and self._down.empty():
            self._to_caller.hand(_copy(message), self.cancel)  # a broken reader: caller done
            return True
        if self._unread >= DEPTH:
            return False
        self._unread += 1
        self._down.put_nowait(_copy(message))
        return True

    def _handler_broke(self) -> None:
        self._finish(ServiceError("internal", "internal error"))
        self._task.cancel()

    def _finish(self, error: ServiceError) -> None:
        if self._ended is not None:
            return
        self._ended = error
        self._to_handler.receiver = self._to_caller.receiver = None
        self._read_one.set()  # a handler waiting for room sees the end
        _drain(self._up)  # the handler is done with them
        self._up.put_nowait(_END)
        self._down.put_nowait(_END)  # after what the handler wrote, as a status after messages
        self._on_end(self)

    async def stop(self) -> None:
        """End the stream from the server's side (the replica is stopping)."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


class _HandlerSide(Generic[Up, Down]):
    """The ``Writer`` a handler gets: its writes go down the pipe."""

    def __init__(self, pipe: Pipe[Up, Down]) -> None:
        self._pipe = pipe

    async def write(self, message: Down) -> None:
        await self._pipe._send_down(message)

    def write_nowait(self, message: Down) -> bool:
        """Send ``message`` down at once if the caller has room for it: True if sent.
        (A handler with nothing queued skips a task hand-over; ``write`` when False.)"""
        return self._pipe._send_down_nowait(message)

    def take_directly(self, receiver: Callable[[Up], None]) -> None:
        """Hand each message up to ``receiver`` as the caller writes it (``write_nowait``),
        whenever nothing is queued before it and no hand-over is under way; the handler
        still iterates its requests for the queued messages and their end."""
        self._pipe._to_handler.receiver = receiver


class _Direct(Generic[T]):
    """One way of a pipe taken directly: its receiver, and whether a hand-over is under way
    (one never starts inside another: it queues instead, so order holds)."""

    __slots__ = ("busy", "receiver")

    def __init__(self) -> None:
        self.receiver: Callable[[T], None] | None = None
        self.busy = False

    def ready(self) -> bool:
        return self.receiver is not None and not self.busy

    def hand(self, message: T, broke: Callable[[], object]) -> None:
        """Give ``message`` to the receiver now; if it raises, log it and call ``broke``."""
        assert self.receiver is not None
        self.busy = True
        try:
            self.receiver(message)
        except Exception:
            log.error("internal_error", extra={"fields": {"rpc": "in_process"}}, exc_info=True)
            broke()
        finally:
            self.busy = False


def _drain(queue: asyncio.Queue[object]) -> None:
    """Drop what waits in ``queue`` (the stream is over), leaving room for its end marker."""
    while not queue.empty():
        queue.get_nowait()


class InProcess(Generic[Up, Down]):
    """Stream handlers by the address their service advertises, for callers in this process."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler[Up, Down]] = {}
        self._pipes: dict[str, set[Pipe[Up, Down]]] = {}

    def serve(self, addr: str, handler: Handler[Up, Down]) -> None:
        self._handlers[addr] = handler
        self._pipes.setdefault(addr, set())

    def open(self, addr: str) -> Pipe[Up, Down] | None:
        """A new stream to the handler at ``addr``, or None if none is served here."""
        handler = self._handlers.get(addr)
        if handler is None:
            return None
        pipes = self._pipes[addr]
        pipe: Pipe[Up, Down] = Pipe(handler, pipes.discard)
        pipes.add(pipe)
        return pipe

    def streams(self, addr: str) -> int:
        """How many streams to ``addr`` are open here."""
        return len(self._pipes.get(addr, ()))

    async def withdraw(self, addr: str) -> None:
        """Stop serving ``addr``: no new streams, and every open one ends ``unavailable``."""
        self._handlers.pop(addr, None)
        pipes = self._pipes.pop(addr, set())
        await asyncio.gather(*(pipe.stop() for pipe in list(pipes)))


TableLinks = InProcess[table_pb2.LinkUp, table_pb2.LinkDown]
"""``Table.Link`` served in process: the table replica serves it, the gateway opens it."""
