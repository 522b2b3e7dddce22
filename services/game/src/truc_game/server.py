"""The game server process: one factory, health, reflection, two-stage shutdown.

``truc-game`` (or ``python -m truc_game``) reads :class:`~truc_game.config.Settings`
from the environment, connects to Redis (or, with no ``REDIS_URL``, starts the
bundled server), and serves ``truc.v1.GameService`` with gRPC health checking
and server reflection. Background tasks per replica: the watch hub, the turn
deadline sweeper, the Redis health probe and the active-games gauge. On SIGTERM
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
import gc
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import uvloop
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from redis.asyncio import Redis
from redis.exceptions import RedisError
from truc.v1 import game_service_pb2

from truc_client.balancing import connection_age
from truc_redis.connection import RedisClient, connect, follow_reachability, subscriber
from truc_telemetry import logs, tracing
from truc_telemetry import metrics as telemetry
from truc_telemetry.interceptor import RpcInterceptor

from . import metrics
from .api.servicer import GameServicer, add_to_server
from .auth import TokenVerifier
from .config import DEV_SECRET, ConfigError, Settings
from .redis_server import RedisServer
from .service import GameService
from .store.redis_store import GameStore
from .watch import WatchHub

__all__ = ["LIVENESS", "GameServer", "build_server", "main"]

log = logging.getLogger("truc.game")

SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
LIVENESS = "liveness"
"""The health service name of the liveness probe: SERVING while the process runs."""
_LEASE_MS = 5000
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
    service: GameService
    hub: WatchHub
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
        self.tasks.append(asyncio.create_task(self._sweep_deadlines(), name="deadlines"))
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

    async def _sweep_deadlines(self) -> None:
        """Act for seats whose turn deadline has passed (any replica may do it)."""
        period = self.settings.deadline_poll_ms / 1000
        store = self.service.store
        while True:
            await asyncio.sleep(period)
            try:
                now_ms = int(time.time() * 1000)
                for game_id, due in await store.due(now_ms):
                    logs.bind(game=game_id, seat=None)
                    if await store.claim(game_id, due, now_ms + _LEASE_MS):
                        await self.service.expire_deadline(game_id)
            except RedisError as exc:
                log.warning("deadline sweep failed: %s", exc)
            except Exception:
                log.exception("deadline sweep failed")
            logs.bind(game=None, seat=None)

    async def _count_active(self) -> None:
        """Keep ``truc_games_active`` (read from Redis: right across replicas)."""
        while True:
            try:
                metrics.GAMES_ACTIVE.set(await self.service.store.count_active())
            except RedisError as exc:
                log.debug("active games not counted: %s", exc)
            await asyncio.sleep(_ACTIVE_EVERY_S)


def build_server(settings: Settings, redis_url: str) -> GameServer:
    """The server for ``settings`` on Redis at ``redis_url`` (not started)."""
    redis = connect(redis_url, max_connections=settings.redis_max_connections)
    store = GameStore(
        redis,
        ttl_seconds=settings.game_ttl_seconds,
        finished_ttl_seconds=settings.finished_game_ttl_seconds,
    )
    service = GameService(
        store,
        turn_seconds=settings.turn_seconds,
        allow_fixed_deals=settings.allow_fixed_deals,
        rate_actions=settings.rate_actions,
        rate_signals=settings.rate_signals,
        rate_window_ms=settings.rate_window_ms,
    )
    pubsub = subscriber(redis_url, redis)
    hub = WatchHub(pubsub, store)
    verifier = TokenVerifier(
        settings.jwt_secret, issuer=settings.jwt_issuer, audience=settings.jwt_audience
    )
    server = grpc.aio.server(
        interceptors=[RpcInterceptor(logging.getLogger("truc.game.rpc"))],
        options=[
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.so_reuseport", 0),
            *connection_age(settings.max_connection_age_seconds),
        ],
    )
    add_to_server(GameServicer(service, hub, verifier), server)
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise ConfigError(f"cannot listen on {settings.host}:{settings.port}")
    return GameServer(settings, server, port, redis, pubsub, service, hub, health_servicer)


async def serve(settings: Settings, redis_url: str) -> None:
    """Run until SIGTERM or SIGINT (a second signal exits at once)."""
    game = build_server(settings, redis_url)
    await game.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            log.warning("second signal: exiting now")
            sys.exit(1)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal)
    await stop.wait()
    log.info("shutting down (grace %.1f s)", settings.grace_seconds)
    await game.stop()
    tracing.shutdown()
    log.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    """``truc-game``: serve the game service, configured from the environment."""
    del argv
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        print(f"truc-game: configuration error: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level, settings.log_format)
    if settings.tracing:
        tracing.configure("truc-game")
        log.info("tracing on")
    if settings.jwt_secret == DEV_SECRET:
        log.warning("development mode: tokens are signed with the built-in development key")
    with contextlib.ExitStack() as stack:
        redis_url = settings.redis_url
        if redis_url is None:
            bundled = stack.enter_context(RedisServer())
            redis_url = bundled.url
            log.info("REDIS_URL not set: started a bundled redis on %s", redis_url)
        uvloop.run(serve(settings, redis_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
