from __future__ import annotations

import asyncio

from services.matchmaker.watchers import LobbyWatchers


async def test_a_change_wakes_the_watchers_of_that_table_only() -> None:
    watchers = LobbyWatchers()
    with (
        watchers.waiter("t1") as one,
        watchers.waiter("t1") as also_one,
        watchers.waiter("t2") as two,
    ):
        watchers.notify("t1")
        assert one.is_set() and also_one.is_set() and not two.is_set()


async def test_an_empty_id_wakes_every_watcher() -> None:
    watchers = LobbyWatchers()
    with watchers.waiter("t1") as one, watchers.waiter("t2") as two:
        watchers.notify("")
        assert one.is_set() and two.is_set()


async def test_closed_watchers_wake_everyone_now_and_later() -> None:
    watchers = LobbyWatchers()
    with watchers.waiter("t1") as before:
        watchers.close()
        assert before.is_set()
    with watchers.waiter("t9") as after:
        assert after.is_set()


async def test_run_relays_a_change_feed() -> None:
    watchers = LobbyWatchers()

    async def feed() -> object:
        yield "t1"

    with watchers.waiter("t1") as flag:
        await asyncio.wait_for(watchers.run(feed()), 5)  # type: ignore[arg-type]
        assert flag.is_set()


async def test_watchers_are_forgotten_when_they_leave() -> None:
    watchers = LobbyWatchers()
    with watchers.waiter("t1") as flag:
        pass
    watchers.notify("t1")
    assert not flag.is_set()
