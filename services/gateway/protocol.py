"""The protocol's frames: reading a client frame into a checked message, and the error codes.

docs/protocol.md is the spec; ``schemas/`` holds one JSON Schema per message type.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import orjson

from services.common.names import name_problem
from services.gateway.schema import Schema

__all__ = [
    "CLIENT_TYPES",
    "ERROR_CODES",
    "SERVER_TYPES",
    "VERSION",
    "ProtocolError",
    "check_name",
    "encode",
    "from_service",
    "parse",
    "room_code",
    "schemas",
]

VERSION = 1
CLIENT_TYPES = (
    "hello",
    "quick_match",
    "create_table",
    "join",
    "start",
    "move",
    "continue",
    "leave",
    "resume",
    "ping",
    "watch",
    "rematch",
    "hint",
    "profile",
    "link_code",
    "forget_profile",
    "history",
    "leaderboard",
    "daily",
    "play_daily",
)
SERVER_TYPES = (
    "welcome",
    "seated",
    "lobby",
    "view",
    "moved",
    "left",
    "pong",
    "error",
    "watching",
    "rematch_offer",
    "hint",
    "profile",
    "link_code",
    "forgotten",
    "history",
    "leaderboard",
    "daily",
)
ERROR_CODES = (
    "bad_frame",
    "bad_request",
    "hello_first",
    "bad_version",
    "bad_name",
    "bad_rules",
    "malformed_move",
    "illegal_move",
    "not_your_turn",
    "stale_version",
    "match_over",
    "not_seated",
    "already_seated",
    "bad_token",
    "no_code",
    "table_full",
    "not_creator",
    "already_started",
    "rate_limited",
    "busy",
    "unavailable",
    "internal",
    "watching",
    "no_spectators",
    "spectators_full",
    "no_rematch",
    "hint_unavailable",
    "bad_profile",
    "bad_link_code",
    "no_profile",
    "profile_required",
    "daily_played",
)


class ProtocolError(Exception):
    """A refusal to send as ``error``: ``code`` is one of ``ERROR_CODES``."""

    def __init__(self, code: str, message: str, move_id: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown protocol error code {code}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.move_id = move_id

    def to_message(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if self.move_id is not None:
            out["id"] = self.move_id
        return out


@cache
def schemas() -> dict[str, Schema]:
    """Every message type's compiled schema, by type (loaded once per process)."""
    folder = resources.files("services.gateway") / "schemas"
    return {
        name: Schema(json.loads((folder / f"{name}.json").read_text(encoding="utf-8")))
        for name in (*CLIENT_TYPES, *SERVER_TYPES)
    }


def parse(frame: str | bytes | None, max_bytes: int) -> dict[str, Any]:
    """A client frame as a message that matches its type's schema, or ``ProtocolError``."""
    if not isinstance(frame, str):
        raise ProtocolError("bad_frame", "frames are JSON text")
    if len(frame) > max_bytes or len(frame.encode("utf-8")) > max_bytes:
        raise ProtocolError("bad_frame", f"a frame is at most {max_bytes} bytes")
    try:
        message = orjson.loads(frame)
    except ValueError:
        raise ProtocolError("bad_frame", "not JSON") from None
    if not isinstance(message, dict):
        raise ProtocolError("bad_frame", "a frame is one JSON object")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:
        raise ProtocolError("bad_request", "unknown message type")
    problem = schemas()[kind].error(message)
    if problem is not None:
        move_id = message.get("id") if kind == "move" else None
        raise ProtocolError("bad_request", problem, move_id if isinstance(move_id, str) else None)
    return message


def room_code(raw: str) -> str:
    """A room code as the matchmaker keeps it (six letters or digits, upper case), or
    ``no_code``: one that cannot be a code names no table."""
    code = raw.strip().upper()
    if len(code) != 6 or not code.isalnum():
        raise ProtocolError("no_code", "no table has that code")
    return code


def check_name(raw: str) -> str:
    """A player name, trimmed, by the one rule of ``services.common.names``."""
    name = raw.strip()
    problem = name_problem(name)
    if problem is not None:
        raise ProtocolError("bad_name", problem)
    return name


def encode(message: dict[str, Any]) -> bytes:
    """A message as the frame's text: compact JSON, non-ASCII as itself, UTF-8 (orjson:
    ~10x ``json.dumps`` on a view)."""
    return orjson.dumps(message)


# Service error codes that are not protocol codes, and what a client is told instead.
_FROM_SERVICE = {
    "not_started": "illegal_move",
    "wrong_replica": "unavailable",
    "no_replica": "unavailable",
    "shutting_down": "unavailable",
    "no_table": "bad_token",
}


def from_service(code: str, message: str, move_id: str | None = None) -> ProtocolError:
    """The protocol error for a ``ServiceError``'s code; unexpected codes become ``internal``."""
    code = _FROM_SERVICE.get(code, code)
    if code not in ERROR_CODES:
        code = "internal"
    if code == "internal":
        message = "internal error"
    elif code == "unavailable":
        message = "a service is unavailable; try again"
    return ProtocolError(code, message, move_id)
