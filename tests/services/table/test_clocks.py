from __future__ import annotations

from dataclasses import replace

from services.table.clocks import Facts, Step, Timing, next_step

TIMING = Timing(bot_delay_ms=1000, abandon_ms=120_000)
BASE = Facts(
    status="playing",
    turn=0,
    kinds=("human", "bot"),
    connected=(True, False),
    continued=(False, False),
    deadline_ms=50_000,
    continue_deadline_ms=0,
    last_change_ms=5_000,
    alone_since_ms=None,
)


def test_a_connected_human_to_move_is_covered_at_the_deadline() -> None:
    assert next_step(BASE, TIMING) == Step("cover", 50_000, 0)


def test_a_bot_moves_a_delay_after_the_last_change_while_a_human_watches() -> None:
    assert next_step(replace(BASE, turn=1), TIMING) == Step("bot", 6_000, 1)


def test_a_cover_plays_like_a_bot() -> None:
    facts = replace(BASE, kinds=("cover", "bot"), deadline_ms=0)
    assert next_step(facts, TIMING) == Step("bot", 6_000, 0)


def test_bots_move_at_once_at_a_table_of_bots_only() -> None:
    facts = replace(
        BASE, turn=1, kinds=("bot", "bot"), connected=(False, False), alone_since_ms=4_000
    )
    assert next_step(facts, TIMING) == Step("bot", 5_000, 1)


def test_bots_keep_the_pace_when_no_human_is_connected_after_the_grace() -> None:
    facts = replace(
        BASE,
        turn=1,
        connected=(False, False),
        alone_since_ms=4_000,
        away_since_ms=(-60_000, 0),
    )
    assert next_step(facts, TIMING) == Step("bot", 6_000, 1)


def test_a_connected_bot_seat_does_not_count_as_a_human_watching() -> None:
    facts = replace(
        BASE, turn=1, connected=(False, True), alone_since_ms=4_000, away_since_ms=(4_000, None)
    )
    assert next_step(facts, TIMING) == Step("bot", 64_000, 1)


def test_a_covered_human_who_dropped_is_waited_for_during_the_grace() -> None:
    facts = replace(
        BASE,
        kinds=("cover", "bot"),
        connected=(False, False),
        deadline_ms=0,
        alone_since_ms=4_000,
        away_since_ms=(4_000, 0),
    )
    assert next_step(facts, TIMING) == Step("bot", 64_000, 0)
    # ... and so is the only human whose turn it is not: no bot races ahead either.
    bots_turn = replace(facts, turn=1)
    assert next_step(bots_turn, TIMING) == Step("bot", 64_000, 1)
    # Back on a connection, the cover plays at the bots' pace while the human watches.
    back = replace(facts, connected=(True, False), alone_since_ms=None, away_since_ms=(None, 0))
    assert next_step(back, TIMING) == Step("bot", 6_000, 0)


def test_another_connected_human_plays_on_but_the_dropped_seats_cover_waits() -> None:
    facts = replace(
        BASE,
        kinds=("cover", "human", "bot"),
        connected=(False, True, False),
        continued=(False, False, False),
        deadline_ms=0,
        away_since_ms=(4_000, None, 0),
    )
    assert next_step(facts, TIMING) == Step("bot", 64_000, 0)
    assert next_step(replace(facts, turn=2), TIMING) == Step("bot", 6_000, 2)


def test_the_grace_of_an_uncovered_human_holds_the_bots_but_not_their_clock() -> None:
    facts = replace(BASE, connected=(False, False), alone_since_ms=4_000, away_since_ms=(4_000, 0))
    assert next_step(facts, TIMING) == Step("cover", 50_000, 0)
    assert next_step(replace(facts, turn=1), TIMING) == Step("bot", 64_000, 1)


def test_the_round_over_screen_stays_for_a_human_who_dropped_until_its_deadline() -> None:
    facts = replace(
        BASE,
        status="round_over",
        connected=(False, False),
        deadline_ms=0,
        continue_deadline_ms=20_000,
        alone_since_ms=4_000,
        away_since_ms=(4_000, 0),
    )
    assert next_step(facts, TIMING) == Step("deal", 20_000)
    nobody_away_long = replace(facts, away_since_ms=(-59_000, 0))
    assert next_step(nobody_away_long, TIMING) == Step("deal", 5_000)


def test_the_round_over_screen_waits_for_connected_humans_until_its_deadline() -> None:
    facts = replace(BASE, status="round_over", deadline_ms=0, continue_deadline_ms=20_000)
    assert next_step(facts, TIMING) == Step("deal", 20_000)


def test_the_next_round_is_dealt_once_every_connected_human_continued() -> None:
    facts = replace(
        BASE,
        status="round_over",
        kinds=("human", "human"),
        connected=(True, False),
        continued=(True, False),
        continue_deadline_ms=20_000,
    )
    assert next_step(facts, TIMING) == Step("deal", 5_000)


def test_a_table_nobody_watches_is_abandoned_when_nothing_comes_sooner() -> None:
    facts = replace(BASE, connected=(False, False), alone_since_ms=1_000, deadline_ms=0)
    assert next_step(facts, TIMING) == Step("abandon", 121_000)
    later_deadline = replace(facts, deadline_ms=200_000)
    assert next_step(later_deadline, TIMING) == Step("abandon", 121_000)
    sooner_deadline = replace(facts, deadline_ms=100_000)
    assert next_step(sooner_deadline, TIMING) == Step("cover", 100_000, 0)


def test_a_human_without_a_clock_is_waited_for() -> None:
    assert next_step(replace(BASE, deadline_ms=0), TIMING) == Step("wait")


def test_a_table_that_is_over_does_nothing_more() -> None:
    for status in ("finished", "ended"):
        assert next_step(replace(BASE, status=status), TIMING) == Step("done")
