"""What ``bench/load.py`` reads from each gateway's /metrics (on its ``METRICS_PORT``): the
moves it answered and their mean gateway → table time, its connections and tables."""

from __future__ import annotations

import urllib.request

__all__ = ["gateway_figures", "gateway_metrics", "scrape"]

_SCRAPED = {
    "rackem_gateway_move_latency_seconds_sum": "sum",
    "rackem_gateway_move_latency_seconds_count": "count",
    "rackem_gateway_connections": "connections",
    "rackem_gateway_tables": "tables",
}


def gateway_metrics(http: str) -> dict[str, float]:
    """A gateway's move-latency histogram sum and count, open connections and tables with a
    seat there, at ``http`` (its metrics port's /metrics; empty if unavailable)."""
    out: dict[str, float] = {}
    try:
        with urllib.request.urlopen(http, timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return out
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in _SCRAPED:
            out[_SCRAPED[name]] = float(value)
    return out


def scrape(urls: dict[str, str]) -> dict[str, dict[str, float]]:
    """Every gateway's figures, by its name (those that answer)."""
    return {name: got for name, url in urls.items() if (got := gateway_metrics(url))}


def gateway_figures(
    before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Per gateway, over the window: moves answered, their mean gateway → table time, and
    the connections and tables there when it opened."""
    out = {}
    for name, end in after.items():
        start = before.get(name, {})
        if "count" not in end or "count" not in start:
            continue
        moves = end["count"] - start["count"]
        figures = {"moves": moves, "connections": start.get("connections", 0.0)}
        figures["tables"] = start.get("tables", 0.0)
        if moves > 0:
            figures["move_mean_ms"] = (end["sum"] - start["sum"]) / moves * 1000
        figures["sum_s"] = end["sum"] - start["sum"]
        out[name] = figures
    return out
