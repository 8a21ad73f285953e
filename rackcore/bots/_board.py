"""A ``View`` as a bot reads it: values mirrored for ``descending``, and what is still unseen.

With ``descending`` every card ``c`` becomes ``n + 1 - c``: a decreasing rack reads
as an increasing one and a run 20, 19, 18 as 21, 22, 23 (n = 40), so the bots only
ever reason about increasing racks. Slots never move, so moves need no mapping back.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackcore import View

__all__ = ["Board"]


@dataclass(frozen=True, slots=True)
class Board:
    """The facts of one view that the bots use, in increasing terms."""

    seat: int
    players: int
    n: int
    run: int
    rack: tuple[int, ...]
    held: int | None
    held_from: str | None
    discard: tuple[int, ...]
    stock_count: int
    stock_known: tuple[int, ...] | None
    stock_next: int | None  # the exact card a stock draw gives, when everyone can know it
    stock_ends: bool  # a stock draw ends the round with no winner
    unseen: tuple[int, ...]  # cards in the stock or hidden in another rack
    recycled: tuple[int, ...] | None  # after a shuffled recycle: the unseen cards it may hold
    known: tuple[tuple[int, ...], ...]  # per seat, 0 where the card is hidden
    can_repair: bool
    view: View

    @property
    def top(self) -> int | None:
        return self.discard[-1] if self.discard else None

    @classmethod
    def of(cls, view: View) -> Board:
        rules = view.rules
        n = rules.deck_size

        def norm(c: int) -> int:
            return n + 1 - c if rules.descending else c

        rack = tuple(norm(c) for c in view.rack)
        held = norm(view.held) if view.held is not None else None
        discard = tuple(norm(c) for c in view.discard)
        known = [[norm(c) if c is not None else 0 for c in row] for row in view.known]
        for s, c in enumerate(view.center):
            if c is not None and s != view.seat:
                known[s][4] = norm(c)
        known[view.seat] = list(rack)
        seen = set(rack) | set(discard)
        if held is not None:
            seen.add(held)
        for s, row in enumerate(known):
            if s != view.seat:
                seen.update(c for c in row if c)
        unseen = tuple(c for c in range(1, n + 1) if c not in seen)
        stock_known = (
            tuple(norm(c) for c in view.stock_known) if view.stock_known is not None else None
        )
        recycled: tuple[int, ...] | None = None
        if rules.reshuffle_on_recycle and view.recycles > 0:
            # A shuffled stock holds only cards that went through the discard pile this
            # round; the cards hidden in racks since the deal cannot be in it.
            piled = {norm(c) for row in view.discarded for c in row}
            recycled = tuple(c for c in unseen if c in piled)
        stock_next: int | None = None
        stock_ends = False
        if view.stock_count > 0:
            if stock_known:
                stock_next = stock_known[0]
        elif view.recycles >= rules.max_recycles:
            stock_ends = True
        elif not rules.reshuffle_on_recycle and len(discard) > 1:
            stock_next = discard[0]  # the pile turns over: its bottom card comes up first
        return cls(
            seat=view.seat,
            players=view.players,
            n=n,
            run=rules.run_needed,
            rack=rack,
            held=held,
            held_from=view.held_from,
            discard=discard,
            stock_count=view.stock_count,
            stock_known=stock_known,
            stock_next=stock_next,
            stock_ends=stock_ends,
            unseen=unseen,
            recycled=recycled,
            known=tuple(tuple(row) for row in known),
            can_repair=bool(
                rules.repair_token and view.repair_tokens and view.repair_tokens[view.seat]
            ),
            view=view,
        )

    def stock_draws(self) -> tuple[int, ...]:
        """The cards a stock draw may give, each equally likely (empty if it ends the round)."""
        if self.stock_ends:
            return ()
        if self.stock_next is not None:
            return (self.stock_next,)
        if self.stock_count == 0:
            return self.discard[:-1]  # a shuffled recycle of the pile under the top card
        return self.recycled or self.unseen
