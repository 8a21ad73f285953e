"""What a ``TableView`` carries, decoded as a client would read it, for tests (the table
writes it once, services/table/views.py; the gateway sends it on as it is)."""

from __future__ import annotations

from typing import Any

import orjson

from rackcore import View
from services._gen.rackem.v1 import game_pb2

__all__ = ["message_of", "view_of"]


def message_of(msg: game_pb2.TableView) -> dict[str, Any]:
    """The ``view`` message a ``TableView`` carries, as the client reads it."""
    message: dict[str, Any] = orjson.loads(msg.message)
    return message


def view_of(msg: game_pb2.TableView) -> View:
    """The seat's view a ``TableView`` carries, back as rackcore's ``View``."""
    return View.from_dict(message_of(msg)["view"])
