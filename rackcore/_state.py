"""The authoritative state of one match, and the only code that changes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rackcore._errors import IllegalMoveError, LogError, MatchOverError, NotYourTurnError
from rackcore._legal import legal_for
from rackcore._moves import Move
from rackcore._rng import Stream, commitment, deck_for_round, first_dealer, new_seed, shuffle
from rackcore._rules import Rules
from rackcore._scoring import OUT_POINTS, bonus_for_run, is_winning, longest_run, rack_points

__all__ = ["Match", "Outcome", "RoundResult"]

SLOTS = 10


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How a round ended: who went out (``None`` for no winner) and each seat's points."""

    winner: int | None
    points: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "points": list(self.points)}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a match: the winning side (a seat, or a pair 0/1 with partners)."""

    winner: int
    scores: tuple[int, ...]


class Match:
    """A match from rules and a seed (or stacked decks). Change it only through ``apply``.

    ``phase`` is ``draw`` or ``resolve`` during a turn, ``round_over`` between rounds
    (the racks are still those of the finished round, and revealed), and
    ``match_over`` at the end.
    """

    def __init__(
        self,
        rules: Rules | None = None,
        seed: bytes | None = None,
        *,
        decks: list[list[int]] | None = None,
        dealer: int | None = None,
    ) -> None:
        self.rules = rules or Rules()
        n = self.rules.players
        if decks is not None:
            if seed is not None:
                raise LogError("a match has either a seed or stacked decks, not both")
            if self.rules.reshuffle_on_recycle:
                raise LogError("stacked decks cannot use reshuffle_on_recycle")
            if dealer is None or type(dealer) is not int or not 0 <= dealer < n:
                raise LogError(f"first_dealer must be an integer from 0 to {n - 1}")
            self.seed: bytes | None = None
            self.first_dealer = dealer
        else:
            if seed is None:
                seed = new_seed()
            if len(seed) != 32:
                raise LogError("a seed is 32 bytes")
            self.seed = seed
            self.first_dealer = first_dealer(seed, n)
        self.decks = decks
        self.commitment = commitment(self.seed) if self.seed is not None else None
        self.scores = [0] * n
        self.rounds: list[RoundResult] = []
        self.history: list[Move] = []
        self.winner: int | None = None
        self.round_no = 0
        self._deal(1)

    # -- reading -------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.rules.players

    def legal_moves(self) -> tuple[Move, ...]:
        """Every legal move of the seat to move (empty once the match is over)."""
        if self.phase == "match_over":
            return ()
        return legal_for(
            self.turn,
            self.phase,
            self.held_from,
            self.phase == "round_over" or bool(self.discard),
            self._can_repair(),
        )

    def outcome(self) -> Outcome | None:
        if self.winner is None:
            return None
        return Outcome(self.winner, tuple(self.scores))

    def side_totals(self) -> list[int]:
        totals = [0] * self.rules.sides
        for seat, score in enumerate(self.scores):
            totals[self.rules.side_of(seat)] += score
        return totals

    # -- changing ------------------------------------------------------------

    def apply(self, move: Move) -> None:
        """Validate ``move`` and play it; an illegal move changes nothing and raises."""
        self._check(move)
        if self.phase == "round_over":
            self.next_round()
        if move.act == "draw":
            self._draw(move)
        elif move.act == "repair":
            self._repair(move)
        else:
            self._finish_turn(move)
        self.history.append(move)

    def next_round(self) -> None:
        """Deal the next round. ``apply`` does this by itself for the first move after a round."""
        if self.phase != "round_over":
            raise IllegalMoveError("the round is not over")
        self._deal(self.round_no + 1)

    # -- internals -----------------------------------------------------------

    def _can_repair(self) -> bool:
        return self.phase == "resolve" and self.rules.repair_token and self.repair_tokens[self.turn]

    def _check(self, move: Move) -> None:
        if self.phase == "match_over":
            raise MatchOverError("the match is over")
        if move.seat != self.turn:
            raise NotYourTurnError(f"it is seat {self.turn}'s turn, not seat {move.seat}'s")
        if self.phase in ("draw", "round_over"):
            if move.act != "draw":
                raise IllegalMoveError("draw first: from the stock or the discard pile")
            if move.source == "discard" and self.phase == "draw" and not self.discard:
                raise IllegalMoveError("the discard pile is empty")
            return
        if move.act == "draw":
            raise IllegalMoveError("you already drew: place or throw the card you hold")
        if move.act == "throw" and self.held_from != "stock":
            raise IllegalMoveError("a card taken from the discard pile must be placed")
        if move.act == "repair" and not self._can_repair():
            raise IllegalMoveError("no repair token to spend")

    def _deal(self, round_no: int) -> None:
        n, size = self.players, self.rules.deck_size
        if self.decks is not None:
            if round_no > len(self.decks):
                raise LogError(f"the log has no stacked deck for round {round_no}")
            deck = self.decks[round_no - 1]
            if sorted(deck) != list(range(1, size + 1)):
                raise LogError(f"the deck of round {round_no} is not a permutation of 1..{size}")
            deck = list(deck)
        else:
            assert self.seed is not None
            deck = deck_for_round(self.seed, round_no, size)
        self.round_no = round_no
        self.dealer = (self.first_dealer + round_no - 1) % n
        self.racks = [[0] * SLOTS for _ in range(n)]
        pos = 0
        for slot in range(SLOTS - 1, -1, -1):
            for k in range(1, n + 1):
                self.racks[(self.dealer + k) % n][slot] = deck[pos]
                pos += 1
        self.discard = [deck[pos]]
        self.stock = deck[pos + 1 :]
        self.turn = (self.dealer + 1) % n
        self.phase = "draw"
        self.held: int | None = None
        self.held_from: str | None = None
        self.recycles = 0
        self.stock_public = False
        self.turns_taken = [0] * n
        self.repair_tokens = [self.rules.repair_token] * n
        self.last_pickup: list[int | None] = [None] * n
        self.pickups: list[list[int]] = [[] for _ in range(n)]
        self.discarded: list[list[int]] = [[] for _ in range(n)]
        self.known: list[list[int | None]] = [[None] * SLOTS for _ in range(n)]
        self.went_out: int | None = None

    def _draw(self, move: Move) -> None:
        seat = move.seat
        if move.source == "discard":
            card = self.discard.pop()
            self.last_pickup[seat] = card
            self.pickups[seat].append(card)
        else:
            if not self.stock:
                if self.recycles >= self.rules.max_recycles:
                    self._end_round(None)
                    return
                self._recycle()
            card = self.stock.pop(0)
        self.held = card
        self.held_from = move.source
        self.phase = "resolve"

    def _recycle(self) -> None:
        self.recycles += 1
        top = self.discard.pop()
        stock = self.discard
        if self.rules.reshuffle_on_recycle:
            assert self.seed is not None
            label = f"recycle/{self.round_no}/{self.recycles}"
            stock = shuffle(stock, Stream(self.seed, label))
        self.stock = stock
        self.stock_public = not self.rules.reshuffle_on_recycle
        self.discard = [top]

    def _repair(self, move: Move) -> None:
        assert move.slot is not None
        rack, known, i = self.racks[move.seat], self.known[move.seat], move.slot
        rack[i], rack[i + 1] = rack[i + 1], rack[i]
        known[i], known[i + 1] = known[i + 1], known[i]
        self.repair_tokens[move.seat] = False

    def _finish_turn(self, move: Move) -> None:
        seat, card = move.seat, self.held
        assert card is not None
        if move.act == "place":
            assert move.slot is not None
            out = self.racks[seat][move.slot]
            self.racks[seat][move.slot] = card
            self.known[seat][move.slot] = card if self.held_from == "discard" else None
        else:
            out = card
        self.discard.append(out)
        self.discarded[seat].append(out)
        self.held = None
        self.held_from = None
        self.turns_taken[seat] += 1
        rules = self.rules
        if move.go_out and is_winning(self.racks[seat], rules.run_needed, rules.descending):
            self._end_round(seat)
        elif self.turns_taken[seat] >= rules.turn_cap:
            self._end_round(None)
        else:
            self.turn = (seat + 1) % self.players
            self.phase = "draw"

    def _end_round(self, winner: int | None) -> None:
        rules = self.rules
        points = []
        for seat, rack in enumerate(self.racks):
            if seat == winner:
                bonus = bonus_for_run(longest_run(rack, rules.descending)) if rules.bonus else 0
                points.append(OUT_POINTS + bonus)
            else:
                points.append(rack_points(rack, rules.descending))
        for seat, p in enumerate(points):
            self.scores[seat] += p
        self.rounds.append(RoundResult(winner, tuple(points)))
        self.went_out = winner
        self.held = None
        self.held_from = None
        self.turn = (self.dealer + 2) % self.players
        self.phase = "round_over"
        self.winner = self._match_winner(winner)
        if self.winner is not None:
            self.phase = "match_over"

    def _match_winner(self, went_out: int | None) -> int | None:
        rules = self.rules
        totals = self.side_totals()
        contenders = [s for s, total in enumerate(totals) if total >= rules.target]
        if not contenders:
            return None
        top = max(totals[s] for s in contenders)
        tied = [s for s in contenders if totals[s] == top]
        if len(tied) == 1:
            return tied[0]
        if rules.tiebreak == "extra_round":
            return None
        if went_out is not None and rules.side_of(went_out) in tied:
            return rules.side_of(went_out)
        return min(tied)
