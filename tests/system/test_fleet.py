"""A fleet: two gateways and two table replicas on one matchmaker and one Redis, each its
own process (tests/system/stack.py). The humans of a table sit on different gateways, as
a load balancer in front of the gateways spreads their connections, and a dropped
player's reconnect may land on the other gateway."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_engines import Engines

from rackem.client import Client, Message, play_match

from .conftest import SETTINGS
from .stack import Stack
from .test_matches import _check_agreement, _verify

MOVES = "rackem_gateway_move_latency_seconds_count"


class Counting(Client):
    """A client that counts the moves its gateway acknowledged (``moved``)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.moved = 0

    async def move(
        self, move: Message, *, move_id: str | None = None, version: int | None = None
    ) -> Message:
        moved = await super().move(move, move_id=move_id, version=version)
        self.moved += 1
        return moved


@pytest.fixture(scope="module")
def fleet(redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    engine = redis_engines.get("single")
    engine.flush()
    system = Stack(tmp_path_factory.mktemp("fleet"), engine.url, SETTINGS)
    system.build(tables=2, gateways=2)
    try:
        system.start()
        yield system
    finally:
        system.stop()


def _moves_answered(metrics_url: str) -> float:
    """A gateway's count of moves it forwarded and the table accepted (its /metrics)."""
    with urllib.request.urlopen(metrics_url, timeout=10) as reply:
        for line in reply.read().decode().splitlines():
            name, _, value = line.partition(" ")
            if name == MOVES:
                return float(value)
    raise AssertionError(f"no {MOVES} at {metrics_url}")


def test_the_fleet_is_two_gateways_each_ready_with_metrics_of_its_own(fleet: Stack) -> None:
    assert list(fleet.metrics_urls) == ["gateway0", "gateway1"]
    assert len(set(fleet.wss)) == len(set(fleet.metrics_urls.values())) == 2
    for url in fleet.urls:
        with urllib.request.urlopen(url + "/readyz", timeout=5) as reply:
            assert reply.status == 200


async def test_humans_on_different_gateways_play_one_table_to_the_end(
    fleet: Stack, tmp_path: Path
) -> None:
    metrics = list(fleet.metrics_urls.values())
    before = [_moves_answered(url) for url in metrics]
    ann, bob = Counting(fleet.wss[0]), Counting(fleet.wss[1])
    async with ann, bob:
        await ann.create_table("Ann", rules={"players": 2, "target": 100})
        assert ann.code is not None
        await bob.join(ann.code, "Bob")
        assert bob.table_id == ann.table_id and {ann.seat, bob.seat} == {0, 1}
        finals = list(await asyncio.gather(play_match(ann, timeout=240), play_match(bob)))
    _check_agreement(finals, 2)
    # Each seat's moves went through its own gateway, to the one table.
    after = [_moves_answered(url) for url in metrics]
    assert ann.moved > 0 and bob.moved > 0
    assert [a - b for a, b in zip(after, before, strict=True)] == [ann.moved, bob.moved]
    for url in fleet.urls:  # either gateway serves the finished match's record
        with urllib.request.urlopen(f"{url}/match/{ann.table_id}.json", timeout=10) as reply:
            assert reply.status == 200
    verdict = _verify(fleet.get_json(f"/match/{ann.table_id}.json"), tmp_path)
    assert verdict["scores"] == finals[0]["view"]["scores"]


async def test_a_dropped_player_resumes_its_seat_through_the_other_gateway(fleet: Stack) -> None:
    async with Client(fleet.wss[0]) as ann:
        await ann.create_table("Ann", rules={"players": 2, "target": 50}, start_now=True)
        first = await ann.next_view(0)
        token, seat, table_id = ann.token, ann.seat, ann.table_id
    async with Client(fleet.wss[1]) as again:
        seated = await again.resume(token)
        assert (seated["seat"], seated["table_id"]) == (seat, table_id)
        view = await again.next_view(0)
        assert view["view"]["seat"] == seat
        assert view["view"]["round_no"] >= first["view"]["round_no"]
        final = await play_match(again, timeout=240)
        assert final["status"] == "finished" and final["table_id"] == table_id
