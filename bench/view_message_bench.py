"""What one ``view`` message costs the gateway: the old path through rackcore's ``View``, and now.

Run ``python3 bench/view_message_bench.py [--repeat R]``. Views come from random matches
(2 to 4 players, varied rules), every seat at every move, built as the table builds them.
Each figure is CPU time per view (the best of R passes over every view), so other load
on the machine skews it less; compare figures from one run, not across machines.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rackcore import Match, Rules
from services._gen.rackem.v1 import game_pb2 as pb
from services.gateway import messages
from services.gateway.protocol import encode
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import seat_infos, table_view

ROOT = Path(__file__).resolve().parent.parent
_clock = time.process_time
TABLES = (
    Rules(players=2),
    Rules(players=3, bonus=True, repair_token=True),
    Rules(players=4, partners=True, visible_center=True),
)
NOW = 1_700_000_000_000


def _reference() -> Callable[[pb.TableView], dict[str, Any]]:
    """The old ``messages.view`` (a rackcore ``View``, its legal moves, ``View.to_dict()``),
    kept once, as the reference of tests/services/gateway/test_view_message.py."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    module: Any = importlib.import_module("tests.services.gateway.test_view_message")
    reference: Callable[[pb.TableView], dict[str, Any]] = module.reference_view
    return reference


old_view = _reference()


def table_views(rules: Rules, seed: bytes, moves: int) -> list[pb.TableView]:
    """Every seat's ``TableView`` after each of a random match's first ``moves`` moves."""
    rnd = random.Random(seed)
    match = Match(rules, seed)
    meta = TableMeta(
        table_id="t0123456789abcdef",
        code="K7MX2Q",
        rules=rules.to_dict(),
        seed=seed.hex(),
        seats=tuple(
            SeatMeta(name=f"Player {n}", bot=n > 0, level="medium", token_hash="")
            for n in range(rules.players)
        ),
        created_ms=NOW,
    )
    state = TableState.new(rules.players)
    kinds = ["human"] + ["bot"] * (rules.players - 1)
    connected = [True] * rules.players
    out: list[pb.TableView] = []
    while len(match.history) < moves and match.phase != "match_over":
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
        state.status = "round_over" if match.phase == "round_over" else "playing"
        state.deadline_ms = NOW + 20_000
        seats = seat_infos(meta, kinds, connected, state)
        out.extend(
            table_view(meta, match, state, seats, seat, NOW) for seat in range(rules.players)
        )
    return out


def per_view_us(
    views: list[pb.TableView], works: dict[str, Callable[[pb.TableView], object]], repeat: int
) -> dict[str, float]:
    """Each work's best pass over ``views``, in µs per view; passes alternate between works."""
    best = dict.fromkeys(works, float("inf"))
    for _ in range(repeat):
        for name, work in works.items():
            started = _clock()
            for msg in views:
                work(msg)
            best[name] = min(best[name], _clock() - started)
    return {name: seconds / len(views) * 1e6 for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9, help="passes; the best one counts")
    parser.add_argument("--moves", type=int, default=300, help="moves played per match")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU time, one core")

    rnd = random.Random(1)
    views = [v for rules in TABLES for v in table_views(rules, rnd.randbytes(32), args.moves)]
    for msg in views:
        assert encode(messages.view(msg)) == encode(old_view(msg)), "the messages differ"
    built = [messages.view(msg) for msg in views]
    size = sum(len(encode(m).encode()) for m in built) / len(built)
    print(f"{len(views)} views of {len(TABLES)} matches, {size:.0f} bytes per message on average")

    def old(msg: pb.TableView) -> str:
        return encode(old_view(msg))

    def new(msg: pb.TableView) -> str:
        return encode(messages.view(msg))

    us = per_view_us(views, {"old": old, "new": new}, args.repeat)
    before, after = us["old"], us["new"]
    print(f"view + encode: before {before:.1f} µs, after {after:.1f} µs ({before / after:.1f}x)")
    us = per_view_us(views, {"old": old_view, "new": messages.view}, args.repeat)
    before, after = us["old"], us["new"]
    print(f"view alone:    before {before:.1f} µs, after {after:.1f} µs ({before / after:.1f}x)")

    # The encoding alone, of messages built once: what is left of the cost after the change.
    by_index = dict(zip(map(id, views), built, strict=True))

    def encoder(dumps: Callable[[dict[str, Any]], str]) -> Callable[[pb.TableView], object]:
        return lambda msg: dumps(by_index[id(msg)])

    variants: dict[str, Callable[[dict[str, Any]], str]] = {
        "protocol.encode (orjson: compact, UTF-8)": encode,
        "json.dumps defaults (spaces, ASCII escapes)": json.dumps,
        "compact, ensure_ascii=False, check_circular=False": lambda m: json.dumps(
            m, separators=(",", ":"), ensure_ascii=False, check_circular=False
        ),
    }
    us = per_view_us(views, {name: encoder(d) for name, d in variants.items()}, args.repeat)
    for name, cost in us.items():
        print(f"{name:52s} {cost:.1f} µs")


if __name__ == "__main__":
    main()
