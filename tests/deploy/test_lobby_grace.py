"""The lobby's stop grace is ``TRUC_GRACE_SECONDS``, as the game service's: on
SIGTERM, a call still in flight (here a WatchTicket stream, which never ends by
itself) is cut after that long, and the process exits."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from truc.v1 import lobby_service_pb2, lobby_service_pb2_grpc

from tests.lobby_service.aio_lobby import unique_options
from tests.service.conftest import Replica, redis_server  # noqa: F401
from truc_dev_redis import RedisServer
from truc_lobby.config import ConfigError, Settings


def test_the_grace_is_read_from_the_environment() -> None:
    base = {"REDIS_URL": "redis://127.0.0.1:1/0", "TRUC_DEV_MODE": "1"}
    assert Settings.from_env(base).grace_seconds == 5.0
    assert Settings.from_env({**base, "TRUC_GRACE_SECONDS": "12"}).grace_seconds == 12.0
    with pytest.raises(ConfigError, match="TRUC_GRACE_SECONDS"):
        Settings.from_env({**base, "TRUC_GRACE_SECONDS": "-1"})


def seconds_a_watch_outlives_sigterm(redis_url: str, grace: int) -> float:
    """Start a lobby with ``grace``, open a WatchTicket stream, SIGTERM the lobby:
    how long the stream lasts after the signal."""
    lobby = Replica(
        redis_url,
        module="truc_lobby",
        TRUC_LOBBY_PORT="0",
        TRUC_LOBBY_ROLE="api",
        TRUC_GAME_ADDRESS="127.0.0.1:1",
        TRUC_BOT_WAIT_SECONDS="0",
        TRUC_GRACE_SECONDS=str(grace),
    )
    try:
        with grpc.insecure_channel(lobby.address) as channel:
            stub = lobby_service_pb2_grpc.LobbyServiceStub(channel)
            guest = stub.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name="g"))
            auth = (("authorization", "Bearer " + guest.token),)
            created = stub.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=unique_options()), metadata=auth
            )
            stream = stub.WatchTicket(
                lobby_service_pb2.WatchTicketRequest(name=created.ticket.name),
                metadata=auth,
                timeout=60,
            )
            messages = iter(stream)
            next(messages)  # the ticket as it is: the stream is open
            ended = threading.Event()

            def drain() -> None:
                try:
                    for _ in messages:
                        pass
                except grpc.RpcError:
                    pass
                ended.set()

            threading.Thread(target=drain, daemon=True).start()
            signalled = time.monotonic()
            lobby.process.terminate()
            assert ended.wait(30), "the stream outlived the grace"
            lasted = time.monotonic() - signalled
            lobby.process.wait(30)
    finally:
        lobby.stop()
    assert f"shutting down (grace {grace:.1f} s)" in lobby.log()
    return lasted


def test_sigterm_gives_calls_in_flight_the_configured_grace(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    short = seconds_a_watch_outlives_sigterm(redis_server.url, 0)
    long = seconds_a_watch_outlives_sigterm(redis_server.url, 3)
    assert short < 2.5 <= long, (short, long)
