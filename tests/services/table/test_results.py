"""A finished table's result (services/table/results.py): scores, places, wins, rounds
won, own turns to go out and bonus runs, from the replayed log; checked against logs made
here (bots play whole matches from fixed seeds, or moves written by hand)."""

from __future__ import annotations

import hashlib
from typing import Any

from rackcore import Match, Move, Rules, bonus_for_run, longest_run, observe
from rackcore.bots import choose
from services.table.results import places, result_of_log
from services.table.stored import SeatMeta, TableMeta, TableState


def _played(
    rules: Rules, seed: bytes
) -> tuple[Match, list[dict[str, Any]], list[tuple[int, int, int]]]:
    """A whole bot match: the match, its log, and per won round (winner, its own turns,
    its longest run), noted as the match went."""
    match = Match(rules, seed)
    outs: list[tuple[int, int, int]] = []
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        rounds = len(match.rounds)
        match.apply(choose(observe(match, match.turn), "medium", 7))
        if len(match.rounds) > rounds and match.rounds[-1].winner is not None:
            w = match.rounds[-1].winner
            outs.append((w, match.turns_taken[w], longest_run(match.racks[w], rules.descending)))
    return match, [m.to_dict() for m in match.history], outs


def _meta(rules: Rules, seed: bytes, profiles: list[str], bots: list[bool]) -> TableMeta:
    seats = tuple(
        SeatMeta(f"P{i}", bot, "medium", "" if bot else "ab" * 32, profile)
        for i, (profile, bot) in enumerate(zip(profiles, bots, strict=True))
    )
    return TableMeta("t1", "ABCDEF", rules.to_dict(), seed.hex(), seats, 0, rated=True)


def test_places_share_ties_and_put_leavers_last() -> None:
    solo = [0, 1, 2, 3]
    assert places([300, 500, 300, 100], [False] * 4, solo) == [2, 1, 2, 4]
    assert places([300, 500, 300, 100], [False, True, False, False], solo) == [1, 4, 1, 3]
    assert places([500, 500, 200, 100], [True, True, False, False], solo) == [3, 3, 1, 2]
    partners = [0, 1, 0, 1]
    assert places([400, 300, 400, 300], [False] * 4, partners) == [1, 2, 1, 2]
    assert places([400, 400, 400, 400], [False] * 4, partners) == [1, 1, 1, 1]
    # a tie on points that the rules' tiebreak gave to one side: the winner ranks first
    assert places([520, 520], [False, False], [0, 1], winner=1) == [2, 1]
    assert places([520, 520, 300], [False, False, False], [0, 1, 2], winner=0) == [1, 2, 3]
    assert places([520, 520], [True, False], [0, 1], winner=0) == [2, 1]  # but a leaver is last


def test_a_two_player_match_result_matches_its_log() -> None:
    rules = Rules(players=2, bonus=True)
    seed = hashlib.sha256(b"results-2").digest()
    match, moves, outs = _played(rules, seed)
    meta = _meta(rules, seed, ["p" + "1" * 16, ""], [False, True])
    state = TableState.new(2)
    result = result_of_log(meta, state, moves, 1234)
    assert (result.table_id, result.finished_at_ms, result.players) == ("t1", 1234, 2)
    assert result.rated and result.daily == "" and result.teams == ()
    outcome = match.outcome()
    assert outcome is not None
    for seat, got in enumerate(result.seats):
        assert got.score == match.scores[seat]
        assert got.won == (outcome.winner == seat)
        assert got.place == (1 if outcome.winner == seat else 2)  # a tie too: tiebreak
        mine = [(t, run) for w, t, run in outs if w == seat]
        assert got.rounds_won == len(mine)
        assert got.own_turns_to_go_out == tuple(t for t, _ in mine)
        bonus_runs = [run for _, run in mine if bonus_for_run(run) > 0]
        assert got.best_bonus_run == max(bonus_runs, default=0)
        assert got.own_turns == sum(1 for m in moves if m["seat"] == seat and m["act"] == "draw")
        assert not got.left
    assert result.seats[0].profile == "p" + "1" * 16 and not result.seats[0].bot
    assert result.seats[1].profile == "" and result.seats[1].bot
    assert sum(s.rounds_won for s in result.seats) == sum(
        1 for r in match.rounds if r.winner is not None
    )


def test_partners_score_by_side_and_a_leaver_ranks_last() -> None:
    rules = Rules(players=4, partners=True)
    seed = hashlib.sha256(b"results-partners").digest()
    match, moves, _ = _played(rules, seed)
    meta = _meta(rules, seed, ["pa", "pb", "pc", "pd"], [False] * 4)
    state = TableState.new(4)
    state.left[1] = True
    result = result_of_log(meta, state, moves, 1)
    totals = match.side_totals()
    outcome = match.outcome()
    assert outcome is not None
    assert result.teams == ((0, 2), (1, 3))
    assert [s.score for s in result.seats] == [totals[0], totals[1], totals[0], totals[1]]
    assert [s.won for s in result.seats] == [outcome.winner == seat % 2 for seat in range(4)]
    assert result.seats[1].left and result.seats[1].place == 3
    assert result.seats[0].place == result.seats[2].place
    assert result.seats[3].place == (1 if totals[1] > totals[0] else 2)


def test_a_hand_made_log_counts_own_turns() -> None:
    """Moves written here: whoever is to move draws from the stock and throws, without going
    out, until the round ends (the stock or the turn cap); nobody went out, nothing won."""
    rules = Rules(players=2, turn_cap=50)
    seed = bytes(32)
    match = Match(rules, seed)
    moves = []
    while match.phase != "round_over" and match.outcome() is None:
        seat = match.turn
        move = Move.draw(seat, "stock") if match.phase == "draw" else Move.throw(seat, False)
        match.apply(move)
        moves.append(move.to_dict())
    assert match.rounds[-1].winner is None
    meta = _meta(rules, seed, ["pa", "pb"], [False, False])
    result = result_of_log(meta, TableState.new(2), moves, 5)
    for seat, got in enumerate(result.seats):
        assert got.rounds_won == 0 and got.own_turns_to_go_out == () and got.best_bonus_run == 0
        assert got.score == match.scores[seat] and not got.won
