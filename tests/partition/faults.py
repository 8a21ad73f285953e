"""The nemesis: faults on a ``NetStack``, each applied for a while and then healed.

A cut is a real partition (``Network.cut``: packets dropped on the bridge, both ways,
nothing closed, no signal to any process); a pause and a kill are signals, as a
stalled VM or an OOM kill would be. Each fault returns the ``Window`` it lasted
(``checker.py`` measures the tables' stalls over it).

====================  ===========================================================
kind                  what
====================  ===========================================================
replica-redis         the busiest table replica ↔ Redis (every server, every
                      Sentinel); the gateways and the matchmaker still reach it
replica-gateways      the busiest replica ↔ both gateways and the matchmaker;
                      Redis still reachable
gateway-matchmaker    gateway0 ↔ the matchmaker
gateway-isolated      gateway0 ↔ everything: every other service and the players
redis-primary-        the Redis primary and one Sentinel ↔ its replicas and the two
minority              other Sentinels: the majority fails over to a replica while
                      the old primary still takes writes from the services (which
                      reach every node); the heal demotes it and its writes are gone
replica-pause         the busiest replica SIGSTOPped (past its lease), then SIGCONT
replica-kill          the busiest replica SIGKILLed; started again at the heal (a pod
                      restarted on its address)
gateway-kill          gateway0 SIGKILLed; started again at the heal
bot-isolated          the bot service ↔ the table replicas and gateways
====================  ===========================================================

"The busiest replica" holds the most leases of tables in play (read from Redis).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from collections.abc import Callable

from .checker import Window
from .netns import Node
from .netstack import NetStack

__all__ = ["FAULTS", "Nemesis"]

FAULTS = (
    "replica-redis",
    "replica-gateways",
    "gateway-matchmaker",
    "gateway-isolated",
    "redis-primary-minority",
    "replica-pause",
    "replica-kill",
    "gateway-kill",
    "bot-isolated",
)


class Nemesis:
    def __init__(self, stack: NetStack) -> None:
        self.stack = stack
        self.net = stack.net
        self.windows: list[Window] = []

    def busiest_replica(self, tables: set[str] | None = None) -> str:
        """The table replica holding the most leases (of ``tables``, when given)."""
        try:
            owners = self.stack.owners()
        except Exception:
            owners = {}
        count = Counter(
            owner
            for table_id, owner in owners.items()
            if owner in self.stack.services and (tables is None or table_id in tables)
        )
        return count.most_common(1)[0][0] if count else self.stack.named("table")[0]

    def _nodes(self, *names: str) -> list[Node]:
        return [self.net.nodes[n] for n in names]

    def start(self, kind: str, tables: set[str] | None = None) -> tuple[str, Callable[[], None]]:
        """Apply a fault of ``kind``: what it hit, and how to heal it (blocking)."""
        stack, net = self.stack, self.net
        groups = stack.groups
        if kind in ("replica-redis", "replica-gateways", "replica-pause", "replica-kill"):
            replica = self.busiest_replica(tables)
            node = net.nodes[replica]
            service = stack.services[replica]
            if kind == "replica-redis":
                cut = net.cut([node], groups["redis"])
                return replica, lambda: net.heal(cut)
            if kind == "replica-gateways":
                cut = net.cut([node], [*groups["gateways"], net.nodes["matchmaker"]])
                return replica, lambda: net.heal(cut)
            if kind == "replica-pause":
                service.pause()
                return replica, service.resume
            service.stop(signal.SIGKILL)
            return replica, lambda: stack.launch(service)
        if kind == "gateway-matchmaker":
            cut = net.cut(self._nodes("gateway0"), self._nodes("matchmaker"))
            return "gateway0", lambda: net.heal(cut)
        if kind == "gateway-isolated":
            gateway = net.nodes["gateway0"]
            others = [n for n in net.nodes.values() if n != gateway]
            cut = net.cut([gateway], others)
            return "gateway0", lambda: net.heal(cut)
        if kind == "gateway-kill":
            service = stack.services["gateway0"]
            service.stop(signal.SIGKILL)
            return "gateway0", lambda: stack.launch(service)
        if kind == "bot-isolated":
            cut = net.cut(self._nodes("bot"), [*groups["tables"], *groups["gateways"]])
            return "bot", lambda: net.heal(cut)
        if kind == "redis-primary-minority":
            primary = stack.primary()
            standbys = [s.node for s in stack.servers if s is not primary]
            sentinels = [s.node for s in stack.sentinels]
            cut = net.cut([primary.node, sentinels[0]], [*standbys, *sentinels[1:]])

            def heal() -> None:
                net.heal(cut)
                stack.wait_synced(timeout=60)  # the old primary demoted and caught up

            return primary.name, heal
        raise ValueError(f"no fault {kind!r} (one of {', '.join(FAULTS)})")

    async def apply(self, kind: str, seconds: float, tables: set[str] | None = None) -> Window:
        """``kind`` for ``seconds``, then healed; the window from the fault to the heal."""
        started = time.monotonic()
        what, heal = await asyncio.to_thread(self.start, kind, tables)
        window = Window(kind, started, detail=what)
        self.windows.append(window)
        await asyncio.sleep(max(0.0, seconds - (time.monotonic() - started)))
        window.end = time.monotonic()
        await asyncio.to_thread(heal)
        return window
