"""A Redis that cannot be reached: the lobby's adapters raise the protocol's
``Unavailable`` (``STORE_UNAVAILABLE``) and the servicer answers it as
UNAVAILABLE with that reason, although the API layer catches no Redis error.

Pure: the Redis client points at a Unix socket that does not exist and the
servicer is called with a stand-in for its gRPC context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from redis.asyncio import Redis
from redis.exceptions import RedisError
from truc.v1 import game_pb2, lobby_service_pb2

from truc_lobby.addresses import ClientAddresses
from truc_lobby.api import LobbyServicer
from truc_lobby.history import GameHistory
from truc_lobby.limits import LobbyLimits, RateLimits
from truc_lobby.live import LiveGames
from truc_lobby.results import ResultsFollower
from truc_lobby.service import LobbyService
from truc_lobby.store import LobbyStore
from truc_lobby.tokens import TokenIssuer
from truc_protocol.errors import Code, Unavailable
from truc_protocol.status import STATUS_DETAILS
from truc_redis.limits import RateLimit
from truc_service.limits import Concurrency

SECRET = "unit-test-secret-0123456789abcdef-0123"


def _dead_redis(tmp_path: Path) -> Redis:
    return Redis(unix_socket_path=str(tmp_path / "no-redis.sock"))


class Aborted(Exception):
    """What the stand-in context raises on abort, as grpc's does."""


class Context:
    """The part of a ``grpc.aio.ServicerContext`` a servicer method uses."""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata
        self.status: tuple[grpc.StatusCode, str, tuple[tuple[str, Any], ...]] | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return "ipv4:203.0.113.7:40000"

    async def abort(
        self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, Any], ...]
    ) -> None:
        self.status = (code, message, trailers)
        raise Aborted(code)


def _reason(trailers: tuple[tuple[str, Any], ...]) -> str:
    (details,) = (value for key, value in trailers if key == STATUS_DETAILS)
    info = error_details_pb2.ErrorInfo()
    assert status_pb2.Status.FromString(details).details[0].Unpack(info)
    return str(info.reason)


def _limited() -> RateLimits:
    rate = RateLimit(10, 60_000)
    return RateLimits(rate, rate, rate, rate, rate)


def test_the_store_and_the_history_raise_store_unavailable(tmp_path: Path) -> None:
    async def run() -> None:
        redis = _dead_redis(tmp_path)
        try:
            store = LobbyStore(redis)
            for call in (
                store.get("t"),
                store.live("p"),
                store.follow("t", 0, watching=True),
                store.queue(),
                store.queue_length(),
                store.seated_table("g"),
                store.set_waiting({"k": 1}, 1000),
                GameHistory(redis).page("p", 10, ""),
                LiveGames(redis).page(10, ""),
                LobbyLimits(redis, _limited()).ticket("p"),
                LobbyLimits(redis, _limited()).spectator_grant("p"),
                LobbyLimits(redis, _limited()).guest_sign_in("203.0.113.7"),
            ):
                with pytest.raises(Unavailable) as caught:
                    await call
                assert caught.value.code is Code.UNAVAILABLE
                assert caught.value.reason == "STORE_UNAVAILABLE"
                assert isinstance(caught.value.__cause__, RedisError)
        finally:
            await redis.aclose()

    asyncio.run(run())


def test_a_call_is_answered_unavailable_store_unavailable(tmp_path: Path) -> None:
    async def run() -> None:
        redis = _dead_redis(tmp_path)
        tokens = TokenIssuer(SECRET, ttl_seconds=3600)
        game: Any = None  # never called: the store fails first
        results = ResultsFollower(redis, game, tokens, default_rating=1500.0, history_seconds=60)
        service = LobbyService(
            LobbyStore(redis),
            tokens,
            GameHistory(redis),
            results,
            LobbyLimits(redis, _limited()),
            default_rating=1500.0,
        )
        hub: Any = None  # only WatchTicket uses it
        servicer = LobbyServicer(
            service,
            hub,
            heartbeat_seconds=1.0,
            addresses=ClientAddresses(()),
            watches=Concurrency(per_key=1, total=1, what="ticket watches"),
        )
        metadata = (("authorization", "Bearer " + tokens.player_token("p1")[0]),)
        calls: list[Callable[[Any], Awaitable[object]]] = [  # Any: a stand-in context
            lambda c: servicer.SignInGuest(lobby_service_pb2.SignInGuestRequest(), c),
            lambda c: servicer.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=game_pb2.RuleOptions()), c
            ),
            lambda c: servicer.GetTicket(lobby_service_pb2.GetTicketRequest(name="tickets/a"), c),
            lambda c: servicer.ListGames(lobby_service_pb2.ListGamesRequest(), c),
            lambda c: servicer.ListLiveGames(lobby_service_pb2.ListLiveGamesRequest(), c),
            lambda c: servicer.CreateSpectatorGrant(
                lobby_service_pb2.CreateSpectatorGrantRequest(name="games/g"), c
            ),
        ]
        try:
            for call in calls:
                context = Context(metadata)
                with pytest.raises(Aborted):
                    await call(context)
                assert context.status is not None
                code, message, trailers = context.status
                assert code == grpc.StatusCode.UNAVAILABLE
                assert message == "the lobby store cannot be reached; retry"
                assert _reason(trailers) == "STORE_UNAVAILABLE"
        finally:
            await redis.aclose()

    asyncio.run(run())
