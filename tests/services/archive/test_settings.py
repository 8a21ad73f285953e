"""DATABASE_URL and the archive's other settings (services/archive/settings.py)."""

from __future__ import annotations

import os

import pytest

import services.archive
from services.archive import ArchiveSettings, parse_database_url, retention_cutoff
from services.common.settings import SettingsError, from_env


def test_sqlite_urls_name_a_file() -> None:
    absolute = parse_database_url("sqlite:////var/lib/rackem/archive.sqlite3")
    assert (absolute.backend, absolute.path) == ("sqlite", "/var/lib/rackem/archive.sqlite3")
    assert absolute.sqlalchemy_url == "sqlite:////var/lib/rackem/archive.sqlite3"
    assert parse_database_url("sqlite:///data/a.sqlite3").path == "data/a.sqlite3"
    home = parse_database_url("sqlite:///~/rackem/a.sqlite3").path
    assert home == os.path.expanduser("~/rackem/a.sqlite3")


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///:memory:"])
def test_an_in_memory_sqlite_is_refused(url: str) -> None:
    with pytest.raises(SettingsError, match="is a file"):
        parse_database_url(url)


@pytest.mark.parametrize(
    "url", ["postgresql://u:p@db:5432/rackem", "postgres://u:p@db/rackem?sslmode=require"]
)
def test_postgresql_urls_go_to_libpq_and_to_alembic_through_psycopg(url: str) -> None:
    parsed = parse_database_url(url)
    assert parsed.backend == "postgresql"
    assert parsed.conninfo.startswith("postgresql://u:p@db")
    assert parsed.sqlalchemy_url.startswith("postgresql+psycopg://u:p@db")
    assert parsed.conninfo.endswith(url.split("@", 1)[1])  # host, port, database, options


def test_a_url_is_shown_without_its_password() -> None:
    parsed = parse_database_url("postgresql://rackem:s3cret@db:5432/rackem")
    assert parsed.redacted() == "postgresql://rackem:***@db:5432/rackem"
    assert parse_database_url("postgresql://db/rackem").redacted() == "postgresql://db/rackem"


@pytest.mark.parametrize("url", ["mysql://db/rackem", "rackem.sqlite3", "redis://db:6379/0"])
def test_other_urls_are_refused(url: str) -> None:
    with pytest.raises(SettingsError, match="DATABASE_URL"):
        parse_database_url(url)


def test_settings_come_from_the_environment() -> None:
    settings = from_env(
        ArchiveSettings,
        {"DATABASE_URL": "postgresql://db/rackem", "RECORD_RETENTION_MS": "86400000"},
    )
    assert settings.database_url == "postgresql://db/rackem"
    assert settings.record_retention_ms == 86_400_000
    assert ArchiveSettings().record_retention_ms == 0  # kept for good


def test_a_retention_of_zero_purges_nothing() -> None:
    assert retention_cutoff(0, 10_000) is None
    assert retention_cutoff(3_000, 10_000) == 7_000
    with pytest.raises(ValueError):
        retention_cutoff(-1, 10_000)


def test_the_public_surface() -> None:
    assert sorted(services.archive.__all__) == [
        "ArchiveSettings",
        "DailyEntry",
        "DatabaseUrl",
        "HistoryEntry",
        "LeaderboardEntry",
        "MatchRecord",
        "MatchResult",
        "Profile",
        "ProfileStore",
        "Rating",
        "RecordStore",
        "SchemaBehind",
        "SchemaStatus",
        "SeatResult",
        "migrate",
        "open_profiles",
        "open_records",
        "parse_database_url",
        "retention_cutoff",
        "status",
    ]
