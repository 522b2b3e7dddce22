"""Settings of the gateway, read once from the environment.

| variable | default | meaning |
|---|---|---|
| ``TRUC_GATEWAY_HOST`` | ``127.0.0.1`` | address to listen on (``0.0.0.0`` in containers) |
| ``TRUC_GATEWAY_PORT`` | ``8080`` | HTTP port (0: pick a free one and log it) |
| ``TRUC_GAME_ADDRESS`` | ``127.0.0.1:50051`` | the game service (gRPC) |
| ``TRUC_LOBBY_ADDRESS`` | ``127.0.0.1:50052`` | the lobby (gRPC) |
| ``TRUC_GATEWAY_MAX_BODY_BYTES`` | ``65536`` | largest request body accepted (larger: 413) |
| ``TRUC_GATEWAY_CORS_ORIGINS`` | (none) | origins browsers may call from (commas); ``*``: any |
| ``TRUC_GATEWAY_CALL_TIMEOUT_MS`` | ``10000`` | deadline of each unary call to a service |
| ``TRUC_GATEWAY_HEARTBEAT_MS`` | ``15000`` | an SSE comment line after this long without an event |
| ``TRUC_GATEWAY_GRACE_SECONDS`` | ``5`` | on SIGTERM, how long in-flight requests may finish |
| ``TRUC_LOG_LEVEL`` | ``INFO`` | logging level (``DEBUG``: a ``request`` line per request) |
| ``TRUC_LOG_FORMAT`` | ``json`` | ``json`` (an object per line) or ``text`` |
| ``TRUC_METRICS_PORT`` | ``9466`` | ``/metrics`` on ``TRUC_GATEWAY_HOST`` (0: off; -1: any) |
| ``TRUC_TRACING`` | ``0`` | ``1``: OpenTelemetry tracing (:mod:`truc_telemetry.tracing`) |

No other module reads the environment. The gateway holds no secret: it passes
the ``Authorization`` header on and the services check it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from truc_telemetry import logs, tracing

__all__ = ["ConfigError", "Settings"]


class ConfigError(ValueError):
    """The environment does not describe a valid configuration."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    game_address: str = "127.0.0.1:50051"
    lobby_address: str = "127.0.0.1:50052"
    max_body_bytes: int = 65536
    cors_origins: tuple[str, ...] = ()
    call_timeout_ms: int = 10_000
    heartbeat_ms: int = 15_000
    grace_seconds: float = 5.0
    log_level: str = "INFO"
    log_format: str = "json"
    metrics_port: int = 9466
    tracing: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        origins = tuple(
            o.strip().rstrip("/")
            for o in env.get("TRUC_GATEWAY_CORS_ORIGINS", "").split(",")
            if o.strip()
        )
        log_format = env.get("TRUC_LOG_FORMAT", "json").strip().lower()
        if log_format not in logs.FORMATS:
            raise ConfigError(f"TRUC_LOG_FORMAT must be one of {', '.join(logs.FORMATS)}")
        return cls(
            host=env.get("TRUC_GATEWAY_HOST", "127.0.0.1"),
            port=_bounded(env, "TRUC_GATEWAY_PORT", 8080, 0, 65535),
            game_address=env.get("TRUC_GAME_ADDRESS", "127.0.0.1:50051"),
            lobby_address=env.get("TRUC_LOBBY_ADDRESS", "127.0.0.1:50052"),
            max_body_bytes=_bounded(env, "TRUC_GATEWAY_MAX_BODY_BYTES", 65536, 1024, 16 << 20),
            cors_origins=origins,
            call_timeout_ms=_bounded(env, "TRUC_GATEWAY_CALL_TIMEOUT_MS", 10_000, 10, 600_000),
            heartbeat_ms=_bounded(env, "TRUC_GATEWAY_HEARTBEAT_MS", 15_000, 10, 600_000),
            grace_seconds=float(_bounded(env, "TRUC_GATEWAY_GRACE_SECONDS", 5, 0, 600)),
            log_level=env.get("TRUC_LOG_LEVEL", "INFO").upper(),
            log_format=log_format,
            metrics_port=_bounded(env, "TRUC_METRICS_PORT", 9466, -1, 65535),
            tracing=tracing.wanted(env),
        )


def _bounded(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The integer variable ``name`` (``default`` when unset), within [low, high]."""
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.lstrip("-").isdigit() or not low <= int(text) <= high:
        raise ConfigError(f"{name} must be an integer from {low} to {high}, not {text!r}")
    return int(text)
