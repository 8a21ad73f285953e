"""Moves as value types, with a strict JSON round trip."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rackcore._errors import MalformedMoveError

__all__ = ["ACTS", "BY", "SOURCES", "Move"]

Act = Literal["draw", "place", "throw", "repair"]
Source = Literal["stock", "discard"]
ACTS: tuple[str, ...] = ("draw", "place", "throw", "repair")
SOURCES: tuple[str, ...] = ("stock", "discard")
BY: tuple[str, ...] = ("human", "bot", "cover")
SLOTS = 10


@dataclass(frozen=True, slots=True)
class Move:
    """One decision by one seat. ``source`` is the JSON field ``from``.

    ``by`` records who decided (human, bot, or a bot covering a human); it is
    not part of a move's identity and verifiers ignore it.
    """

    seat: int
    act: Act
    source: Source | None = None
    slot: int | None = None
    go_out: bool = True
    by: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if type(self.seat) is not int or not 0 <= self.seat <= 3:
            raise MalformedMoveError("seat must be an integer from 0 to 3")
        if self.act not in ACTS:
            raise MalformedMoveError(f"act must be one of {', '.join(ACTS)}")
        if (self.act == "draw") != (self.source is not None):
            raise MalformedMoveError("a draw, and only a draw, names its source")
        if self.source is not None and self.source not in SOURCES:
            raise MalformedMoveError("from must be stock or discard")
        wants_slot = self.act in ("place", "repair")
        if wants_slot != (self.slot is not None):
            raise MalformedMoveError("place and repair, and only they, name a slot")
        if self.slot is not None:
            top = SLOTS - 2 if self.act == "repair" else SLOTS - 1
            if type(self.slot) is not int or not 0 <= self.slot <= top:
                raise MalformedMoveError(f"slot must be an integer from 0 to {top}")
        if type(self.go_out) is not bool:
            raise MalformedMoveError("go_out must be true or false")
        if not self.go_out and self.act not in ("place", "throw"):
            raise MalformedMoveError("go_out applies to place and throw only")
        if self.by is not None and self.by not in BY:
            raise MalformedMoveError(f"by must be one of {', '.join(BY)}")

    @classmethod
    def draw(cls, seat: int, source: Source) -> Move:
        return cls(seat, "draw", source=source)

    @classmethod
    def place(cls, seat: int, slot: int, go_out: bool = True) -> Move:
        return cls(seat, "place", slot=slot, go_out=go_out)

    @classmethod
    def throw(cls, seat: int, go_out: bool = True) -> Move:
        return cls(seat, "throw", go_out=go_out)

    @classmethod
    def repair(cls, seat: int, slot: int) -> Move:
        return cls(seat, "repair", slot=slot)

    def with_by(self, by: str | None) -> Move:
        return Move(self.seat, self.act, self.source, self.slot, self.go_out, by)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "act": self.act}
        if self.source is not None:
            out["from"] = self.source
        if self.slot is not None:
            out["slot"] = self.slot
        if not self.go_out:
            out["go_out"] = False
        if self.by is not None:
            out["by"] = self.by
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Move:
        if not isinstance(data, dict):
            raise MalformedMoveError("a move must be a JSON object")
        unknown = sorted(set(data) - {"seat", "act", "from", "slot", "go_out", "by"})
        if unknown:
            raise MalformedMoveError(f"unknown move field: {unknown[0]}")
        if "seat" not in data or "act" not in data:
            raise MalformedMoveError("a move needs seat and act")
        return cls(
            seat=data["seat"],
            act=data["act"],
            source=data.get("from"),
            slot=data.get("slot"),
            go_out=data.get("go_out", True),
            by=data.get("by"),
        )

    def __repr__(self) -> str:
        parts = [f"seat {self.seat}", self.act]
        if self.source is not None:
            parts.append(self.source)
        if self.slot is not None:
            parts.append(f"slot {self.slot}")
        if not self.go_out:
            parts.append("stay in")
        return f"<Move {' '.join(parts)}>"
