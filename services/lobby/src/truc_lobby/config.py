"""Settings of the lobby, read once from the environment.

| variable | default | meaning |
|---|---|---|
| ``REDIS_URL`` | (required) | the lobby's Redis (the game service's may be another) |
| | | ``redis+cluster://`` / ``rediss+cluster://``: a Redis Cluster (``truc_redis.connection``) |
| ``TRUC_LOBBY_HOST``, ``_PORT`` | ``127.0.0.1``, ``50052`` | where to listen (0: any port) |
| ``TRUC_GAME_ADDRESS`` | ``127.0.0.1:50051`` | the game service |
| ``TRUC_DEV_MODE`` | ``0`` | ``1`` allows the built-in development JWT secret |
| ``TRUC_JWT_SECRET`` | (required unless dev mode) | HS256 key shared with the game service |
| ``TRUC_TOKEN_TTL_SECONDS`` | ``86400`` | lifetime of the tokens the lobby issues |
| ``TRUC_EXTERNAL_JWT_KEY`` | (none) | an identity provider's key (PEM, or an HS256 secret) |
| ``TRUC_EXTERNAL_JWT_ALGORITHM`` | ``RS256`` | its algorithm |
| ``TRUC_EXTERNAL_JWT_ISSUER``, ``_AUDIENCE`` | (none) | ``iss``/``aud`` its tokens carry |
| ``TRUC_MATCH_INTERVAL_MS`` | ``200`` | how often a replica tries a matching round |
| ``TRUC_BOT_WAIT_SECONDS`` | ``20`` | wait before bots fill a table (0: never) |
| ``TRUC_TICKET_GRACE_SECONDS`` | ``30`` | a queued ticket nobody watches expires after this |
| ``TRUC_CONFIRM_SECONDS`` | ``120`` | a party ticket not confirmed by all expires after this |
| ``TRUC_DEFAULT_RATING`` | ``1500`` | rating of a new player |
| ``TRUC_GAME_TURN_SECONDS`` | ``0`` | turn deadline of each game (0: the game's default) |
| ``TRUC_HISTORY_SECONDS`` | ``604800`` | how long ListGames lists a finished game |
| ``TRUC_GRACE_SECONDS`` | ``5`` | on SIGTERM, how long in-flight calls may finish |
| ``TRUC_MAX_CONNECTION_AGE_SECONDS`` | ``0`` | reconnect clients after this long (0: never) |
| ``TRUC_LOG_LEVEL`` | ``INFO`` | logging level (``DEBUG`` adds a line per RPC) |
| ``TRUC_LOG_FORMAT`` | ``json`` | ``json`` (an object per line) or ``text`` |
| ``TRUC_METRICS_PORT`` | ``9465`` | ``/metrics`` on ``TRUC_LOBBY_HOST`` (0: off; -1: a free port) |
| ``TRUC_TRACING`` | ``0`` | ``1``: OpenTelemetry tracing (:mod:`truc_telemetry.tracing`) |
| ``TRUC_LOBBY_ROLE`` | ``all`` | ``api`` (no bots), ``bots`` (only bots) or ``all``; ``ROLES`` |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from truc_telemetry import logs, tracing

__all__ = ["DEV_SECRET", "ROLES", "ConfigError", "Settings"]

DEV_SECRET = "truc-development-secret-do-not-use-in-production"
"""The development key; the game service has the same one in development mode."""

ROLES = ("api", "bots", "all")
"""What a lobby process runs (``TRUC_LOBBY_ROLE``). ``api``: LobbyService, the
matcher and the results follower, but no bots (the matcher still queues bot jobs);
``bots``: only plays the queued bot seats, serving nothing but gRPC health;
``all``: both in one process (``make serve``). Kubernetes runs ``api`` pods behind
the Service and a Deployment of ``bots`` pods (deploy/k8s)."""


class ConfigError(ValueError):
    """The environment does not describe a valid configuration."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    host: str = "127.0.0.1"
    port: int = 50052
    game_address: str = "127.0.0.1:50051"
    jwt_secret: str = DEV_SECRET
    token_ttl_seconds: int = 86400
    external_jwt_key: str | None = None
    external_jwt_algorithm: str = "RS256"
    external_jwt_issuer: str | None = None
    external_jwt_audience: str | None = None
    match_interval_ms: int = 200
    bot_wait_seconds: float = 20.0
    ticket_grace_seconds: float = 30.0
    confirm_seconds: float = 120.0
    default_rating: float = 1500.0
    game_turn_seconds: int = 0
    history_seconds: int = 7 * 24 * 3600
    grace_seconds: float = 5.0
    max_connection_age_seconds: int = 0
    log_level: str = "INFO"
    role: str = "all"

    @property
    def serves_api(self) -> bool:
        """LobbyService, the matcher and the results follower run in this process."""
        return self.role != "bots"

    @property
    def plays_bots(self) -> bool:
        """This process plays bot seats (the bot jobs' consumer group)."""
        return self.role != "api"

    log_format: str = "json"
    metrics_port: int = 9465
    tracing: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        redis_url = env.get("REDIS_URL", "")
        if not redis_url:
            raise ConfigError("REDIS_URL is not set")
        dev_mode = env.get("TRUC_DEV_MODE", "0") in ("1", "true", "yes")
        secret = env.get("TRUC_JWT_SECRET", "")
        if not secret:
            if not dev_mode:
                raise ConfigError(
                    "TRUC_JWT_SECRET is not set (or TRUC_DEV_MODE=1 for the development key)"
                )
            secret = DEV_SECRET
        elif len(secret) < 32:
            raise ConfigError("TRUC_JWT_SECRET must be at least 32 characters")
        role = env.get("TRUC_LOBBY_ROLE", "all").strip().lower() or "all"
        if role not in ROLES:
            raise ConfigError(f"TRUC_LOBBY_ROLE must be one of {', '.join(ROLES)}, not {role!r}")
        if env.get("TRUC_LOG_FORMAT", "json").strip().lower() not in logs.FORMATS:
            raise ConfigError(f"TRUC_LOG_FORMAT must be one of {', '.join(logs.FORMATS)}")
        return cls(
            redis_url=redis_url,
            host=env.get("TRUC_LOBBY_HOST", "127.0.0.1"),
            port=_int(env, "TRUC_LOBBY_PORT", 50052, 0, 65535),
            game_address=env.get("TRUC_GAME_ADDRESS", "127.0.0.1:50051"),
            jwt_secret=secret,
            token_ttl_seconds=_int(env, "TRUC_TOKEN_TTL_SECONDS", 86400, 60, 30 * 86400),
            external_jwt_key=env.get("TRUC_EXTERNAL_JWT_KEY") or None,
            external_jwt_algorithm=env.get("TRUC_EXTERNAL_JWT_ALGORITHM", "RS256"),
            external_jwt_issuer=env.get("TRUC_EXTERNAL_JWT_ISSUER") or None,
            external_jwt_audience=env.get("TRUC_EXTERNAL_JWT_AUDIENCE") or None,
            match_interval_ms=_int(env, "TRUC_MATCH_INTERVAL_MS", 200, 10, 60_000),
            bot_wait_seconds=float(_int(env, "TRUC_BOT_WAIT_SECONDS", 20, 0, 3600)),
            ticket_grace_seconds=float(_int(env, "TRUC_TICKET_GRACE_SECONDS", 30, 1, 3600)),
            confirm_seconds=float(_int(env, "TRUC_CONFIRM_SECONDS", 120, 1, 86400)),
            default_rating=float(_int(env, "TRUC_DEFAULT_RATING", 1500, 0, 5000)),
            game_turn_seconds=_int(env, "TRUC_GAME_TURN_SECONDS", 0, 0, 3600),
            history_seconds=_int(env, "TRUC_HISTORY_SECONDS", 7 * 24 * 3600, 60, 10**9),
            grace_seconds=float(_int(env, "TRUC_GRACE_SECONDS", 5, 0, 600)),
            max_connection_age_seconds=_int(env, "TRUC_MAX_CONNECTION_AGE_SECONDS", 0, 0, 86400),
            log_level=env.get("TRUC_LOG_LEVEL", "INFO").upper(),
            role=role,
            log_format=env.get("TRUC_LOG_FORMAT", "json").strip().lower(),
            metrics_port=_int(env, "TRUC_METRICS_PORT", 9465, -1, 65535),
            tracing=tracing.wanted(env),
        )


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
