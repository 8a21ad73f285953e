"""The collector policy: survivors of generation 1 are frozen, and nothing is lost.

Each test starts the policy in this process and stops it again (everything unfrozen).
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator

import pytest

from services.common.gc_policy import THRESHOLDS, GcPolicy


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> Node:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a


def collected_normally(obj: object) -> bool:
    """True if the collector still walks ``obj`` (it is not frozen)."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
async def policy() -> AsyncIterator[GcPolicy]:
    running = GcPolicy(full_every_s=3600)
    running.start()
    try:
        yield running
    finally:
        await running.stop()


async def test_what_outlives_a_generation_1_collection_is_frozen(policy: GcPolicy) -> None:
    kept = cycle()
    assert collected_normally(kept)
    gc.collect(1)
    assert not collected_normally(kept)


async def test_frozen_cyclic_garbage_is_collected_by_the_periodic_full_collection(
    policy: GcPolicy,
) -> None:
    node = cycle()
    gone = weakref.ref(node)
    gc.collect(1)  # frozen
    del node
    gc.collect()  # a full collection does not reach frozen objects...
    assert gone() is not None
    assert policy.collect_all() >= 2  # ...the policy's own does: the cycle goes
    assert gone() is None
    assert policy.full_collections == 1


async def test_stopping_unhooks_unfreezes_and_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    running = GcPolicy(full_every_s=3600)
    running.start()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == THRESHOLDS
    await running.stop()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
    kept = cycle()
    gc.collect(1)
    assert collected_normally(kept)  # CPython's own policy again


def test_the_periods_must_be_positive() -> None:
    with pytest.raises(ValueError):
        GcPolicy(full_every_s=0)
    with pytest.raises(ValueError):
        GcPolicy(young_every_s=0)


async def test_young_collections_run_on_the_clock_free_garbage_and_freeze_the_rest() -> None:
    running = GcPolicy(full_every_s=3600, young_every_s=0.01)
    running.start()
    try:
        kept = cycle()
        garbage = cycle()
        gone = weakref.ref(garbage)
        del garbage
        for _ in range(100):  # no collection is asked for here: the policy's clock runs them
            await asyncio.sleep(0.01)
            if running.young_collections >= 3:
                break
        assert running.young_collections >= 3
        assert gone() is None  # the unreachable cycle was collected young
        assert not collected_normally(kept)  # the live one outlived a collection: frozen
    finally:
        await running.stop()


async def test_the_full_collection_comes_round_on_its_own_clock() -> None:
    running = GcPolicy(full_every_s=0.05, young_every_s=0.01)
    running.start()
    try:
        node = cycle()
        gone = weakref.ref(node)
        gc.collect(1)  # frozen
        del node
        for _ in range(100):
            await asyncio.sleep(0.01)
            if running.full_collections:
                break
        assert running.full_collections >= 1
        assert gone() is None
    finally:
        await running.stop()
