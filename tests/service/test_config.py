"""Settings come from the environment, with no insecure default outside dev mode."""

from __future__ import annotations

import pytest

from truc_game.config import DEV_SECRET, ConfigError, Settings

pytestmark = pytest.mark.unit  # pure: no Redis, no server

GOOD_SECRET = "x" * 32


def test_defaults_with_a_secret() -> None:
    settings = Settings.from_env({"TRUC_JWT_SECRET": GOOD_SECRET})
    assert settings.port == 50051
    assert settings.turn_seconds == 30
    assert settings.redis_url is None
    assert not settings.allow_fixed_deals
    assert settings.jwt_secret == GOOD_SECRET


def test_no_secret_is_refused_outside_dev_mode() -> None:
    with pytest.raises(ConfigError, match="TRUC_JWT_SECRET"):
        Settings.from_env({})


def test_dev_mode_uses_the_development_key() -> None:
    assert Settings.from_env({"TRUC_DEV_MODE": "1"}).jwt_secret == DEV_SECRET


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TRUC_JWT_SECRET", "short", "32 characters"),
        ("TRUC_GAME_PORT", "http", "integer"),
        ("TRUC_TURN_SECONDS", "0", "between 1 and 3600"),
        ("TRUC_ALLOW_FIXED_DEALS", "maybe", "0 or 1"),
    ],
)
def test_bad_values_are_refused_with_the_variable_named(
    name: str, value: str, message: str
) -> None:
    env = {"TRUC_JWT_SECRET": GOOD_SECRET, name: value}
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_values_are_read() -> None:
    settings = Settings.from_env(
        {
            "TRUC_JWT_SECRET": GOOD_SECRET,
            "REDIS_URL": "redis://example:6379/2",
            "TRUC_GAME_PORT": "0",
            "TRUC_ALLOW_FIXED_DEALS": "true",
            "TRUC_RATE_ACTIONS": "0",
        }
    )
    assert settings.redis_url == "redis://example:6379/2"
    assert settings.port == 0
    assert settings.allow_fixed_deals
    assert settings.rate_actions == 0
