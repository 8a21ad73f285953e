from __future__ import annotations

import asyncio

from services.matchmaker.watchers import Hub


async def test_a_change_wakes_the_watchers_of_that_table_only() -> None:
    hub = Hub()
    with hub.waiter("t1") as one, hub.waiter("t1") as also_one, hub.waiter("t2") as two:
        hub.notify("t1")
        assert one.is_set() and also_one.is_set() and not two.is_set()


async def test_an_empty_id_wakes_every_watcher() -> None:
    hub = Hub()
    with hub.waiter("t1") as one, hub.waiter("t2") as two:
        hub.notify("")
        assert one.is_set() and two.is_set()


async def test_a_closed_hub_wakes_everyone_now_and_later() -> None:
    hub = Hub()
    with hub.waiter("t1") as before:
        hub.close()
        assert before.is_set()
    with hub.waiter("t9") as after:
        assert after.is_set()


async def test_run_relays_a_change_feed() -> None:
    hub = Hub()

    async def feed() -> object:
        yield "t1"

    with hub.waiter("t1") as flag:
        await asyncio.wait_for(hub.run(feed()), 5)  # type: ignore[arg-type]
        assert flag.is_set()


async def test_watchers_are_forgotten_when_they_leave() -> None:
    hub = Hub()
    with hub.waiter("t1") as flag:
        pass
    hub.notify("t1")
    assert not flag.is_set()
