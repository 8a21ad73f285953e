"""The ``rackem-match/1`` log: writing it, replaying it, and verifying a claimed result."""

from __future__ import annotations

from typing import Any

from rackcore._errors import LogError, RackError, RulesError
from rackcore._moves import Move
from rackcore._rules import Rules
from rackcore._state import Match

__all__ = ["FORMAT", "match_from_log", "replay", "to_log", "verify"]

FORMAT = "rackem-match/1"
_KEYS = {"format", "rules", "seed", "commitment", "moves", "result", "decks", "first_dealer"}


def to_log(match: Match, *, reveal: bool | None = None) -> dict[str, Any]:
    """The match as a log. The seed is included once the match is over (or if ``reveal``)."""
    if reveal is None:
        reveal = match.phase == "match_over"
    log: dict[str, Any] = {"format": FORMAT, "rules": match.rules.to_dict()}
    if match.seed is not None:
        if reveal:
            log["seed"] = match.seed.hex()
        log["commitment"] = match.commitment
    else:
        log["decks"] = [list(deck) for deck in match.decks or ()]
        log["first_dealer"] = match.first_dealer
    log["moves"] = [m.to_dict() for m in match.history]
    log["result"] = {
        "scores": list(match.scores),
        "rounds": [r.to_dict() for r in match.rounds],
        "winner": match.winner,
    }
    return log


def match_from_log(log: Any) -> Match:
    """A fresh match (no moves applied) from a log's rules and seed or stacked decks."""
    if not isinstance(log, dict):
        raise LogError("a match log is a JSON object")
    if log.get("format") != FORMAT:
        raise LogError(f'not a {FORMAT} log (the "format" field)')
    unknown = sorted(set(log) - _KEYS)
    if unknown:
        raise LogError(f"unknown log field: {unknown[0]}")
    try:
        rules = Rules.from_dict(log.get("rules", {}))
    except (RulesError, TypeError) as exc:
        raise LogError(f"bad rules: {exc}") from None
    if not isinstance(log.get("moves"), list):
        raise LogError('a log needs a "moves" list')
    if "seed" in log:
        if "decks" in log or "first_dealer" in log:
            raise LogError("a log has either a seed or stacked decks, not both")
        seed = log["seed"]
        if not isinstance(seed, str) or len(seed) != 64:
            raise LogError("seed must be 64 hex characters")
        try:
            raw = bytes.fromhex(seed)
        except ValueError:
            raise LogError("seed must be 64 hex characters") from None
        return Match(rules, raw)
    if "decks" in log:
        decks = log["decks"]
        if not isinstance(decks, list) or not all(
            isinstance(d, list) and all(type(c) is int for c in d) for d in decks
        ):
            raise LogError("decks must be a list of lists of card numbers")
        size = rules.deck_size
        for round_no, deck in enumerate(decks, 1):
            if sorted(deck) != list(range(1, size + 1)):
                raise LogError(f"the deck of round {round_no} is not a permutation of 1..{size}")
        return Match(rules, decks=decks, dealer=log.get("first_dealer"))
    raise LogError("the log has neither a seed nor stacked decks")


def replay(log: Any) -> Match:
    """Rebuild a match from its log; raises on the first bad move."""
    match = match_from_log(log)
    for data in log["moves"]:
        match.apply(Move.from_dict(data))
    return match


def verify(log: Any) -> dict[str, Any]:
    """Re-derive a logged match and compare it with what the log claims.

    Returns ``{"valid": True, ...}`` or ``{"valid": False, "error": {...}}``;
    raises ``LogError`` for something that is not a ``rackem-match/1`` log at all.
    """
    match = match_from_log(log)
    if match.seed is not None and match.commitment != log.get("commitment", match.commitment):
        return _invalid(None, "the seed does not match the commitment")
    for index, data in enumerate(log["moves"]):
        try:
            match.apply(Move.from_dict(data))
        except RackError as exc:
            return _invalid(index, f"{exc.code}: {exc}")
    result = {
        "scores": list(match.scores),
        "rounds": [r.to_dict() for r in match.rounds],
        "winner": match.winner,
    }
    claimed = log.get("result")
    if claimed is not None:
        if not isinstance(claimed, dict):
            return _invalid(None, "result must be an object")
        for key, value in result.items():
            if key in claimed and claimed[key] != value:
                return _invalid(None, f"claimed {key} {claimed[key]!r}, replay gives {value!r}")
    return {"valid": True, "finished": match.phase == "match_over", **result}


def _invalid(index: int | None, reason: str) -> dict[str, Any]:
    return {"valid": False, "error": {"move_index": index, "reason": reason}}
