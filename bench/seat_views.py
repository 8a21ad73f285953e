"""A seat's views as the benchmarks read them off a gateway's link: one at a time, in order
(``views``), and decoded back to rackcore's ``View`` (``view_of``).

The gateway itself never waits on a view (it hands each on in ``on_view``); a bench that
plays a seat answers one view before it reads the next, so the views queue up here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson

from rackcore import View
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.gateway.table_client import Link

__all__ = ["view_of", "views"]


async def views(link: Link, request: table_pb2.SeatRequest) -> AsyncIterator[game_pb2.TableView]:
    """The seat's views until its feed ends; raises what the feed ended with."""
    queue: asyncio.Queue[game_pb2.TableView | None] = asyncio.Queue()
    feed = link.subscribe(request, queue.put_nowait)
    ended = asyncio.ensure_future(feed.finished())
    ended.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (view := await queue.get()) is not None:
            yield view
        await ended
    finally:
        feed.close()
        if not ended.cancel():  # it had ended: read its error, if any, so none is left unread
            ended.exception()


def view_of(view: game_pb2.TableView) -> View:
    """The seat's view a ``TableView`` carries (in its ``view`` message), as rackcore's."""
    return View.from_dict(orjson.loads(view.message)["view"])
