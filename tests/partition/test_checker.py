"""The checker (tests/partition/checker.py) on made-up runs: it passes a faithful one and
names each kind of loss, duplicate and stall. No network, no root."""

from __future__ import annotations

from typing import Any

from rackcore import Match, Rules, new_seed, observe, to_log
from rackcore.bots import choose

from .checker import Window, check
from .players import Ack, Player, Sent


def _match() -> dict[str, Any]:
    match = Match(Rules.from_dict({"players": 2, "target": 100}), seed=new_seed())
    n = 0
    while match.phase != "match_over":
        if match.phase == "round_over":
            match.next_round()
            continue
        match.apply(choose(observe(match, match.turn), "easy", n))
        n += 1
    return to_log(match)


def _players(log: dict[str, Any], table_id: str = "t1") -> list[Player]:
    """Two players who saw every one of their moves acknowledged, one a second."""
    players = [Player(f"p{seat}", ["ws://x/ws"]) for seat in (0, 1)]
    for seat, player in enumerate(players):
        player.table_id, player.seat = table_id, seat
        player.final = {"status": "finished", "ended_reason": "finished"}
        player.finished_at = float(len(log["moves"]) + 1)
    for index, logged in enumerate(log["moves"]):
        player = players[logged["seat"]]
        move = {k: v for k, v in logged.items() if k != "seat"}
        move_id = f"{player.name}-{index}"
        at = float(index + 1)
        player.sent[move_id] = Sent(move, index, at, at)
        player.acks.append(Ack(move_id, index + 1, at))
        for each in players:
            each.views.append((at, index + 1))
    for player in players:
        player.views.insert(0, (0.0, 0))
    return players


def test_a_faithful_run_is_safe() -> None:
    log = _match()
    players = _players(log)
    report = check(players, {"t1": log}, [{"event": "match_record", "table": "t1"}])
    assert report.safe, report.violations
    assert report.matches == report.finished == 1
    assert report.acknowledged == len(log["moves"])


def test_each_loss_and_duplicate_is_named() -> None:
    log = _match()
    players = _players(log)
    first, second = players
    # A move acknowledged that the log does not hold where its answer said.
    wrong = first.acks[3]
    first.acks[3] = Ack(wrong.move_id, wrong.version + 1, wrong.at)
    # A retry acknowledged at a second version: applied twice.
    second.acks.append(Ack(second.acks[0].move_id, len(log["moves"]), 99.0))
    # A match that did not finish for one of its players.
    second.final = {"status": "ended", "ended_reason": "abandoned"}
    records = [{"event": "match_record", "table": "t1"}] * 2  # logged twice
    report = check(players, {"t1": log}, records)
    text = "\n".join(report.violations)
    assert f"{wrong.move_id} v{wrong.version + 1} is" in text
    assert f"{second.acks[0].move_id} acknowledged at" in text
    assert "did not finish" in text
    assert "logged 2 times" in text
    # A log that does not verify, and one that is missing.
    bad = {**log, "moves": log["moves"][:-1]}
    bad_report = check(_players(log), {"t1": bad}, [{"table": "t1"}])
    assert any("does not verify" in v for v in bad_report.violations)
    assert any("no final log" in v for v in check(_players(log), {}, []).violations)


def test_stalls_are_measured_within_the_window_and_after_the_heal() -> None:
    log = _match()
    players = _players(log)
    # Moves at 1, 2, 3 … s; nothing between 10 and 20 s (a cut from 9.5 to 15 s).
    for player in players:
        player.views = [(t if t < 10 else t + 10, v) for t, v in player.views]
        player.acks = [
            Ack(a.move_id, a.version, a.at if a.at < 10 else a.at + 10) for a in player.acks
        ]
        player.finished_at = 1000.0
    window = Window("replica-redis", 9.5, 15.0)
    report = check(players, {"t1": log}, [{"table": "t1"}], [window])
    ((_, stall),) = report.stalls
    assert stall.tables == 1
    assert abs(stall.during - 5.5) < 1e-6  # from the last move at 9 s… within the window
    assert abs(stall.after - 5.0) < 1e-6  # the next move at 20 s
    assert abs(stall.players - 5.5) < 1e-6
