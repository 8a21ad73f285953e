"""The Daily Rack at the matchmaker, over real gRPC on both stores: a profile's daily table
starts at once against the hard computer, its day goes to the table and its lobby, any
other setup is refused, and it has no rematch."""

from __future__ import annotations

from rackcore import Rules
from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.convert import rules_from_pb

from .clients import refused
from .conftest import SLOW_FILL, Cluster
from .tableserver import RecordingTable

DAY = "2026-12-04"
TWO = game_pb2.Rules(players=2)


def _daily(**changes: object) -> pb.CreatePrivateRequest:
    fields: dict[str, object] = {
        "name": "Ann",
        "rules": TWO,
        "level": "hard",
        "start_now": True,
        "profile": "p0123456789abcdef",
        "daily": DAY,
    }
    fields.update(changes)
    return pb.CreatePrivateRequest(**fields)  # type: ignore[arg-type]


async def test_a_daily_table_starts_at_once_against_the_hard_computer(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    seated = await stub.CreateTable(_daily())
    assert seated.lobby.status == "started" and seated.lobby.daily == DAY
    assert not seated.lobby.rated
    (call,) = table.calls
    assert call.daily == DAY and not call.rated
    assert [(s.bot, s.level) for s in call.seats] == [(False, "hard"), (True, "hard")]
    assert call.seats[0].profile == "p0123456789abcdef"
    assert rules_from_pb(call.rules) == Rules(players=2)  # the defaults for two
    lobby = await stub.Locate(pb.TokenRequest(token=seated.token))
    assert lobby.lobby.daily == DAY
    assert await refused(stub.Rematch(pb.TokenRequest(token=seated.token))) == "no_rematch"


async def test_a_daily_table_set_up_otherwise_is_refused(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    wrong = [
        _daily(profile=""),
        _daily(start_now=False),
        _daily(rated=True),
        _daily(spectators="public"),
        _daily(level="easy"),
        _daily(rules=game_pb2.Rules(players=2, target=100)),
        _daily(rules=game_pb2.Rules(players=3)),
    ]
    for request in wrong:
        assert await refused(stub.CreateTable(request)) == "bad_request", request
    assert table.calls == []
