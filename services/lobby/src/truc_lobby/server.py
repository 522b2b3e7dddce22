"""The lobby process (``truc-lobby``): servicer, matcher, bot runner, health.

Configured from the environment (:mod:`truc_lobby.config`). On SIGTERM or
SIGINT: health NOT_SERVING, in-flight calls get a grace period, then the
background tasks stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import grpc
import uvloop
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import RedisError
from truc.v1 import game_service_pb2_grpc, lobby_service_pb2

from .api import LobbyServicer, add_to_server
from .bots import BotRunner
from .config import DEV_SECRET, ConfigError, Settings
from .history import GameHistory
from .matcher import Matcher
from .results import ResultsFollower
from .service import LobbyService
from .store import LobbyStore
from .tokens import ExternalIdentityProvider, TokenIssuer
from .watch import TicketHub

__all__ = ["LobbyServer", "build_server", "main"]

log = logging.getLogger("truc.lobby")
SERVICE_NAME = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name


@dataclass(slots=True)
class LobbyServer:
    settings: Settings
    server: grpc.aio.Server
    port: int
    redis: Redis
    game_channel: grpc.aio.Channel
    hub: TicketHub
    matcher: Matcher
    bots: BotRunner
    results: ResultsFollower
    health: Any
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def start(self) -> None:
        await self.server.start()
        await self.hub.start()
        self.tasks.append(asyncio.create_task(self.matcher.run(), name="matcher"))
        self.tasks.append(asyncio.create_task(self.bots.run(), name="bots"))
        self.tasks.append(asyncio.create_task(self.results.run(), name="results"))
        self.tasks.append(asyncio.create_task(self._probe_redis(), name="redis-probe"))
        log.info(
            "lobby listening on %s:%d (game service at %s)",
            self.settings.host,
            self.port,
            self.settings.game_address,
        )

    async def stop(self, grace: float = 5.0) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
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

    async def _probe_redis(self) -> None:
        serving: bool | None = None
        while True:
            try:
                await asyncio.wait_for(self.redis.ping(), timeout=2.0)
                ok = True
            except (RedisError, OSError, TimeoutError):
                ok = False
            if ok != serving:
                status = (
                    health_pb2.HealthCheckResponse.SERVING
                    if ok
                    else health_pb2.HealthCheckResponse.NOT_SERVING
                )
                for name in ("", SERVICE_NAME):
                    await self.health.set(name, status)
                serving = ok
            await asyncio.sleep(1.0)


def build_server(settings: Settings) -> LobbyServer:
    pool = BlockingConnectionPool.from_url(
        settings.redis_url, max_connections=64, timeout=5.0, socket_connect_timeout=5.0
    )
    redis = Redis(connection_pool=pool)
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
        settings.jwt_secret, ttl_seconds=settings.token_ttl_seconds, external=external
    )
    store = LobbyStore(redis)
    game_channel = grpc.aio.insecure_channel(settings.game_address)
    game = game_service_pb2_grpc.GameServiceStub(game_channel)
    hub = TicketHub(redis)
    results = ResultsFollower(
        redis,
        game,
        tokens,
        default_rating=settings.default_rating,
        history_seconds=settings.history_seconds,
    )
    service = LobbyService(
        store, tokens, GameHistory(redis), results, default_rating=settings.default_rating
    )
    matcher = Matcher(
        store,
        game,
        tokens,
        interval_ms=settings.match_interval_ms,
        bot_wait_seconds=settings.bot_wait_seconds,
        grace_seconds=settings.ticket_grace_seconds,
        turn_seconds=settings.game_turn_seconds,
        confirm_seconds=settings.confirm_seconds,
        results=results,
    )
    server = grpc.aio.server(
        options=[("grpc.max_receive_message_length", 65536), ("grpc.so_reuseport", 0)]
    )
    add_to_server(
        LobbyServicer(service, hub, heartbeat_seconds=settings.ticket_grace_seconds / 3), server
    )
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise ConfigError(f"cannot listen on {settings.host}:{settings.port}")
    return LobbyServer(
        settings,
        server,
        port,
        redis,
        game_channel,
        hub,
        matcher,
        BotRunner(redis, game),
        results,
        health_servicer,
    )


async def serve(settings: Settings) -> None:
    lobby = build_server(settings)
    await lobby.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    log.info("shutting down")
    await lobby.stop()


def main() -> int:
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        print(f"truc-lobby: configuration error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if settings.jwt_secret == DEV_SECRET:
        log.warning("development mode: tokens are signed with the built-in development key")
    uvloop.run(serve(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
