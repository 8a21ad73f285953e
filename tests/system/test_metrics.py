"""Every service's /metrics, scraped over HTTP after real matches: each metric an operator's
SLOs and alerts read is there with its labels (docs/metrics.md), and no label value
names a table, a room, a token, a player or an address."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from rackem.client import Client, play_match

from .stack import Stack

Samples = list[Sample]

COMMON = (
    "rackem_event_loop_lag_seconds_bucket",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
)
GRPC_SERVER = (
    "grpc_server_started_total",
    "grpc_server_handled_total",
    "grpc_server_handling_seconds_bucket",
)
GRPC_CLIENT = (
    "grpc_client_started_total",
    "grpc_client_handled_total",
    "grpc_client_handling_seconds_bucket",
)
NAMES = {
    "gateway": (
        *COMMON,
        *GRPC_CLIENT,
        "rackem_gateway_join_latency_seconds_bucket",
        "rackem_gateway_admission_refusals_total",
        "rackem_gateway_max_connections",
        "rackem_gateway_move_latency_seconds_bucket",
        "rackem_gateway_loop_lag_seconds",
    ),
    "table0": (
        *COMMON,
        *GRPC_SERVER,
        *GRPC_CLIENT,
        "rackem_table_live_tables",
        "rackem_table_matches_started_total",
        "rackem_table_matches_ended_total",
        "rackem_table_lease_renewals_total",
        "rackem_table_adoptions_total",
        "rackem_table_takeover_seconds_bucket",
        "rackem_table_fenced_writes_total",
        "rackem_redis_command_seconds_bucket",
        "rackem_redis_errors_total",
    ),
    "matchmaker": (
        *COMMON,
        *GRPC_SERVER,
        *GRPC_CLIENT,
        "rackem_matchmaker_waiting_players",
        "rackem_matchmaker_wait_seconds_bucket",
        "rackem_matchmaker_tables_started_total",
        "rackem_redis_command_seconds_bucket",
        "rackem_redis_errors_total",
    ),
    "bot": (*COMMON, *GRPC_SERVER, "rackem_bot_decision_seconds_bucket"),
}


def _scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def _values(samples: Samples, name: str, label: str) -> set[str]:
    return {s.labels[label] for s in samples if s.name == name}


def _value(samples: Samples, name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and labels.items() <= s.labels.items()]
    return sum(found)


async def _play(stack: Stack) -> tuple[set[str], set[str]]:
    """A private match against a bot played to its end, and a quick match of two humans
    seated until it starts; what names them (table ids, codes, tokens, names)."""
    secrets: set[str] = set()
    names = {"Ann", "Cy", "Di"}
    async with Client(stack.ws) as ann:
        seated = await ann.create_table(
            "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
        )
        secrets |= {seated["table_id"], seated["code"], seated["token"]}
        await ann.wait_view(lambda v: v["table_id"] == seated["table_id"])
        final = await play_match(ann, timeout=120)
        assert final["status"] == "finished"
    async with Client(stack.ws) as cy, Client(stack.ws) as di:
        both = await asyncio.gather(cy.quick_match("Cy", 2), di.quick_match("Di", 2))
        for reply in both:
            secrets |= {reply["table_id"], reply["code"], reply["token"]}
        await asyncio.gather(cy.next_view(0, timeout=30), di.next_view(0, timeout=30))
        await asyncio.gather(cy.leave(), di.leave())
    return secrets, names


def _suspect(values: Iterable[str], secrets: set[str], names: set[str]) -> list[str]:
    """Label values that name a table, room, token, player, or look like an address."""
    address = re.compile(r"\d+\.\d+\.\d+\.\d+|:\d{2,5}$|^[0-9a-f]{16,}$")
    return [
        v
        for v in values
        if v in secrets or v in names or any(s in v for s in secrets if s) or address.search(v)
    ]


async def test_every_service_serves_the_metrics_its_slos_and_alerts_read(stack: Stack) -> None:
    secrets, names = await _play(stack)
    urls = stack.all_metrics_urls()
    assert set(urls) == {"bot", "table0", "matchmaker", "gateway"}
    assert stack.metrics_urls == {"gateway": urls["gateway"]}  # still the gateways' alone
    scraped = {name: _scrape(url) for name, url in urls.items()}
    for service, expected in NAMES.items():
        present = {s.name for s in scraped[service]}
        assert set(expected) <= present, (service, set(expected) - present)

    gateway, table, mm, bot = (scraped[n] for n in ("gateway", "table0", "matchmaker", "bot"))
    lag_buckets = _values(gateway, "rackem_event_loop_lag_seconds_bucket", "le")
    assert {"0.01", "0.05", "0.1", "0.25", "1.0"} <= lag_buckets
    # The gateway: joins by kind, refusals by reason (all shown, at 0), the limit.
    assert _values(gateway, "rackem_gateway_join_latency_seconds_count", "kind") == {
        "quick",
        "join",
        "create",
        "rematch",
    }
    assert _value(gateway, "rackem_gateway_join_latency_seconds_count", kind="create") == 1
    assert _value(gateway, "rackem_gateway_join_latency_seconds_count", kind="quick") == 2
    assert {"0.1", "0.25", "0.5", "1.0", "2.5", "5.0"} <= _values(
        gateway, "rackem_gateway_join_latency_seconds_bucket", "le"
    )
    assert "0.1" in _values(gateway, "rackem_gateway_move_latency_seconds_bucket", "le")
    assert _values(gateway, "rackem_gateway_admission_refusals_total", "reason") == {
        "overloaded",
        "max_connections",
        "games_per_ip",
    }
    assert _value(gateway, "rackem_gateway_max_connections") == 20_000
    calls = _value(
        gateway,
        "grpc_client_handled_total",
        grpc_service="rackem.v1.Matchmaker",
        grpc_method="QuickMatch",
        grpc_type="unary",
        grpc_code="OK",
    )
    assert calls == 2
    # The table replica: its matches, leases, takeovers, its calls and Redis.
    assert _value(table, "rackem_table_matches_started_total") == 2
    assert _value(table, "rackem_table_matches_ended_total", outcome="finished") == 1
    assert _values(table, "rackem_table_matches_ended_total", "outcome") == {
        "finished",
        "abandoned",
        "failed",
    }
    assert _values(table, "rackem_table_lease_renewals_total", "result") == {"ok", "lost", "error"}
    assert {"0.5", "1.0", "2.0", "2.5", "5.0", "10.0"} <= _values(
        table, "rackem_table_takeover_seconds_bucket", "le"
    )
    link = {"grpc_service": "rackem.v1.Table", "grpc_method": "Link", "grpc_type": "bidi_stream"}
    assert _value(table, "grpc_server_started_total", **link) >= 1
    created = {"grpc_service": "rackem.v1.Table", "grpc_method": "CreateTable", "grpc_code": "OK"}
    assert _value(table, "grpc_server_handled_total", **created) == 2
    assert _value(mm, "grpc_client_handled_total", **created) == 2
    chose = {"grpc_service": "rackem.v1.Bot", "grpc_method": "ChooseMove", "grpc_code": "OK"}
    assert _value(table, "grpc_client_handled_total", **chose) >= 1
    assert _value(bot, "grpc_server_handled_total", **chose) >= 1
    assert {"append", "load", "renew", "sweep", "heartbeat"} <= _values(
        table, "rackem_redis_errors_total", "op"
    )
    assert _value(table, "rackem_redis_command_seconds_count", op="append") >= 1
    # The matchmaker: the quick match's wait and both starts, by kind; its Redis.
    assert _value(mm, "rackem_matchmaker_tables_started_total", kind="quick") == 1
    assert _value(mm, "rackem_matchmaker_tables_started_total", kind="private") == 1
    assert _value(mm, "rackem_matchmaker_wait_seconds_count") == 1
    assert _value(mm, "rackem_matchmaker_waiting_players") == 0
    assert _value(mm, "rackem_redis_command_seconds_count", op="quick_join") == 2
    # The bot service: decisions by level, every level shown.
    assert _values(bot, "rackem_bot_decision_seconds_count", "level") == {"easy", "medium", "hard"}
    assert _value(bot, "rackem_bot_decision_seconds_count", level="easy") >= 1

    for service, samples in scraped.items():
        values = {v for s in samples for k, v in s.labels.items() if k != "le"}
        assert not _suspect(values, secrets, names), service
