"""Settings of the game service, read once from the environment (a
:class:`~truc_service.settings.ServiceSettings` model: one parser, one
:class:`~truc_service.settings.ConfigError` naming the variable).

| variable | default | meaning |
|---|---|---|
| ``REDIS_URL`` | (required) | the Redis to use (``make serve``/``make run`` start a bundled one) |
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
| ``TRUC_ABSENT_TURNS`` | ``3`` | turns in a row timed out that make a seat absent (0: never) |
| ``TRUC_ABSENT_TURN_MS`` | ``1000`` | an absent seat's turn deadline (``truc_game.absence``) |
| ``TRUC_RATE_ACTIONS`` | ``20`` | actions per player and game per window (0: no limit) |
| ``TRUC_RATE_SIGNALS`` | ``5`` | signals and directives per player and game per window |
| ``TRUC_RATE_WINDOW_MS`` | ``1000`` | rate-limit window |
| ``TRUC_RATE_READS`` | ``20`` | GetGame calls per player and game per window (0: no limit) |
| ``TRUC_MAX_READS_IN_FLIGHT`` | ``4`` | GetGame calls per player at once on a replica (0: none) |
| | | the lobby's are not capped (its results follower) |
| ``TRUC_MAX_STREAMS_PER_PLAYER`` | ``32`` | WatchGame + Play streams per player, all replicas |
| ``TRUC_MAX_STREAMS`` | ``20000`` | WatchGame + Play streams open on one replica (0: no limit) |
| ``TRUC_STREAM_LEASE_SECONDS`` | ``60`` | a stream's lease, renewed every third of it: a dead |
| | | replica's streams stop counting after it (``truc_game.streams``) |
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

from typing import ClassVar

from pydantic import Field

from truc_service.settings import DEV_SECRET, ConfigError, Flag, SignedSettings

__all__ = ["DEV_SECRET", "ConfigError", "Settings"]

_WEEK = 7 * 24 * 3600


class Settings(SignedSettings):
    service: ClassVar[str] = "truc-game"

    redis_url: str | None = Field(None, validation_alias="REDIS_URL")
    redis_max_connections: int = Field(
        64, ge=2, le=10_000, validation_alias="TRUC_REDIS_MAX_CONNECTIONS"
    )
    host: str = Field("127.0.0.1", validation_alias="TRUC_GAME_HOST")
    port: int = Field(50051, ge=0, le=65535, validation_alias="TRUC_GAME_PORT")
    jwt_issuer: str = Field("truc-lobby", validation_alias="TRUC_JWT_ISSUER")
    jwt_audience: str = Field("truc-game", validation_alias="TRUC_JWT_AUDIENCE")
    allow_fixed_deals: Flag = Field(False, validation_alias="TRUC_ALLOW_FIXED_DEALS")
    turn_seconds: int = Field(30, ge=1, le=3600, validation_alias="TRUC_TURN_SECONDS")
    deadline_poll_ms: int = Field(500, ge=10, le=60_000, validation_alias="TRUC_DEADLINE_POLL_MS")
    absent_turns: int = Field(3, ge=0, le=50, validation_alias="TRUC_ABSENT_TURNS")
    absent_turn_ms: int = Field(1000, ge=0, le=3_600_000, validation_alias="TRUC_ABSENT_TURN_MS")
    rate_actions: int = Field(20, ge=0, le=1_000_000, validation_alias="TRUC_RATE_ACTIONS")
    rate_signals: int = Field(5, ge=0, le=1_000_000, validation_alias="TRUC_RATE_SIGNALS")
    rate_window_ms: int = Field(1000, ge=1, le=3_600_000, validation_alias="TRUC_RATE_WINDOW_MS")
    rate_reads: int = Field(20, ge=0, le=1_000_000, validation_alias="TRUC_RATE_READS")
    max_reads_in_flight: int = Field(
        4, ge=0, le=10_000, validation_alias="TRUC_MAX_READS_IN_FLIGHT"
    )
    max_streams_per_player: int = Field(
        32, ge=0, le=1_000_000, validation_alias="TRUC_MAX_STREAMS_PER_PLAYER"
    )
    max_streams: int = Field(20_000, ge=0, le=10_000_000, validation_alias="TRUC_MAX_STREAMS")
    stream_lease_seconds: int = Field(
        60, ge=3, le=86_400, validation_alias="TRUC_STREAM_LEASE_SECONDS"
    )
    max_message_bytes: int = Field(
        65536, ge=1024, le=16 << 20, validation_alias="TRUC_MAX_MESSAGE_BYTES"
    )
    game_ttl_seconds: int = Field(_WEEK, ge=60, le=10**8, validation_alias="TRUC_GAME_TTL_SECONDS")
    finished_game_ttl_seconds: int = Field(
        _WEEK, ge=60, le=10**9, validation_alias="TRUC_FINISHED_GAME_TTL_SECONDS"
    )
    max_connection_age_seconds: int = Field(
        0, ge=0, le=86400, validation_alias="TRUC_MAX_CONNECTION_AGE_SECONDS"
    )
    metrics_port: int = Field(9464, ge=-1, le=65535, validation_alias="TRUC_METRICS_PORT")
