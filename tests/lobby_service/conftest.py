"""Fixtures for the lobby tests: a real Redis, real game-service and lobby processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
from truc.v1 import lobby_service_pb2, lobby_service_pb2_grpc

from tests.service.conftest import SECRET, Metadata, Replica, redis_server  # noqa: F401
from truc_dev_redis import RedisServer


class Stack:
    """One game service and two lobby replicas on one Redis (no guest sign-in
    limits unless ``lobby_env`` sets them)."""

    def __init__(self, redis_url: str, *, game_port: str = "0", **lobby_env: str) -> None:
        """``game_port``: the game service's TRUC_GAME_PORT ("0": a free one)."""
        self.redis_url = redis_url
        self.game = Replica(redis_url, TRUC_GAME_PORT=game_port)
        env = {
            "TRUC_LOBBY_PORT": "0",
            "TRUC_GAME_ADDRESS": self.game.address,
            "TRUC_MATCH_INTERVAL_MS": "100",
            # Every test signs its guests in from 127.0.0.1, all on the session's
            # Redis: no sign-in limit, unless a test sets its own (test_limits).
            "TRUC_GUEST_SIGNINS_PER_ADDRESS": "0",
            "TRUC_GUEST_SIGNINS_TOTAL": "0",
            **lobby_env,
        }
        self.lobbies: list[Replica] = []
        try:
            for _ in range(2):
                self.lobbies.append(Replica(redis_url, module="truc_lobby", **env))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for process in (*self.lobbies, self.game):
            process.stop()

    def restart_game(self, down_seconds: float) -> None:
        """Crash the game service (SIGKILL) and start a new one on the same port.

        Only meaningful for a stack made with a fixed ``game_port``: the lobbies
        and the clients keep the address they were given.
        """
        port = self.game.port
        self.game.kill()
        self.game.stop()
        time.sleep(down_seconds)
        self.game = Replica(self.redis_url, TRUC_GAME_PORT=str(port))

    def lobby(self, index: int = 0) -> lobby_service_pb2_grpc.LobbyServiceStub:
        channel = grpc.insecure_channel(self.lobbies[index % len(self.lobbies)].address)
        return lobby_service_pb2_grpc.LobbyServiceStub(channel)


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    started = Stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0")
    yield started
    started.stop()


class Followers:
    """WatchTicket streams held open in the background, as real clients follow
    their tickets (a ticket takes part in matching only while followed)."""

    def __init__(self) -> None:
        self._cancels: list[Callable[[], object]] = []

    def follow(
        self, lobby: lobby_service_pb2_grpc.LobbyServiceStub, metadata: Metadata, name: str
    ) -> None:
        """Follow ticket ``name`` until it closes or :meth:`stop`."""
        stream = lobby.WatchTicket(
            lobby_service_pb2.WatchTicketRequest(name=name), metadata=metadata
        )

        def drain() -> None:
            try:
                for _ in stream:
                    pass
            except grpc.RpcError:
                pass

        threading.Thread(target=drain, daemon=True).start()
        self._cancels.append(stream.cancel)

    def stop(self) -> None:
        for cancel in self._cancels:
            cancel()
        self._cancels.clear()


@pytest.fixture
def followers() -> Iterator[Followers]:
    """Follow tickets for one test (the streams are cancelled after it)."""
    held = Followers()
    yield held
    held.stop()


def sign_in(
    lobby: lobby_service_pb2_grpc.LobbyServiceStub, name: str = "p"
) -> tuple[str, Metadata]:
    reply = lobby.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name=name))
    return reply.player, (("authorization", "Bearer " + reply.token),)


def start_stack(redis_url: str, **lobby_env: str) -> Stack:
    """A :class:`Stack` whose lobby replicas each listen on a port of their own.

    Without ``TRUC_LOBBY_PORT`` every lobby process binds the default 50052 and
    gRPC's SO_REUSEPORT lets them all share it: the two replicas of a stack (and
    those of any other stack, or test session, running meanwhile) then answer
    connections to "either" address at the kernel's whim. Port 0: the OS picks.
    """
    return Stack(redis_url, **lobby_env)  # Stack sets TRUC_LOBBY_PORT=0 unless told otherwise
