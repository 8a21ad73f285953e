"""What a change's views cost: the table's ``table_views`` per change, and what the gateway
does with each seat's view.

Run ``python3 bench/view_bench.py [--repeat R] [--moves M]``. For 2- and 4-seat tables it
plays a random match and keeps the table at each of its first M moves; ``table_views`` then
makes every seat's ``TableView`` (its whole ``view`` message as JSON) at each. The gateway's
share is reading a ``TableView`` off the link and taking its message to send as it is (over
gRPC: the ``LinkDown`` bytes parsed; the message is never decoded). Figures are CPU time (the
best of R passes, so other load on the machine skews them less), per change and per seat
view; compare figures from one run, not across machines.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from rackcore import Match, Rules
from services._gen.rackem.v1 import table_pb2 as tb
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import Seats, seat_facts, table_views

NOW = 1_700_000_000_000
TABLES = (Rules(players=2), Rules(players=4, partners=True))


@dataclass
class Moment:
    """A table as it is after one change: what ``table_views`` reads."""

    meta: TableMeta
    match: Match
    state: TableState
    seats: Seats


def moments(rules: Rules, seed: bytes, moves: int) -> list[Moment]:
    """The table after each of a random match's first ``moves`` moves (a copy at each)."""
    rnd = random.Random(seed)
    match = Match(rules, seed)
    meta = TableMeta(
        table_id="t0123456789abcdef",
        code="K7MX2Q",
        rules=rules.to_dict(),
        seed=seed.hex(),
        seats=tuple(
            SeatMeta(name=f"Player {n}", bot=False, level="medium", token_hash="")
            for n in range(rules.players)
        ),
        created_ms=NOW,
    )
    out: list[Moment] = []
    while len(out) < moves and match.phase != "match_over":
        if match.phase == "round_over":
            match.next_round()
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
        state = TableState.new(rules.players)
        state.status = "round_over" if match.phase == "round_over" else "playing"
        state.deadline_ms = NOW + 20_000
        seats = seat_facts(meta, ["human"] * rules.players, [True] * rules.players, state)
        out.append(Moment(meta, copy.deepcopy(match), state, seats))
    return out


def best_us(work: Callable[[], object], count: int, repeat: int) -> float:
    """The best of ``repeat`` runs of ``work``, in CPU µs per one of its ``count`` items."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15, help="passes; the best one counts")
    parser.add_argument("--moves", type=int, default=200, help="changes per table")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; CPU time, one core")
    rnd = random.Random(1)
    for rules in TABLES:
        table = moments(rules, rnd.randbytes(32), args.moves)
        wanted = tuple(range(rules.players))

        def views(table: list[Moment] = table, wanted: tuple[int, ...] = wanted) -> None:
            for m in table:
                table_views(m.meta, m.match, m.state, m.seats, wanted, NOW)

        made = [
            v
            for m in table
            for v in table_views(m.meta, m.match, m.state, m.seats, wanted, NOW).values()
        ]

        wire = [
            tb.LinkDown(events=[tb.LinkEvent(id=1, view=msg)]).SerializeToString() for msg in made
        ]

        def sent(wire: list[bytes] = wire) -> None:
            for data in wire:
                for event in tb.LinkDown.FromString(data).events:
                    event.view.message  # noqa: B018  (what the gateway sends)

        size = sum(len(msg.message) for msg in made) / len(made)
        table_us = best_us(views, len(table), args.repeat)
        gateway_us = best_us(sent, len(made), args.repeat)
        print(
            f"{rules.players} seats: table_views {table_us:.1f} µs per change; "
            f"gateway: a view off the link, its message taken {gateway_us:.1f} µs per seat view "
            f"({len(table)} changes, {size:.0f} bytes per message)"
        )


if __name__ == "__main__":
    main()
