"""The gateway's Prometheus metrics, in a registry of their own (one per app;
docs/metrics.md)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, generate_latest

from services.common.errors import CODES
from services.common.metrics import ServiceMetrics

__all__ = ["DROP_REASONS", "JOIN_KINDS", "REFUSALS", "LinkCounts", "Metrics"]

DROP_REASONS = ("busy", "slow", "no_hello", "bad_utf8", "abuse")
"""Why the gateway closes a connection (app.py, connection.py, session.py)."""

JOIN_KINDS = ("quick", "join", "create", "rematch")
"""The messages that ask for a seat: ``quick_match``, ``join`` (by code), ``create_table``,
``rematch``."""
REFUSALS = ("overloaded", "max_connections", "games_per_ip")
"""Why admission control turned a newcomer away: the gateway is overloaded (a new
connection, game or watcher), it holds ``MAX_CONNECTIONS`` already (a new connection),
the address started ``GAMES_PER_IP`` games within the window (a new game)."""


class LinkCounts:
    """A link's messages and what they carry, counted per message (``link.Counts``)."""

    def __init__(self, messages: Counter, items: Counter) -> None:
        self._up, self._down = messages.labels("up"), messages.labels("down")
        self._calls, self._events = items.labels("up"), items.labels("down")

    def up(self, calls: int) -> None:
        self._up.inc()
        self._calls.inc(calls)

    def down(self, events: int) -> None:
        self._down.inc()
        self._events.inc(events)


class Metrics(ServiceMetrics):
    def __init__(self, max_connections: int = 0) -> None:
        super().__init__()
        self.connections = Gauge(
            "rackem_gateway_connections", "Open WebSocket connections", registry=self.registry
        )
        self.connections_total = Counter(
            "rackem_gateway_connections_accepted",
            "WebSocket connections accepted",
            registry=self.registry,
        )
        self.tables = Gauge(
            "rackem_gateway_tables", "Tables with a subscribed seat here", registry=self.registry
        )
        self.tables_seen = Counter(
            "rackem_gateway_tables_seen", "Table subscriptions opened", registry=self.registry
        )
        self.moves = Counter(
            "rackem_gateway_moves", "Moves forwarded, by result", ["result"], registry=self.registry
        )
        # Looked up once: ``labels()`` costs a lookup under a lock on every move.
        self.moves_accepted = self.moves.labels("accepted")
        self.moves_refused = self.moves.labels("refused")
        self.move_latency = Histogram(
            "rackem_gateway_move_latency_seconds",
            "Time from a move frame to the table's answer",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )
        link_messages = Counter(
            "rackem_gateway_link_messages",
            "Table.Link messages: up, sent to a replica; down, read from one",
            ["direction"],
            registry=self.registry,
        )
        link_items = Counter(
            "rackem_gateway_link_items",
            "What those messages carried: calls up; answers and views down",
            ["direction"],
            registry=self.registry,
        )
        self.link_counts = LinkCounts(link_messages, link_items)
        self.errors = Counter(
            "rackem_gateway_errors",
            "Protocol errors sent, by code",
            ["code"],
            registry=self.registry,
        )
        self.dropped = Counter(
            "rackem_gateway_dropped",
            "Connections closed by the gateway, by reason",
            ["reason"],
            registry=self.registry,
        )
        # Shown at 0 from the start, so that a rate over them has a series before the
        # first error or drop (the other codes a gateway sends appear when first sent).
        for code in CODES:
            self.errors.labels(code)
        for reason in DROP_REASONS:
            self.dropped.labels(reason)
        self.loop_lag = Gauge(
            "rackem_gateway_loop_lag_seconds",
            "Event-loop lag, smoothed (how late a 100 ms sleep wakes)",
            registry=self.registry,
        )
        self.table_answer = Gauge(
            "rackem_gateway_table_answer_seconds",
            "Mean time tables take to answer moves (smoothed, as admission control sees it)",
            registry=self.registry,
        )
        self.gc_pause = Histogram(
            "rackem_gateway_gc_pause_seconds",
            "Garbage collector pauses (the event loop stops for them), by generation",
            ["generation"],
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=self.registry,
        )
        self.overloaded = Gauge(
            "rackem_gateway_overloaded",
            "1 while the gateway refuses new connections and games for its loop lag",
            registry=self.registry,
        )

        join_latency = Histogram(
            "rackem_gateway_join_latency_seconds",
            "Time from a message asking for a seat to its first answer (seated), by kind; "
            "not the wait for other players",
            ["kind"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=self.registry,
        )
        self.join_latency = {kind: join_latency.labels(kind) for kind in JOIN_KINDS}
        refusals = Counter(
            "rackem_gateway_admission_refusals",
            "Newcomers (connections, games, watchers) refused by admission control, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.admission_refusals = {reason: refusals.labels(reason) for reason in REFUSALS}
        self.max_connections = Gauge(
            "rackem_gateway_max_connections",
            "MAX_CONNECTIONS: open connections past this are refused (0: no limit)",
            registry=self.registry,
        )
        self.max_connections.set(max_connections)

    def render(self) -> bytes:
        return generate_latest(self.registry)
