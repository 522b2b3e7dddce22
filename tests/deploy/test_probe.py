"""The container health probe (``python -m truc_game.probe`` / ``truc_lobby.probe``)
against real processes: 0 iff SERVING, 1 for NOT_SERVING, an unknown service or
nothing listening."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.service.conftest import Replica, redis_server  # noqa: F401
from truc_client.probe import check
from truc_game.redis_server import RedisServer


def probe(module: str, *args: str) -> int:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, timeout=30, check=False
    )
    return done.returncode


def test_the_game_probe_follows_the_servers_health() -> None:
    with RedisServer() as redis:
        replica = Replica(redis.url)
        try:
            assert probe("truc_game.probe", replica.address) == 0
            assert (
                probe("truc_game.probe", replica.address, "--service", "truc.v1.GameService") == 0
            )
            assert probe("truc_game.probe", replica.address, "--service", "no.Such") == 1
            assert check(replica.address, service="no.Such") == "NOT_FOUND"
            redis.stop()  # health goes NOT_SERVING while Redis is unreachable
            deadline = time.monotonic() + 15
            while check(replica.address) == "SERVING" and time.monotonic() < deadline:
                time.sleep(0.2)
            assert check(replica.address) == "NOT_SERVING"
            assert probe("truc_game.probe", replica.address) == 1
        finally:
            replica.stop()
    assert probe("truc_game.probe", replica.address) == 1  # nothing listens any more
    assert check(replica.address, timeout=1) == "UNAVAILABLE"


def test_the_lobby_probe_answers_for_a_bots_only_lobby(redis_server: RedisServer) -> None:  # noqa: F811
    lobby = Replica(
        redis_server.url,
        module="truc_lobby",
        TRUC_LOBBY_PORT="0",
        TRUC_LOBBY_ROLE="bots",
        TRUC_GAME_ADDRESS="127.0.0.1:1",
    )
    try:
        assert probe("truc_lobby.probe", lobby.address) == 0
        assert probe("truc_lobby.probe", lobby.address, "--service", "truc.v1.LobbyService") == 1
    finally:
        lobby.stop()
