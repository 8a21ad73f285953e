"""Which moves a seat may make, from facts any seat can see. Shared by states and views."""

from __future__ import annotations

from rackcore._moves import Move

__all__ = ["legal_for"]

_CACHE: dict[tuple[int, str, str | None, bool, bool], tuple[Move, ...]] = {}


def legal_for(
    seat: int, phase: str, held_from: str | None, can_draw_discard: bool, can_repair: bool
) -> tuple[Move, ...]:
    """The legal moves of ``seat`` when it is that seat's turn in ``phase``.

    Going out is automatic for place and throw; the ``go_out=False`` forms are
    listed too, since they are legal whenever the plain forms are.
    """
    key = (seat, phase, held_from, can_draw_discard, can_repair)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    moves: list[Move] = []
    if phase in ("draw", "round_over"):
        moves.append(Move.draw(seat, "stock"))
        if can_draw_discard:
            moves.append(Move.draw(seat, "discard"))
    elif phase == "resolve":
        for go_out in (True, False):
            moves.extend(Move.place(seat, slot, go_out) for slot in range(10))
            if held_from == "stock":
                moves.append(Move.throw(seat, go_out))
        if can_repair:
            moves.extend(Move.repair(seat, slot) for slot in range(9))
    result = tuple(moves)
    _CACHE[key] = result
    return result
