"""What ``bench/load.py`` reads from each gateway's /metrics (on its ``METRICS_PORT``): the
moves it answered and their mean gateway → table time, its connections and tables, and
its ``Table.Link`` messages each way with what they carried (over gRPC only: an
in-process link sends no messages)."""

from __future__ import annotations

import urllib.request

__all__ = ["LINK", "gateway_figures", "gateway_metrics", "link_figures", "scrape"]

_SCRAPED = {
    "rackem_gateway_move_latency_seconds_sum": "sum",
    "rackem_gateway_move_latency_seconds_count": "count",
    "rackem_gateway_connections": "connections",
    "rackem_gateway_tables": "tables",
    'rackem_gateway_link_messages_total{direction="up"}': "link_up",
    'rackem_gateway_link_messages_total{direction="down"}': "link_down",
    'rackem_gateway_link_items_total{direction="up"}': "link_up_items",
    'rackem_gateway_link_items_total{direction="down"}': "link_down_items",
}
LINK = ("link_up", "link_down", "link_up_items", "link_down_items")


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
        for key in LINK:
            if key in end:
                figures[key] = end[key] - start.get(key, 0.0)
        out[name] = figures
    return out


def link_figures(gateways: dict[str, dict[str, float]], moves: int) -> dict[str, float]:
    """Every gateway's link messages over the window: each way per move, and what a
    message carried on average (calls up; answers and views down). Empty without links."""
    total = {key: sum(g.get(key, 0.0) for g in gateways.values()) for key in LINK}
    if moves <= 0 or not total["link_up"]:
        return {}
    out = {
        "up_per_move": round(total["link_up"] / moves, 3),
        "down_per_move": round(total["link_down"] / moves, 3),
        "calls_per_up": round(total["link_up_items"] / total["link_up"], 2),
    }
    if total["link_down"]:
        out["events_per_down"] = round(total["link_down_items"] / total["link_down"], 2)
    return out
