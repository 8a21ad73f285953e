"""The matchmaker's settings, read once from the environment (``from_env``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEVELS", "MatchmakerSettings"]

LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True, slots=True)
class MatchmakerSettings:
    """Every knob of the matchmaker; each field is the env variable of its name in upper case.

    Durations are in milliseconds unless the name says otherwise.
    """

    host: str = "0.0.0.0"
    port: int = 50051
    redis_url: str = ""  # empty: the in-process memory store
    # A seating, a new room, a join, a start, a leave or a rematch is answered once this
    # many Redis replicas have its writes (WAIT), waiting at most redis_wait_ms; else the
    # call answers `unavailable`. 0: once the primary has them (docs/matchmaker.md).
    redis_wait_replicas: int = 0
    redis_wait_ms: int = 1_000
    # Without Redis: started and closed tables' records are kept in
    # DATA_DIR/matchmaker.sqlite3 (empty: in memory, out of the Python heap).
    data_dir: str = ""
    table_addr: str = ""  # last resort when no registered replica answers CreateTable
    log_level: str = "INFO"
    bot_level: str = "medium"  # bots that fill quick-match tables
    fill_ms: int = 15_000  # a quick-match table starts this long after its second human sits
    fill_lone_ms: int = 30_000  # ... or this long after a lone human sat
    tick_ms: int = 250  # how often each replica looks for tables due to start
    watch_poll_ms: int = 2_000  # WatchLobby re-reads at least this often (lost notifications)
    lobby_ttl_ms: int = 3_600_000  # an untouched waiting table (and its code) expires
    token_ttl_ms: int = 86_400_000  # a seat token resolves this long
    done_ttl_ms: int = 86_400_000  # a started or closed table's record is kept this long
    claim_ms: int = 15_000  # a replica's claim on starting a table; then another may take it
    retry_ms: int = 1_000  # wait before retrying a start that found no replica
    max_start_attempts: int = 30  # then the table is closed
    create_timeout_ms: int = 3_000  # one Table.CreateTable call
    rematch_ms: int = 30_000  # a rematch waits this long for every player; then bots sit in
    # Quick match by level (docs/matchmaker.md, *Matched by level*): a rated newcomer joins
    # an open table whose humans' mean rating is within LEVEL_WINDOW of its own, plus
    # LEVEL_WIDEN_PER_S per second the table has waited; any table once it has waited
    # LEVEL_OPEN_MS (half FILL_LONE_MS by default; 0: no window at all).
    level_window: int = 100
    level_widen_per_s: int = 20
    level_open_ms: int = 15_000
    grace_s: float = 5.0  # graceful-stop budget on SIGTERM
    # /metrics on a port of its own (never PORT); unset: not served, 0: any free port.
    # ``metrics_host`` empty: the same address as ``host``.
    metrics_port: int | None = None
    metrics_host: str = ""
