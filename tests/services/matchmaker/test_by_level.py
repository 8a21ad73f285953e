"""Profiles and ratings through the matchmaker (docs/matchmaker.md, *Matched by level*):
quick match seats by level on both stores; profiles, ``rated`` and the bots' level reach
CreateTable; a rated private table refuses a joiner without a profile; a rematch keeps
profiles and ratedness."""

from __future__ import annotations

from math import inf

from rackcore import Rules
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.matchmaker.by_level import fits, window
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings
from services.matchmaker.store import Store
from services.profiles.levels import LEVEL_RATINGS, nearest_level

from .clients import refused, sha, until_status
from .conftest import FAST, SLOW_FILL, Cluster
from .tableserver import RecordingTable

T = Timings(level_window=100, level_widen_per_s=20, level_open_ms=15_000)
NOW = 1_700_000_000_000
_codes = iter(f"L{i:05d}".replace("0", "A").replace("1", "B") for i in range(10**5))


def rated(name: str, rating: int) -> Sitter:
    return Sitter(name, hash_token(new_token()), "p" + name.lower().ljust(16, "0"), rating)


def quick(players: int = 2) -> NewTable:
    return NewTable(new_table_id(), next(_codes), True, Rules(players=players), "medium", -1)


def test_the_window_widens_with_the_wait_then_opens() -> None:
    assert window(0, T) == 100 and window(5_000, T) == 200 and window(14_999, T) < 400
    assert window(15_000, T) == inf
    assert fits(1500, 1600, 0, T) and not fits(1500, 1601, 0, T)
    assert fits(1500, 1700, 5_000, T) and fits(1500, 3000, 15_000, T)
    assert fits(None, 1900, 0, T) and fits(1500, None, 0, T)  # no level, or no rating: any
    assert not fits(1500, -600, 0, T) and fits(-600, -650, 0, T)  # a rating may be negative
    assert window(0, Timings(level_open_ms=0)) == inf


def test_bots_get_the_nearest_level() -> None:
    easy, medium, hard = (LEVEL_RATINGS[lv] for lv in ("easy", "medium", "hard"))
    assert nearest_level(easy - 300) == "easy" and nearest_level(hard + 300) == "hard"
    assert nearest_level(medium) == "medium"
    assert nearest_level((medium + hard) / 2 + 1) == "hard"


async def test_quick_join_seats_by_level(store: Store) -> None:
    ann = await store.quick_join(quick(3), rated("Ann", 1500), NOW, T, "me")
    assert ann is not None and ann.record.seats[0].rating == 1500
    # 1 s later the window is 120: 1900 is too far, so Cy opens a table of its own.
    cy = await store.quick_join(quick(3), rated("Cy", 1900), NOW + 1_000, T, "me")
    assert cy is not None and cy.table_id != ann.table_id
    # Di (1850) is far from Ann's table, near Cy's (the younger): Cy's.
    di = await store.quick_join(quick(3), rated("Di", 1850), NOW + 1_500, T, "me")
    assert di is not None and di.table_id == cy.table_id
    # Bob (1610) is within Ann's widened window (100 + 20 * 2 = 140): the oldest first.
    bob = await store.quick_join(quick(3), rated("Bob", 1610), NOW + 2_000, T, "me")
    assert bob is not None and bob.table_id == ann.table_id
    assert bob.record.mean_rating == (1500 + 1610) / 2
    # A newcomer without a rating takes the oldest open table, as before.
    guest = await store.quick_join(
        quick(3), Sitter("Guest", hash_token(new_token())), NOW + 2_500, T, "me"
    )
    assert guest is not None and guest.table_id == ann.table_id and guest.start
    # Once a table has waited LEVEL_OPEN_MS, it takes anyone.
    eve = await store.quick_join(quick(3), rated("Eve", 1000), NOW + 16_000, T, "me")
    assert eve is not None and eve.table_id == cy.table_id and eve.start
    record = await store.table(cy.table_id)
    assert record is not None and record.is_rated
    assert [(s.name, s.profile[:4], s.rating) for s in record.seats] == [
        ("Cy", "pcy0", 1900),
        ("Di", "pdi0", 1850),
        ("Eve", "peve", 1000),
    ]
    full = await store.table(ann.table_id)
    assert full is not None and not full.is_rated  # the guest has no profile


async def test_leaving_takes_the_rating_off_the_table(store: Store) -> None:
    ann = await store.quick_join(quick(2), rated("Ann", 1500), NOW, T, "me")
    assert ann is not None
    far = await store.quick_join(quick(4), rated("Zed", 1000), NOW, T, "me")
    assert far is not None
    await store.leave(ann.record.seats[0].token_hash, NOW + 10, T)
    low = await store.quick_join(quick(2), rated("Lo", 1000), NOW + 20, T, "me")
    assert low is not None and low.table_id != ann.table_id  # Ann's table closed
    hi = await store.quick_join(quick(2), rated("Hi", 1500), NOW + 30, T, "me")
    assert hi is not None and hi.table_id != low.table_id  # Lo's level is 1000
    late = await store.quick_join(quick(2), rated("Mid", 1090), NOW + 40, T, "me")
    assert late is not None and late.table_id == low.table_id and late.start


async def test_rated_quick_match_carries_profiles_and_level_to_the_table(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    hard = LEVEL_RATINGS["hard"]
    ann = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Ann", players=3, profile="p" + "a" * 16, rating=hard)
    )
    assert not ann.lobby.rated  # one human: not (yet) rated
    bob = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Bob", players=3, profile="p" + "b" * 16, rating=hard + 50)
    )
    assert bob.table_id == ann.table_id and bob.lobby.rated
    await stub.Leave(pb.TokenRequest(token=bob.token))
    bob = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Bob", players=3, profile="p" + "b" * 16, rating=hard + 50)
    )
    assert bob.table_id == ann.table_id and bob.lobby.rated
    cy = await stub.QuickMatch(pb.QuickMatchRequest(name="Cy", players=3))  # no profile
    assert cy.table_id == ann.table_id and not cy.lobby.rated
    [call] = table.calls
    assert not call.rated
    assert [(s.name, s.profile, s.token_hash) for s in call.seats] == [
        ("Ann", "p" + "a" * 16, sha(ann.token)),
        ("Bob", "p" + "b" * 16, sha(bob.token)),
        ("Cy", "", sha(cy.token)),
    ]


async def test_a_lone_rated_player_gets_bots_of_its_level_and_two_rated_players_a_rated_match(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(FAST)
    easy = LEVEL_RATINGS["easy"]
    ann = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Ann", players=2, profile="p" + "a" * 16, rating=easy - 20)
    )
    await until_status(stub, ann.token, "started")
    bob = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Bob", players=3, profile="p" + "b" * 16, rating=easy)
    )
    cy = await stub.QuickMatch(
        pb.QuickMatchRequest(name="Cy", players=3, profile="p" + "c" * 16, rating=easy + 60)
    )
    assert cy.table_id == bob.table_id
    await until_status(stub, bob.token, "started")
    lone, pair = table.calls
    assert not lone.rated and [s.level for s in lone.seats if s.bot] == ["easy"]
    assert pair.rated and [s.level for s in pair.seats if s.bot] == ["easy"]
    assert [s.profile for s in pair.seats] == ["p" + "b" * 16, "p" + "c" * 16, ""]


async def test_a_rated_private_table_needs_profiles_and_its_rematch_stays_rated(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    rules = pb.CreatePrivateRequest(name="Ann", rated=True).rules
    rules.players = 2
    no_profile = pb.CreatePrivateRequest(name="Ann", rules=rules, rated=True)
    assert await refused(stub.CreateTable(no_profile)) == "profile_required"
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(
            name="Ann", rules=rules, rated=True, profile="p" + "a" * 16, rating=1700
        )
    )
    assert ann.lobby.rated and ann.lobby.level == nearest_level(1700)
    guest = pb.JoinRequest(code=ann.code, name="Guest")
    assert await refused(stub.JoinByCode(guest)) == "profile_required"
    bob = await stub.JoinByCode(
        pb.JoinRequest(code=ann.code, name="Bob", profile="p" + "b" * 16, rating=1400)
    )
    assert bob.lobby.status == "started"
    [first] = table.calls
    assert first.rated and [s.profile for s in first.seats] == ["p" + "a" * 16, "p" + "b" * 16]
    again = await stub.Rematch(pb.TokenRequest(token=bob.token))
    assert again.lobby.rated
    await stub.Rematch(pb.TokenRequest(token=ann.token))
    await until_status(stub, again.token, "started")
    second = table.calls[1]
    assert second.rated and [s.profile for s in second.seats] == ["p" + "a" * 16, "p" + "b" * 16]
    # An unrated private table takes anyone.
    open_table = await stub.CreateTable(pb.CreatePrivateRequest(name="Cy", rules=rules))
    assert not open_table.lobby.rated
    joined = await stub.JoinByCode(pb.JoinRequest(code=open_table.code, name="Di"))
    assert joined.table_id == open_table.table_id
