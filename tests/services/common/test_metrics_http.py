"""/metrics on a port of its own for a gRPC service: served while it runs, with the
process's figures and its loop's lag, and gone once its shutdown ran."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest

from services.bot.server import create_server
from services.bot.settings import BotSettings
from services.common.metrics import ServiceMetrics
from services.common.metrics_http import check_port, start_metrics
from services.common.running import Shutdown


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return str(reply.read().decode())


async def test_metrics_are_served_with_the_loop_lag_until_shutdown() -> None:
    metrics = ServiceMetrics()
    shutdown = Shutdown()
    port = await start_metrics(shutdown, metrics, "127.0.0.1", 0)
    assert port != 0
    await asyncio.sleep(0.35)  # a few of the sampler's ticks
    text = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/metrics")
    assert "process_cpu_seconds_total" in text
    samples = metrics.registry.get_sample_value("rackem_event_loop_lag_seconds_count")
    assert samples is not None and samples >= 2
    await shutdown.run(0)
    with pytest.raises(urllib.error.URLError):
        await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/metrics")


async def test_unset_is_not_served() -> None:
    assert await start_metrics(Shutdown(), ServiceMetrics(), "127.0.0.1", None) == 0


async def test_a_service_names_its_metrics_port_and_never_serves_them_on_its_own() -> None:
    check_port(None, 50053)
    check_port(0, 0)
    with pytest.raises(ValueError, match="METRICS_PORT"):
        check_port(50053, 50053)
    running = await create_server(BotSettings(host="127.0.0.1", port=0, metrics_port=0))
    try:
        assert running.metrics_port not in (0, running.port)
        text = await asyncio.to_thread(_get, f"http://127.0.0.1:{running.metrics_port}/metrics")
        assert 'rackem_bot_decision_seconds_count{level="hard"} 0.0' in text
    finally:
        await running.stop(0)
