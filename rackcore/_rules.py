"""The rules options of a match (docs/rules.md, *Variants*), validated on creation."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rackcore._errors import RulesError

__all__ = ["TIEBREAKS", "Rules"]

TIEBREAKS = ("went_out", "extra_round")
_RANGES: dict[str, tuple[int, int]] = {
    "players": (2, 4),
    "target": (50, 10000),
    "run_to_go_out": (0, 10),
    "max_recycles": (0, 10),
    "turn_cap": (50, 1000),
}


def default_run(players: int) -> int:
    """``run_to_go_out`` when not given: 3 with two players, else 0."""
    return 3 if players == 2 else 0


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option of a match. ``run_to_go_out=None`` means the default for the player count."""

    players: int = 2
    target: int = 500
    bonus: bool = False
    partners: bool = False
    run_to_go_out: int | None = None
    descending: bool = False
    repair_token: bool = False
    visible_center: bool = False
    reshuffle_on_recycle: bool = False
    max_recycles: int = 3
    turn_cap: int = 200
    tiebreak: str = "went_out"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "run_to_go_out" and value is None:
                continue
            if f.name == "tiebreak":
                if value not in TIEBREAKS:
                    raise RulesError(f"tiebreak must be one of {', '.join(TIEBREAKS)}")
                continue
            if f.name in _RANGES:
                low, high = _RANGES[f.name]
                if type(value) is not int or not low <= value <= high:
                    raise RulesError(f"{f.name} must be an integer from {low} to {high}")
            elif type(value) is not bool:
                raise RulesError(f"{f.name} must be true or false")
        if self.partners and self.players != 4:
            raise RulesError("partners needs exactly 4 players")
        if self.run_to_go_out is None:
            object.__setattr__(self, "run_to_go_out", default_run(self.players))

    @property
    def deck_size(self) -> int:
        return 10 * self.players + 20

    @property
    def run_needed(self) -> int:
        assert self.run_to_go_out is not None  # set in __post_init__
        return self.run_to_go_out

    @property
    def sides(self) -> int:
        return 2 if self.partners else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.partners else seat

    def to_dict(self, full: bool = False) -> dict[str, Any]:
        """The options as JSON; by default only those that differ from the defaults."""
        if full:
            return {name: getattr(self, name) for name, _ in _DEFAULTS}
        out: dict[str, Any] = {"players": self.players}
        for name, default in _DEFAULTS:
            value = getattr(self, name)
            if name == "run_to_go_out":
                default = default_run(self.players)
            if value != default:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Rules:
        if not isinstance(data, dict):
            raise RulesError("rules must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rules option: {unknown[0]}")
        return cls(**data)


_DEFAULTS: tuple[tuple[str, Any], ...] = tuple((f.name, f.default) for f in fields(Rules))
