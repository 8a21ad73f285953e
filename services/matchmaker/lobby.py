"""Table records as the protobuf messages players get: ``Lobby`` and ``Seated``.

A lobby carries names and what is public about a table; never a token or its hash.
"""

from __future__ import annotations

from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.convert import rules_to_pb
from services.matchmaker.records import TableRecord
from services.matchmaker.seating import Seating

__all__ = ["lobby_to_pb", "seated_to_pb"]


def lobby_to_pb(record: TableRecord) -> pb.Lobby:
    waiting = record.lobby_status == "waiting"
    return pb.Lobby(
        code=record.code,
        table_id=record.id,
        rules=rules_to_pb(record.rules),
        seats=[
            pb.LobbySeat(
                seat=i, name=seat.name, taken=seat.taken and not seat.reserved, bot=seat.bot
            )
            for i, seat in enumerate(record.seats)
        ],
        creator_seat=record.creator_seat,
        status=record.lobby_status,
        replica=record.replica,
        fill_deadline_ms=record.fill_deadline_ms if waiting and record.creator_seat < 0 else 0,
        public=record.public,
        level=record.level,
        spectators="public" if record.spectators else "off",
        rated=record.is_rated,
        daily=record.daily,
    )


def seated_to_pb(seating: Seating) -> pb.Seated:
    record = seating.record
    return pb.Seated(
        token=seating.token,
        seat=seating.seat,
        code=record.code,
        table_id=record.id,
        lobby=lobby_to_pb(record),
    )
