"""``rackem up``: the whole system on this machine, in one process.

Bot, table and matchmaker serve real gRPC on free localhost ports and
share one in-process replica registry and their in-process stores (or Redis, given
``--redis URL`` or ``REDIS_URL``); the gateway serves the web client and the protocol
on ``--host``/``--port``. The gateway reaches the table replica (its link) and the
matchmaker (its calls), the matchmaker the table replica (CreateTable), and the table
replica the bot service (its bots' moves), in process, without a socket: this is the
only place that wires rackem/seam/ in. Ctrl-C or SIGTERM
stops them in reverse order. Every other setting of every service comes from its
environment variables, as under ``rackem serve``.

Without Redis, what is done (finished tables, started tables' matchmaker records) is
kept in SQLite files under ``--data DIR`` (default ``$XDG_DATA_HOME/rackem``, else
``~/.local/share/rackem``), out of memory and across restarts: a match record is
served after ``rackem up`` restarts on the same directory. With or without Redis,
finished matches' records and results, and the profiles, go to the archive tier
(docs/archive.md) as deployed: ``DATABASE_URL`` if set, else
``sqlite:///DIR/archive.sqlite3``, migrated at start (one process: no race).
The Daily Rack's secret is ``DAILY_SECRET``, else ``DIR/daily.secret``, made on the first
start (``daily_secret``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import secrets
import signal
import socket
import sys
import webbrowser
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from services.common.dial import LOOPBACK, dial_addr, is_wildcard, socket_host

if TYPE_CHECKING:
    from services.archive import ArchiveSettings
    from services.common.running import Running

LOCAL = LOOPBACK
GRACE_S = 2.0

log = logging.getLogger("rackem.up")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("up", help="run the whole system on this machine and print its URL")
    p.add_argument("--host", default=LOCAL, help="the gateway's address (default %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="the gateway's port (default 8000)")
    p.add_argument(
        "--redis",
        default=os.environ.get("REDIS_URL") or None,
        metavar="URL",
        help="use Redis at URL (default: REDIS_URL, else in-process stores)",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="without Redis, keep finished matches in DIR (default: $XDG_DATA_HOME/rackem)",
    )
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.set_defaults(func=run)


def default_data_dir(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_DATA_HOME/rackem``, else ``~/.local/share/rackem`` (the XDG base directories)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "rackem")


def run(args: argparse.Namespace) -> int:
    from services.common import logs, loop

    logs.configure("up", os.environ.get("LOG_LEVEL", "WARNING"))
    data_dir = args.data or default_data_dir()
    return loop.run(
        up(args.host, args.port, args.redis, browser=not args.no_browser, data_dir=data_dir)
    )


def _local_admission(env: Mapping[str, str]) -> dict[str, int]:
    """No overload refusals by default: on one machine, usually for one person, a busy
    laptop or browser is not load to turn players away for (``OVERLOAD_*`` still apply)."""
    names = ("overload_lag_ms", "overload_answer_ms")
    return {name: 0 for name in names if name.upper() not in env}


def _local_gateway(host: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Unless set in ``env``: /metrics on a free loopback port (``System.metrics_port``),
    and the Host names of this machine only (``_own_hosts``), against DNS rebinding.
    No proxy is in front: ``FORWARDED_ALLOW_IPS`` stays empty (its default)."""
    out: dict[str, Any] = {}
    if "METRICS_PORT" not in env:
        out["metrics_port"] = 0
    if "METRICS_HOST" not in env:
        out["metrics_host"] = LOCAL
    if "ALLOWED_HOSTS" not in env:
        out["allowed_hosts"] = _own_hosts(host)
    return out


def _own_hosts(host: str) -> tuple[str, ...]:
    """The Host names a browser on this machine (or, listening on every address, on the
    local network by this machine's name or address) uses to reach ``host``."""
    names = {"localhost", LOCAL, "[::1]"}
    if not is_wildcard(host):
        return tuple(sorted(names | {_as_host(host)}))
    hostname = socket.gethostname().lower()
    names |= {hostname, f"{hostname}.local"}
    try:
        found = socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)
    except OSError:
        found = []
    names |= {_as_host(str(info[4][0])) for info in found}
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        # The address of the interface with the default route (a UDP "connect" sends nothing).
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                names.add(_as_host(str(sock.getsockname()[0])))
        except OSError:
            pass
    return tuple(sorted(names))


def _as_host(address: str) -> str:
    """An address or name as a Host header carries it (IPv6 in brackets, no zone)."""
    address = socket_host(address.lower()).split("%", 1)[0]
    return f"[{address}]" if ":" in address else address


def _url(host: str, port: int) -> str:
    return f"http://{dial_addr(host, port)}"


def _has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


class System:
    """The four services running in this process; ``url`` to open, ``await stop()``.

    Each is stopped with its grace: the gRPC services with a short one (``GRACE_S``), the
    gateway with its own (``SHUTDOWN_GRACE_S``, ``None`` here)."""

    def __init__(
        self,
        services: list[tuple[str, Running[Any], float | None]],
        url: str,
        port: int,
        metrics_port: int = 0,
    ) -> None:
        self._services = services
        self.url = url
        self.port = port
        self.metrics_port = metrics_port

    async def stop(self) -> None:
        """Stop the services in the reverse order of their start."""
        for name, service, grace in reversed(self._services):
            try:
                await service.stop(grace)
            except Exception:
                log.exception("stop_failed", extra={"fields": {"service": name}})
        self._services = []


async def archive_settings(
    env: Mapping[str, str] | None, redis_url: str | None, data_dir: str
) -> ArchiveSettings:
    """The archive's settings from ``env``; without ``DATABASE_URL``, an SQLite archive
    under ``data_dir`` (``archive.sqlite3``), made or migrated now, with or without Redis:
    finished matches' records and the profiles their results go to (docs/profiles.md).
    With neither a URL nor a ``data_dir``: none (records stay in the tables' store).
    ``redis_url`` no longer matters (kept for callers)."""
    from services.archive import ArchiveSettings, migrate, parse_database_url
    from services.common.settings import from_env

    del redis_url
    settings = from_env(ArchiveSettings, env)
    if settings.database_url or not data_dir:
        return settings
    path = os.path.abspath(os.path.join(data_dir, "archive.sqlite3"))
    url = parse_database_url(f"sqlite:///{path}")
    await asyncio.to_thread(migrate, url)
    return dataclasses.replace(settings, database_url=url.url)


def daily_secret(env: Mapping[str, str] | None, data_dir: str) -> str:
    """The Daily Rack's secret (docs/daily.md): ``DAILY_SECRET`` if set, else the one in
    ``data_dir/daily.secret``, made there on the first start (readable by its owner only)
    so the days' seeds stay the same across restarts; without a directory, one for this
    run."""
    env = os.environ if env is None else env
    given = env.get("DAILY_SECRET", "").strip()
    if given or not data_dir:
        return given or secrets.token_hex(32)
    os.makedirs(data_dir, exist_ok=True)
    path = os.path.join(data_dir, "daily.secret")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        with open(path, encoding="utf-8") as kept:
            return kept.read().strip()
    made = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="utf-8") as new:
        new.write(made + "\n")
    return made


async def start(
    host: str,
    port: int,
    redis_url: str | None,
    env: Mapping[str, str] | None = None,
    data_dir: str = "",
) -> System:
    """Start bot, table, matchmaker, then the gateway on ``host:port`` (0: any free port).

    Each service's other settings come from ``env`` (default: the environment). Finished
    matches' records and results go to the archive (``archive_settings``: under
    ``data_dir`` unless ``DATABASE_URL`` is set); without Redis, live tables are kept
    under ``data_dir`` too (empty: in an in-memory database, and no archive).
    """
    from rackem.seam.bots import LocalBots
    from rackem.seam.matchmaker import LocalMatchmaker
    from rackem.seam.tables import LocalTables
    from services.bot import server as bot
    from services.bot.settings import BotSettings
    from services.common.registry import MemoryRegistry, Registry
    from services.common.settings import from_env
    from services.gateway import server as gateway
    from services.gateway.settings import GatewaySettings
    from services.matchmaker import server as matchmaker
    from services.matchmaker.settings import MatchmakerSettings
    from services.table import server as table
    from services.table.settings import TableSettings

    registry: Registry | None = None if redis_url else MemoryRegistry()
    archive = await archive_settings(env, redis_url, data_dir)
    services: list[tuple[str, Running[Any], float | None]] = []
    try:
        # METRICS_PORT is the gateway's: one /metrics a process (the others' are unserved).
        bot_settings = from_env(BotSettings, env, host=LOCAL, port=0, metrics_port=None)
        bots = await bot.create_server(bot_settings)
        services.append(("bot", bots, GRACE_S))
        table_settings = from_env(
            TableSettings,
            env,
            host=LOCAL,
            port=0,
            redis_url=redis_url,
            bot_addr=bots.addr,
            data_dir=data_dir,
            metrics_port=None,
            daily_secret=daily_secret(env, data_dir),
        )
        tables = await table.create_server(
            table_settings, registry=registry, bots=LocalBots(bots.service), archive=archive
        )
        services.append(("table", tables, GRACE_S))
        # The gateway and the matchmaker reach this replica without a socket (rackem/seam/).
        local = LocalTables({tables.addr: tables.service})
        mm_settings = from_env(
            MatchmakerSettings,
            env,
            host=LOCAL,
            port=0,
            redis_url=redis_url or "",
            table_addr=tables.addr,
            data_dir=data_dir,
            metrics_port=None,
        )
        mm = await matchmaker.create_server(
            mm_settings, registry=registry, local_tables=local.creators()
        )
        services.append(("matchmaker", mm, GRACE_S))
        gw_settings = from_env(
            GatewaySettings,
            env,
            host=host,
            port=port,
            matchmaker_addr=mm.addr,
            table_addr=tables.addr,
            bot_addr=bots.addr,
            **_local_admission(os.environ if env is None else env),
            **_local_gateway(host, os.environ if env is None else env),
        )
        gw = await gateway.create_server(
            gw_settings,
            local_links=local.link,
            matchmaker=LocalMatchmaker(mm.service),
            bots=LocalBots(bots.service),
            archive=archive,  # profiles (docs/profiles.md)
        )
        services.append(("gateway", gw, None))
    except BaseException:
        await System(services, "", 0).stop()
        raise
    return System(services, _url(host, gw.port), gw.port, gw.metrics_port)


async def up(
    host: str, port: int, redis_url: str | None, *, browser: bool = False, data_dir: str = ""
) -> int:
    """Start the system, print its URL, serve until SIGTERM/SIGINT, then stop it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        _check_free(host, port)  # before starting anything else
        system = await start(host, port, redis_url, data_dir=data_dir)
    except OSError as exc:
        print(f"rackem up: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    # The URL has the port bound (``--port 0``: any free one); tests read it from this line.
    print(f"rackem is up: open {system.url}  (Ctrl-C stops it)", flush=True)
    if browser and _has_display():
        loop.run_in_executor(None, webbrowser.open, system.url)
    await stop.wait()
    print("rackem: stopping", flush=True)
    await system.stop()
    print("rackem: stopped", flush=True)
    return 0


def _check_free(host: str, port: int) -> None:
    """Raise ``OSError`` if ``host:port`` cannot be listened on."""
    if port:
        host = socket_host(host)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
