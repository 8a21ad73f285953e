"""Where the matchmaker's Redis keys live: spread over many hash tags (cluster slots).

A table lives in a *home*: a hash tag holding its record, and the sorted sets the scripts
change with it (so each script touches one slot):

- ``quick<players>`` (``mm:{quick2}:``, ``{quick3}``, ``{quick4}``): the quick-match
  tables for that player count, with their queue ``q:<players>`` and due set ``due``;
- ``room-<n>`` (``mm:{room-0}:`` … ``{room-15}``): private tables and rematches, the
  home chosen by the table id (``ROOM_HOMES`` of them), with their due set.

What is looked up by something other than a table id has a key of its own, tagged by
what it is looked up by, so those keys spread over every slot: a room code
``code:{CODE}`` → ``"<id> <home>"``, a seat token ``tok:{<sha256>}`` →
``"<id> <seat> <home>"``, a rematch ``rm:{<old id>}`` → ``"<new id> <code>"``.

Before this layout every key shared one tag, ``mm:{mm}:`` (``LEGACY``: ``t:<id>``,
``q:<players>``, ``due``, ``code:<CODE>``, ``tok:<sha256>``, ``rm:<old id>``). The legacy
home keeps the same key names inside it, so the scripts run on it unchanged: keys left
by a release before this one are still read and their due tables still started
(docs/matchmaker.md, "Upgrading from one slot").
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

__all__ = ["DEFAULT_NAMESPACE", "LEGACY", "QUICK_PLAYERS", "ROOM_HOMES", "Home", "Layout"]

DEFAULT_NAMESPACE = "mm:"
ROOM_HOMES = 16  # homes of private tables; every replica must agree (a table id names one)
QUICK_PLAYERS = (2, 3, 4)
LEGACY = "mm"  # the one tag of the layout before this one


@dataclass(frozen=True, slots=True)
class Home:
    """A hash tag and the keys in it: tables, quick-match queues and one due set."""

    name: str  # the tag's text: quick2, room-7, mm (legacy)
    prefix: str  # every key of the home starts with it: mm:{quick2}:

    def table(self, table_id: str) -> str:
        return f"{self.prefix}t:{table_id}"

    def queue(self, players: int | str) -> str:
        return f"{self.prefix}q:{players}"

    @property
    def due(self) -> str:
        return f"{self.prefix}due"


class Layout:
    """The keys under one namespace (``mm:``; tests use one each). The namespace holds no
    hash tag: the tags are the homes' and the lookup keys' own."""

    def __init__(self, namespace: str = DEFAULT_NAMESPACE) -> None:
        if "{" in namespace or "}" in namespace:
            raise ValueError("the matchmaker's namespace must not hold a hash tag")
        self.namespace = namespace
        self.legacy = self._home(LEGACY)
        self._quick = {players: self._home(f"quick{players}") for players in QUICK_PLAYERS}
        self._rooms = [self._home(f"room-{n}") for n in range(ROOM_HOMES)]
        self.homes: tuple[Home, ...] = (*self._quick.values(), *self._rooms, self.legacy)
        """Every home with a due set (the due loop claims from each)."""
        self._by_name = {home.name: home for home in self.homes}

    def _home(self, name: str) -> Home:
        return Home(name, f"{self.namespace}{{{name}}}:")

    def quick(self, players: int) -> Home:
        found = self._quick.get(players)
        return found if found is not None else self._home(f"quick{players}")

    def room(self, table_id: str) -> Home:
        """The home of a private table (or rematch), from its id alone."""
        return self._rooms[zlib.crc32(table_id.encode()) % ROOM_HOMES]

    def named(self, name: str) -> Home | None:
        """The home a stored pointer names; None for a name this release does not know."""
        return self._by_name.get(name)

    def candidates(self, table_id: str) -> tuple[Home, ...]:
        """The homes a table with this id can be in: its room home, a quick-match home,
        or the legacy one."""
        return (self.room(table_id), *self._quick.values(), self.legacy)

    @property
    def channel(self) -> str:
        """The change feed (classic pub/sub, not a key: a cluster carries it to every
        node); the legacy layout's name, so replicas of both releases hear each other."""
        return f"{self.legacy.prefix}ev"

    def code(self, code: str) -> str:
        return f"{self.namespace}code:{{{code}}}"

    def token(self, token_hash: str) -> str:
        return f"{self.namespace}tok:{{{token_hash}}}"

    def rematch(self, old_id: str) -> str:
        return f"{self.namespace}rm:{{{old_id}}}"

    def legacy_code(self, code: str) -> str:
        return f"{self.legacy.prefix}code:{code}"

    def legacy_token(self, token_hash: str) -> str:
        return f"{self.legacy.prefix}tok:{token_hash}"

    def legacy_rematch(self, old_id: str) -> str:
        return f"{self.legacy.prefix}rm:{old_id}"
