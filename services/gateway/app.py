"""The gateway's Starlette app: the WebSocket protocol at /ws, health, match logs and their
reviews, the replay viewer at /replay/, and the web client at /, for the allowed hosts
(``hosts.py``). Metrics have a port of their own (``ports.py``)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket

from services._gen.rackem.v1 import bot_pb2
from services._gen.rackem.v1 import table_pb2 as tb
from services.archive.settings import ArchiveSettings
from services.common.errors import ServiceError, StoreUnavailable
from services.gateway.bot_client import BotClient
from services.gateway.connection import POLICY
from services.gateway.follow import Follower
from services.gateway.hosts import HostCheck
from services.gateway.limits import client_key
from services.gateway.matchmaker_client import MatchmakerClient
from services.gateway.origins import origin_allowed
from services.gateway.protocol import ProtocolError
from services.gateway.replay_page import replay_routes
from services.gateway.session import Session
from services.gateway.settings import GatewaySettings
from services.gateway.state import GatewayState
from services.gateway.static_files import StaticSite
from services.gateway.table_client import LocalLinks

__all__ = ["BUSY", "GOING_AWAY", "create_app", "state_of", "websocket"]

GOING_AWAY = 1001  # close code on shutdown: resume on another gateway
BUSY = 1013  # close code for a newcomer while full or overloaded: try again shortly
BUSY_REASON = "server busy, try again shortly"
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOT_FOUND = frozenset({"illegal_move", "not_started", "no_table", "bad_request", "match_over"})
_SEAT = re.compile(r"[0-9]{1,2}")
# A review of a finished match does not change; an hour bounds one made by an older reviewer.
REVIEW_CACHE_CONTROL = "public, max-age=3600"


def state_of(app: Starlette) -> GatewayState:
    state: GatewayState = app.state.gateway
    return state


def _session(state: GatewayState, ws: WebSocket) -> Session:
    """A session given what its commands use, from the gateway's shared parts."""
    s = state.settings
    backends = state.backends
    return Session(
        ws,
        client_key(ws.client.host) if ws.client else "",
        connections=state,
        backends=backends,
        follower=Follower(
            backends, state.following, s.resubscribe_tries, s.resubscribe_backoff_s, s.rpc_timeout_s
        ),
        metrics=state.metrics,
        admission=state.admission,
        games=state.games,
        settings=s,
        profile_store=state.profiles,
    )


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    state = state_of(app)
    await state.open()
    try:
        yield
    finally:
        await state.close_all(GOING_AWAY, state.settings.shutdown_grace_s)
        await state.close()


async def websocket(ws: WebSocket) -> None:
    """``/ws``: the protocol (``docs/protocol.md``), once the origin and the limits allow."""
    state = state_of(ws.app)
    origin_ok = origin_allowed(
        ws.headers.get("origin"), ws.headers.get("host"), state.settings.allowed_origins
    )
    if not state.accepting or not origin_ok:
        await ws.close(POLICY if state.accepting else GOING_AWAY)
        return
    await ws.accept()
    # Checked after the accept and before the session joins the registry, with no await in
    # between: concurrent handshakes cannot all slip under the limit together.
    if not state.admits():
        state.metrics.dropped.labels("busy").inc()  # counted, never logged: floods are big
        await ws.close(BUSY, BUSY_REASON)
        return
    await _session(state, ws).run()


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    # Whether THIS gateway can take players: it is not closing and not overloaded. Not
    # whether the matchmaker or a table replica answers: every gateway shares those,
    # and taking them all out of the endpoints while the matchmaker restarts would
    # only cut the players off the web client and their running games as well.
    state = state_of(request.app)
    ready = state.accepting and not state.admission.overloaded
    return JSONResponse({"ready": ready}, status_code=200 if ready else 503)


async def leaderboard(request: Request) -> Response:
    """``/leaderboard.json``: the leaderboard's entries, as the ``leaderboard`` message's
    (read from the profile store at most once per ``LEADERBOARD_CACHE_S``)."""
    state = state_of(request.app)
    if state.profiles is None:
        return _error(404, "not_found", "this server keeps no profiles")
    try:
        entries = await state.profiles.leaderboard()
    except (ProtocolError, StoreUnavailable):
        return _error(503, "unavailable", "profiles are unavailable; try again")
    max_age = max(0, int(state.settings.leaderboard_cache_s))
    return JSONResponse(
        {"entries": entries}, headers={"Cache-Control": f"public, max-age={max_age}"}
    )


async def match_record(request: Request) -> Response:
    """``/match/{table_id}.json``: a finished match's record (its log), from the tables."""
    record = await _finished_log(request)
    if isinstance(record, Response):
        return record
    return Response(record, media_type="application/json")


async def match_review(request: Request) -> Response:
    """``/review/{table_id}.json?seat=N``: the review of a finished match for one seat, made
    by the bot service from the match's log (``Bot.Review``), kept once answered (reviews.py)."""
    seat_text = request.query_params.get("seat", "")
    if _SEAT.fullmatch(seat_text) is None:
        return _error(400, "bad_request", "seat must be a seat number (?seat=0)")
    key = (request.path_params["table_id"], int(seat_text))
    state = state_of(request.app)
    review = state.reviews.kept(key)
    if review is None:
        record = await _finished_log(request)
        if isinstance(record, Response):
            return record
        ask = bot_pb2.ReviewRequest(log_json=record, seat=key[1])
        timeout = state.settings.review_timeout_s

        async def reviewed() -> str:
            reply = await state.backends.call_bot(lambda bots: bots.Review(ask, timeout=timeout))
            return reply.review_json

        try:
            review = await state.reviews.get(key, reviewed)
        except ServiceError as err:
            if err.code == "bad_request":  # a seat not at the table (the log is the table's)
                return _error(400, "bad_request", err.message)
            if err.code == "not_finished":
                return _error(404, "not_found", "no finished match with that id")
            if err.code == "busy":
                response = _error(503, "busy", "the reviewer is busy; try again shortly")
                response.headers["Retry-After"] = "2"
                return response
            if err.code == "internal":
                return _error(500, "internal", "internal error")
            return _error(503, "unavailable", "a service is unavailable; try again")
    return Response(
        review,
        media_type="application/json",
        headers={"Cache-Control": REVIEW_CACHE_CONTROL},
    )


async def _finished_log(request: Request) -> str | Response:
    """The log of the finished match ``table_id`` names, from the tables (``GetRecord``), or
    the answer to give instead: 404 while it runs or for an unknown id, 503 unreachable."""
    table_id = request.path_params["table_id"]
    if _TABLE_ID.fullmatch(table_id) is None:
        return _error(404, "not_found", "no finished match with that id")
    state = state_of(request.app)
    lookup = tb.SummaryRequest(table_id=table_id)
    timeout = state.settings.rpc_timeout_s
    try:
        record, _ = await state.backends.call_table(
            "", lambda stub: stub.GetRecord(lookup, timeout=timeout)
        )
    except ServiceError as err:
        if err.code in _NOT_FOUND:
            return _error(404, "not_found", "no finished match with that id")
        if err.code == "internal":
            return _error(500, "internal", "internal error")
        return _error(503, "unavailable", "a service is unavailable; try again")
    try:
        json.loads(record.log_json)
    except ValueError:
        return _error(500, "internal", "internal error")
    return record.log_json


def create_app(
    settings: GatewaySettings,
    local_links: LocalLinks | None = None,
    matchmaker: MatchmakerClient | None = None,
    bots: BotClient | None = None,
    archive: ArchiveSettings | None = None,
) -> Starlette:
    """A gateway app, every route but ``/ws``; its gRPC channels open and close with its
    lifespan. ``/ws`` is answered ahead of it, by ``SocketFirst`` in server.py (a handshake
    goes straight to ``websocket`` without Starlette's routing and middleware): the one path
    players take, so there is no second one here.

    ``rackem up`` gives it the services in its own process (rackem/seam/): with
    ``local_links``, the links to table replicas there; with ``matchmaker``, the
    matchmaker to call; with ``bots``, the bot service to call. Without them it dials
    them over gRPC. With ``archive`` (its ``database_url``), the profile store there.
    """
    state = GatewayState(settings, local_links, matchmaker, bots, archive)
    static = Path(settings.static_dir) if settings.static_dir else Path(__file__).parent / "static"
    site = StaticSite(static)
    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/leaderboard.json", leaderboard),
            Route("/match/{table_id}.json", match_record),
            Route("/review/{table_id}.json", match_review),
            *replay_routes(site),
            *site.routes(),
        ],
        middleware=[
            Middleware(HostCheck, allowed=settings.allowed_hosts),
            Middleware(GZipMiddleware, minimum_size=512),
        ],
        lifespan=lifespan,
    )
    app.state.gateway = state
    return app
