"""Settings of the gateway, read once from the environment (a
:class:`~truc_service.settings.ServiceSettings` model: one parser, one
:class:`~truc_service.settings.ConfigError` naming the variable).

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
| ``TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS`` | ``10000`` | WebSocket: the token, ``open`` frames within |
| ``TRUC_GATEWAY_WS_PING_MS`` | ``20000`` | WebSocket: a ping after this long idle (pong: half) |
| ``TRUC_GATEWAY_GRACE_SECONDS`` | ``5`` | on SIGTERM, how long in-flight requests may finish |
| ``TRUC_LOG_LEVEL`` | ``INFO`` | logging level (``DEBUG``: a ``request`` line per request) |
| ``TRUC_LOG_FORMAT`` | ``json`` | ``json`` (an object per line) or ``text`` |
| ``TRUC_METRICS_PORT`` | ``9466`` | ``/metrics`` on ``TRUC_GATEWAY_HOST`` (0: off; -1: any) |
| ``TRUC_TRACING`` | ``0`` | ``1``: OpenTelemetry tracing (:mod:`truc_telemetry.tracing`) |

No other module reads the environment. The gateway holds no secret: it passes
the ``Authorization`` header on and the services check it.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from truc_service.settings import ConfigError, ServiceSettings

__all__ = ["ConfigError", "Settings"]


class Settings(ServiceSettings):
    service: ClassVar[str] = "truc-gateway"

    host: str = Field("127.0.0.1", validation_alias="TRUC_GATEWAY_HOST")
    port: int = Field(8080, ge=0, le=65535, validation_alias="TRUC_GATEWAY_PORT")
    game_address: str = Field("127.0.0.1:50051", validation_alias="TRUC_GAME_ADDRESS")
    lobby_address: str = Field("127.0.0.1:50052", validation_alias="TRUC_LOBBY_ADDRESS")
    max_body_bytes: int = Field(
        65536, ge=1024, le=16 << 20, validation_alias="TRUC_GATEWAY_MAX_BODY_BYTES"
    )
    cors_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        (), validation_alias="TRUC_GATEWAY_CORS_ORIGINS"
    )
    call_timeout_ms: int = Field(
        10_000, ge=10, le=600_000, validation_alias="TRUC_GATEWAY_CALL_TIMEOUT_MS"
    )
    heartbeat_ms: int = Field(
        15_000, ge=10, le=600_000, validation_alias="TRUC_GATEWAY_HEARTBEAT_MS"
    )
    ws_open_timeout_ms: int = Field(
        10_000, ge=10, le=600_000, validation_alias="TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS"
    )
    ws_ping_ms: int = Field(20_000, ge=10, le=600_000, validation_alias="TRUC_GATEWAY_WS_PING_MS")
    grace_seconds: float = Field(
        5.0,
        ge=0,
        le=600,
        validation_alias="TRUC_GATEWAY_GRACE_SECONDS",
        description="on SIGTERM, how long in-flight requests may finish",
    )
    metrics_port: int = Field(9466, ge=-1, le=65535, validation_alias="TRUC_METRICS_PORT")

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: object) -> object:
        """``a, b/``: ``("a", "b")`` (commas; spaces and a trailing slash dropped)."""
        if isinstance(value, str):
            return tuple(o.strip().rstrip("/") for o in value.split(",") if o.strip())
        return value
