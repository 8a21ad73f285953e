"""The Daily Rack on the gateway: the ``daily`` and ``play_daily`` messages (docs/daily.md).

``daily`` answers today's commitment and the day before's seed, both from the table
service (``GetDaily``: the day is the table service's UTC day, and the seed never exists
anywhere else), with the day's board and the bound profile's own entry from the profile
store. ``play_daily`` claims the profile's one entry of the day (``start_daily``) before
the matchmaker makes its table (a private table started at once: one hard computer
player, default two-player rules, unrated, the day's seed), and drops the claim if the
table could not be made. The entry's score and own turns are filled in when the match
finishes (the table service's ``apply_result``).

Without ``DATABASE_URL`` ``daily`` still publishes the commitment (no board, no entry),
and ``play_daily`` is ``unavailable``; so are both while the table service has no
``DAILY_SECRET``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services._gen.rackem.v1 import table_pb2 as tb
from services.archive.profiles import DailyEntry
from services.common.days import closes_ms, day_before
from services.common.errors import StoreUnavailable
from services.common.logs import event
from services.gateway.protocol import ProtocolError, check_name
from services.gateway.session_api import SessionApi

__all__ = ["BOARD_LIMIT", "board", "daily", "play_daily"]

log = logging.getLogger("rackem.gateway")

BOARD_LIMIT = 100
_ANSWER_ONLY = ("day", "commitment", "closes_ms", "previous", "you", "board")


def board(entries: Sequence[DailyEntry]) -> list[dict[str, Any]]:
    """The day's finished entries as the board lists them (the store's order: best first);
    equal score and own turns share a place."""
    out: list[dict[str, Any]] = []
    for n, entry in enumerate(entries):
        same = out and (out[-1]["score"], out[-1]["own_turns"]) == (entry.score, entry.own_turns)
        out.append(
            {
                "place": out[-1]["place"] if same else n + 1,
                "name": entry.name,
                "score": entry.score,
                "own_turns": entry.own_turns,
                "table_id": entry.table_id,
            }
        )
    return out


def _you(entry: DailyEntry | None, listed: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    if entry is None:
        return None
    place = next(
        (row["place"] for row in listed if entry.finished and row["table_id"] == entry.table_id),
        None,
    )
    return {
        "finished": entry.finished,
        "score": entry.score,
        "own_turns": entry.own_turns,
        "won": entry.won,
        "place": place,
        "table_id": entry.table_id if entry.finished and entry.table_id else None,
    }


async def _get_daily(session: SessionApi, day: str = "") -> tb.DailyReply:
    """The table service's Daily Rack of ``day`` (empty: its today), from any replica."""
    request = tb.DailyRequest(day=day)
    timeout = session.settings.rpc_timeout_s
    reply, _ = await session.backends.call_table(
        "", lambda stub: stub.GetDaily(request, timeout=timeout)
    )
    return reply


async def daily(session: SessionApi, message: dict[str, Any]) -> None:
    """``daily``: today's commitment and when it closes, the day before's seed, the board,
    and the bound profile's own entry."""
    for name in _ANSWER_ONLY:
        if name in message:
            raise ProtocolError("bad_request", f"{name}: unknown field")
    today = await _get_daily(session)
    previous = await _get_daily(session, day_before(today.day))
    listed: list[dict[str, Any]] = []
    you = None
    if session.profiles is not None:
        store = session.profiles.store
        # The entry before the board: an entry read finished is on a board read after it
        # (read the other way round, a result applied between the two reads would show
        # a finished entry with no place).
        entry = None
        if session.profile is not None:
            entry = await store.daily_entry(today.day, session.profile.id)
        listed = board(await store.daily_board(today.day, BOARD_LIMIT))
        you = _you(entry, listed)
    session.push(
        {
            "type": "daily",
            "day": today.day,
            "commitment": today.commitment,
            "closes_ms": closes_ms(today.day),
            "previous": {
                "day": previous.day,
                "seed": previous.seed,
                "commitment": previous.commitment,
            },
            "you": you,
            "board": listed,
        }
    )


async def play_daily(session: SessionApi, message: dict[str, Any]) -> None:
    """``play_daily``: the bound profile's one Daily Rack match of today, seated as any
    table; ``daily_played`` once it has today's entry."""
    since = time.perf_counter()
    if session.profiles is None:
        raise ProtocolError("unavailable", "this server keeps no profiles")
    bound = session.profile
    if bound is None:
        raise ProtocolError("no_profile", "the Daily Rack needs a profile; send profile first")
    store = session.profiles.store
    session.make_free()
    session.may_start_game()
    fresh = await store.profile(bound.id)
    if fresh is None:  # forgotten from another device
        session.profile = None
        raise ProtocolError("bad_profile", "this profile was forgotten")
    session.profile = fresh
    day = (await _get_daily(session)).day  # the table service's today (and it has a secret)
    if not await store.start_daily(day, fresh.id, int(time.time() * 1000)):
        raise ProtocolError("daily_played", "you have played today's Daily Rack")
    request = mm.CreatePrivateRequest(
        name=check_name(fresh.name),
        rules=game_pb2.Rules(players=2),
        level="hard",
        start_now=True,
        profile=fresh.id,
        daily=day,
    )
    try:
        reply = await session.backends.call_matchmaker(
            lambda stub: stub.CreateTable(request, timeout=session.settings.rpc_timeout_s)
        )
    except BaseException:
        with contextlib.suppress(StoreUnavailable):  # then the claim stays: played, for today
            await store.cancel_daily(day, fresh.id)
        raise
    event(log, "daily_started", table=reply.table_id)
    session.take_seat(reply, reply.token, "create", since)
