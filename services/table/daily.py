"""The Daily Rack's seeds: one a UTC day, derived here and nowhere else (docs/daily.md).

The seed of day D (``YYYY-MM-DD``) is ``HMAC-SHA256(DAILY_SECRET, "rackem-daily/" + D)``,
32 bytes like any match seed, so its commitment is the rackem/v1 one (``SHA-256(seed)``,
as the match log's ``commitment``). The commitment is published from the day's start
(``GetDaily``); the seed only once the day has closed (UTC midnight), and until then it
never leaves the table service: a daily table's views, its match log line and its record
(``GetRecord``) leave it out while its day is open (``hides_seed``, ``public_log``).

Every replica needs the same secret; without one, ``GetDaily`` and daily tables are
``unavailable``. ``DAILY_SECRET`` is hex (an even number of hex digits, at least 32: the
bytes they spell) or any other text (its UTF-8 bytes).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from rackcore import Rules, commitment
from services._gen.rackem.v1 import table_pb2
from services.common.days import DAY, closes_ms, utc_day
from services.common.errors import ServiceError
from services.table.stored import SeatMeta

__all__ = ["DAILY_RULES", "DAY", "Daily", "closes_ms", "parse_secret", "public_log", "utc_day"]

_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){16,}")
_LABEL = b"rackem-daily/"
DAILY_RULES = Rules(players=2)  # every Daily Rack table's: the defaults for two


def parse_secret(text: str) -> bytes | None:
    """``DAILY_SECRET``'s bytes: hex as the bytes it spells, other text as UTF-8; None if unset."""
    text = text.strip()
    if not text:
        return None
    if _HEX.fullmatch(text):
        return bytes.fromhex(text)
    return text.encode()


def _checked_day(day: str) -> str:
    if not DAY.fullmatch(day):
        raise ServiceError("bad_request", "a day is YYYY-MM-DD")
    try:
        date.fromisoformat(day)
    except ValueError:
        raise ServiceError("bad_request", "no such day") from None
    return day


@dataclass(frozen=True, slots=True)
class Daily:
    """The Daily Rack on this replica: the secret (None: not offered) and the clock the
    day is read from (unix seconds; a test's own)."""

    secret: bytes | None = field(default=None, repr=False)
    clock: Callable[[], float] = time.time

    def today(self) -> str:
        return utc_day(self.clock())

    def is_open(self, day: str) -> bool:
        """``day`` has not closed yet: its seed is still secret."""
        return day >= self.today()

    def seed(self, day: str) -> bytes:
        """The seed of ``day`` (any day: callers decide what may leave)."""
        if self.secret is None:
            raise ServiceError("unavailable", "the Daily Rack is not offered here")
        return hmac.new(self.secret, _LABEL + day.encode("ascii"), hashlib.sha256).digest()

    def commitment(self, day: str) -> str:
        return commitment(self.seed(day))

    def table_seed(self, day: str, rules: Rules, seats: Sequence[SeatMeta], rated: bool) -> bytes:
        """The seed of a daily table asked for ``day``: only today's can be played, and
        only as everyone plays it (default two-player rules, one human against the hard
        computer, unrated), so the day's entries compare."""
        seed = self.seed(_checked_day(day))  # unavailable without a secret, whatever the day
        if day != self.today():
            raise ServiceError("bad_request", "only today's Daily Rack can be played")
        humans = [seat for seat in seats if not seat.bot]
        bots = [seat for seat in seats if seat.bot]
        if (
            rules.to_dict(full=True) != DAILY_RULES.to_dict(full=True)
            or len(humans) != 1
            or [bot.level for bot in bots] != ["hard"]
            or rated
        ):
            raise ServiceError(
                "bad_request",
                "the Daily Rack is one human against the hard computer, default rules, unrated",
            )
        return seed

    def reply(self, request: table_pb2.DailyRequest) -> table_pb2.DailyReply:
        """``GetDaily``: the commitment of today or an earlier day (empty: today), its seed
        once the day has closed; a later day is ``bad_request``."""
        today = self.today()
        day = _checked_day(request.day or today)
        seed = self.seed(day)
        if day > today:
            raise ServiceError("bad_request", "that day has not opened yet")
        return table_pb2.DailyReply(
            day=day, commitment=commitment(seed), seed=seed.hex() if day < today else ""
        )

    def hides_seed(self, day: str) -> bool:
        """A table of ``day`` ("" for any other table) keeps its seed in while this holds."""
        return bool(day) and self.is_open(day)

    def open_commitment(self) -> str | None:
        """Today's commitment (the one day whose records must not show their seed), or None
        without a secret."""
        return None if self.secret is None else self.commitment(self.today())


def public_log(log_json: str, daily: Daily) -> str:
    """A record's log as it may leave: without its seed if it is a match of the Daily Rack
    of a day still open (known by its commitment: the archive keeps no day)."""
    open_commitment = daily.open_commitment()
    if open_commitment is None or open_commitment not in log_json:
        return log_json
    log: dict[str, Any] = json.loads(log_json)
    if log.get("commitment") != open_commitment or "seed" not in log:
        return log_json
    del log["seed"]
    return json.dumps(log, separators=(",", ":"))
