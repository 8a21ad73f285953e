"""A replica with an archive (SQLite) sends a finished table's result to the profile store
before its record (archiver.py): a rated match between two profiles changes both ratings
as one application of the result (results.py) would, writes one history entry each, and
a second archiving of the same table (as a sweep after a crash does) changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path

from openskill.models import PlackettLuce

from rackcore import replay
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.archive import ArchiveSettings, migrate, parse_database_url
from services.archive.profiles import ProfileStore
from services.archive.tier import open_profiles
from services.common.channels import open_channel
from services.common.registry import MemoryRegistry
from services.table.results import result_of_log
from services.table.store.memory import MemoryStore
from services.table.stored import SeatMeta, TableMeta, TableState
from table.table_players import SeatPlayer, ServerFactory, play_to_the_end


def _archive(tmp_path: Path) -> ArchiveSettings:
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    migrate(parse_database_url(url))
    return ArchiveSettings(database_url=url)


async def _profile(store: ProfileStore, name: str) -> str:
    key_hash = hashlib.sha256(name.encode()).digest()
    return (await store.create_profile(name, key_hash, int(time.time() * 1000))).id


async def test_a_rated_match_is_applied_once_before_its_record(
    start_table_server: ServerFactory, tmp_path: Path
) -> None:
    archive = _archive(tmp_path)
    profiles = await open_profiles(archive)
    store = MemoryStore()
    running = await start_table_server(
        store=store, registry=MemoryRegistry(), archive=archive, archive_sweep_ms=50
    )
    try:
        ann, bob = await _profile(profiles, "Ann"), await _profile(profiles, "Bob")
        async with open_channel(running.addr) as channel:
            stub = table_pb2_grpc.TableStub(channel)
            seats = [
                table_pb2.SeatSpec(name="Ann", profile=ann),
                table_pb2.SeatSpec(name="Bob", profile=bob),
                table_pb2.SeatSpec(name="Bot", bot=True, profile="p" + "0" * 16),
            ]
            rules = game_pb2.Rules(players=3, target=50)
            created = await stub.CreateTable(
                table_pb2.CreateTableRequest(code="RATED1", rules=rules, seats=seats, rated=True)
            )
            table_id = created.table_id
            stored = await store.load(table_id)
            assert stored is not None and stored.meta.rated
            assert [s.profile for s in stored.meta.seats] == [ann, bob, ""]  # no bot profile
            players = [SeatPlayer(stub, table_id, created.tokens[i], i) for i in (0, 1)]
            await play_to_the_end(players)
            deadline = time.monotonic() + 30
            while await store.load(table_id) is not None:  # archived: result, record, drop
                assert time.monotonic() < deadline, "the table was never archived"
                await asyncio.sleep(0.05)
            record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=table_id))
        # Placed among the two rated seats (the bot's seat is not rated): the match's
        # winner first (of a tie on points too, by the rules' tiebreak), then by score.
        match = replay(json.loads(record.log_json))
        scores = match.scores[:2]
        order = [(match.winner != seat, -scores[seat]) for seat in (0, 1)]
        ranks = [1.0 + (order[1] < order[0]), 1.0 + (order[0] < order[1])]
        model = PlackettLuce()
        expected = model.rate([[model.rating()], [model.rating()]], ranks=ranks)
        for seat, profile_id in enumerate((ann, bob)):
            profile = await profiles.profile(profile_id)
            assert profile is not None
            assert profile.rating.mu == expected[seat][0].mu
            assert profile.rating.sigma == expected[seat][0].sigma
            [entry] = await profiles.history(profile_id)
            assert entry.table_id == table_id and entry.rated and entry.seat == seat
            assert entry.score == scores[seat]
        # Archived again (a sweep redoing a crashed replica's work): nothing changes.
        state = TableState.new(3)
        meta = TableMeta(
            table_id,
            "RATED1",
            match.rules.to_dict(),
            match.seed.hex() if match.seed else "",
            tuple(
                SeatMeta(n, n == "Bot", "medium", "", p)
                for n, p in (("Ann", ann), ("Bob", bob), ("Bot", ""))
            ),
            0,
            rated=True,
        )
        moves = [m.to_dict() for m in match.history]
        assert await profiles.apply_result(result_of_log(meta, state, moves, 1)) is False
        assert len(await profiles.history(ann)) == 1
    finally:
        await profiles.close()
