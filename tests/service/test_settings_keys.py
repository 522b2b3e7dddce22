"""The kit's settings refuse weak JWT keys outside dev mode and never quote a
secret in a ConfigError (unit tests; tests/deploy/test_secrets.py runs the
services on them)."""

from __future__ import annotations

import pytest

from truc_game.config import Settings as GameSettings
from truc_lobby.config import Settings as LobbySettings
from truc_service.settings import DEV_SECRET, KNOWN_KEYS, ConfigError, weak_key

pytestmark = pytest.mark.unit

OVERLAY_KEY = "dev-only-NOT-SECRET-truc-jwt-key-committed-to-git"
LOBBY = {"REDIS_URL": "redis://127.0.0.1:1/0"}


@pytest.mark.parametrize("settings", [GameSettings, LobbySettings])
@pytest.mark.parametrize("key", sorted(KNOWN_KEYS))
def test_known_keys_are_refused_outside_dev_mode_only(
    settings: type[GameSettings] | type[LobbySettings], key: str
) -> None:
    with pytest.raises(ConfigError, match="TRUC_JWT_SECRET is a publicly known key") as caught:
        settings.from_env({**LOBBY, "TRUC_JWT_SECRET": key})
    assert key not in str(caught.value)
    for spelling in ("1", "on", "TRUE", "Yes"):
        accepted = settings.from_env({**LOBBY, "TRUC_JWT_SECRET": key, "TRUC_DEV_MODE": spelling})
        assert accepted.dev_mode and accepted.jwt_secret == key


def test_the_length_is_counted_in_utf8_bytes() -> None:
    assert weak_key("é" * 16) == ""  # 32 bytes
    assert "not 30" in weak_key("é" * 15)
    assert "at least 32 bytes" in weak_key("k" * 31)
    assert "at least 32 bytes" in weak_key("k" * 31, dev_mode=True)  # dev mode: long enough too
    assert weak_key(DEV_SECRET) and not weak_key(DEV_SECRET, dev_mode=True)
    assert OVERLAY_KEY in KNOWN_KEYS


def test_the_longest_token_lifetime_is_a_bounded_setting() -> None:
    key = {"TRUC_JWT_SECRET": "k" * 32}
    assert GameSettings.from_env(key).max_token_seconds == 30 * 86400
    assert LobbySettings.from_env({**LOBBY, **key}).max_token_seconds == 30 * 86400
    assert GameSettings.from_env({**key, "TRUC_MAX_TOKEN_SECONDS": "600"}).max_token_seconds == 600
    for wrong in ("59", str(365 * 86400 + 1), "soon"):
        with pytest.raises(ConfigError, match="TRUC_MAX_TOKEN_SECONDS"):
            GameSettings.from_env({**key, "TRUC_MAX_TOKEN_SECONDS": wrong})


def test_a_config_error_quotes_no_secret_and_no_password() -> None:
    with pytest.raises(ConfigError) as caught:
        LobbySettings.from_env(
            {
                "REDIS_URL": "redis://:hunter2-password@127.0.0.1:1/0",
                "TRUC_JWT_SECRET": "k" * 40,
                "TRUC_EXTERNAL_JWT_KEY": "external-secret-key",
                "TRUC_LOBBY_PORT": "x",
                "TRUC_MATCH_INTERVAL_MS": "redis://:hunter2-password@h:1/0",
            }
        )
    message = str(caught.value)
    assert "TRUC_LOBBY_PORT" in message and "TRUC_MATCH_INTERVAL_MS" in message
    assert "hunter2" not in message and "redis://:***@h:1/0" in message
