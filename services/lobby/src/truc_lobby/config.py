"""Settings of the lobby, read once from the environment (a
:class:`~truc_service.settings.SignedSettings` model: one parser, one
:class:`~truc_service.settings.ConfigError` naming the variable, the dev-mode
switch and the JWT key rules of every truc service).

| variable | default | meaning |
|---|---|---|
| ``REDIS_URL`` | (required) | the lobby's Redis (the game service's may be another) |
| | | ``redis+cluster://`` / ``rediss+cluster://``: a Redis Cluster (``truc_redis.connection``) |
| ``TRUC_GAME_REDIS_URL`` | ``REDIS_URL`` | the game service's Redis (its ended-games streams) |
| ``TRUC_RESULTS_CLAIM_SECONDS`` | ``30`` | a game end read by a replica that died before |
| | | acknowledging it is taken over by another after this |
| ``TRUC_RESULTS_RECHECK_SECONDS`` | ``300`` | how often the safety sweep asks the game service |
| | | about a game still followed (an end missing from the streams) |
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
| ``TRUC_TICKET_PRESENCE_SECONDS`` | ``10`` | a queued ticket takes part in matching (tables, |
| | | bots) only while followed: a WatchTicket stream open on it or a member's |
| | | GetTicket within this long (0: every queued ticket does; benchmarks only) |
| ``TRUC_GUEST_SIGNINS_PER_ADDRESS`` | ``300`` | SignInGuest per client address (IPv6: per /64) |
| | | per window (0: no limit) ... |
| ``TRUC_GUEST_SIGNINS_PER_ADDRESS_WINDOW_SECONDS`` | ``600`` | ... of this many seconds |
| ``TRUC_GUEST_SIGNINS_TOTAL`` | ``1000`` | SignInGuest of all addresses together, per window |
| ``TRUC_GUEST_SIGNINS_TOTAL_WINDOW_SECONDS`` | ``10`` | (0: no limit), across all replicas |
| ``TRUC_LOBBY_TRUSTED_PEERS`` | ``127.0.0.0/8,::1/128`` | peers (CIDRs, comma list) whose |
| | | ``x-truc-client-address`` metadata names the client address (the |
| | | gateway's); anyone else's is ignored (:mod:`truc_lobby.addresses`) |
| ``TRUC_TICKETS_PER_PLAYER`` | ``60`` | CreateTicket per player per window (0: no limit) ... |
| ``TRUC_TICKETS_PER_PLAYER_WINDOW_SECONDS`` | ``60`` | ... of this many seconds |
| ``TRUC_STREAM_TOKEN_SECONDS`` | ``60`` | lifetime of a stream token (CreateStreamToken; 10-300) |
| ``TRUC_STREAM_TOKENS_PER_PLAYER`` | ``60`` | CreateStreamToken per player per window ... |
| ``TRUC_STREAM_TOKENS_PER_PLAYER_WINDOW_SECONDS`` | ``60`` | ... of this many seconds |
| ``TRUC_TICKET_WATCHES_PER_PLAYER`` | ``8`` | WatchTicket streams one player holds open on one |
| | | replica (0: no limit) |
| ``TRUC_TICKET_WATCHES_PER_REPLICA`` | ``20000`` | WatchTicket streams open on one replica |
| ``TRUC_TICKET_PROGRESS_SECONDS`` | ``5`` | a WatchTicket stream sends its queued ticket again at |
| | | least this often (``bots_time``, ``players_waiting``: a client's countdown; 0.1-3600) |
| ``TRUC_SPECTATOR_GRANT_SECONDS`` | ``14400`` | lifetime of a spectator grant |
| | | (CreateSpectatorGrant; 60-86400, at most ``TRUC_MAX_TOKEN_SECONDS``) |
| ``TRUC_SPECTATOR_GRANTS_PER_PLAYER`` | ``60`` | CreateSpectatorGrant per player per |
| | | window (0: no limit) ... |
| ``TRUC_SPECTATOR_GRANTS_PER_PLAYER_WINDOW_SECONDS`` | ``60`` | ... of this many seconds |
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

Past a rate limit a call is refused RESOURCE_EXHAUSTED ``RATE_LIMITED`` with
``retry_after_ms`` (:mod:`truc_lobby.limits`); the counts are kept in Redis, so
each limit holds across every lobby replica. The defaults are far above what an
honest client does (a player signs in once a day and queues once a match; an
office or a school behind one NAT signs in a few hundred people at once; the
load generator's shortest matches queue each player fewer than 30 times a
minute) and cap what a script gets for free.

No other module reads the environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final, Self

from pydantic import Field, model_validator

from truc_service.addresses import networks
from truc_service.settings import DEV_SECRET, Choice, ConfigError, Networks, SignedSettings

__all__ = ["DEV_SECRET", "ROLES", "ConfigError", "Settings"]

ROLES: Final = ("api", "bots", "all")
"""What a lobby process runs (``TRUC_LOBBY_ROLE``). ``api``: LobbyService, the
matcher and the results follower, but no bots (the matcher still queues bot jobs);
``bots``: only plays the queued bot seats, serving nothing but gRPC health;
``all``: both in one process (``make serve``). Kubernetes runs ``api`` pods behind
the Service and a Deployment of ``bots`` pods (deploy/k8s)."""

if TYPE_CHECKING:
    Role = str
else:
    Role = Choice(*ROLES)
    """One of :data:`ROLES` (any case)."""

_WEEK: Final = 7 * 24 * 3600
_DAY: Final = 24 * 3600


class Settings(SignedSettings):
    service: ClassVar[str] = "truc-lobby"

    redis_url: str = Field(validation_alias="REDIS_URL")
    game_redis_url: str | None = Field(None, validation_alias="TRUC_GAME_REDIS_URL")
    """The game service's Redis (its ended-games streams), when not ``redis_url``."""
    results_claim_seconds: float = Field(
        30.0, ge=0.05, le=3600, validation_alias="TRUC_RESULTS_CLAIM_SECONDS"
    )
    results_recheck_seconds: float = Field(
        300.0, ge=0.1, le=86400, validation_alias="TRUC_RESULTS_RECHECK_SECONDS"
    )
    host: str = Field("127.0.0.1", validation_alias="TRUC_LOBBY_HOST")
    port: int = Field(50052, ge=0, le=65535, validation_alias="TRUC_LOBBY_PORT")
    game_address: str = Field("127.0.0.1:50051", validation_alias="TRUC_GAME_ADDRESS")
    token_ttl_seconds: int = Field(
        86400, ge=60, le=30 * 86400, validation_alias="TRUC_TOKEN_TTL_SECONDS"
    )
    external_jwt_key: str | None = Field(None, repr=False, validation_alias="TRUC_EXTERNAL_JWT_KEY")
    external_jwt_algorithm: str = Field("RS256", validation_alias="TRUC_EXTERNAL_JWT_ALGORITHM")
    external_jwt_issuer: str | None = Field(None, validation_alias="TRUC_EXTERNAL_JWT_ISSUER")
    external_jwt_audience: str | None = Field(None, validation_alias="TRUC_EXTERNAL_JWT_AUDIENCE")
    match_interval_ms: int = Field(200, ge=10, le=60_000, validation_alias="TRUC_MATCH_INTERVAL_MS")
    bot_wait_seconds: float = Field(20.0, ge=0, le=3600, validation_alias="TRUC_BOT_WAIT_SECONDS")
    ticket_grace_seconds: float = Field(
        30.0, ge=1, le=3600, validation_alias="TRUC_TICKET_GRACE_SECONDS"
    )
    ticket_presence_seconds: float = Field(
        10.0, ge=0, le=3600, validation_alias="TRUC_TICKET_PRESENCE_SECONDS"
    )
    guest_signins_per_address: int = Field(
        300, ge=0, le=10**9, validation_alias="TRUC_GUEST_SIGNINS_PER_ADDRESS"
    )
    guest_signins_per_address_window_seconds: float = Field(
        600.0, ge=0.001, le=_DAY, validation_alias="TRUC_GUEST_SIGNINS_PER_ADDRESS_WINDOW_SECONDS"
    )
    guest_signins_total: int = Field(
        1000, ge=0, le=10**9, validation_alias="TRUC_GUEST_SIGNINS_TOTAL"
    )
    guest_signins_total_window_seconds: float = Field(
        10.0, ge=0.001, le=_DAY, validation_alias="TRUC_GUEST_SIGNINS_TOTAL_WINDOW_SECONDS"
    )
    trusted_peers: Networks = Field(
        networks("127.0.0.0/8,::1/128"), validation_alias="TRUC_LOBBY_TRUSTED_PEERS"
    )
    tickets_per_player: int = Field(60, ge=0, le=10**9, validation_alias="TRUC_TICKETS_PER_PLAYER")
    tickets_per_player_window_seconds: float = Field(
        60.0, ge=0.001, le=_DAY, validation_alias="TRUC_TICKETS_PER_PLAYER_WINDOW_SECONDS"
    )
    stream_token_seconds: int = Field(
        60, ge=10, le=300, validation_alias="TRUC_STREAM_TOKEN_SECONDS"
    )
    stream_tokens_per_player: int = Field(
        60, ge=0, le=10**9, validation_alias="TRUC_STREAM_TOKENS_PER_PLAYER"
    )
    stream_tokens_per_player_window_seconds: float = Field(
        60.0, ge=0.001, le=_DAY, validation_alias="TRUC_STREAM_TOKENS_PER_PLAYER_WINDOW_SECONDS"
    )
    ticket_watches_per_player: int = Field(
        8, ge=0, le=10**6, validation_alias="TRUC_TICKET_WATCHES_PER_PLAYER"
    )
    ticket_watches_per_replica: int = Field(
        20_000, ge=0, le=10**7, validation_alias="TRUC_TICKET_WATCHES_PER_REPLICA"
    )
    ticket_progress_seconds: float = Field(
        5.0, ge=0.1, le=3600, validation_alias="TRUC_TICKET_PROGRESS_SECONDS"
    )
    spectator_grant_seconds: int = Field(
        14_400, ge=60, le=_DAY, validation_alias="TRUC_SPECTATOR_GRANT_SECONDS"
    )
    spectator_grants_per_player: int = Field(
        60, ge=0, le=10**9, validation_alias="TRUC_SPECTATOR_GRANTS_PER_PLAYER"
    )
    spectator_grants_per_player_window_seconds: float = Field(
        60.0,
        ge=0.001,
        le=_DAY,
        validation_alias="TRUC_SPECTATOR_GRANTS_PER_PLAYER_WINDOW_SECONDS",
    )
    confirm_seconds: float = Field(120.0, ge=1, le=86400, validation_alias="TRUC_CONFIRM_SECONDS")
    default_rating: float = Field(1500.0, ge=0, le=5000, validation_alias="TRUC_DEFAULT_RATING")
    game_turn_seconds: int = Field(0, ge=0, le=3600, validation_alias="TRUC_GAME_TURN_SECONDS")
    history_seconds: int = Field(_WEEK, ge=60, le=10**9, validation_alias="TRUC_HISTORY_SECONDS")
    max_connection_age_seconds: int = Field(
        0, ge=0, le=86400, validation_alias="TRUC_MAX_CONNECTION_AGE_SECONDS"
    )
    metrics_port: int = Field(9465, ge=-1, le=65535, validation_alias="TRUC_METRICS_PORT")
    role: Role = Field("all", validation_alias="TRUC_LOBBY_ROLE")

    @model_validator(mode="after")
    def _token_lifetimes(self) -> Self:
        if self.token_ttl_seconds > self.max_token_seconds:
            raise ValueError(
                f"TRUC_TOKEN_TTL_SECONDS ({self.token_ttl_seconds}) must be at most "
                f"TRUC_MAX_TOKEN_SECONDS ({self.max_token_seconds}): the lobby would issue "
                "tokens no service accepts"
            )
        if self.spectator_grant_seconds > self.max_token_seconds:
            raise ValueError(
                f"TRUC_SPECTATOR_GRANT_SECONDS ({self.spectator_grant_seconds}) must be at most "
                f"TRUC_MAX_TOKEN_SECONDS ({self.max_token_seconds}): the game service would "
                "refuse the grants"
            )
        return self

    @property
    def serves_api(self) -> bool:
        """LobbyService, the matcher and the results follower run in this process."""
        return self.role != "bots"

    @property
    def plays_bots(self) -> bool:
        """This process plays bot seats (the bot jobs' consumer group)."""
        return self.role != "api"
