"""A rated match's result reaches the profiles exactly once, across a replica killed in
the middle of its finish: every service its own process, on Redis and PostgreSQL
(docs/tables.md, *Archiving*; docs/profiles.md).

Two profiles (made directly in the store) are seated by the matchmaker's QuickMatch with
their profile ids and ratings, and play the match to its end over the gateway. While the
record cannot be written (a trigger refuses inserts into ``match_records``), the replica
that finished the table applies the result to the profiles, then is SIGKILLed: its
result applied, its record not written, its keys still in Redis. Once inserts are allowed
again the survivor's sweep archives the table: it applies the result again, which the
store refuses (``applied_results``), writes the record, and drops the keys. Each profile
then has one history entry for the match and a rating equal to one application.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import signal
import time
from collections.abc import Callable, Iterator

import grpc
import psycopg
import pytest
import redis
from openskill.models import PlackettLuce
from redis_engines import Engines

from rackcore import replay
from rackem.client import Client, play_match
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2_grpc, table_pb2, table_pb2_grpc
from services.archive import ArchiveSettings
from services.archive.tier import open_profiles
from services.common.channels import OWN_CONNECTIONS
from services.table.store.redis import keys

from .conftest import SETTINGS
from .on_postgres import stack_on_postgres
from .stack import Stack

ARCHIVE = {
    "ARCHIVE_SWEEP_MS": "200",
    "ARCHIVE_CLAIM_MS": "1000",
    "ARCHIVE_BACKOFF_MAX_MS": "1000",
    "DATABASE_TIMEOUT_MS": "2000",
}

BLOCK = """
CREATE TABLE IF NOT EXISTS test_block_records (on_ boolean);
CREATE OR REPLACE FUNCTION test_block_records() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM test_block_records) THEN
    RAISE EXCEPTION 'records blocked by the test';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS test_block_records ON match_records;
CREATE TRIGGER test_block_records BEFORE INSERT ON match_records
  FOR EACH ROW EXECUTE FUNCTION test_block_records();
"""


def _until(check: Callable[[], bool], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {within_s} s: {what}")
        time.sleep(0.1)


class Rated:
    def __init__(self, stack: Stack, url: str, redis_url: str) -> None:
        self.stack = stack
        self.url = url
        self.redis = redis.Redis.from_url(redis_url)

    def sql(self, query: str, *args: object) -> list[tuple[object, ...]]:
        with psycopg.connect(self.url, autocommit=True) as connection:
            cursor = connection.execute(query, args)
            return list(cursor.fetchall()) if cursor.description else []

    def count(self, query: str, *args: object) -> int:
        [(found,)] = self.sql(query, *args)
        return int(str(found))

    def keys_left(self, table_id: str) -> int:
        return int(self.redis.exists(*keys(table_id)))

    def replica_of(self, addr: str) -> str:
        for name, service in self.stack.services.items():
            if name.startswith("table") and service.alive() and service.addr == addr:
                return name
        raise AssertionError(f"no replica at {addr}")

    def record(self, replica: str, table_id: str) -> str:
        addr = self.stack.services[replica].addr
        request = table_pb2.SummaryRequest(table_id=table_id)
        with grpc.insecure_channel(addr, options=OWN_CONNECTIONS) as channel:
            reply = table_pb2_grpc.TableStub(channel).GetRecord(request, timeout=10)
        return str(reply.log_json)


@pytest.fixture(scope="module")
def rated(redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rated]:
    with stack_on_postgres(
        redis_engines, tmp_path_factory, "rated", {**SETTINGS, **ARCHIVE}, 2
    ) as on:
        yield Rated(on.stack, on.url, on.redis_url)


async def _profiles(url: str) -> list[str]:
    store = await open_profiles(ArchiveSettings(database_url=url))
    try:
        made = []
        for name in ("Ann", "Bob"):
            key = secrets.token_hex(16)
            profile = await store.create_profile(
                name, hashlib.sha256(key.encode()).digest(), int(time.time() * 1000)
            )
            made.append(profile.id)
        return made
    finally:
        await store.close()


async def _state(url: str, profile_ids: list[str]) -> list[tuple[float, float, list[str]]]:
    """Each profile's (mu, sigma, table ids of its history)."""
    store = await open_profiles(ArchiveSettings(database_url=url))
    try:
        out = []
        for profile_id in profile_ids:
            profile = await store.profile(profile_id)
            assert profile is not None
            history = await store.history(profile_id)
            out.append((profile.rating.mu, profile.rating.sigma, [h.table_id for h in history]))
        return out
    finally:
        await store.close()


async def test_a_replica_killed_during_a_rated_finish_applies_each_rating_once(
    rated: Rated,
) -> None:
    stack = rated.stack
    ann_id, bob_id = await _profiles(rated.url)
    rated.sql(BLOCK)
    rated.sql("INSERT INTO test_block_records VALUES (true)")
    mm_addr = stack.services["matchmaker"].addr
    async with grpc.aio.insecure_channel(mm_addr, options=OWN_CONNECTIONS) as channel:
        mm = matchmaker_pb2_grpc.MatchmakerStub(channel)
        ann = await mm.QuickMatch(
            pb.QuickMatchRequest(name="Ann", players=2, profile=ann_id, rating=1500)
        )
        bob = await mm.QuickMatch(
            pb.QuickMatchRequest(name="Bob", players=2, profile=bob_id, rating=1500)
        )
    assert bob.table_id == ann.table_id and bob.lobby.rated
    table_id = ann.table_id
    holder = rated.replica_of(bob.lobby.replica)
    async with Client(stack.ws) as ann_client, Client(stack.ws) as bob_client:
        await asyncio.gather(ann_client.resume(ann.token), bob_client.resume(bob.token))
        finals = await asyncio.gather(
            *(play_match(c, timeout=240) for c in (ann_client, bob_client))
        )
    assert all(f["status"] == "finished" for f in finals)

    applied = "SELECT count(*) FROM applied_results WHERE table_id = %s"
    records = "SELECT count(*) FROM match_records WHERE table_id = %s"
    _until(lambda: rated.count(applied, table_id) == 1, 60, "the result applied")
    assert rated.count(records, table_id) == 0  # the record refused: not archived yet
    stack.services[holder].stop(signal.SIGKILL)  # mid-finish: applied, not recorded
    assert rated.keys_left(table_id) >= 4  # its keys wait in Redis for a sweeper
    once = await _state(rated.url, [ann_id, bob_id])
    assert [h for _, _, h in once] == [[table_id], [table_id]]

    rated.sql("DELETE FROM test_block_records")
    survivor = "table1" if holder == "table0" else "table0"
    _until(lambda: rated.keys_left(table_id) == 0, 90, "archived by the survivor")
    assert rated.count(records, table_id) == 1
    assert rated.count(applied, table_id) == 1

    after = await _state(rated.url, [ann_id, bob_id])
    assert [h for _, _, h in after] == [[table_id], [table_id]]  # one entry each
    # The ratings equal one application of the match to two new profiles.
    # Placed by the match's winner (of a tie on points too, by the tiebreak), then score.
    finished = replay(json.loads(rated.record(survivor, table_id)))
    order = [(finished.winner != seat, -finished.scores[seat]) for seat in (0, 1)]
    ranks = [1.0 + (order[1] < order[0]), 1.0 + (order[0] < order[1])]
    model = PlackettLuce()
    expected = model.rate([[model.rating()], [model.rating()]], ranks=ranks)
    for (mu, sigma, _), team in zip(after, expected, strict=True):
        assert mu == pytest.approx(team[0].mu, abs=1e-9)
        assert sigma == pytest.approx(team[0].sigma, abs=1e-9)
    assert after == once  # nothing changed after the kill
    stack.launch(stack.services[holder])  # back, for whatever runs after
