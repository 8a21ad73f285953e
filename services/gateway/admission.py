"""Admission control: is this gateway taking newcomers (new connections, new games)?

Under a load above its capacity a gateway that takes everyone slows down for everyone.
Instead it watches its own event loop, and the tables behind it: a task sleeps
``TICK_S`` at a time and measures how late it wakes, and every move reports how long
its table took to answer. While either, smoothed, is above its limit (the loop's lag,
or the mean answer time), and until both have stayed below them for a calm window, the
gateway is *overloaded*: it refuses new connections and new games, and keeps serving
the ones it has. Connections past ``max_connections`` are refused too; each refusal is
counted by reason (``rackem_gateway_admission_refusals_total``). Both signals,
because the table replicas may run out before the gateway's own loop does (while the
moves it forwards wait): docs/performance.md.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from services.common.logs import event
from services.common.metrics import TICK_S, sample_loop_lag
from services.gateway.metrics import Metrics

__all__ = ["SMOOTHING_S", "TICK_S", "Admission"]

log = logging.getLogger("rackem.gateway")

Clock = Callable[[], float]

SMOOTHING_S = 0.5  # time constant of the lag's moving average: a lone hiccup does not count


class Admission:
    """The gateway's admission state, fed with event-loop lag samples.

    ``max_connections`` 0 means no limit; ``lag_limit_s`` and ``answer_limit_s`` 0 turn
    their half of overload off (both are still measured); ``window_s`` is how long both
    must stay below their limits before newcomers are taken again.
    """

    def __init__(
        self,
        metrics: Metrics,
        max_connections: int,
        lag_limit_s: float,
        window_s: float,
        clock: Clock = time.monotonic,
        answer_limit_s: float = 0.0,
    ) -> None:
        self._metrics = metrics
        self._max_connections = max_connections
        self._lag_limit = lag_limit_s
        self._window = window_s
        self._clock = clock
        self._last = clock()
        self._lag = 0.0
        self._answer_limit = answer_limit_s
        self._answer = 0.0  # smoothed mean time tables took to answer moves
        self._answers = 0.0  # answer times since the last sample: their sum ...
        self._answered = 0  # ... and count
        self._overloaded = False
        self._since = 0.0  # overloaded: when it started
        self._calm_since: float | None = None  # overloaded: when the lag fell below the limit

    @property
    def lag(self) -> float:
        """The smoothed event-loop lag, seconds."""
        return self._lag

    @property
    def answer(self) -> float:
        """The smoothed mean time a table took to answer a move, seconds."""
        return self._answer

    def answered(self, seconds: float) -> None:
        """A move's table answered (or failed) ``seconds`` after it was sent."""
        self._answers += seconds
        self._answered += 1

    @property
    def overloaded(self) -> bool:
        return self._overloaded

    def admits(self, connections: int) -> bool:
        """Whether to take one more connection, with ``connections`` open (a refusal is
        counted)."""
        if self._overloaded:
            self._metrics.admission_refusals["overloaded"].inc()
            return False
        if 0 < self._max_connections <= connections:
            self._metrics.admission_refusals["max_connections"].inc()
            return False
        return True

    def refuses_new(self) -> bool:
        """Whether to refuse a new game or watcher now (overloaded; a refusal is counted)."""
        if self._overloaded:
            self._metrics.admission_refusals["overloaded"].inc()
        return self._overloaded

    def observe(self, lag: float) -> None:
        """One sample: the monitor woke ``lag`` seconds later than it asked."""
        now = self._clock()
        elapsed, self._last = max(now - self._last, 0.0), now
        weight = 1.0 - math.exp(-elapsed / SMOOTHING_S)
        self._lag += (lag - self._lag) * weight
        self._metrics.loop_lag_seconds.observe(lag)
        mean = self._answers / self._answered if self._answered else 0.0
        self._answers, self._answered = 0.0, 0
        self._answer += (mean - self._answer) * weight
        self._metrics.loop_lag.set(self._lag)
        self._metrics.table_answer.set(self._answer)
        hot = (self._lag_limit > 0 and self._lag > self._lag_limit) or (
            self._answer_limit > 0 and self._answer > self._answer_limit
        )
        if hot:
            self._calm_since = None
            if not self._overloaded:
                self._overloaded, self._since = True, now
                self._metrics.overloaded.set(1)
                event(
                    log,
                    "overload_started",
                    logging.WARNING,
                    lag_ms=self._lag_ms(),
                    answer_ms=self._answer_ms(),
                )
        elif self._overloaded:
            if self._calm_since is None:
                self._calm_since = now
            if now - self._calm_since >= self._window:
                self._overloaded, self._calm_since = False, None
                self._metrics.overloaded.set(0)
                event(
                    log,
                    "overload_ended",
                    lag_ms=self._lag_ms(),
                    answer_ms=self._answer_ms(),
                    seconds=self._lasted(now),
                )

    def _answer_ms(self) -> float:
        return round(self._answer * 1000, 1)

    def _lag_ms(self) -> float:
        return round(self._lag * 1000, 1)

    def _lasted(self, now: float) -> float:
        return round(now - self._since, 1)

    async def monitor(self) -> None:
        """Sample the running loop's lag every ``TICK_S`` until cancelled (the samples
        ``rackem_event_loop_lag_seconds`` is made of: one timer, not two)."""
        self._last = self._clock()
        await sample_loop_lag(self.observe)
