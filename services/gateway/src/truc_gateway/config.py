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
| ``TRUC_GATEWAY_CORS_ORIGINS`` | (none) | browser origins (commas; ``*``: any; ``:*``: any port) |
| ``TRUC_GATEWAY_CALL_TIMEOUT_MS`` | ``10000`` | deadline of each unary call to a service |
| ``TRUC_GATEWAY_HEARTBEAT_MS`` | ``15000`` | an SSE comment line after this long without an event |
| ``TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS`` | ``10000`` | WebSocket: the token, ``open`` frames within |
| ``TRUC_GATEWAY_WS_PING_MS`` | ``20000`` | WebSocket: a ping after this long idle (pong: half) |
| ``TRUC_GATEWAY_IDLE_SECONDS`` | ``75`` | a connection without a request in progress closes after |
| ``TRUC_GATEWAY_GRACE_SECONDS`` | ``5`` | on SIGTERM, how long in-flight requests may finish |
| ``TRUC_GATEWAY_TRUSTED_PROXIES`` | (none) | proxies' CIDRs (commas): ``X-Forwarded-For`` |
| ``TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS`` | ``64`` | SSE + WebSockets per client address (0: any) |
| ``TRUC_GATEWAY_WEB_DIR`` | (package) | the web app's files (``/``, ``/app/``); unset: ``web/`` |
| ``TRUC_LOG_LEVEL`` | ``INFO`` | logging level (``DEBUG``: a ``request`` line per request) |
| ``TRUC_LOG_FORMAT`` | ``json`` | ``json`` (an object per line) or ``text`` |
| ``TRUC_METRICS_PORT`` | ``9466`` | ``/metrics`` on ``TRUC_GATEWAY_HOST`` (0: off; -1: any) |
| ``TRUC_TRACING`` | ``0`` | ``1``: OpenTelemetry tracing (:mod:`truc_telemetry.tracing`) |

The client address (``TRUC_GATEWAY_TRUSTED_PROXIES``: whose ``X-Forwarded-For``
is believed) is :mod:`truc_gateway.client_address`; past
``TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS`` SSE streams and WebSockets open at once
from one address on this replica, another is 429 RATE_LIMITED.
``TRUC_GATEWAY_IDLE_SECONDS`` bounds how long a connection is held without a
request in progress: an idle keep-alive connection, or one still sending its
request's head slowly (a slowloris), counted from the connection or its last
answer; keep it above the idle timeout of a load balancer in front (60 s on
most; 600 s on Google Cloud's: set 620 there). Streams in progress are not idle.

No other module reads the environment. The gateway holds no secret: it passes
the ``Authorization`` header on and the services check it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from truc_service.settings import ConfigError, Networks, ServiceSettings

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
    idle_seconds: float = Field(
        75.0,
        ge=1,
        le=3600,
        validation_alias="TRUC_GATEWAY_IDLE_SECONDS",
        description="an HTTP connection without a request in progress (idle, or still "
        "sending its request's head) is closed after this long",
    )
    grace_seconds: float = Field(
        5.0,
        ge=0,
        le=600,
        validation_alias="TRUC_GATEWAY_GRACE_SECONDS",
        description="on SIGTERM, how long in-flight requests may finish",
    )
    web_dir: Path | None = Field(
        None,
        validation_alias="TRUC_GATEWAY_WEB_DIR",
        description="the folder of the web app's files (unset: the package's web/)",
    )
    metrics_port: int = Field(9466, ge=-1, le=65535, validation_alias="TRUC_METRICS_PORT")
    trusted_proxies: Networks = Field(
        (),
        validation_alias="TRUC_GATEWAY_TRUSTED_PROXIES",
        description="CIDRs of the proxies whose X-Forwarded-For names the client",
    )
    max_streams_per_address: int = Field(
        64,
        ge=0,
        le=1_000_000,
        validation_alias="TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS",
        description="SSE streams and WebSockets open at once per client address (0: no limit)",
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: object) -> object:
        """``a, b/``: ``("a", "b")`` (commas; spaces and a trailing slash dropped)."""
        if isinstance(value, str):
            return tuple(o.strip().rstrip("/") for o in value.split(",") if o.strip())
        return value
