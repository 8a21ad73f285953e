"""Profiles through every service as its own process, on PostgreSQL: two profiles play a
rated quick match to its end, and their ratings, stats and history change exactly as
OpenSkill's Plackett-Luce computes for that result; Forget me then leaves nothing of the
profile anywhere in the database (docs/profiles.md)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from openskill.models import PlackettLuce
from redis_engines import Engines

from rackem.client import Client, play_match

from .conftest import SETTINGS
from .on_postgres import stack_on_postgres
from .stack import Stack

Message = dict[str, Any]
PROFILES = {
    "ARCHIVE_SWEEP_MS": "200",
    "DATABASE_TIMEOUT_MS": "2000",
    "METRICS_PORT": "0",
    # A quick match of two profiled players: rated (short, so the test is).
    "FILL_MS": "3000",
}


class Profiled:
    def __init__(self, stack: Stack, url: str) -> None:
        self.stack = stack
        self.url = url

    def rows_holding(self, *needles: str) -> list[str]:
        """Every row of every table of the database (as text) that holds one of
        ``needles`` (case-insensitively): ``table: row``."""
        found = []
        with psycopg.connect(self.url) as connection:
            tables = connection.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            ).fetchall()
            assert len(tables) >= 6, tables  # the records' and the profiles' tables
            for (table,) in tables:
                rows = connection.execute(f'SELECT t::text FROM "{table}" AS t').fetchall()
                for (row,) in rows:
                    if any(needle.lower() in row.lower() for needle in needles):
                        found.append(f"{table}: {row[:200]}")
        return found


@pytest.fixture(scope="module")
def profiled(
    redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Profiled]:
    with stack_on_postgres(
        redis_engines, tmp_path_factory, "profiles", {**SETTINGS, **PROFILES}, 1
    ) as on:
        yield Profiled(on.stack, on.url)


async def ask(client: Client, message: Message, answer: str | None = None) -> Message:
    await client.send(message)
    return await client.wait_for(answer or message["type"], timeout=15)


async def settled(client: Client, played: int) -> Message:
    """The bound profile once the table's archiver applied its match (``played`` matches)."""
    for _ in range(600):
        now = await ask(client, {"type": "profile"})
        if now["stats"]["played"] >= played:
            return now
        await asyncio.sleep(0.1)
    raise AssertionError("the match's result never reached the profile")


async def test_a_rated_quick_match_rates_both_as_openskill_does_and_forget_me_leaves_nothing(
    profiled: Profiled,
) -> None:
    stack = profiled.stack
    async with Client(stack.ws) as ann, Client(stack.ws) as bob:
        made = {
            "ann": await ask(ann, {"type": "profile", "name": "Ann"}),
            "bob": await ask(bob, {"type": "profile", "name": "Bob"}),
        }
        seated = await asyncio.gather(ann.quick_match("Ann", 2), bob.quick_match("Bob", 2))
        assert seated[0]["table_id"] == seated[1]["table_id"]  # at one table, together
        table_id = seated[0]["table_id"]
        finals = await asyncio.gather(*(play_match(c, timeout=240) for c in (ann, bob)))
        final = finals[0]["view"]
        assert finals[0]["status"] == "finished"
        seats = {"ann": seated[0]["seat"], "bob": seated[1]["seat"]}
        scores = {who: final["scores"][seat] for who, seat in seats.items()}
        # the winner first (a tie on points goes to the rules' tiebreak), then by score
        places = {who: 1 if final["winner"] == seat else 2 for who, seat in seats.items()}
        rounds_won = {
            who: sum(1 for r in final["rounds"] if r["winner"] == seat)
            for who, seat in seats.items()
        }
        # What the library computes for this result, from two new ratings.
        model = PlackettLuce()
        before = {who: model.rating() for who in seats}
        after = model.rate([[before["ann"]], [before["bob"]]], ranks=[places["ann"], places["bob"]])
        expected = {"ann": after[0][0], "bob": after[1][0]}
        for who, client in (("ann", ann), ("bob", bob)):
            now = await settled(client, 1)
            assert now["id"] == made[who]["id"]
            (entry,) = (await ask(client, {"type": "history"}))["matches"]
            assert entry["table_id"] == table_id and entry["rated"] is True, (entry, final)
            assert now["rating"] == {
                "value": round(60 * expected[who].mu),
                "provisional": True,  # one match: still uncertain
            }, (scores, final["winner"])
            assert now["rating"]["value"] != 1500, scores
            stats = now["stats"]
            assert (stats["played"], stats["won"]) == (1, int(places[who] == 1))
            assert stats["rounds_won"] == rounds_won[who]
            assert stats["by_players"]["2"]["played"] == 1
            assert (stats["mean_own_turns_to_go_out"] is None) == (rounds_won[who] == 0)
            assert (entry["seat"], entry["score"], entry["place"]) == (
                seats[who],
                scores[who],
                places[who],
            )
            assert (entry["rating_before"], entry["rating_after"]) == (
                1500,
                now["rating"]["value"],
            )
            assert sorted(p["name"] for p in entry["players"]) == ["Ann", "Bob"]
            assert entry["replay"] == f"/replay/{table_id}"
        # Forget me: Ann's profile, keys, rating, history and link codes, for good.
        await ask(ann, {"type": "link_code"})
        assert await ask(ann, {"type": "forget_profile"}, "forgotten") == {"type": "forgotten"}
    ann_id, ann_key = made["ann"]["id"], made["ann"]["key"]
    key_hash = hashlib.sha256(ann_key.encode()).hexdigest()
    assert profiled.rows_holding(ann_id, ann_key, key_hash) == []
    # Bob's own record of the match stays; the match's record keeps no profile either.
    assert profiled.rows_holding(made["bob"]["id"])  # (the scan does find a live profile)
    async with Client(stack.ws) as again:
        refused = await ask(again, {"type": "profile", "key": ann_key}, "error")
        assert refused["code"] == "bad_profile"
        bob_again = await ask(again, {"type": "profile", "key": made["bob"]["key"]})
        assert len((await ask(again, {"type": "history"}))["matches"]) == 1
        assert bob_again["stats"]["played"] == 1
