"""``rackem review FILE --seat N``: every decision of one seat, judged by the hard player.

A line per decision (the move played, the best move, the cost in own turns and the
mark), then the accuracy, the count of each mark and the three costliest decisions
with the better move in words. ``--json`` prints the ``rackem-review/1`` object
(docs/review.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rackcore import Move
    from rackcore.review import Decision, Review

__all__ = ["register", "run", "text"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "review", help="judge every decision of one seat in a finished match log"
    )
    p.add_argument("file", help="the log file ('-' for stdin); a JSON object or a server line")
    p.add_argument("--seat", type=int, required=True, help="the seat to review (0-based)")
    p.add_argument("--json", action="store_true", help="print the rackem-review/1 object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rackcore import RackError
    from rackcore.review import review
    from rackem.verify import load_log

    try:
        log = load_log(args.file)
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror}")
    except (ValueError, UnicodeDecodeError):
        return _fail("the file is not JSON")
    try:
        result = review(log, args.seat)
    except RackError as exc:
        return _fail(str(exc))
    print(json.dumps(result.to_dict()) if args.json else text(result))
    return 0


def _fail(reason: str) -> int:
    print(f"rackem review: {reason}", file=sys.stderr)
    return 2


def text(result: Review) -> str:
    """The review as lines of text: one per decision, then the summary."""
    lines = [
        f"seat {result.seat}: {len(result.decisions)} decisions",
        f"{'move':>5} {'round':>5} {'turn':>4} {'by':<6}{'played':<18}{'best':<18}"
        f"{'cost':>6}  mark",
    ]
    for d in result.decisions:
        lines.append(
            f"{d.at:>5} {d.round:>5} {d.turn:>4} {d.by or '-':<6}{_short(d, d.played):<18}"
            f"{_short(d, d.best):<18}{d.cost:>6.2f}  {d.mark}"
        )
    marks = ", ".join(f"{name} {count}" for name, count in result.marks.items())
    lines.append(f"accuracy {result.accuracy:.1f}% (marked best or good); {marks}")
    costliest = result.costliest
    if costliest:
        lines.append("costliest:")
    for rank, i in enumerate(costliest, 1):
        d = result.decisions[i]
        lines.append(
            f"  {rank}. move {d.at} (round {d.round}, turn {d.turn}): {_words(d, d.played)}; "
            f"better: {_words(d, d.best)} ({d.cost:.2f} turns)"
        )
    return "\n".join(lines)


def _short(d: Decision, move: Move) -> str:
    """A move in a few characters: ``stock``, ``discard 23``, ``23 @25``, ``throw 23``."""
    stay = " stay" if not move.go_out else ""
    if move.act == "draw":
        return "stock" if move.source == "stock" else f"discard {d.card}"
    if move.act == "repair":
        assert move.slot is not None
        return f"swap @{_mark(move.slot)}/{_mark(move.slot + 1)}"
    if move.act == "throw":
        return f"throw {d.card}{stay}"
    assert move.slot is not None
    return f"{d.card} @{_mark(move.slot)}{stay}"


def _words(d: Decision, move: Move) -> str:
    """A move as a sentence, with the cards it moves."""
    stay = ", and not go out" if not move.go_out else ""
    if move.act == "draw":
        if move.source == "stock":
            return "draw from the stock"
        return f"take the {d.card} from the discard pile"
    if move.act == "repair":
        assert move.slot is not None
        return f"swap the slots marked {_mark(move.slot)} and {_mark(move.slot + 1)}"
    if move.act == "throw":
        return f"throw the {d.card} away{stay}"
    assert move.slot is not None
    return (
        f"put the {d.card} in the slot marked {_mark(move.slot)} "
        f"(for the {d.rack[move.slot]}){stay}"
    )


def _mark(slot: int) -> int:
    """The number printed on a rack slot: index 0 is the slot marked 5."""
    return 5 * (slot + 1)
