from __future__ import annotations

from rackcore import Rules
from services.convert import rules_from_pb
from services.matchmaker.lobby import lobby_to_pb, seated_to_pb
from services.matchmaker.records import SeatRecord, TableRecord
from services.matchmaker.seating import Seating

HASH = "ab" * 32


def record(status: str, public: bool = True) -> TableRecord:
    return TableRecord(
        id="t0123456789abcdef",
        code="K7MX2Q",
        public=public,
        rules=Rules(players=3, bonus=True),
        level="easy",
        creator_seat=-1 if public else 0,
        status=status,
        seats=(SeatRecord("Ann", HASH), SeatRecord(), SeatRecord("Bot Ada", bot=True)),
        created_ms=1,
        fill_deadline_ms=99,
        replica="10.0.0.1:50052" if status == "started" else "",
        version=4,
    )


def test_a_table_being_started_still_shows_as_waiting() -> None:
    lobby = lobby_to_pb(record("starting"))
    assert lobby.status == "waiting" and lobby.fill_deadline_ms == 99


def test_the_fill_deadline_shows_only_on_waiting_quick_tables() -> None:
    assert lobby_to_pb(record("started")).fill_deadline_ms == 0
    assert lobby_to_pb(record("waiting", public=False)).fill_deadline_ms == 0


def test_a_lobby_has_seats_rules_and_no_token_hashes() -> None:
    lobby = lobby_to_pb(record("started"))
    assert [(s.seat, s.name, s.taken, s.bot) for s in lobby.seats] == [
        (0, "Ann", True, False),
        (1, "", False, False),
        (2, "Bot Ada", True, True),
    ]
    assert rules_from_pb(lobby.rules) == Rules(players=3, bonus=True)
    assert (lobby.code, lobby.table_id, lobby.level, lobby.public) == (
        "K7MX2Q",
        "t0123456789abcdef",
        "easy",
        True,
    )
    assert lobby.replica == "10.0.0.1:50052" and lobby.creator_seat == -1
    assert HASH.encode() not in lobby.SerializeToString()


def test_seated_carries_the_token_seat_and_lobby() -> None:
    seated = seated_to_pb(Seating("f" * 32, 1, record("waiting")))
    assert (seated.token, seated.seat, seated.code, seated.table_id) == (
        "f" * 32,
        1,
        "K7MX2Q",
        "t0123456789abcdef",
    )
    assert seated.lobby == lobby_to_pb(record("waiting"))
