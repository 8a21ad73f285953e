"""The bot service's process: ``create_server`` → ``Running``, ``serve``, ``main``."""

from __future__ import annotations

import logging

from services._gen.rackem.v1 import bot_pb2_grpc
from services.bot.metrics import BotMetrics
from services.bot.reviews import Reviewer
from services.bot.service import BotService
from services.bot.servicer import SERVICE_NAME, BotServicer
from services.bot.settings import BotSettings
from services.common import logs, loop, running
from services.common.dial import dial_addr
from services.common.grpc_metrics import server_interceptors
from services.common.grpc_server import add_health, bind, new_server, set_serving
from services.common.metrics_http import check_port, start_metrics
from services.common.running import Running, Shutdown
from services.common.settings import from_env

__all__ = ["create_server", "main", "serve"]

log = logging.getLogger("rackem.bot")


async def create_server(settings: BotSettings) -> Running[BotService]:
    """Build, bind and start the bot server (``settings.port`` 0 picks a free port).
    ``Running.service`` is its operation (``BotService``), for callers in this process
    (``rackem up``'s seam, rackem/seam/bots.py). /metrics is served on
    ``settings.metrics_port`` if set (``Running.metrics_port``)."""
    check_port(settings.metrics_port, settings.port)
    metrics = BotMetrics()
    async with Shutdown() as shutdown:
        metrics_host = settings.metrics_host or settings.host
        metrics_port = await start_metrics(shutdown, metrics, metrics_host, settings.metrics_port)
        service = BotService(metrics, Reviewer(settings.review_queue))
        shutdown.push_close(service.close)
        server = new_server(server_interceptors(metrics.registry))
        bot_pb2_grpc.add_BotServicer_to_server(BotServicer(service), server)
        health = add_health(server, [SERVICE_NAME])
        port = bind(server, settings.host, settings.port)
        await server.start()
        shutdown.push(server.stop)
        await set_serving(health, [SERVICE_NAME], True)
        shutdown.push(lambda _grace: set_serving(health, [SERVICE_NAME], False))
    logs.event(log, "bot_serving", port=port)
    return Running(
        port,
        dial_addr(settings.host, port),
        service,
        shutdown,
        grace=settings.stop_grace_ms / 1000,
        log=log,
        stopped="bot_stopped",
        fields={"port": port},
        metrics_port=metrics_port,
    )


async def serve(settings: BotSettings) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully."""
    await running.serve(create_server(settings))


def main() -> None:
    settings = from_env(BotSettings)
    logs.configure("bot", settings.log_level)
    loop.run(serve(settings))
