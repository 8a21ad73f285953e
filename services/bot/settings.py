"""The bot service's settings, read once from the environment (``from_env(BotSettings)``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BotSettings"]


@dataclass(frozen=True, slots=True)
class BotSettings:
    host: str = "0.0.0.0"
    port: int = 50053
    log_level: str = "INFO"
    stop_grace_ms: int = 5000  # how long in-flight calls may finish on SIGTERM
    # Reviews run one at a time in a worker process; this many more wait, and past them a
    # review is refused ``busy`` (services/bot/reviews.py).
    review_queue: int = 4
    # /metrics on a port of its own (never PORT); unset: not served, 0: any free port.
    # ``metrics_host`` empty: the same address as ``host``.
    metrics_port: int | None = None
    metrics_host: str = ""
