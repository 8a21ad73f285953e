"""Profiles over real WebSockets, from a real gateway to a real SQLite archive made by the
archive's migrations: made, bound by key, linked to another device, renamed, opted in,
forgotten; the leaderboard; look-ups limited; nothing of a key, id or name logged; and
``unavailable`` without ``DATABASE_URL`` (docs/protocol.md, *Profiles*)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import httpx
import pytest

from rackem.client import Client
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.archive import ArchiveSettings, migrate, parse_database_url
from services.archive.profiles import MatchResult, ProfileStore, SeatResult
from services.archive.tier import open_profiles
from services.common.errors import ServiceError
from services.common.logs import JsonFormatter
from services.common.running import Running
from services.gateway.protocol import schemas

from .conftest import StartGateway, http_url, ws_url

Message = dict[str, Any]
KEY = re.compile(r"[0-9a-f]{32}")
PROFILE_ID = re.compile(r"p[0-9a-f]{16}")


async def ask(client: Client, message: Message, answer: str | None = None) -> Message:
    """Send ``message``; its answer (of type ``answer``, default the message's own) or the
    ``error`` that refuses it, each checked against its schema."""
    await client.send(message)
    kind = answer or message["type"]
    while True:
        got = await client.recv(timeout=15)
        if got["type"] in (kind, "error"):
            assert schemas()[got["type"]].error(got) is None, got
            return got


def code(answer: Message) -> str:
    assert answer["type"] == "error", answer
    return str(answer["code"])


@pytest.fixture
def archive(tmp_path: Path) -> ArchiveSettings:
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    migrate(parse_database_url(url))
    return ArchiveSettings(database_url=url)


@pytest.fixture
async def store(archive: ArchiveSettings) -> AsyncIterator[ProfileStore]:
    """The same archive, opened as the table service's archiver opens it."""
    opened = await open_profiles(archive)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def profiled(start_gateway: StartGateway, archive: ArchiveSettings) -> Running:
    return await start_gateway(archive=archive)


async def new_profile(server: Running, name: str = "Ann") -> tuple[Message, str]:
    async with Client(ws_url(server)) as client:
        made = await ask(client, {"type": "profile", "name": name})
    assert made["type"] == "profile", made
    return made, made["key"]


async def test_a_new_profile_comes_with_its_key_once_and_the_key_binds_it_later(
    profiled: Running,
) -> None:
    async with Client(ws_url(profiled)) as ann:
        made = await ask(ann, {"type": "profile"})
        assert made["type"] == "profile"
        assert KEY.fullmatch(made["key"]) and PROFILE_ID.fullmatch(made["id"])
        assert (made["name"], made["public"]) == ("Player", False)
        assert made["rating"] == {"value": 1500, "provisional": True}
        stats = made["stats"]
        assert (stats["played"], stats["won"], stats["mean_own_turns_to_go_out"]) == (0, 0, None)
        again = await ask(ann, {"type": "profile"})  # bound: its state, without the key
        assert again["id"] == made["id"] and "key" not in again
    async with Client(ws_url(profiled)) as later:
        bound = await ask(later, {"type": "profile", "key": made["key"].upper()})
        assert bound["id"] == made["id"] and "key" not in bound
        assert (await ask(later, {"type": "history"}))["matches"] == []


async def test_a_wrong_key_is_bad_profile_alike_whether_or_not_any_profile_exists(
    profiled: Running,
) -> None:
    wrong = "0123456789abcdef" * 2
    async with Client(ws_url(profiled)) as client:
        before = await ask(client, {"type": "profile", "key": wrong})
    _, key = await new_profile(profiled)
    async with Client(ws_url(profiled)) as client:
        after = await ask(client, {"type": "profile", "key": wrong})
        not_a_key = await ask(client, {"type": "profile", "key": "x"})
        near = await ask(
            client, {"type": "profile", "key": key[:-1] + ("0" if key[-1] != "0" else "1")}
        )
    for refusal in (after, not_a_key, near):
        assert refusal == before
    assert before["code"] == "bad_profile"


async def test_a_link_code_gives_another_device_a_key_of_its_own_once(profiled: Running) -> None:
    made, key = await new_profile(profiled)
    async with Client(ws_url(profiled)) as first:
        assert code(await ask(first, {"type": "link_code"})) == "no_profile"
        await ask(first, {"type": "profile", "key": key})
        now_ms = time.time() * 1000
        link = await ask(first, {"type": "link_code"})
        assert re.fullmatch(r"[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{6}", link["code"])
        assert now_ms + 290_000 < link["expires_ms"] <= now_ms + 310_000
    async with Client(ws_url(profiled)) as second:
        redeemed = await ask(second, {"type": "profile", "link": link["code"].lower()})
        assert redeemed["id"] == made["id"]
        assert KEY.fullmatch(redeemed["key"]) and redeemed["key"] != key
    async with Client(ws_url(profiled)) as third:
        assert code(await ask(third, {"type": "profile", "link": link["code"]})) == "bad_link_code"
        assert code(await ask(third, {"type": "profile", "link": "ABC"})) == "bad_link_code"
        for device_key in (key, redeemed["key"]):  # each device's key opens the profile
            assert (await ask(third, {"type": "profile", "key": device_key}))["id"] == made["id"]


async def test_forget_me_deletes_the_profile_and_refuses_its_keys_and_codes(
    profiled: Running,
) -> None:
    _, key = await new_profile(profiled)
    async with Client(ws_url(profiled)) as ann:
        await ask(ann, {"type": "profile", "key": key})
        link = await ask(ann, {"type": "link_code"})
        assert await ask(ann, {"type": "forget_profile"}, "forgotten") == {"type": "forgotten"}
        for kind in ("history", "link_code", "forget_profile"):  # unbound now
            assert code(await ask(ann, {"type": kind}, kind)) == "no_profile"
    async with Client(ws_url(profiled)) as later:
        assert code(await ask(later, {"type": "profile", "key": key})) == "bad_profile"
        assert code(await ask(later, {"type": "profile", "link": link["code"]})) == "bad_link_code"


async def test_forgotten_on_one_device_the_other_devices_binding_is_refused(
    profiled: Running,
) -> None:
    _, key = await new_profile(profiled)
    async with Client(ws_url(profiled)) as phone, Client(ws_url(profiled)) as laptop:
        await ask(phone, {"type": "profile", "key": key})
        await ask(laptop, {"type": "profile", "key": key})
        await ask(phone, {"type": "forget_profile"}, "forgotten")
        assert code(await ask(laptop, {"type": "profile"})) == "bad_profile"
        # Unbound by that: a new profile next.
        assert "key" in await ask(laptop, {"type": "profile"})


def rated_win(table_id: str, winner: str, loser: str) -> MatchResult:
    def seat(n: int, profile: str, score: int, place: int) -> SeatResult:
        return SeatResult(
            seat=n,
            name=f"P{n}",
            profile=profile,
            bot=False,
            left=False,
            score=score,
            place=place,
            won=place == 1,
            rounds_won=1 if place == 1 else 0,
            own_turns_to_go_out=(9,) if place == 1 else (),
            best_bonus_run=0,
        )

    return MatchResult(
        table_id=table_id,
        finished_at_ms=int(time.time() * 1000),
        players=2,
        rated=True,
        daily="",
        seats=(seat(0, winner, 500, 1), seat(1, loser, 200, 2)),
    )


async def test_rename_opt_in_and_a_cached_leaderboard(
    start_gateway: StartGateway, archive: ArchiveSettings, store: ProfileStore
) -> None:
    gateway = await start_gateway(archive=archive, leaderboard_cache_s=1.0)
    ann, ann_key = await new_profile(gateway, "Ann")
    bob, bob_key = await new_profile(gateway, "Bob")
    n = 0
    while (await store.profile(bob["id"])).rating.provisional:  # type: ignore[union-attr]
        n += 1
        assert n < 60, "a rating stays provisional"
        assert await store.apply_result(rated_win(f"t{n:016x}", ann["id"], bob["id"]))
    async with Client(ws_url(gateway)) as client:
        assert (await ask(client, {"type": "leaderboard"}))["entries"] == []  # none public
        renamed = await ask(
            client, {"type": "profile", "key": ann_key, "name": " Annie ", "public": True}
        )
        assert (renamed["name"], renamed["public"]) == ("Annie", True)
        assert code(await ask(client, {"type": "profile", "name": "\u0007"})) == "bad_name"
        assert code(await ask(client, {"type": "profile", "name": ""})) == "bad_name"
        # Still the cached (empty) board: read at most once a second here.
        assert (await ask(client, {"type": "leaderboard"}))["entries"] == []
        await asyncio.sleep(1.1)
        board = (await ask(client, {"type": "leaderboard"}))["entries"]
        ann_now = await store.profile(ann["id"])
        assert ann_now is not None and not ann_now.rating.provisional
        assert board == [{"place": 1, "name": "Annie", "rating": ann_now.rating.value}]
        async with httpx.AsyncClient(trust_env=False) as http:
            served = await http.get(http_url(gateway, "/leaderboard.json"))
        assert served.status_code == 200 and served.json() == {"entries": board}
        assert served.headers["cache-control"] == "public, max-age=1"
        # Bob opts in on his own connection; Annie opts out.
        await ask(client, {"type": "profile", "key": bob_key, "public": True})
        await ask(client, {"type": "profile", "key": ann_key, "public": False})
        await asyncio.sleep(1.1)
        board = (await ask(client, {"type": "leaderboard"}))["entries"]
        assert [entry["name"] for entry in board] == ["Bob"]


async def test_profile_lookups_are_limited_per_connection_and_per_address(
    start_gateway: StartGateway, archive: ArchiveSettings
) -> None:
    gateway = await start_gateway(
        archive=archive, profile_lookups_per_connection=3, profile_lookups_per_ip=5
    )
    _, key = await new_profile(gateway)  # a new profile counts too: 1 from this address
    wrong = {"type": "profile", "key": "f" * 32}
    async with Client(ws_url(gateway)) as guesser:
        for _ in range(3):
            assert code(await ask(guesser, wrong)) == "bad_profile"
        assert code(await ask(guesser, {"type": "profile", "key": key})) == "rate_limited"
        assert code(await ask(guesser, {"type": "profile", "link": "ABCDEF"})) == "rate_limited"
    async with Client(ws_url(gateway)) as other:  # the address has one look-up left
        assert (await ask(other, {"type": "profile", "key": key}))["type"] == "profile"
        assert code(await ask(other, {"type": "profile", "key": key})) == "rate_limited"
        # A bound connection's own profile is no look-up.
        assert (await ask(other, {"type": "profile"}))["type"] == "profile"


async def test_no_key_id_name_or_link_code_reaches_a_log_line(
    profiled: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    made, key = await new_profile(profiled, "Zebedee")
    async with Client(ws_url(profiled)) as ann, Client(ws_url(profiled)) as other:
        await ask(ann, {"type": "profile", "key": key, "name": "Quintessa", "public": True})
        link = await ask(ann, {"type": "link_code"})
        redeemed = await ask(other, {"type": "profile", "link": link["code"]})
        await ask(other, {"type": "profile", "key": "a" * 32})
        await ask(ann, {"type": "history"})
        await ask(ann, {"type": "leaderboard"})
        await ask(ann, {"type": "forget_profile"}, "forgotten")
        await ask(other, {"type": "profile", "key": key})
    secrets = [
        made["id"],
        key,
        redeemed["key"],
        link["code"],
        "Zebedee",
        "Quintessa",
        hashlib.sha256(key.encode()).hexdigest(),
    ]
    formatter = JsonFormatter("gateway")
    lines = [formatter.format(record) for record in caplog.records]
    assert any('"profile_created"' in line for line in lines)  # the gateway did log
    for line in lines:
        for secret in secrets:
            assert secret.lower() not in line.lower(), line


async def test_without_a_database_profile_messages_are_unavailable(gateway: Running) -> None:
    async with Client(ws_url(gateway)) as client:
        for message in (
            {"type": "profile"},
            {"type": "profile", "key": "a" * 32},
            {"type": "link_code"},
            {"type": "forget_profile"},
            {"type": "history"},
            {"type": "leaderboard"},
        ):
            assert code(await ask(client, message, message["type"])) == "unavailable"
    async with httpx.AsyncClient(trust_env=False) as http:
        served = await http.get(http_url(gateway, "/leaderboard.json"))
    assert served.status_code == 404


async def test_fields_only_an_answer_carries_are_bad_requests(profiled: Running) -> None:
    async with Client(ws_url(profiled)) as client:
        for message in (
            {"type": "profile", "id": "p0123456789abcdef"},
            {"type": "profile", "rating": {"value": 9000, "provisional": False}},
            {"type": "profile", "key": "a" * 32, "link": "ABCDEF"},
            {"type": "link_code", "code": "ABCDEF"},
            {"type": "history", "matches": []},
            {"type": "leaderboard", "entries": []},
            {"type": "forget_profile", "key": "a" * 32},
        ):
            assert code(await ask(client, message)) == "bad_request"


class FakeMatchmaker:
    """A matchmaker that seats every request in a waiting room that never starts, and
    keeps the requests: what the gateway sends it."""

    def __init__(self, rated: bool) -> None:
        self.rated = rated
        self.requests: list[Any] = []

    def _seat(self, request: Any) -> Awaitable[mm.Seated]:
        self.requests.append(request)

        async def seated() -> mm.Seated:
            lobby = mm.Lobby(code="ABC234", table_id="t1", status="waiting", rated=self.rated)
            return mm.Seated(token="ab" * 16, seat=0, table_id="t1", code="ABC234", lobby=lobby)

        return seated()

    def QuickMatch(self, request: Any, timeout: float | None = None) -> Awaitable[mm.Seated]:
        return self._seat(request)

    def CreateTable(self, request: Any, timeout: float | None = None) -> Awaitable[mm.Seated]:
        return self._seat(request)

    def JoinByCode(self, request: Any, timeout: float | None = None) -> Awaitable[mm.Seated]:
        return self._seat(request)

    async def Leave(self, request: Any, timeout: float | None = None) -> mm.Lobby:
        return mm.Lobby(status="closed")

    def WatchLobby(self, request: Any) -> Any:
        return _Forever()

    def __getattr__(self, name: str) -> Any:
        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise ServiceError("unavailable", "not here")

        return refuse


class _Forever:
    """A waiting room's stream with no update."""

    def __aiter__(self) -> _Forever:
        return self

    async def __anext__(self) -> mm.Lobby:
        await asyncio.Event().wait()
        raise StopAsyncIteration

    def cancel(self) -> bool:
        return True


@pytest.mark.parametrize("rated", [False, True])
async def test_a_bound_connection_brings_its_profile_and_rating_to_each_new_game(
    start_gateway: StartGateway, archive: ArchiveSettings, store: ProfileStore, rated: bool
) -> None:
    matchmaker = FakeMatchmaker(rated)
    gateway = await start_gateway(archive=archive, matchmaker=matchmaker)
    made, key = await new_profile(gateway)
    other, _ = await new_profile(gateway, "Bob")
    async with Client(ws_url(gateway)) as client:
        assert (
            code(
                await ask(client, {"type": "create_table", "name": "Ann", "rated": True}, "seated")
            )
            == "no_profile"
        )
        await client.quick_match("Anon", 2)  # no profile: none sent
        await ask(client, {"type": "leave"}, "left")
        await ask(client, {"type": "profile", "key": key})
        await client.quick_match("Ann", 2)
        # The seat's table is rated (its lobby says so): no hints there, whoever asks.
        hinted = await ask(client, {"type": "hint", "id": "h1"})
        assert code(hinted) == ("hint_unavailable" if rated else "not_your_turn")
        await ask(client, {"type": "leave"}, "left")
        # A rated match of hers ends (the table's archiver applies it): the next game
        # brings the new rating.
        assert await store.apply_result(rated_win("t" + "e" * 16, made["id"], other["id"]))
        after = await store.profile(made["id"])
        assert after is not None and after.rating.value > 1500
        await ask(client, {"type": "create_table", "name": "Ann", "rated": True}, "seated")
        await ask(client, {"type": "leave"}, "left")
        await client.join("ABC234", "Ann")
    anon, quick, created, joined = matchmaker.requests
    assert (anon.profile, anon.rating) == ("", 0)
    assert (quick.profile, quick.rating) == (made["id"], 1500)
    assert (created.profile, created.rated, created.rating) == (
        made["id"],
        True,
        after.rating.value,
    )
    assert created.level == ""  # none asked: the matchmaker takes the one nearest her rating
    assert (joined.profile, joined.rating) == (made["id"], after.rating.value)
