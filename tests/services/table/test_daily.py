"""The Daily Rack at the table service: each day's seed derived from the secret, its
commitment the rackem/v1 one, ``GetDaily`` over a real gRPC channel, and a daily table whose
seed stays in (views, the match log line, ``GetRecord``, the archive's record) while its
day is open and comes out once it has closed, verifiable then."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import pytest

from rackcore import Rules, commitment, verify
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.archive import ArchiveSettings, migrate, parse_database_url
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.registry import MemoryRegistry
from services.common.running import Running
from services.common.running import Running as BotRunning
from services.table.daily import Daily, closes_ms, parse_secret, public_log, utc_day
from services.table.server import create_server
from services.table.store.memory import MemoryStore
from services.table.stored import SeatMeta
from table.decoded import message_of, view_of
from table.table_players import SeatPlayer, error_code, fast_settings, play_to_the_end

SECRET = bytes(range(32))
DAY_S = 86_400


class Clock:
    """A wall clock a test moves by hand (unix seconds)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _daily(clock: Clock, secret: bytes | None = SECRET) -> Daily:
    return Daily(secret, clock)


def _seed(day: str) -> bytes:
    return hmac.new(SECRET, f"rackem-daily/{day}".encode(), hashlib.sha256).digest()


# -- the seed and its commitment ------------------------------------------------------------


def test_a_days_seed_is_the_hmac_of_its_label_and_its_commitment_the_rackem_one() -> None:
    noon = datetime(2026, 12, 4, 12, tzinfo=UTC).timestamp()
    daily = _daily(Clock(noon))
    assert daily.today() == "2026-12-04"
    seed = daily.seed("2026-12-04")
    assert seed == _seed("2026-12-04") and len(seed) == 32
    assert seed != daily.seed("2026-12-03")
    assert daily.commitment("2026-12-04") == hashlib.sha256(seed).hexdigest() == commitment(seed)
    assert closes_ms("2026-12-04") == int(datetime(2026, 12, 5, tzinfo=UTC).timestamp() * 1000)


def test_the_secret_is_hex_or_text() -> None:
    assert parse_secret("") is None and parse_secret("  ") is None
    assert parse_secret(SECRET.hex()) == SECRET
    assert parse_secret(SECRET.hex().upper()) == SECRET
    assert parse_secret("correct horse battery staple") == b"correct horse battery staple"
    assert parse_secret("abcd") == b"abcd"  # too short to be a hex secret: text


def test_a_day_opens_and_closes_at_utc_midnight() -> None:
    clock = Clock(datetime(2026, 12, 4, 23, 59, 59, tzinfo=UTC).timestamp())
    daily = _daily(clock)
    assert daily.hides_seed("2026-12-04") and not daily.hides_seed("")
    assert daily.reply(table_pb2.DailyRequest()).seed == ""
    clock.now += 1
    assert utc_day(clock.now) == "2026-12-05" and not daily.hides_seed("2026-12-04")
    yesterday = daily.reply(table_pb2.DailyRequest(day="2026-12-04"))
    assert bytes.fromhex(yesterday.seed) == _seed("2026-12-04")


def test_a_record_leaves_without_its_seed_only_for_the_open_day() -> None:
    clock = Clock(time.time())
    daily = _daily(clock)
    today = daily.today()
    log = {"format": "rackem-match/1", "seed": _seed(today).hex(), "commitment": ""}
    log["commitment"] = commitment(_seed(today))
    text = json.dumps(log)
    hidden = json.loads(public_log(text, daily))
    assert "seed" not in hidden and hidden["commitment"] == log["commitment"]
    other = json.dumps({**log, "seed": "00" * 32, "commitment": commitment(bytes(32))})
    assert public_log(other, daily) == other  # any other match: as it is
    clock.now += DAY_S
    assert public_log(text, daily) == text  # the day closed: the seed goes out
    assert public_log(text, _daily(clock, None)) == text


# -- GetDaily over gRPC -----------------------------------------------------------------------


@pytest.fixture
def clock() -> Clock:
    return Clock(time.time())


@contextlib.asynccontextmanager
async def _start(
    bot_server: BotRunning, daily: Daily, **deps: Any
) -> AsyncIterator[tuple[Running, table_pb2_grpc.TableAsyncStub]]:
    store = deps.pop("store", MemoryStore())
    running = await create_server(
        fast_settings(**deps.pop("settings", {})),
        store=store,
        registry=MemoryRegistry(),
        bot_addr=bot_server.addr,
        daily=daily,
        **deps,
    )
    try:
        async with open_channel(running.addr) as channel:
            yield running, table_pb2_grpc.TableStub(channel)
    finally:
        await running.stop(0)


@pytest.fixture
async def daily_stub(
    bot_server: BotRunning, clock: Clock
) -> AsyncIterator[table_pb2_grpc.TableAsyncStub]:
    async with _start(bot_server, _daily(clock)) as (_, stub):
        yield stub


async def test_get_daily_gives_the_commitment_from_the_start_and_the_seed_after_the_end(
    daily_stub: table_pb2_grpc.TableAsyncStub, clock: Clock
) -> None:
    today = utc_day(clock.now)
    yesterday = utc_day(clock.now - DAY_S)
    now = await daily_stub.GetDaily(table_pb2.DailyRequest())
    assert (now.day, now.commitment, now.seed) == (today, commitment(_seed(today)), "")
    assert await daily_stub.GetDaily(table_pb2.DailyRequest(day=today)) == now
    before = await daily_stub.GetDaily(table_pb2.DailyRequest(day=yesterday))
    assert before.seed == _seed(yesterday).hex()
    assert before.commitment == commitment(bytes.fromhex(before.seed))
    for day in (utc_day(clock.now + DAY_S), "2026-13-01", "today", "2026-1-1"):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await daily_stub.GetDaily(table_pb2.DailyRequest(day=day))
        assert error_code(refused.value) == "bad_request", day
    clock.now += DAY_S  # today closes: its seed comes out
    after = await daily_stub.GetDaily(table_pb2.DailyRequest(day=today))
    assert (after.commitment, after.seed) == (now.commitment, _seed(today).hex())


async def test_without_a_secret_there_is_no_daily_rack(
    bot_server: BotRunning, clock: Clock
) -> None:
    async with _start(bot_server, _daily(clock, None)) as (_, stub):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetDaily(table_pb2.DailyRequest())
        assert error_code(refused.value) == "unavailable"
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateTable(_daily_request(utc_day(clock.now)))
        assert error_code(refused.value) == "unavailable"


# -- a daily table --------------------------------------------------------------------------


def _daily_request(day: str, **changes: Any) -> table_pb2.CreateTableRequest:
    seats = changes.pop(
        "seats", [table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(bot=True, level="hard")]
    )
    return table_pb2.CreateTableRequest(
        code="DAILY1",
        rules=changes.pop("rules", game_pb2.Rules(players=2)),
        seats=seats,
        daily=day,
        **changes,
    )


async def test_only_todays_daily_table_as_everyone_plays_it_is_made(
    daily_stub: table_pb2_grpc.TableAsyncStub, clock: Clock
) -> None:
    today = utc_day(clock.now)
    bot = table_pb2.SeatSpec(bot=True, level="hard")
    wrong = [
        _daily_request(utc_day(clock.now - DAY_S)),
        _daily_request(utc_day(clock.now + DAY_S)),
        _daily_request("someday"),
        _daily_request(today, rated=True),
        _daily_request(today, rules=game_pb2.Rules(players=2, target=100)),
        _daily_request(today, rules=game_pb2.Rules(players=2, bonus=True)),
        _daily_request(today, seats=[table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(bot=True)]),
        _daily_request(today, seats=[table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(name="B")]),
        _daily_request(today, rules=game_pb2.Rules(players=3), seats=[bot, bot, bot]),
    ]
    for request in wrong:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await daily_stub.CreateTable(request)
        assert error_code(refused.value) == "bad_request", request
    made = await daily_stub.CreateTable(_daily_request(today))
    assert made.commitment == commitment(_seed(today))


async def _play_daily(
    stub: table_pb2_grpc.TableAsyncStub, day: str
) -> tuple[table_pb2.CreateTableReply, SeatPlayer]:
    created = await stub.CreateTable(_daily_request(day))
    player = SeatPlayer(stub, created.table_id, created.tokens[0], 0)
    await play_to_the_end([player], timeout=120)
    return created, player


async def test_a_daily_tables_seed_stays_in_until_its_day_closes(
    daily_stub: table_pb2_grpc.TableAsyncStub,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    today = utc_day(clock.now)
    with caplog.at_level(logging.INFO, logger="rackem.table"):
        created, player = await _play_daily(daily_stub, today)
    assert created.commitment == commitment(_seed(today))
    last = player.views[-1]
    assert last.status == "finished"
    assert view_of(last).seed is None  # the match-over reveal leaves it out
    assert view_of(last).commitment == created.commitment
    for view in player.views:
        assert _seed(today).hex() not in view.message.decode()
    lines = [r for r in caplog.records if r.getMessage() == "match_record"]
    assert lines and all(_seed(today).hex() not in repr(r.__dict__) for r in lines)
    request = table_pb2.SummaryRequest(table_id=created.table_id)
    record = json.loads((await daily_stub.GetRecord(request)).log_json)
    assert "seed" not in record and record["commitment"] == created.commitment
    seat = table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0])
    assert view_of(await _last_view(daily_stub, seat)).seed is None

    clock.now = closes_ms(today) / 1000  # the day closes: the seed is out, and checks
    revealed = json.loads((await daily_stub.GetRecord(request)).log_json)
    assert revealed["seed"] == _seed(today).hex()
    verdict = verify(revealed)
    assert verdict["valid"] and verdict["finished"], verdict
    assert view_of(await _last_view(daily_stub, seat)).seed == _seed(today).hex()


async def _last_view(
    stub: table_pb2_grpc.TableAsyncStub, seat: table_pb2.SeatRequest
) -> game_pb2.TableView:
    """The view a seat gets subscribing to a finished table (its last)."""
    player = SeatPlayer(stub, seat.table_id, seat.token, 0, plays=False)
    await player.run()
    assert message_of(player.views[-1])["status"] == "finished"
    return player.views[-1]


async def test_an_archived_daily_record_keeps_its_seed_in_while_the_day_is_open(
    bot_server: BotRunning, clock: Clock, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    migrate(parse_database_url(url))
    store = MemoryStore()
    archive = ArchiveSettings(database_url=url)
    daily = _daily(clock)
    async with _start(
        bot_server, daily, store=store, archive=archive, settings={"archive_sweep_ms": 50}
    ) as (_, stub):
        today = daily.today()
        created, _ = await _play_daily(stub, today)
        deadline = time.monotonic() + 30
        while await store.load(created.table_id) is not None:  # archived, then dropped
            assert time.monotonic() < deadline, "the record was not archived"
            await asyncio.sleep(0.05)
        request = table_pb2.SummaryRequest(table_id=created.table_id)
        record = json.loads((await stub.GetRecord(request)).log_json)
        assert "seed" not in record and record["commitment"] == created.commitment
        clock.now += DAY_S
        revealed = json.loads((await stub.GetRecord(request)).log_json)
        assert revealed["seed"] == _seed(today).hex() and verify(revealed)["valid"]


def test_a_daily_seed_is_refused_to_the_wrong_table() -> None:
    daily = _daily(Clock(time.time()))
    human, hard = SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot", True, "hard", "")
    today = daily.today()
    assert daily.table_seed(today, Rules(players=2), [human, hard], False) == _seed(today)
    with pytest.raises(ServiceError) as refused:
        daily.table_seed(today, Rules(players=2), [hard, hard], False)
    assert refused.value.code == "bad_request"
