"""The container health probes against real processes.

``python -m truc_service.probe ADDRESS`` (gRPC health, both services): 0 iff
SERVING, 1 for NOT_SERVING, an unknown service or nothing listening. Readiness
(health ``""``) goes NOT_SERVING while Redis is down; liveness (health
``liveness``, what the Kubernetes liveness probes ask) stays SERVING, so a long
Redis outage restarts nothing. ``python -m truc_gateway.probe`` (HTTP
``/healthz``): 0 iff the gateway says SERVING."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.gateway.conftest import Gateway
from tests.service.conftest import Replica, redis_server  # noqa: F401
from truc_dev_redis import RedisServer
from truc_game.server import LIVENESS
from truc_gateway import probe as gateway_probe
from truc_lobby.server import LIVENESS as LOBBY_LIVENESS
from truc_service.probe import check


def probe(module: str, *args: str) -> int:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, timeout=30, check=False
    )
    return done.returncode


def wait_not_serving(address: str, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while check(address) == "SERVING" and time.monotonic() < deadline:
        time.sleep(0.2)
    return check(address)


def test_liveness_stays_serving_while_redis_is_down_and_readiness_does_not() -> None:
    assert LIVENESS == LOBBY_LIVENESS == "liveness"  # one name in every probe (deploy/k8s)
    with RedisServer() as redis:
        game = Replica(redis.url)
        lobby = None
        try:
            lobby = Replica(
                redis.url,
                module="truc_lobby",
                TRUC_LOBBY_PORT="0",
                TRUC_LOBBY_ROLE="api",
                TRUC_GAME_ADDRESS=game.address,
            )
            for replica, module, service in (
                (game, "truc_service.probe", "truc.v1.GameService"),
                (lobby, "truc_service.probe", "truc.v1.LobbyService"),
            ):
                assert probe(module, replica.address) == 0
                assert probe(module, replica.address, "--service", service) == 0
                assert probe(module, replica.address, "--service", LIVENESS) == 0
                assert probe(module, replica.address, "--service", "no.Such") == 1
                assert check(replica.address, service="no.Such") == "NOT_FOUND"
            redis.stop()  # readiness goes NOT_SERVING while Redis is unreachable ...
            for replica, module, service in (
                (game, "truc_service.probe", "truc.v1.GameService"),
                (lobby, "truc_service.probe", "truc.v1.LobbyService"),
            ):
                assert wait_not_serving(replica.address) == "NOT_SERVING"
                assert check(replica.address, service=service) == "NOT_SERVING"
                assert probe(module, replica.address) == 1
                # ... and liveness does not: the process is alive, its event loop runs.
                assert check(replica.address, service=LIVENESS) == "SERVING"
                assert probe(module, replica.address, "--service", LIVENESS) == 0
        finally:
            if lobby is not None:
                lobby.stop()
            game.stop()
    assert probe("truc_service.probe", game.address) == 1  # nothing listens any more
    assert check(game.address, timeout=1) == "UNAVAILABLE"
    assert check(game.address, service=LIVENESS, timeout=1) == "UNAVAILABLE"


def test_the_lobby_probe_answers_for_a_bots_only_lobby(redis_server: RedisServer) -> None:  # noqa: F811
    lobby = Replica(
        redis_server.url,
        module="truc_lobby",
        TRUC_LOBBY_PORT="0",
        TRUC_LOBBY_ROLE="bots",
        TRUC_GAME_ADDRESS="127.0.0.1:1",
    )
    try:
        assert probe("truc_service.probe", lobby.address) == 0
        assert probe("truc_service.probe", lobby.address, "--service", LIVENESS) == 0
        assert probe("truc_service.probe", lobby.address, "--service", "truc.v1.LobbyService") == 1
    finally:
        lobby.stop()


def test_the_gateway_probe_asks_healthz(redis_server: RedisServer) -> None:  # noqa: F811
    # The gateway connects to the services lazily: /healthz answers without them.
    gateway = Gateway("127.0.0.1:1", "127.0.0.1:1")
    game = None
    try:
        address = f"127.0.0.1:{gateway.port}"
        assert gateway_probe.check(address) == "SERVING"
        assert probe("truc_gateway.probe", address) == 0
        # Another HTTP server (the game service's metrics, 200 on every path) is not SERVING.
        game = Replica(redis_server.url)
        assert game.metrics_url is not None
        metrics = game.metrics_url.removeprefix("http://").split("/")[0]
        assert gateway_probe.check(metrics).startswith("HTTP ")
        assert probe("truc_gateway.probe", metrics) == 1
    finally:
        if game is not None:
            game.stop()
        assert gateway.stop() == 0, gateway.log()
    assert gateway_probe.check(address, timeout=1) == "UNAVAILABLE"
    assert probe("truc_gateway.probe", address) == 1
