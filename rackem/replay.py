"""``rackem replay FILE``: a readable account of a logged match, round by round."""

from __future__ import annotations

import argparse
from typing import Any

from rackcore import LogError, Move, RackError, match_from_log


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("replay", help="print a readable account of a match log")
    p.add_argument("file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rackem.verify import load_log

    try:
        log = load_log(args.file)
        match = match_from_log(log)
    except (OSError, ValueError, LogError) as exc:
        print(f"cannot replay: {exc}")
        return 2
    round_no = 0
    for index, data in enumerate(log["moves"]):
        try:
            if match.phase == "round_over":
                match.next_round()
        except RackError as exc:
            print(f"move {index}: refused: {exc}")
            return 1
        if match.round_no != round_no:
            round_no = match.round_no
            print(f"\nRound {round_no} (dealer seat {match.dealer})")
            for seat, rack in enumerate(match.racks):
                print(f"  seat {seat} dealt {' '.join(map(str, rack))}")
        try:
            move = Move.from_dict(data)
            before = match.held
            match.apply(move)
        except RackError as exc:
            print(f"move {index}: refused: {exc}")
            return 1
        print(f"  {index:4d}  {_describe(move, before, match.held)}")
        if match.phase in ("round_over", "match_over"):
            last = match.rounds[-1]
            who = "no winner" if last.winner is None else f"seat {last.winner} goes out"
            print(f"  round over: {who}; points {list(last.points)}; totals {match.scores}")
    if match.winner is not None:
        print(f"\nMatch won by side {match.winner} with {match.side_totals()}")
    return 0


def _describe(move: Move, before: int | None, after: int | None) -> str:
    if move.act == "draw":
        return f"seat {move.seat} draws from the {move.source}"
    if move.act == "place":
        return f"seat {move.seat} places {before} at slot {move.slot}"
    if move.act == "repair":
        return f"seat {move.seat} swaps slots {move.slot} and {(move.slot or 0) + 1}"
    return f"seat {move.seat} throws {before}"
