"""UTC days, as the Daily Rack names them (``YYYY-MM-DD``): the table service's and the
gateway's one reading of when a day opens and closes (docs/daily.md)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = ["DAY", "closes_ms", "day_before", "utc_day"]

DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def utc_day(unix_s: float) -> str:
    """The UTC day of a unix time, ``YYYY-MM-DD``."""
    return datetime.fromtimestamp(unix_s, UTC).date().isoformat()


def closes_ms(day: str) -> int:
    """When ``day`` closes (the next UTC midnight), unix ms."""
    start = datetime.combine(date.fromisoformat(day), datetime.min.time(), UTC)
    return int((start + timedelta(days=1)).timestamp() * 1000)


def day_before(day: str) -> str:
    return (date.fromisoformat(day) - timedelta(days=1)).isoformat()
