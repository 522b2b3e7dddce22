"""Settings of the game service, read once from the environment.

| variable | default | meaning |
|---|---|---|
| ``REDIS_URL`` | (none) | Redis to use; unset: ``truc-game`` starts its own bundled server |
| | | ``redis+cluster://`` / ``rediss+cluster://``: a Redis Cluster (``truc_redis.connection``) |
| ``TRUC_REDIS_MAX_CONNECTIONS`` | ``64`` | Redis connections per replica (wait: 5 s) |
| | | on a cluster: calls in flight (each holds a connection per node at most) |
| ``TRUC_GAME_HOST`` | ``127.0.0.1`` | address to listen on (``0.0.0.0`` in containers) |
| ``TRUC_GAME_PORT`` | ``50051`` | gRPC port (0: pick a free one and log it) |
| ``TRUC_DEV_MODE`` | ``0`` | ``1`` allows the built-in development JWT secret |
| ``TRUC_JWT_SECRET`` | (required unless dev mode) | HS256 key shared with the lobby |
| ``TRUC_JWT_ISSUER`` | ``truc-lobby`` | required ``iss`` claim |
| ``TRUC_JWT_AUDIENCE`` | ``truc-game`` | required ``aud`` claim |
| ``TRUC_ALLOW_FIXED_DEALS`` | ``0`` | test flag: CreateGame may fix the deals |
| ``TRUC_TURN_SECONDS`` | ``30`` | default turn deadline (a game may set its own) |
| ``TRUC_DEADLINE_POLL_MS`` | ``500`` | how often each replica looks for expired deadlines |
| ``TRUC_RATE_ACTIONS`` | ``20`` | actions per player and game per window (0: no limit) |
| ``TRUC_RATE_SIGNALS`` | ``5`` | signals and directives per player and game per window |
| ``TRUC_RATE_WINDOW_MS`` | ``1000`` | rate-limit window |
| ``TRUC_MAX_MESSAGE_BYTES`` | ``65536`` | largest request accepted |
| ``TRUC_GAME_TTL_SECONDS`` | ``604800`` | an unfinished game expires this long after its last act |
| ``TRUC_FINISHED_GAME_TTL_SECONDS`` | ``604800`` | a finished game's log is kept this long |
| ``TRUC_GRACE_SECONDS`` | ``5`` | on SIGTERM, how long in-flight calls may finish |
| ``TRUC_MAX_CONNECTION_AGE_SECONDS`` | ``0`` | reconnect clients after this long (0: never) |
| ``TRUC_LOG_LEVEL`` | ``INFO`` | logging level (``DEBUG`` adds a line per RPC and per action) |
| ``TRUC_LOG_FORMAT`` | ``json`` | ``json`` (an object per line) or ``text`` |
| ``TRUC_METRICS_PORT`` | ``9464`` | ``/metrics`` on ``TRUC_GAME_HOST`` (0: off; -1: a free port) |
| ``TRUC_TRACING`` | ``0`` | ``1``: OpenTelemetry tracing (:mod:`truc_telemetry.tracing`) |

No other module reads the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from truc_telemetry import logs, tracing

__all__ = ["DEV_SECRET", "ConfigError", "Settings"]

DEV_SECRET = "truc-development-secret-do-not-use-in-production"
"""The JWT key used in development mode when TRUC_JWT_SECRET is not set."""


class ConfigError(ValueError):
    """The environment does not describe a valid configuration."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    redis_url: str | None = None
    redis_max_connections: int = 64
    host: str = "127.0.0.1"
    port: int = 50051
    dev_mode: bool = False
    jwt_secret: str = DEV_SECRET
    jwt_issuer: str = "truc-lobby"
    jwt_audience: str = "truc-game"
    allow_fixed_deals: bool = False
    turn_seconds: int = 30
    deadline_poll_ms: int = 500
    rate_actions: int = 20
    rate_signals: int = 5
    rate_window_ms: int = 1000
    max_message_bytes: int = 65536
    game_ttl_seconds: int = 7 * 24 * 3600
    finished_game_ttl_seconds: int = 7 * 24 * 3600
    grace_seconds: float = 5.0
    max_connection_age_seconds: int = 0
    log_level: str = "INFO"
    log_format: str = "json"
    metrics_port: int = 9464
    tracing: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        dev_mode = _flag(env, "TRUC_DEV_MODE")
        secret = env.get("TRUC_JWT_SECRET", "")
        if not secret:
            if not dev_mode:
                raise ConfigError(
                    "TRUC_JWT_SECRET is not set: set it to the lobby's HS256 key "
                    "(or TRUC_DEV_MODE=1 to use the built-in development key)"
                )
            secret = DEV_SECRET
        elif len(secret) < 32:
            raise ConfigError("TRUC_JWT_SECRET must be at least 32 characters (RFC 7518 §3.2)")
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            redis_max_connections=_int(env, "TRUC_REDIS_MAX_CONNECTIONS", 64, 2, 10_000),
            host=env.get("TRUC_GAME_HOST", "127.0.0.1"),
            port=_int(env, "TRUC_GAME_PORT", 50051, 0, 65535),
            dev_mode=dev_mode,
            jwt_secret=secret,
            jwt_issuer=env.get("TRUC_JWT_ISSUER", "truc-lobby"),
            jwt_audience=env.get("TRUC_JWT_AUDIENCE", "truc-game"),
            allow_fixed_deals=_flag(env, "TRUC_ALLOW_FIXED_DEALS"),
            turn_seconds=_int(env, "TRUC_TURN_SECONDS", 30, 1, 3600),
            deadline_poll_ms=_int(env, "TRUC_DEADLINE_POLL_MS", 500, 10, 60_000),
            rate_actions=_int(env, "TRUC_RATE_ACTIONS", 20, 0, 1_000_000),
            rate_signals=_int(env, "TRUC_RATE_SIGNALS", 5, 0, 1_000_000),
            rate_window_ms=_int(env, "TRUC_RATE_WINDOW_MS", 1000, 1, 3_600_000),
            max_message_bytes=_int(env, "TRUC_MAX_MESSAGE_BYTES", 65536, 1024, 16 << 20),
            game_ttl_seconds=_int(env, "TRUC_GAME_TTL_SECONDS", 7 * 24 * 3600, 60, 10**8),
            finished_game_ttl_seconds=_int(
                env, "TRUC_FINISHED_GAME_TTL_SECONDS", 7 * 24 * 3600, 60, 10**9
            ),
            grace_seconds=float(_int(env, "TRUC_GRACE_SECONDS", 5, 0, 600)),
            max_connection_age_seconds=_int(env, "TRUC_MAX_CONNECTION_AGE_SECONDS", 0, 0, 86400),
            log_level=env.get("TRUC_LOG_LEVEL", "INFO").upper(),
            log_format=_choice(env, "TRUC_LOG_FORMAT", logs.FORMATS),
            metrics_port=_int(env, "TRUC_METRICS_PORT", 9464, -1, 65535),
            tracing=tracing.wanted(env),
        )


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "0").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{name} must be 0 or 1, not {value!r}")


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    value = env.get(name, "").strip().lower() or choices[0]
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, not {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, not {value}")
    return value
