"""Fixtures for the service tests: a real Redis, real game-service processes,
real gRPC over sockets. Nothing here is faked."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from truc.v1 import cards_pb2, game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer
from truc_protocol.convert import card_to_proto
from truc_protocol.status import reason_of as error_info_reason
from truc_rules import Card
from truc_service.tokens import issue_token

SECRET = "test-secret-0123456789abcdef-0123456789"
_LISTENING = re.compile(r"listening on [^:]+:(\d+)")
_METRICS = re.compile(r"metrics on (http://[^ \"]+/metrics)")


class Replica:
    """One ``python -m truc_game`` (or ``module``) process on a free port."""

    def __init__(self, redis_url: str, module: str = "truc_game", **env: str) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="truc-game-", suffix=".log")[1])
        environment = {
            **os.environ,
            "REDIS_URL": redis_url,
            "TRUC_GAME_PORT": "0",
            "TRUC_JWT_SECRET": SECRET,
            "TRUC_ALLOW_FIXED_DEALS": "1",
            "TRUC_RATE_ACTIONS": "0",
            "TRUC_RATE_SIGNALS": "0",
            "TRUC_RATE_READS": "0",  # the tests read and act at machine speed
            "TRUC_GRACE_SECONDS": "2",
            "TRUC_LOG_LEVEL": "INFO",
            "TRUC_METRICS_PORT": "-1",
            **env,
        }
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", module],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            self.port = self._wait_for_port()
            self.address = f"127.0.0.1:{self.port}"
            found = _METRICS.search(self.log())
            self.metrics_url = found.group(1) if found else None
            """Where the process serves Prometheus metrics (logged before it listens)."""
            self._wait_serving()
        except BaseException:
            self.process.kill()
            self.process.wait(10)
            self._log.close()
            raise

    def _wait_for_port(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = _LISTENING.search(self.log())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                raise RuntimeError(f"game service exited:\n{self.log()}")
            time.sleep(0.05)
        raise RuntimeError(f"game service did not start:\n{self.log()}")

    def _wait_serving(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.05)
        raise RuntimeError(f"game service never became SERVING:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the replica dies at once, as in a crash."""
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> int:
        """SIGTERM and wait: the graceful path."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log.close()
        return self.process.returncode


def free_port() -> int:
    """A TCP port free on the loopback now (for a process that must keep its
    port across restarts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def replicas(redis_server: RedisServer) -> Iterator[list[Replica]]:
    """Two game-service replicas on one Redis."""
    started = [Replica(redis_server.url), Replica(redis_server.url)]
    yield started
    for replica in started:
        replica.stop()


def bearer(
    player: str, *, role: str = "player", ttl: float = 3600.0, secret: str = SECRET
) -> Metadata:
    """Call metadata carrying a token for ``player``."""
    token = issue_token(secret, player, role=role, ttl_seconds=ttl)
    return (("authorization", "Bearer " + token),)


LOBBY = bearer("the-lobby", role="lobby")


def new_players() -> list[str]:
    tag = uuid.uuid4().hex[:8]
    return [f"{tag}-p{seat}" for seat in range(6)]


def stub(address: str) -> game_service_pb2_grpc.GameServiceStub:
    return game_service_pb2_grpc.GameServiceStub(grpc.insecure_channel(address))


def aio_stub(address: str) -> game_service_pb2_grpc.GameServiceStub:
    return game_service_pb2_grpc.GameServiceStub(grpc.aio.insecure_channel(address))


def card(text: str) -> cards_pb2.Card:
    """'7Sw' -> a proto card."""
    return card_to_proto(Card.parse(text))


def fixed_deal(hands: Sequence[Sequence[str]]) -> game_pb2.Deal:
    return game_pb2.Deal(hands=[game_pb2.Hand(cards=[card(c) for c in hand]) for hand in hands])


def create_game(
    client: game_service_pb2_grpc.GameServiceStub,
    players: Sequence[str],
    **fields: object,
) -> game_service_pb2.CreateGameResponse:
    request = game_service_pb2.CreateGameRequest(players=list(players), **fields)  # type: ignore[arg-type]
    response: game_service_pb2.CreateGameResponse = client.CreateGame(request, metadata=LOBBY)
    return response


def error_reason(error: grpc.RpcError) -> str:
    """The ErrorInfo.reason in a failed call's status details (sync or asyncio call)."""
    reason = error_info_reason(error)
    assert reason is not None, f"no ErrorInfo in {error!r}"
    return reason


# --------------------------------------------------------------------------
# Typed helpers of the integration tests (test_concurrency, test_watch,
# test_failover, test_auth, test_operations, test_errors).

import contextlib  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from typing import cast  # noqa: E402

from google.protobuf.message import Message  # noqa: E402

Metadata = tuple[tuple[str, str | bytes], ...]
"""Call metadata as the grpc stubs type it."""


def auth(
    player: str, *, role: str = "player", ttl: float = 3600.0, secret: str = SECRET
) -> Metadata:
    """Call metadata carrying a token for ``player`` (``bearer``, typed for the stubs)."""
    token = issue_token(secret, player, role=role, ttl_seconds=ttl)
    return (("authorization", "Bearer " + token),)


LOBBY_AUTH: Metadata = auth("the-lobby", role="lobby")

TRUC_REFUSED_DEAL: tuple[tuple[str, str, str], ...] = (
    ("2Co", "5Sw", "KCu"),
    ("3Sw", "4Co", "6Cu"),
    ("3Co", "4Sw", "7Cu"),
    ("2Sw", "5Cu", "KCo"),
    ("6Sw", "7Cl", "4Cu"),
    ("6Co", "KSw", "5Cl"),
)
"""The deal of tests/scenarios/public/truc-refused.json. With dealer 5, seat 0
leads; seat 0's lowest card in trick order is 5Sw."""

_RANKS = "1234567JNK"
_SUITS = ("Sw", "Cl", "Co", "Cu")


def proto_card(text: str) -> cards_pb2.Card:
    """'7Sw' -> a proto card."""
    return cards_pb2.Card(
        suit=_SUITS.index(text[-2:]) + 1,  # type: ignore[arg-type]
        rank=_RANKS.index(text[:-2]) + 1,  # type: ignore[arg-type]
    )


def card_text(card: cards_pb2.Card) -> str:
    """A proto card -> '7Sw'."""
    return _RANKS[card.rank - 1] + _SUITS[card.suit - 1]


def proto_deal(hands: Sequence[Sequence[str]]) -> game_pb2.Deal:
    return game_pb2.Deal(hands=[game_pb2.Hand(cards=[proto_card(c) for c in h]) for h in hands])


def create_fixed_game(
    client: game_service_pb2_grpc.GameServiceStub,
    players: Sequence[str],
    *,
    deals: Sequence[Sequence[Sequence[str]]] = (TRUC_REFUSED_DEAL,),
    dealer: int = 5,
    turn_seconds: int = 0,
    start_scores: tuple[int, int] = (0, 0),
    start_manches: tuple[int, int] = (0, 0),
    game_id: str = "",
) -> game_service_pb2.CreateGameResponse:
    """A game from fixed deals (the server's test flag), created by the lobby."""
    request = game_service_pb2.CreateGameRequest(
        game_id=game_id,
        players=list(players),
        dealer=dealer,
        turn_seconds=turn_seconds,
        fixed_deals=[proto_deal(d) for d in deals],
        start_scores=game_pb2.Score(team_a=start_scores[0], team_b=start_scores[1]),
        start_manches=game_pb2.Score(team_a=start_manches[0], team_b=start_manches[1]),
    )
    return client.CreateGame(request, metadata=LOBBY_AUTH)


def play_action(text: str) -> game_pb2.Action:
    return game_pb2.Action(play_card=proto_card(text))


def call_action(call: game_pb2.Call.ValueType) -> game_pb2.Action:
    return game_pb2.Action(call=call)


def directive_action(directive: game_pb2.Directive.ValueType) -> game_pb2.Action:
    return game_pb2.Action(directive=directive)


def view_of(
    client: game_service_pb2_grpc.GameServiceStub, name: str, metadata: Metadata
) -> game_pb2.GameView:
    return client.GetGame(game_service_pb2.GetGameRequest(name=name), metadata=metadata).game


def act(
    client: game_service_pb2_grpc.GameServiceStub,
    name: str,
    metadata: Metadata,
    action: game_pb2.Action,
    *,
    etag: str = "",
    request_id: str = "",
) -> game_service_pb2.SubmitActionResponse:
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=action, etag=etag, request_id=request_id or uuid.uuid4().hex
    )
    return client.SubmitAction(request, metadata=metadata)


def trailers(error: grpc.RpcError) -> dict[str, str | bytes]:
    """A failed call's trailing metadata (sync or asyncio call)."""
    pairs = cast(Iterable[tuple[str, str | bytes]], error.trailing_metadata() or ())
    return dict(pairs)


reason_of = error_reason


def expect_error(
    call: Callable[[], object], code: grpc.StatusCode, reason: str | None = None
) -> grpc.RpcError:
    """Run ``call``; it must fail with ``code`` (and ErrorInfo ``reason``, if given)."""
    try:
        call()
    except grpc.RpcError as error:
        assert error.code() == code, f"expected {code}, got {error.code()}: {error.details()}"
        if reason is not None:
            assert reason_of(error) == reason, error.details()
        return error
    raise AssertionError(f"the call succeeded; expected {code} {reason or ''}")


def cards_in(message: Message) -> list[cards_pb2.Card]:
    """Every Card anywhere in ``message`` (nested messages and repeated fields)."""
    if isinstance(message, cards_pb2.Card):
        return [message]
    found: list[cards_pb2.Card] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            found.extend(cards_in(item))
    return found


def wait_until(
    predicate: Callable[[], bool], *, timeout: float, interval: float = 0.05, what: str = ""
) -> float:
    """Poll ``predicate`` until true; the seconds it took. Fails after ``timeout``."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout} s: {what or predicate}")
        time.sleep(interval)
    return time.monotonic() - start


@contextlib.contextmanager
def running_replica(redis_url: str, **env: str) -> Iterator[Replica]:
    """A dedicated replica (with ``env`` overrides), stopped (or reaped) on exit."""
    replica = Replica(redis_url, **env)
    try:
        yield replica
    finally:
        replica.stop()


SPECTATOR = auth("test-spectator", role="spectator")


def next_request(
    client: game_service_pb2_grpc.GameServiceStub, name: str, tokens: list[Metadata]
) -> tuple[game_service_pb2.SubmitActionRequest, Metadata]:
    """A request for the seat to act's first legal card, with a fresh request id."""
    seat = view_of(client, name, SPECTATOR).to_act
    mine = view_of(client, name, tokens[seat])
    play = next(a for a in mine.legal_actions if a.WhichOneof("kind") == "play_card")
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=play, etag=mine.etag, request_id=str(uuid.uuid4())
    )
    return request, tokens[seat]


@pytest.fixture(scope="module")
def address(redis_server: RedisServer) -> Iterator[str]:
    """One game-service replica for the module (a module with its own ``address``
    or ``client`` fixture uses that instead); its log must hold no traceback."""
    with running_replica(redis_server.url) as replica:
        yield replica.address
        assert "Traceback" not in replica.log(), replica.log()


@pytest.fixture(scope="module")
def client(address: str) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    """A GameService stub on ``address``."""
    with grpc.insecure_channel(address) as channel:
        yield game_service_pb2_grpc.GameServiceStub(channel)
