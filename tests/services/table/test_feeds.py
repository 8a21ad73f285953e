from __future__ import annotations

from services._gen.rackem.v1 import game_pb2
from services.common.errors import ServiceError
from services.table.feeds import Feed


def _view(version: int) -> game_pb2.TableView:
    return game_pb2.TableView(table_id="t1", version=version)


def _unread() -> None:
    """A reader's ``notify`` that takes nothing: the test takes what is queued itself."""


def _versions(sub: Feed) -> list[int]:
    return [view.version for view in sub.take()]


def test_views_come_out_in_order_then_a_clean_end() -> None:
    sub = Feed(0, limit=4, notify=_unread)
    assert sub.push(_view(1)) and sub.push(_view(2))
    sub.end()
    assert _versions(sub) == [1, 2]
    assert sub.ended and sub.error is None and _versions(sub) == []


def test_a_reader_is_told_of_the_next_view() -> None:
    told: list[int] = []
    sub = Feed(0, limit=4, notify=lambda: told.append(len(sub.take())))
    assert not told
    sub.push(_view(7))
    assert told == [1]


def test_a_full_queue_refuses_instead_of_waiting() -> None:
    sub = Feed(0, limit=2, notify=_unread)
    assert sub.push(_view(1)) and sub.push(_view(2))
    assert not sub.push(_view(3))


def test_ending_with_an_error_drops_queued_views_and_keeps_the_error() -> None:
    sub = Feed(0, limit=4, notify=_unread)
    sub.push(_view(1))
    sub.end(ServiceError("shutting_down", "bye"))
    assert _versions(sub) == [] and sub.error is not None and sub.error.code == "shutting_down"


def test_nothing_is_queued_after_the_end() -> None:
    sub = Feed(0, limit=4, notify=_unread)
    sub.end()
    sub.push(_view(1))
    assert sub.ended and _versions(sub) == []


def test_a_reader_that_never_waits_is_called_at_each_push_and_takes_what_is_queued() -> None:
    taken: list[list[int]] = []
    ends: list[tuple[bool, str | None]] = []
    sub: Feed

    def notify() -> None:
        taken.append([v.version for v in sub.take()])
        if sub.ended:
            ends.append((True, sub.error.code if sub.error else None))

    sub = Feed(0, limit=4, notify=notify)
    sub.push(_view(1))
    sub.push(_view(2))
    assert taken == [[1], [2]] and not ends
    sub.end()
    assert ends == [(True, None)]
    other = Feed(1, limit=4, notify=lambda: None)
    other.push(_view(3))
    other.end(ServiceError("unavailable", "gone"))
    assert other.take() == [] and other.error is not None and other.error.code == "unavailable"
