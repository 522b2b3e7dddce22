"""The observability settings of both services, read from the environment."""

from __future__ import annotations

import pytest

from truc_game.config import ConfigError as GameConfigError
from truc_game.config import Settings as GameSettings
from truc_lobby.config import ConfigError as LobbyConfigError
from truc_lobby.config import Settings as LobbySettings

BASE = {"TRUC_DEV_MODE": "1", "REDIS_URL": "redis://127.0.0.1:1/0"}


def test_defaults_json_logs_metrics_on_their_ports_no_tracing() -> None:
    game, lobby = GameSettings.from_env(BASE), LobbySettings.from_env(BASE)
    assert (game.log_format, game.metrics_port, game.tracing) == ("json", 9464, False)
    assert (lobby.log_format, lobby.metrics_port, lobby.tracing) == ("json", 9465, False)


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({"TRUC_TRACING": "1"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4317"}, True),
        ({"TRUC_TRACING": "1", "OTEL_SDK_DISABLED": "true"}, False),
        ({"TRUC_TRACING": "0"}, False),
    ],
)
def test_tracing_is_turned_on_by_configuration(env: dict[str, str], on: bool) -> None:
    assert GameSettings.from_env({**BASE, **env}).tracing is on
    assert LobbySettings.from_env({**BASE, **env}).tracing is on


def test_text_logs_metrics_off_or_on_a_free_port() -> None:
    env = {**BASE, "TRUC_LOG_FORMAT": "TEXT", "TRUC_METRICS_PORT": "0"}
    assert GameSettings.from_env(env).log_format == "text"
    assert GameSettings.from_env(env).metrics_port == 0
    assert LobbySettings.from_env({**env, "TRUC_METRICS_PORT": "-1"}).metrics_port == -1


@pytest.mark.parametrize(
    "env", [{"TRUC_LOG_FORMAT": "xml"}, {"TRUC_METRICS_PORT": "-2"}, {"TRUC_METRICS_PORT": "x"}]
)
def test_bad_values_are_refused(env: dict[str, str]) -> None:
    with pytest.raises(GameConfigError):
        GameSettings.from_env({**BASE, **env})
    with pytest.raises(LobbyConfigError):
        LobbySettings.from_env({**BASE, **env})
