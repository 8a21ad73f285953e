"""Profiles on the gateway: the ``profile``, ``link_code``, ``forget_profile``, ``history``
and ``leaderboard`` messages (docs/protocol.md, *Profiles*), on the archive's profile
store (``DATABASE_URL``; services/archive/profiles.py).

A connection binds at most one profile (``session.profile``): by making one, by its
key, or by redeeming a link code, which makes a new key for this device. A key is 32
hex digits, sent once and never kept: the store holds its SHA-256 only, and a link
code's. Every wrong key gets the same ``bad_profile``, whether or not any profile exists;
a key or link code look-up (and a new profile) counts against the connection's and the
client address's limits (``profile_lookups_*``, as new games do) → ``rate_limited``.
Nothing of a key, a profile's id or its name is ever logged.

Without ``DATABASE_URL`` every profile message answers ``unavailable``; so do they while
the database does not answer (the store is opened again in the background until it
does: the gateway serves games meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from services.archive.profiles import Profile, ProfileStore
from services.archive.schema import SchemaBehind
from services.archive.settings import ArchiveSettings
from services.common.errors import StoreUnavailable
from services.common.logs import event
from services.gateway import profile_messages
from services.gateway.limits import GameLimiter
from services.gateway.protocol import ProtocolError, check_name
from services.gateway.session_api import SessionApi
from services.gateway.settings import GatewaySettings
from services.profiles import keys

__all__ = [
    "DEFAULT_NAME",
    "ProfileSession",
    "Profiles",
    "forget_profile",
    "history",
    "leaderboard",
    "link_code",
    "profile",
]

log = logging.getLogger("rackem.gateway")

DEFAULT_NAME = "Player"
HISTORY_LIMIT = 50
LEADERBOARD_LIMIT = 100
REOPEN_S = (0.5, 30.0)  # the background re-open's first and longest wait

Opener = Callable[[ArchiveSettings], Awaitable[ProfileStore]]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _unavailable() -> ProtocolError:
    return ProtocolError("unavailable", "profiles are unavailable; try again")


class Profiles:
    """The gateway's side of the profile store: the store (opened by ``open``, again in
    the background while the database does not answer), the look-ups per client address,
    and the leaderboard read at most once per ``leaderboard_cache_s``."""

    def __init__(
        self, archive: ArchiveSettings, settings: GatewaySettings, opener: Opener | None = None
    ) -> None:
        self.archive = archive
        self.settings = settings
        self._opener = opener
        self._store: ProfileStore | None = None
        self._reopen: asyncio.Task[None] | None = None
        self._lookups = GameLimiter(
            settings.profile_lookups_per_ip, settings.profile_lookups_window_s
        )
        self._board: list[dict[str, Any]] | None = None
        self._board_at = 0.0
        self._board_read: asyncio.Future[list[dict[str, Any]]] | None = None

    @property
    def store(self) -> ProfileStore:
        """The store; ``unavailable`` while it is not open."""
        if self._store is None:
            raise _unavailable()
        return self._store

    async def _open_once(self) -> ProfileStore:
        if self._opener is not None:
            return await self._opener(self.archive)
        from services.archive.tier import open_profiles

        return await open_profiles(self.archive)

    async def open(self) -> None:
        """Open the store. A schema behind this release's refuses the start
        (``SchemaBehind``: run ``rackem migrate``); a database that does not answer is
        tried again in the background, the gateway serving meanwhile. Once only."""
        if self._store is not None or self._reopen is not None:
            return
        try:
            self._store = await self._open_once()
        except StoreUnavailable:
            event(log, "profiles_unavailable", logging.WARNING)
            self._reopen = asyncio.create_task(self._open_later())

    async def _open_later(self) -> None:
        wait, longest = REOPEN_S
        while self._store is None:
            await asyncio.sleep(wait)
            wait = min(longest, wait * 2)
            try:
                self._store = await self._open_once()
            except (StoreUnavailable, SchemaBehind):
                continue
            event(log, "profiles_open")

    async def close(self) -> None:
        if self._reopen is not None:
            self._reopen.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reopen
            self._reopen = None
        if self._store is not None:
            store, self._store = self._store, None
            await store.close()

    def allow_lookup(self, address: str) -> bool:
        """Count one look-up for the client ``address``; False past its limit."""
        return self._lookups.allow(address)

    async def leaderboard(self) -> list[dict[str, Any]]:
        """The leaderboard's entries, read from the store at most once per
        ``leaderboard_cache_s`` (concurrent askers share one read)."""
        now = time.monotonic()
        if self._board is not None and now - self._board_at < self.settings.leaderboard_cache_s:
            return self._board
        if self._board_read is None:
            self._board_read = asyncio.ensure_future(self._read_board())
        read = self._board_read
        try:
            return await asyncio.shield(read)
        finally:
            if read.done() and self._board_read is read:
                self._board_read = None

    async def _read_board(self) -> list[dict[str, Any]]:
        entries = await self.store.leaderboard(LEADERBOARD_LIMIT)
        self._board = profile_messages.leaderboard_entries(entries)
        self._board_at = time.monotonic()
        return self._board

    def record_kept(self, finished_ms: int, now_ms: int) -> bool:
        """Whether a match that finished at ``finished_ms`` still has its record (and a
        replay): kept for good, or for ``RECORD_RETENTION_MS``."""
        retention = self.archive.record_retention_ms
        return retention <= 0 or finished_ms + retention > now_ms


class ProfileSession(SessionApi, Protocol):
    """What the profile messages use of a session besides ``SessionApi``: its client's
    address (look-ups are limited by it, never logged) and its own look-up limit."""

    @property
    def address(self) -> str: ...
    @property
    def profile_lookups(self) -> GameLimiter: ...


def _profiles(session: SessionApi) -> Profiles:
    if session.profiles is None:
        raise ProtocolError("unavailable", "this server keeps no profiles")
    return session.profiles


def _bound(session: SessionApi) -> Profile:
    if session.profile is None:
        raise ProtocolError("no_profile", "this connection has no profile; send profile first")
    return session.profile


def _lookup(session: ProfileSession, profiles: Profiles) -> None:
    """Count a look-up against the connection's and the address's limits."""
    if not session.profile_lookups.allow("") or not profiles.allow_lookup(session.address):
        raise ProtocolError("rate_limited", "too many profile look-ups; wait a while")


def _answer_only(message: dict[str, Any], *fields: str) -> None:
    """Refuse the fields of a both-ways schema that only the server's answer carries."""
    for name in fields:
        if name in message:
            raise ProtocolError("bad_request", f"{name}: unknown field")


async def profile(session: ProfileSession, message: dict[str, Any]) -> None:
    """``profile``: make one, bind one by key or link code, or answer the bound one; with
    ``name``/``public``, rename it or opt in or out of the leaderboard."""
    _answer_only(message, "id", "rating", "stats")
    key, link = message.get("key"), message.get("link")
    if key is not None and link is not None:
        raise ProtocolError("bad_request", "key and link: one or the other")
    name = check_name(message["name"]) if "name" in message else None
    public: bool | None = message.get("public")
    profiles = _profiles(session)
    store = profiles.store
    now = _now_ms()
    new_key: str | None = None
    if key is not None:
        _lookup(session, profiles)
        key = key.strip().lower()
        found = await store.profile_by_key(keys.hash_key(key)) if keys.is_key(key) else None
        if found is None:
            raise ProtocolError("bad_profile", "no profile has that key")
    elif link is not None:
        _lookup(session, profiles)
        found, new_key = await _redeem(store, link.strip().upper(), now)
    elif session.profile is not None:
        found = await store.profile(session.profile.id)
        if found is None:  # forgotten from another device
            session.profile = None
            raise ProtocolError("bad_profile", "this profile was forgotten")
    else:
        _lookup(session, profiles)
        new_key = keys.new_key()
        found = await store.create_profile(name or DEFAULT_NAME, keys.hash_key(new_key), now)
        event(log, "profile_created")
        name = None  # made with it
    if (name is not None and name != found.name) or (public is not None and public != found.public):
        updated = await store.update_profile(found.id, name=name, public=public)
        if updated is None:
            session.profile = None
            raise ProtocolError("bad_profile", "this profile was forgotten")
        found = updated
    session.profile = found
    session.push(profile_messages.profile(found, new_key))


async def _redeem(store: ProfileStore, code: str, now: int) -> tuple[Profile, str]:
    """The profile of link code ``code`` (taken: once only) and a new key for this device."""
    profile_id = None
    if keys.is_link_code(code):
        profile_id = await store.take_link_code(keys.hash_link_code(code), now)
    refused = ProtocolError("bad_link_code", "that link code is wrong, used or expired")
    if profile_id is None:
        raise refused
    new_key = keys.new_key()
    if not await store.add_key(profile_id, keys.hash_key(new_key), now):
        raise refused
    found = await store.profile(profile_id)
    if found is None:
        raise refused
    event(log, "profile_linked")
    return found, new_key


async def link_code(session: ProfileSession, message: dict[str, Any]) -> None:
    """``link_code``: a one-time code, valid ``keys.LINK_CODE_TTL_MS``, that binds the bound profile
    on another device (with a key of its own)."""
    _answer_only(message, "code", "expires_ms")
    store = _profiles(session).store
    bound = _bound(session)
    code = keys.new_link_code()
    expires = _now_ms() + keys.LINK_CODE_TTL_MS
    await store.put_link_code(keys.hash_link_code(code), bound.id, expires)
    session.push(profile_messages.link_code(code, expires))


async def forget_profile(session: ProfileSession, message: dict[str, Any]) -> None:
    """``forget_profile``: delete the bound profile and everything of it; unbound after."""
    store = _profiles(session).store
    bound = _bound(session)
    await store.forget(bound.id)
    session.profile = None
    event(log, "profile_forgotten")
    session.push(profile_messages.FORGOTTEN)


async def history(session: ProfileSession, message: dict[str, Any]) -> None:
    """``history``: the bound profile's last matches, newest first."""
    _answer_only(message, "matches")
    profiles = _profiles(session)
    bound = _bound(session)
    entries = await profiles.store.history(bound.id, HISTORY_LIMIT)
    now = _now_ms()
    kept = [profiles.record_kept(entry.finished_at_ms, now) for entry in entries]
    session.push(profile_messages.history(entries, kept))


async def leaderboard(session: ProfileSession, message: dict[str, Any]) -> None:
    """``leaderboard``: public, established profiles by rating (cached: ``Profiles``)."""
    _answer_only(message, "entries")
    entries = await _profiles(session).leaderboard()
    session.push(profile_messages.leaderboard(entries))
