"""``asyncio.Event`` and ``asyncio.Queue`` without the deques they make for every instance.

A ``collections.deque`` costs ~760 bytes even when empty (its first block of 64 slots is
made with it). ``asyncio.Event`` makes one for its waiters; ``asyncio.Queue`` makes three
(items, getters, putters) and an ``Event`` with a fourth. A WebSocket connection had two
queues and two events (uvicorn's and the gateway's) and a seat two more events: about
8 KB per player for deques that almost always hold nothing or one item
(docs/performance.md, *Memory*). These keep the same semantics with lists, made only
when something has to wait:

- ``Event``: ``set``, ``clear``, ``is_set``, ``wait`` as ``asyncio.Event``;
- ``Queue``: FIFO ``put_nowait`` (``asyncio.QueueFull`` past ``maxsize``; 0: unbounded),
  ``get``, ``get_nowait`` (``asyncio.QueueEmpty``), ``empty``, ``qsize``, ``full``, as
  ``asyncio.Queue`` — for producers that never wait (no ``put``, no ``join``).

Both belong to the running loop of whoever first waits on them, as asyncio's do.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

__all__ = ["Event", "Queue"]

T = TypeVar("T")

_COMPACT = 64  # a queue's consumed head is cut off past this many items


def _wake_first(waiters: list[asyncio.Future[None]]) -> None:
    while waiters:
        waiter = waiters.pop(0)
        if not waiter.done():
            waiter.set_result(None)
            return


class Event:
    """``asyncio.Event`` with its waiters in a list made by the first ``wait``."""

    __slots__ = ("_value", "_waiters")

    def __init__(self) -> None:
        self._value = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if self._value:
            return
        self._value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        waiters = self._waiters
        waiters.append(waiter)
        try:
            await waiter
            return True
        finally:
            if waiter in waiters:
                waiters.remove(waiter)


class Queue(Generic[T]):
    """A FIFO queue as ``asyncio.Queue`` for producers that never wait (``put_nowait``)."""

    __slots__ = ("_getters", "_head", "_items", "maxsize")

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self._items: list[T] = []
        self._head = 0  # items before it were taken
        self._getters: list[asyncio.Future[None]] | None = None

    def qsize(self) -> int:
        return len(self._items) - self._head

    def empty(self) -> bool:
        return self._head == len(self._items)

    def full(self) -> bool:
        return 0 < self.maxsize <= self.qsize()

    def put_nowait(self, item: T) -> None:
        if self.full():
            raise asyncio.QueueFull
        self._items.append(item)
        if self._getters:
            _wake_first(self._getters)

    def get_nowait(self) -> T:
        if self.empty():
            raise asyncio.QueueEmpty
        items = self._items
        item = items[self._head]
        self._head += 1
        if self._head == len(items):
            items.clear()
            self._head = 0
        elif self._head >= _COMPACT:
            del items[: self._head]
            self._head = 0
        if self._getters and not self.empty():
            _wake_first(self._getters)  # the woken getter may have been cancelled meanwhile
        return item

    async def get(self) -> T:
        while self.empty():
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if self._getters is None:
                self._getters = []
            getters = self._getters
            getters.append(getter)
            try:
                await getter
            except BaseException:
                if getter in getters:
                    getters.remove(getter)
                elif not self.empty():
                    _wake_first(getters)  # it was woken, then cancelled: wake the next
                raise
        return self.get_nowait()
