"""The profile messages the gateway sends, from the profile store's values (docs/protocol.md,
*Profiles*): ``profile``, ``link_code``, ``history``, ``leaderboard``, ``forgotten``.

Mechanical, field by field, as messages.py is for the services' messages: what a profile
holds and how a rating is shown is the store's to say (services/archive/profiles.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.archive.profiles import HistoryEntry, LeaderboardEntry, Profile, Rating

__all__ = [
    "FORGOTTEN",
    "history",
    "leaderboard",
    "leaderboard_entries",
    "link_code",
    "profile",
    "rating",
    "replay_link",
]

FORGOTTEN: dict[str, Any] = {"type": "forgotten"}


def rating(value: Rating) -> dict[str, Any]:
    return {"value": value.value, "provisional": value.provisional}


def profile(found: Profile, key: str | None = None) -> dict[str, Any]:
    """The ``profile`` answer; ``key`` only when it is new to this device (a new profile,
    or a redeemed link code): the server never sends a key again."""
    out: dict[str, Any] = {"type": "profile", "id": found.id}
    if key is not None:
        out["key"] = key
    out |= {
        "name": found.name,
        "public": found.public,
        "rating": rating(found.rating),
        "stats": found.stats,
    }
    return out


def link_code(code: str, expires_ms: int) -> dict[str, Any]:
    return {"type": "link_code", "code": code, "expires_ms": expires_ms}


def replay_link(table_id: str) -> str:
    """The replay viewer's address of a finished match (replay_page.py)."""
    return f"/replay/{table_id}"


def history(entries: Sequence[HistoryEntry], kept: Sequence[bool]) -> dict[str, Any]:
    """The ``history`` answer; ``kept[i]``: whether entry i's match record is still kept
    (its replay link, else ``null``)."""
    return {
        "type": "history",
        "matches": [
            {
                "table_id": entry.table_id,
                "finished_ms": entry.finished_at_ms,
                "players": [
                    {
                        "seat": player["seat"],
                        "name": player["name"],
                        "score": player["score"],
                        "bot": player["bot"],
                    }
                    for player in entry.players
                ],
                "seat": entry.seat,
                "score": entry.score,
                "place": entry.place,
                "rated": entry.rated,
                "rating_before": entry.rating_before,
                "rating_after": entry.rating_after,
                "replay": replay_link(entry.table_id) if is_kept else None,
            }
            for entry, is_kept in zip(entries, kept, strict=True)
        ],
    }


def leaderboard_entries(entries: Sequence[LeaderboardEntry]) -> list[dict[str, Any]]:
    """The leaderboard's entries, best first: place (equal ratings share one), name, rating."""
    out: list[dict[str, Any]] = []
    for n, entry in enumerate(entries):
        place = out[-1]["place"] if out and out[-1]["rating"] == entry.rating else n + 1
        out.append({"place": place, "name": entry.name, "rating": entry.rating})
    return out


def leaderboard(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "leaderboard", "entries": entries}
