"""The lobby process (``truc-lobby``): servicer, matcher, bot runner, health.

Configured from the environment (:mod:`truc_lobby.config`); ``TRUC_LOBBY_ROLE``
says which of them run (``api``: all but the bot runner; ``bots``: the bot
runner and health only; ``all``, the default: everything). Run by the kit
(:func:`truc_service.process.run_service`): on SIGTERM or SIGINT, health
NOT_SERVING, in-flight calls get ``TRUC_GRACE_SECONDS``, then the background
tasks stop; a second signal exits at once.

Health, in every role: ``""`` (and ``truc.v1.LobbyService`` where it is served)
is SERVING only while Redis answers (readiness); :data:`LIVENESS` is SERVING
from the start to SIGTERM whatever Redis does (liveness: an answer proves the
event loop runs), so a long Redis outage restarts no lobby or bots pod.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from redis.asyncio import Redis
from truc.v1 import game_service_pb2_grpc, lobby_service_pb2

from truc_protocol.balancing import ROUND_ROBIN, connection_age
from truc_protocol.errors import Unavailable
from truc_redis.connection import RedisClient, connect, follow_reachability, subscriber
from truc_redis.limits import RateLimit
from truc_service.limits import Concurrency
from truc_service.process import run_service
from truc_telemetry import metrics as telemetry
from truc_telemetry.interceptor import RpcInterceptor

from . import metrics
from .addresses import ClientAddresses
from .api import LobbyServicer, add_to_server
from .bots import BotRunner
from .config import ConfigError, Settings
from .history import GameHistory
from .limits import LobbyLimits, RateLimits
from .live import LiveGames
from .matcher import Matcher
from .results import ResultsFollower
from .service import LobbyService
from .store import LobbyStore
from .tokens import ExternalIdentityProvider, TokenIssuer
from .watch import TicketHub

__all__ = ["LIVENESS", "LobbyServer", "build_server", "main"]

log = logging.getLogger("truc.lobby")
SERVICE_NAME = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
LIVENESS = "liveness"
"""The health service name of the liveness probe: SERVING while the process runs
(the game service answers the same name)."""


@dataclass(slots=True)
class LobbyServer:
    settings: Settings
    server: grpc.aio.Server
    port: int
    redis: RedisClient
    subscriber: Redis
    """The ticket hub's pub/sub client: ``redis`` itself unless on a cluster."""
    game_channel: grpc.aio.Channel
    hub: TicketHub
    matcher: Matcher
    bots: BotRunner
    results: ResultsFollower
    health: Any
    ends: RedisClient | None = None
    """The game service's Redis (the ended-games streams) when it is not ``redis``."""
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stop_metrics: Callable[[], None] | None = None

    async def start(self) -> None:
        if self.settings.metrics_port != 0:
            self.stop_metrics = telemetry.serve(self.settings.host, self.settings.metrics_port, log)
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        await self.server.start()
        if self.settings.serves_api:
            await self.hub.start()
            self.tasks.append(asyncio.create_task(self.matcher.run(), name="matcher"))
            self.tasks.append(asyncio.create_task(self.results.run(), name="results"))
        if self.settings.plays_bots:
            self.tasks.append(asyncio.create_task(self.bots.run(), name="bots"))
        self.tasks.append(asyncio.create_task(self._probe_redis(), name="redis-probe"))
        self.tasks.append(asyncio.create_task(self._count_queue(), name="queue-length"))
        log.info(
            "lobby listening on %s:%d (game service at %s)",
            self.settings.host,
            self.port,
            self.settings.game_address,
        )

    async def stop(self, grace: float | None = None) -> None:
        """NOT_SERVING first (every name, :data:`LIVENESS` too), then stop accepting
        and give in-flight calls ``grace`` seconds (default: the settings')."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.settings.grace_seconds if grace is None else grace)
        await self.bots.stop()
        await self.results.stop()
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.hub.stop()
        await self.game_channel.close(None)
        await self.redis.aclose()
        if self.ends is not None:
            await self.ends.aclose()
        if self.subscriber is not self.redis:
            await self.subscriber.aclose()
        if self.stop_metrics is not None:
            self.stop_metrics()

    async def _count_queue(self) -> None:
        """Keep ``truc_lobby_queued_tickets`` (read from Redis: right across replicas)."""
        store = LobbyStore(self.redis)
        while True:
            try:
                metrics.QUEUED_TICKETS.set(await store.queue_length())
            except Unavailable as exc:
                log.debug("queue not counted: %s", exc.__cause__)
            await asyncio.sleep(1.0)

    async def _probe_redis(self) -> None:
        """NOT_SERVING whenever Redis does not answer."""

        async def changed(ok: bool, first: bool) -> None:
            status = (
                health_pb2.HealthCheckResponse.SERVING
                if ok
                else health_pb2.HealthCheckResponse.NOT_SERVING
            )
            for name in ("", SERVICE_NAME) if self.settings.serves_api else ("",):
                await self.health.set(name, status)

        await follow_reachability(self.redis, changed)


def build_server(settings: Settings) -> LobbyServer:
    redis = connect(settings.redis_url, max_connections=64)
    external = (
        ExternalIdentityProvider(
            settings.external_jwt_key,
            settings.external_jwt_algorithm,
            settings.external_jwt_issuer,
            settings.external_jwt_audience,
        )
        if settings.external_jwt_key
        else None
    )
    tokens = TokenIssuer(
        settings.jwt_secret,
        ttl_seconds=settings.token_ttl_seconds,
        stream_ttl_seconds=settings.stream_token_seconds,
        external=external,
        max_lifetime=settings.max_token_seconds,
    )
    store = LobbyStore(redis, record_ms=settings.history_seconds * 1000)
    # Round robin over every address the target resolves to (e.g. dns:/// of a
    # headless Service: each game replica), not the first one only.
    game_channel = grpc.aio.insecure_channel(settings.game_address, options=ROUND_ROBIN)
    game = game_service_pb2_grpc.GameServiceStub(game_channel)
    pubsub = subscriber(settings.redis_url, redis)
    hub = TicketHub(pubsub)
    # The ended-games streams live in the game service's Redis.
    ends = (
        connect(settings.game_redis_url, max_connections=8)
        if settings.game_redis_url and settings.game_redis_url != settings.redis_url
        else None
    )
    results = ResultsFollower(
        redis,
        game,
        tokens,
        default_rating=settings.default_rating,
        history_seconds=settings.history_seconds,
        ends=ends,
        claim_idle_ms=int(settings.results_claim_seconds * 1000),
        recheck_ms=int(settings.results_recheck_seconds * 1000),
    )
    service = LobbyService(
        store,
        tokens,
        GameHistory(redis),
        results,
        LobbyLimits(redis, rate_limits(settings)),
        default_rating=settings.default_rating,
        live=LiveGames(redis),
        bot_wait_seconds=settings.bot_wait_seconds,
        spectator_grant_seconds=settings.spectator_grant_seconds,
    )
    matcher = Matcher(
        store,
        game,
        tokens,
        interval_ms=settings.match_interval_ms,
        bot_wait_seconds=settings.bot_wait_seconds,
        grace_seconds=settings.ticket_grace_seconds,
        presence_seconds=settings.ticket_presence_seconds,
        turn_seconds=settings.game_turn_seconds,
        confirm_seconds=settings.confirm_seconds,
    )
    server = grpc.aio.server(
        interceptors=[RpcInterceptor(logging.getLogger("truc.lobby.rpc"))],
        options=[
            ("grpc.max_receive_message_length", 65536),
            ("grpc.so_reuseport", 0),
            *connection_age(settings.max_connection_age_seconds),
        ],
    )
    if settings.serves_api:
        add_to_server(
            LobbyServicer(
                service,
                hub,
                heartbeat_seconds=heartbeat_seconds(settings),
                progress_seconds=settings.ticket_progress_seconds,
                addresses=ClientAddresses(settings.trusted_peers),
                watches=Concurrency(
                    per_key=settings.ticket_watches_per_player,
                    total=settings.ticket_watches_per_replica,
                    what="ticket watches",
                ),
            ),
            server,
        )
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    served = (SERVICE_NAME,) if settings.serves_api else ()
    reflection.enable_server_reflection(
        (*served, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise ConfigError(f"cannot listen on {settings.host}:{settings.port}")
    return LobbyServer(
        settings,
        server,
        port,
        redis,
        pubsub,
        game_channel,
        hub,
        matcher,
        BotRunner(redis, game),
        results,
        health_servicer,
        ends,
    )


def rate_limits(settings: Settings) -> RateLimits:
    """The lobby's rate limits the settings describe."""

    def rate(limit: int, window_seconds: float) -> RateLimit:
        return RateLimit(limit, max(1, round(window_seconds * 1000)))

    return RateLimits(
        signins_per_address=rate(
            settings.guest_signins_per_address, settings.guest_signins_per_address_window_seconds
        ),
        signins_total=rate(
            settings.guest_signins_total, settings.guest_signins_total_window_seconds
        ),
        tickets_per_player=rate(
            settings.tickets_per_player, settings.tickets_per_player_window_seconds
        ),
        stream_tokens_per_player=rate(
            settings.stream_tokens_per_player, settings.stream_tokens_per_player_window_seconds
        ),
        spectator_grants_per_player=rate(
            settings.spectator_grants_per_player,
            settings.spectator_grants_per_player_window_seconds,
        ),
    )


def heartbeat_seconds(settings: Settings) -> float:
    """How often a WatchTicket stream follows its ticket: three times per grace
    period and per presence window (whichever is shorter), so one late beat
    loses neither."""
    windows = [settings.ticket_grace_seconds]
    if settings.ticket_presence_seconds > 0:
        windows.append(settings.ticket_presence_seconds)
    return min(windows) / 3


async def _build(settings: Settings) -> LobbyServer:
    return build_server(settings)


def main() -> int:
    """``truc-lobby``: serve the lobby, configured from the environment."""
    return run_service("truc-lobby", Settings, _build, log)


if __name__ == "__main__":
    sys.exit(main())
