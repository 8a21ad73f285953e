from __future__ import annotations

import pytest

from services.common.settings import SettingsError, from_env
from services.matchmaker.settings import MatchmakerSettings


def test_defaults_follow_the_design() -> None:
    settings = from_env(MatchmakerSettings, {})
    assert (settings.port, settings.redis_url, settings.bot_level) == (50051, "", "medium")
    assert (settings.fill_ms, settings.fill_lone_ms) == (15_000, 30_000)


def test_settings_come_from_upper_case_variables() -> None:
    env = {"PORT": "6000", "REDIS_URL": "redis://r:6379/0", "FILL_MS": "500", "GRACE_S": "1.5"}
    settings = from_env(MatchmakerSettings, env)
    assert (settings.port, settings.redis_url, settings.fill_ms) == (6000, "redis://r:6379/0", 500)
    assert settings.grace_s == 1.5


def test_a_malformed_variable_is_refused() -> None:
    with pytest.raises(SettingsError):
        from_env(MatchmakerSettings, {"FILL_MS": "soon"})
