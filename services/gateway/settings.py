"""The gateway's settings, read once from the environment (``services.common.settings``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GatewaySettings"]


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    host: str = "0.0.0.0"
    port: int = 8000
    # /metrics is served on a port of its own (never the public PORT, never the Ingress);
    # 0 picks a free one. ``metrics_host`` empty: the same address as ``host``.
    metrics_port: int = 9100
    metrics_host: str = ""
    # Host names the gateway answers for (the Host header; Starlette's
    # TrustedHostMiddleware: "rack.example", "*.rack.example"); empty: any. Against DNS
    # rebinding. ``rackem up`` sets its own host names unless ALLOWED_HOSTS is set.
    allowed_hosts: tuple[str, ...] = ()
    matchmaker_addr: str = "127.0.0.1:50051"
    table_addr: str = "127.0.0.1:50052"
    # The bot service: a seat's hint (ChooseMove) and a finished match's review (Review).
    bot_addr: str = "127.0.0.1:50053"
    # Browser origins allowed besides the gateway's own; empty: same-origin (and clients
    # that send no Origin, which are not browsers) only. Entries like "https://rack.example".
    allowed_origins: tuple[str, ...] = ()
    log_level: str = "INFO"
    # Per-connection limits.
    max_frame_bytes: int = 4096
    msg_rate: float = 20.0  # token bucket: messages per second ...
    msg_burst: int = 40  # ... and the bucket's size
    abuse_limit: int = 20  # bad_frame/bad_request/rate_limited errors within abuse_window_s
    abuse_window_s: float = 10.0  # ... close the connection with 1008
    outbound_queue: int = 256  # messages waiting for a slow reader before it is dropped
    # A closed connection whose client has not read its close frame (and what was queued
    # before it) within this is cut off.
    close_grace_ms: int = 5_000
    # A WebSocket that has not said hello within this is closed (1008); an HTTP request
    # (a WebSocket handshake too) whose head has not arrived in full within
    # ``header_timeout_ms`` of the connection (or of the previous response) is dropped.
    hello_timeout_ms: int = 10_000
    header_timeout_ms: int = 10_000
    # New games (quick_match/create_table/join) per client address; 0 = unlimited.
    games_per_ip: int = 30
    games_window_s: float = 600.0
    # Profile look-ups (``profile`` with a key or a link code, and new profiles) per
    # client address and per connection within the window; 0 = unlimited. A profile's
    # store is the archive's (``DATABASE_URL``, services/archive/settings.py).
    profile_lookups_per_ip: int = 30
    profile_lookups_per_connection: int = 10
    profile_lookups_window_s: float = 600.0
    # The leaderboard is read from the store at most once per this many seconds.
    leaderboard_cache_s: float = 10.0
    # Admission control (services/gateway/admission.py): open connections past this are
    # refused with 1013; 0 = unlimited.
    max_connections: int = 20_000
    # Event-loop lag (smoothed) above which the gateway is overloaded: it refuses new
    # connections and new games, and keeps serving the ones it has; 0 turns this off.
    overload_lag_ms: int = 250
    # The same for the tables: their mean time to answer a move (smoothed); 0: off.
    overload_answer_ms: int = 250
    overload_window_s: float = 2.0  # how long the lag stays below it before newcomers return
    # gRPC calls to matchmaker and table.
    rpc_timeout_s: float = 5.0
    # /review/{id}.json: the bot service's Review call may wait behind others' (a review
    # takes up to about 2 s of its CPU); the reviews answered are kept, the most recently
    # asked for, this many (a match-over screen asks for each of its humans).
    review_timeout_s: float = 15.0
    review_cache: int = 256
    # A table link's messages leave at most this often, each with all the calls that
    # queued meanwhile, once the link is busy (services/common/pacing.py); 0: off.
    link_pace_ms: float = 10.0
    # A table stream lost: tries (the n-th after n times the backoff) before the client
    # is told; 12 tries at 0.2 s steps wait 15.6 s in all, longer than a Redis Sentinel
    # failover with the shipped down-after of 5 s (docs/deploy.md, "What a failover
    # guarantees").
    resubscribe_tries: int = 12
    resubscribe_backoff_s: float = 0.2
    # After a finished match, a rematch offer is forwarded for at most this long.
    rematch_offer_s: float = 300.0
    # uvicorn: frames above this are refused by the WebSocket layer (1009) before parsing.
    ws_max_size: int = 65536
    # permessage-deflate: views shrink 3-5x on the wire, but each connection then holds
    # zlib state: ~100 KB more per connection (docs/performance.md).
    ws_compression: bool = False
    # Peers whose X-Forwarded-For/-Proto are believed (uvicorn's proxy headers: addresses,
    # networks, or "*"); empty, the default: none, and the client address is the peer's.
    # Set it to the proxies in front of the gateway, and only they may reach it.
    forwarded_allow_ips: str = ""
    # The kernel's send buffer per connection, bytes (like nginx's listen sndbuf=); 0 = the
    # kernel's own, which grows to megabytes for a client that stops reading.
    socket_sndbuf: int = 0
    shutdown_grace_s: float = 5.0
    static_dir: str = ""  # empty: services/gateway/static
