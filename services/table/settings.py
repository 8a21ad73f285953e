"""The table service's settings, read once from the environment (``from_env(TableSettings)``).

Every duration is in milliseconds and is a setting, so tests can run whole matches
with short clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TableSettings"]


@dataclass(frozen=True, slots=True)
class TableSettings:
    host: str = "0.0.0.0"
    port: int = 50052
    log_level: str = "INFO"
    redis_url: str | None = None  # unset: the in-process store (rackem up)
    # Without Redis: finished tables are kept in DATA_DIR/tables.sqlite3 (empty: in memory,
    # out of the Python heap, until the process ends).
    data_dir: str = ""
    # A move (and a new table) is acknowledged once this many Redis replicas have it
    # (WAIT), waiting at most redis_wait_ms; 0: once the primary has it (docs/deploy.md).
    redis_wait_replicas: int = 0
    redis_wait_ms: int = 1_000
    # While Redis is unreachable a table holds its moves back this long (the caller
    # waits), then closes with `unavailable` and is rebuilt from Redis once it is back.
    store_hold_ms: int = 4_000
    bot_addr: str = ""  # the bot service; empty: choose bot moves in-process
    # How other processes reach this replica; default HOST and the port it bound (with
    # PORT=0, the free port it got: never port 0).
    advertise_addr: str = ""
    replica_id: str = ""  # default: random
    decision_ms: int = 45_000  # each decision (draw, then resolve) of a human
    bot_delay_ms: int = 1_000  # between bot moves while a human is connected
    continue_ms: int = 15_000  # the round-over screen waits at most this long
    abandon_ms: int = 120_000  # a table with no connected human this long ends
    # a covered human without a connection is waited for this long before bots play on
    reconnect_grace_ms: int = 60_000
    bot_timeout_ms: int = 2_000  # a bot service call slower than this falls back in-process
    bot_retry_ms: int = 5_000  # after a bot service failure, stay in-process this long
    # A table's lease: every append and save renews it, the idle ones are renewed every
    # third of it. Short, so a dead replica's tables move within ~2 s (docs/tables.md).
    lease_ms: int = 1_500
    sweep_ms: int = 100  # how often to look for tables whose owner died (the lease index)
    # Gateways that cannot reach a table's owner complain to the replica they can reach
    # (docs/design.md, *A failover*): complaints that stand this long revoke the owner's
    # lease, and a table moved by complaint is not moved so again for the cool-down.
    complaint_hold_ms: int = 1_500
    complaint_cooldown_ms: int = 15_000
    lease_index_shards: int = 1  # sorted sets of the lease index; every replica the same
    heartbeat_ms: int = 1_000  # registry heartbeat period
    heartbeat_ttl_ms: int = 3_000  # registry entry lifetime
    # A finished table's keys expire after this long. With an archive (DATABASE_URL) they
    # go once its record is archived, within seconds; this is then how long a record
    # waits for an archive that does not answer (the backlog's bound, docs/deploy.md).
    finished_ttl_ms: int = 86_400_000
    # With an archive: the archiver's sweep, how long a pending record is left to the
    # replica that claimed it (its finisher's at first), how many one sweep takes, and
    # the longest wait between tries while the archive does not answer.
    archive_sweep_ms: int = 1_000
    archive_claim_ms: int = 10_000
    archive_batch: int = 50
    archive_backoff_max_ms: int = 30_000
    purge_ms: int = 600_000  # with a RECORD_RETENTION_MS: how often records past it go
    # /metrics on a port of its own (never PORT); unset: not served, 0: any free port.
    # ``metrics_host`` empty: the same address as ``host``.
    metrics_port: int | None = None
    metrics_host: str = ""
    stream_queue: int = 64  # views queued for one subscriber before it is dropped
    spectators_per_table: int = 50  # watchers of one table at once (tables open to them)
    link_queue: int = 20_000  # answers and views queued for one gateway link before it fails
    # A link's messages to a gateway leave at most this often, each with all that queued
    # meanwhile, once the link is busy (services/common/pacing.py); 0: off.
    link_pace_ms: float = 10.0
    stop_grace_ms: int = 5_000  # in-flight calls may finish this long on SIGTERM
    # The Daily Rack's secret (hex, or any text): each day's seed derives from it
    # (daily.py); the same on every replica. Empty: no Daily Rack (``unavailable``).
    daily_secret: str = field(default="", repr=False)
