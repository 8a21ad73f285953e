"""A feed: one reader's stream of a table's views, a seat's (opened by ``subscribe``) or a
spectator's (``watch``); a bounded queue, so a slow reader never stalls its table.

The vocabulary, on both sides of a link: a **feed** is this stream; the table keeps a
``Feed`` per reader, a replica relays each to its link (``FeedRelay``), and the gateway
holds it as a ``LinkFeed`` (services/gateway/table_client.py). A seat's feed is opened with
``subscribe``, a spectator's with ``watch``.

A table pushes without waiting; a feed whose queue is full is dropped (it ends with
``unavailable`` and the gateway subscribes again). A newer feed of the same seat ends
the older one cleanly.

The reader never waits (``FeedRelay``, for a gateway's link: it only hands views on):
its ``notify`` is called at once on every push and at the end, and ``take`` hands it
what is queued, so no task sits between the table and the link.
"""

from __future__ import annotations

from collections.abc import Callable

from services._gen.rackem.v1 import game_pb2
from services.common.errors import ServiceError

__all__ = ["Feed"]


class Feed:
    def __init__(self, seat: int, limit: int, notify: Callable[[], None]) -> None:
        self.seat = seat
        self._limit = limit
        # A list, not a deque: it holds a view or two at a time (a deque's first block
        # alone is ~760 bytes).
        self._views: list[game_pb2.TableView] = []
        self._signal = notify
        self._ended = False
        self._error: ServiceError | None = None

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def error(self) -> ServiceError | None:
        """What the stream ended with (None: it ended cleanly, or has not ended)."""
        return self._error

    def push(self, view: game_pb2.TableView) -> bool:
        """Queue ``view``; False (and nothing queued) when the reader has fallen too far behind."""
        if self._ended:
            return True
        if len(self._views) >= self._limit:
            return False
        self._views.append(view)
        self._signal()
        return True

    def end(self, error: ServiceError | None = None) -> None:
        """End the stream: cleanly after what is queued, or at once with ``error``."""
        if self._ended:
            return
        self._ended = True
        self._error = error
        if error is not None:
            self._views.clear()
        self._signal()

    def take(self) -> list[game_pb2.TableView]:
        """Every view queued now, without waiting (see ``ended`` for whether more can come)."""
        views = list(self._views)
        self._views.clear()
        return views
