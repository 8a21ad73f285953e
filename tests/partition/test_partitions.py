"""Each fault of the nemesis (tests/partition/faults.py), once, on the whole stack in
namespaces of its own (tests/partition/netstack.py), while matches are played over
WebSockets by players that resume and retry (tests/partition/players.py):

- safety, for every fault: every match finishes, every final log verifies, every
  acknowledged move is in its log exactly once, no match is logged twice;
- liveness after every heal: every table in play moves again within the lease, the
  takeover and a client's resend (``rounds.AFTER_HEAL_S``);
- liveness during a kill, and during the two cuts of issue 34 (a replica cut from
  Redis; a replica cut from the gateways and the matchmaker): the players' moves are
  acknowledged again within that same bound while the cut lasts.

A few matches a fault, a few seconds each (docs/partitions.md; bench/nemesis.py is the
long run). Needs root: ``ip netns`` and ``nft`` (CI runs as root).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .checker import Report, Window, format_table
from .faults import FAULTS, Nemesis
from .netns import Network, available
from .netstack import NetStack
from .rounds import AFTER_HEAL_S, SETTINGS, play_round

SHORT_S = 4.0  # each fault's length
LONG_S = 8.0  # the cuts whose players must move again while they last: past the bound
LONG = ("replica-redis", "replica-gateways")
TABLES = 2

_why_not = available()
if _why_not is not None and os.environ.get("CI") != "true":
    pytest.skip(f"partition tests: {_why_not}", allow_module_level=True)


class Rounds:
    """One round a fault kind, played on first use and kept for the module's tests."""

    def __init__(self, stack: NetStack) -> None:
        self.stack = stack
        self.nemesis = Nemesis(stack)
        self.done: dict[str, tuple[Report, Window]] = {}

    async def get(self, kind: str) -> tuple[Report, Window]:
        if kind not in self.done:
            seconds = LONG_S if kind in LONG else SHORT_S
            report, window = await play_round(self.stack, self.nemesis, kind, seconds, TABLES)
            print(format_table(report, lambda _: AFTER_HEAL_S))
            self.done[kind] = report, window
        return self.done[kind]


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rounds]:
    workdir: Path = tmp_path_factory.mktemp("partition")
    with Network() as net:
        stack = NetStack(workdir, net, SETTINGS)
        stack.build()
        try:
            stack.start()
            yield Rounds(stack)
        finally:
            stack.stop()


@pytest.mark.parametrize("kind", FAULTS)
async def test_nothing_acknowledged_is_lost_and_every_table_moves_after_the_heal(
    rounds: Rounds, kind: str
) -> None:
    report, _window = await rounds.get(kind)
    assert report.safe, report.violations
    assert report.matches == report.finished == TABLES
    assert report.acknowledged > TABLES * 50
    ((_, stall),) = report.stalls
    assert stall.tables == TABLES
    assert stall.after <= AFTER_HEAL_S, (
        f"{kind}: a table made its first move {stall.after:.2f} s after the heal "
        f"(bound {AFTER_HEAL_S} s)"
    )


async def test_a_killed_replicas_tables_move_again_within_the_lease_and_takeover(
    rounds: Rounds,
) -> None:
    report, window = await rounds.get("replica-kill")
    ((_, stall),) = report.stalls
    assert stall.during <= AFTER_HEAL_S, (window, stall)


async def test_players_move_again_while_their_replica_is_cut_from_redis(rounds: Rounds) -> None:
    """Issue 34: an owner that cannot write steps aside; the players' gateways follow the
    new owner, while the cut lasts."""
    report, window = await rounds.get("replica-redis")
    ((_, stall),) = report.stalls
    assert stall.players <= AFTER_HEAL_S, (
        f"{window.detail} cut from Redis for {window.end - window.start:.1f} s: a table's "
        f"players had no move acknowledged for {stall.players:.2f} s "
        f"(any move: {stall.during:.2f} s; bound {AFTER_HEAL_S} s)"
    )


async def test_players_move_again_while_their_replica_is_cut_from_the_gateways(
    rounds: Rounds,
) -> None:
    """Issue 34: an owner the gateways cannot reach loses its tables to one they can."""
    report, window = await rounds.get("replica-gateways")
    ((_, stall),) = report.stalls
    assert stall.players <= AFTER_HEAL_S, (
        f"{window.detail} cut from the gateways for {window.end - window.start:.1f} s: a "
        f"table's players had no move acknowledged for {stall.players:.2f} s "
        f"(any move: {stall.during:.2f} s; bound {AFTER_HEAL_S} s)"
    )
