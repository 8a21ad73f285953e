"""What one seat may see of a match: ``observe(state, seat)`` and nothing else leaves a table."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rackcore._errors import RackError
from rackcore._legal import legal_for
from rackcore._moves import Move
from rackcore._rules import Rules
from rackcore._state import Match, RoundResult

__all__ = ["SPECTATOR", "View", "observe"]

SPECTATOR = -1
"""The observer who holds no seat: ``observe(state, SPECTATOR)`` is what every seat may see."""

Racks = tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class View:
    """Everything ``seat`` may know, and nothing more.

    Until the reveal a view holds the seat's own rack and public facts only: the
    whole discard pile (bottom first), the stock's size, the stock's order only
    when everyone watched it form (an unshuffled recycle), the held card only to
    its holder or when it came from the discard pile, each seat's pickups and
    discards this round, the slots in which a seat visibly placed a pickup
    (``known``), and the visible-center cards. ``racks`` (every rack) is filled in
    when a round or the match is over; ``seed`` only when the match is over.
    """

    seat: int
    rules: Rules
    round_no: int
    dealer: int
    turn: int
    phase: str
    rack: tuple[int, ...]
    held: int | None
    held_from: str | None
    discard: tuple[int, ...]
    stock_count: int
    stock_known: tuple[int, ...] | None
    recycles: int
    scores: tuple[int, ...]
    rounds: tuple[RoundResult, ...]
    turns_taken: tuple[int, ...]
    repair_tokens: tuple[bool, ...]
    center: tuple[int | None, ...]
    last_pickup: tuple[int | None, ...]
    pickups: tuple[tuple[int, ...], ...]
    discarded: tuple[tuple[int, ...], ...]
    known: tuple[tuple[int | None, ...], ...]
    commitment: str | None
    moves: int
    racks: Racks | None = None
    winner: int | None = None
    seed: str | None = None

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def my_turn(self) -> bool:
        return self.turn == self.seat and self.phase in ("draw", "resolve")

    def legal_moves(self) -> tuple[Move, ...]:
        """The moves this seat may make now (empty when it is not this seat's turn)."""
        if not self.my_turn:
            return ()
        can_repair = (
            self.phase == "resolve" and self.rules.repair_token and self.repair_tokens[self.seat]
        )
        return legal_for(self.seat, self.phase, self.held_from, bool(self.discard), can_repair)

    def to_dict(self) -> dict[str, Any]:
        """The view as JSON: the fields in order, every tuple a list, the full rules."""
        out: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            out[name] = _plain(value) if type(value) is tuple else value
        out["rules"] = self.rules.to_dict(full=True)
        out["rounds"] = [r.to_dict() for r in self.rounds]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> View:
        try:
            kwargs = {f.name: data[f.name] for f in fields(cls) if f.name in data}
            kwargs["rules"] = Rules.from_dict(data["rules"])
            kwargs["rounds"] = tuple(
                RoundResult(r["winner"], tuple(r["points"])) for r in data["rounds"]
            )
            for name, value in list(kwargs.items()):
                if isinstance(value, list):
                    kwargs[name] = _tupled(value)
            return cls(**kwargs)
        except (KeyError, TypeError) as exc:
            raise RackError(f"not a view: {exc}") from None


_FIELDS = tuple(f.name for f in fields(View))


def _plain(value: tuple[Any, ...]) -> list[Any]:
    return [_plain(v) if type(v) is tuple else v for v in value]


def _tupled(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tupled(v) for v in value)
    return value


def observe(state: Match, seat: int) -> View:
    """The view of ``seat``: its own rack and public information, never a hidden card.

    ``SPECTATOR`` (a watcher, not at the table) gets the public information only: no rack
    of its own (``rack`` empty), the held card only when it came from the discard pile.
    """
    if not (0 <= seat < state.players or seat == SPECTATOR):
        raise RackError(f"no seat {seat} at this table")
    revealed = state.phase in ("round_over", "match_over")
    holder_sees = state.turn == seat or state.held_from == "discard"
    rules = state.rules
    return View(
        seat=seat,
        rules=rules,
        round_no=state.round_no,
        dealer=state.dealer,
        turn=state.turn,
        phase=state.phase,
        rack=tuple(state.racks[seat]) if seat != SPECTATOR else (),
        held=state.held if holder_sees else None,
        held_from=state.held_from,
        discard=tuple(state.discard),
        stock_count=len(state.stock),
        stock_known=tuple(state.stock) if state.stock_public else None,
        recycles=state.recycles,
        scores=tuple(state.scores),
        rounds=tuple(state.rounds),
        turns_taken=tuple(state.turns_taken),
        repair_tokens=tuple(state.repair_tokens),
        center=tuple(r[4] for r in state.racks) if rules.visible_center else (),
        last_pickup=tuple(state.last_pickup),
        pickups=tuple(tuple(p) for p in state.pickups),
        discarded=tuple(tuple(d) for d in state.discarded),
        known=tuple(tuple(k) for k in state.known),
        commitment=state.commitment,
        moves=len(state.history),
        racks=tuple(tuple(r) for r in state.racks) if revealed else None,
        winner=state.winner,
        seed=state.seed.hex() if state.phase == "match_over" and state.seed else None,
    )
