"""Creating a table (``CreateTable``): the request checked, then the table stored and started.

The request is checked whole before anything is stored: the table id, the room code,
the rules (``bad_rules``), and the seats (names of 1 to 20 characters without control
characters, ``bad_name``; levels ``easy|medium|hard``, default ``medium``; a human's
``token_hash`` a hex SHA-256, or empty for the table to make a token and return it
once; a human's ``profile``, kept for the finished match's result, results.py; a bot's
is ignored). ``rated`` and ``daily`` are kept as they come (``TableMeta``). Then a
32-byte seed is made with ``secrets``, the table is stored with this replica holding its
lease, and its match starts at once. A Daily Rack table
(``daily``: today's UTC day; one human against the hard computer, default two-player
rules, unrated) plays the day's seed instead (daily.py): ``unavailable`` without
``DAILY_SECRET``, ``bad_request`` for any other day or table.

A CreateTable repeated with the same id, code, rules and seats (every human's token
given as a hash) answers the same table again, with its owner's address, so the
matchmaker may retry one whose reply it lost, on any replica. Any other reuse of an id
is ``bad_request``: a token the table made is never handed out twice.
"""

from __future__ import annotations

import logging
import re
import secrets

from rackcore import Match, Rules, RulesError, commitment
from rackcore.bots import LEVELS
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common.errors import ServiceError
from services.common.logs import event
from services.common.names import name_problem
from services.convert import rules_from_pb
from services.table.clocks import now_ms
from services.table.leases import parse_owner
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.table import Table
from services.table.tables_api import TablesApi
from services.table.tokens import is_token_hash, new_token, token_hash

__all__ = ["MAX_CODE", "TABLE_ID", "create"]

log = logging.getLogger("rackem.table")

TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CODE = 16
MAX_PROFILE = 64


def _checked_name(name: str, seat: int, bot: bool) -> str:
    name = name.strip()
    if bot and not name:
        return f"Bot {seat + 1}"
    problem = name_problem(name)
    if problem is not None:
        raise ServiceError("bad_name", problem)
    return name


def _checked(
    request: table_pb2.CreateTableRequest,
) -> tuple[str, Rules, list[SeatMeta], list[str]]:
    """The table id, rules and seats ``request`` asks for, and each seat's token (one the
    table made, or "" for a bot's or one given as a hash); refused if any is wrong."""
    table_id = request.table_id or f"t{secrets.token_hex(8)}"
    if not TABLE_ID.fullmatch(table_id):
        raise ServiceError("bad_request", "a table id is 1 to 64 letters, digits, _ or -")
    if len(request.code) > MAX_CODE or not request.code.isprintable():
        raise ServiceError("bad_request", f"a room code is at most {MAX_CODE} characters")
    rules_msg = game_pb2.Rules()
    rules_msg.CopyFrom(request.rules)
    if not rules_msg.HasField("players"):
        rules_msg.players = len(request.seats)
    try:
        rules = rules_from_pb(rules_msg)
    except RulesError as exc:
        raise ServiceError("bad_rules", str(exc)) from None
    if len(request.seats) != rules.players:
        raise ServiceError("bad_request", f"the rules need {rules.players} seats")
    seats, tokens = [], []
    for seat, spec in enumerate(request.seats):
        level = spec.level or "medium"
        if level not in LEVELS:
            raise ServiceError("bad_request", f"level must be one of {', '.join(LEVELS)}")
        token, digest = "", spec.token_hash.lower()
        if spec.bot:
            if digest:
                raise ServiceError("bad_request", "a bot seat has no token")
        elif not digest:
            token = new_token()
            digest = token_hash(token)
        elif not is_token_hash(digest):
            raise ServiceError("bad_request", "token_hash is a hex SHA-256")
        profile = "" if spec.bot else spec.profile
        if len(profile) > MAX_PROFILE or not profile.isprintable():
            raise ServiceError("bad_request", f"a profile id is at most {MAX_PROFILE} characters")
        name = _checked_name(spec.name, seat, spec.bot)
        seats.append(SeatMeta(name, spec.bot, level, digest, profile))
        tokens.append(token)
    return table_id, rules, seats, tokens


async def create(
    tables: TablesApi, request: table_pb2.CreateTableRequest
) -> table_pb2.CreateTableReply:
    """Create the table ``request`` asks for and serve it among ``tables``."""
    if tables.draining:
        raise ServiceError("shutting_down", "this replica is shutting down; try another")
    table_id, rules, seats, tokens = _checked(request)
    seed = secrets.token_bytes(32)
    if request.daily:  # the Daily Rack's table plays the day's seed (daily.py): today's only
        seed = tables.config.daily.table_seed(request.daily, rules, seats, request.rated)
    match = Match(rules, seed)
    now = now_ms()
    meta = TableMeta(
        table_id,
        request.code,
        rules.to_dict(),
        seed.hex(),
        tuple(seats),
        now,
        spectators=request.spectators,
        rated=request.rated,
        daily=request.daily,
    )
    settings, config = tables.settings, tables.config
    table = Table(meta, TableState.new(rules.players), match, config, live=True)
    table.state.deadline_ms = now + settings.decision_ms if not seats[match.turn].bot else 0
    if not await config.store.create(meta, table.state, config.owner, settings.lease_ms):
        return await _created_before(tables, meta, any(tokens))
    tables.serve(table)
    if tables.metrics is not None:
        tables.metrics.matches_started.inc()
    bots = sum(s.bot for s in seats)
    event(log, "table_created", table=table_id, players=rules.players, bots=bots)
    return table_pb2.CreateTableReply(
        table_id=table_id,
        tokens=tokens,
        commitment=match.commitment or "",
        replica=config.replica,
    )


async def _created_before(
    tables: TablesApi, meta: TableMeta, made_tokens: bool
) -> table_pb2.CreateTableReply:
    """A repeated CreateTable (its reply was lost): the same table again, once more.

    Only a table whose tokens all came with the request can be answered twice: a
    token the table made is never given out again.
    """
    store = tables.config.store
    stored = await store.load(meta.table_id)
    same = stored is not None and (
        stored.meta.code,
        stored.meta.rules,
        stored.meta.seats,
        stored.meta.spectators,
        stored.meta.rated,
        stored.meta.daily,
    ) == (meta.code, meta.rules, meta.seats, meta.spectators, meta.rated, meta.daily)
    if stored is None or not same or made_tokens:
        raise ServiceError("bad_request", "that table id is already in use")
    replica = tables.config.replica
    holder = await store.holder(meta.table_id)
    if holder is not None:
        replica = parse_owner(holder)[1] or replica
    elif not stored.state.over:
        replica = (await tables.get(meta.table_id)).config.replica
    return table_pb2.CreateTableReply(
        table_id=meta.table_id,
        tokens=[""] * len(meta.seats),
        commitment=commitment(bytes.fromhex(stored.meta.seed)),
        replica=replica,
    )
