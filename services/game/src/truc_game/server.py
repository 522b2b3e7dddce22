"""The game server process: one factory, health, reflection, two-stage shutdown.

``truc-game`` (or ``python -m truc_game``) reads :class:`~truc_game.config.Settings`
from the environment, connects to the Redis of ``REDIS_URL`` (required: a
production process never starts a Redis of its own; ``make serve`` and
``make run`` start the bundled development one, :mod:`truc_dev_redis`), and
serves ``truc.v1.GameService`` with gRPC health checking
and server reflection. Background tasks per replica: the watch hub, the turn
deadline sweeper, the renewal of its open streams' leases
(:mod:`truc_game.streams`), the Redis health probe and the active-games gauge. On SIGTERM
or SIGINT: health goes NOT_SERVING, in-flight calls get ``grace_seconds``, then
everything stops.

Health answers two questions (Kubernetes asks both, deploy/k8s): ``""`` (the
whole server) and ``truc.v1.GameService`` are SERVING only while Redis answers
(readiness: may this replica get calls?); :data:`LIVENESS` is SERVING from the
start to SIGTERM whatever Redis does (liveness: is this process alive? An
answer at all proves its event loop runs), so a long Redis outage takes every
replica out of the Service but restarts none.

Observability (:mod:`truc_telemetry`): every RPC goes through its interceptor
(metrics, log context, tracing when on); ``/metrics`` is served over HTTP on
``TRUC_METRICS_PORT``; logs are JSON lines unless ``TRUC_LOG_FORMAT=text``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from redis.asyncio import Redis
from truc.v1 import game_service_pb2

from truc_protocol.balancing import connection_age
from truc_protocol.errors import ServiceError, Unavailable
from truc_redis.connection import RedisClient, connect, follow_reachability, subscriber
from truc_service.process import run_service
from truc_service.tokens import TokenVerifier
from truc_telemetry import metrics as telemetry
from truc_telemetry.interceptor import RpcInterceptor

from . import metrics
from .absence import AbsencePolicy
from .adapters.redis_feed import WatchHub
from .adapters.redis_store import RedisGameStore
from .adapters.redis_streams import RedisStreamLeases
from .api.servicer import GameServicer, add_to_server
from .config import ConfigError, Settings
from .deadlines import DeadlineSweeper
from .history import entries_after
from .service import GameService
from .streams import OpenStreams

__all__ = ["LIVENESS", "GameServer", "build_server", "main"]

log = logging.getLogger("truc.game")

SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
LIVENESS = "liveness"
"""The health service name of the liveness probe: SERVING while the process runs."""
_ACTIVE_EVERY_S = 5.0


@dataclass(slots=True)
class GameServer:
    """A built, not yet started, game server and what it owns."""

    settings: Settings
    server: grpc.aio.Server
    port: int
    redis: RedisClient
    subscriber: Redis
    """The pub/sub client of the watch hub: ``redis`` itself unless on a cluster."""
    store: RedisGameStore
    service: GameService
    hub: WatchHub
    deadlines: DeadlineSweeper
    health: Any
    """grpc_health's asyncio HealthServicer."""
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stop_metrics: Callable[[], None] | None = None

    async def start(self) -> None:
        # Everything allocated so far lives as long as the process: keep it out of
        # the cyclic collector's generations, and collect young objects less often
        # (a request allocates many short-lived objects and creates no cycles).
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 50, 100)
        if self.settings.metrics_port != 0:
            self.stop_metrics = telemetry.serve(self.settings.host, self.settings.metrics_port, log)
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        await self.server.start()
        self.hub.start()
        self.tasks.append(asyncio.create_task(self._probe_redis(), name="redis-probe"))
        self.tasks.append(asyncio.create_task(self.deadlines.run(), name="deadlines"))
        self.tasks.append(asyncio.create_task(self.service.streams.run(), name="stream-leases"))
        self.tasks.append(asyncio.create_task(self._count_active(), name="active-games"))
        log.info(
            "game service listening on %s:%d (reflection and health on)",
            self.settings.host,
            self.port,
        )

    async def stop(self, grace: float | None = None) -> None:
        """Two stages: NOT_SERVING first (every name, :data:`LIVENESS` too), then stop
        accepting and let calls finish."""
        await self.health.enter_graceful_shutdown()
        ended = self.hub.end_sessions(
            Unavailable("REPLICA_STOPPING", "this replica is stopping: resume on another")
        )
        if ended:
            log.info("ended %d sessions: their clients resume elsewhere", ended)
        await self.server.stop(self.settings.grace_seconds if grace is None else grace)
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.hub.stop()
        await self.redis.aclose()
        if self.subscriber is not self.redis:
            await self.subscriber.aclose()
        if self.stop_metrics is not None:
            self.stop_metrics()

    async def _probe_redis(self) -> None:
        """NOT_SERVING whenever Redis does not answer."""

        async def changed(ok: bool, first: bool) -> None:
            status = (
                health_pb2.HealthCheckResponse.SERVING
                if ok
                else health_pb2.HealthCheckResponse.NOT_SERVING
            )
            for name in ("", SERVICE_NAME):
                await self.health.set(name, status)
            if not first or not ok:
                log.warning("redis %s", "reachable again" if ok else "unreachable: NOT_SERVING")

        await follow_reachability(self.redis, changed)

    async def _count_active(self) -> None:
        """Keep ``truc_games_active`` (read from Redis: right across replicas)."""
        while True:
            try:
                metrics.GAMES_ACTIVE.set(await self.store.count_active())
            except ServiceError as exc:
                log.debug("active games not counted: %s", exc)
            await asyncio.sleep(_ACTIVE_EVERY_S)


def build_server(settings: Settings, redis_url: str) -> GameServer:
    """The server for ``settings`` on Redis at ``redis_url`` (not started)."""
    redis = connect(redis_url, max_connections=settings.redis_max_connections)
    store = RedisGameStore(
        redis,
        ttl_seconds=settings.game_ttl_seconds,
        finished_ttl_seconds=settings.finished_game_ttl_seconds,
    )
    pubsub = subscriber(redis_url, redis)
    hub = WatchHub(pubsub, functools.partial(entries_after, store))
    service = GameService(
        store,
        turn_seconds=settings.turn_seconds,
        allow_fixed_deals=settings.allow_fixed_deals,
        rate_actions=settings.rate_actions,
        rate_signals=settings.rate_signals,
        rate_window_ms=settings.rate_window_ms,
        feed=hub,
        absence=AbsencePolicy(turns=settings.absent_turns, turn_ms=settings.absent_turn_ms),
        rate_reads=settings.rate_reads,
        reads_in_flight=settings.max_reads_in_flight,
        streams=OpenStreams(
            RedisStreamLeases(redis, lease_ms=settings.stream_lease_seconds * 1000),
            per_player=settings.max_streams_per_player,
            total=settings.max_streams,
            lease_ms=settings.stream_lease_seconds * 1000,
        ),
    )
    deadlines = DeadlineSweeper(service, store, poll_ms=settings.deadline_poll_ms)
    verifier = TokenVerifier(
        settings.jwt_secret,
        issuer=settings.jwt_issuer,
        audience=settings.jwt_audience,
        max_lifetime=settings.max_token_seconds,
    )
    server = grpc.aio.server(
        interceptors=[RpcInterceptor(logging.getLogger("truc.game.rpc"))],
        options=[
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.so_reuseport", 0),
            *connection_age(settings.max_connection_age_seconds),
        ],
    )
    add_to_server(GameServicer(service, store, hub, verifier), server)
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise ConfigError(f"cannot listen on {settings.host}:{settings.port}")
    return GameServer(
        settings, server, port, redis, pubsub, store, service, hub, deadlines, health_servicer
    )


async def _build(settings: Settings) -> GameServer:
    if settings.redis_url is None:
        raise ConfigError(
            "REDIS_URL is not set: point it at the game service's Redis "
            "(for development, make serve and make run start a bundled one)"
        )
    return build_server(settings, settings.redis_url)


def main(argv: Sequence[str] | None = None) -> int:
    """``truc-game``: serve the game service, configured from the environment."""
    del argv
    return run_service("truc-game", Settings, _build, log)


if __name__ == "__main__":
    sys.exit(main())
