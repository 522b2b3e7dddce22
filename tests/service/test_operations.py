"""Operating a replica: turn deadlines (also across a restart), rate limits, the
message size limit, health with Redis going away and back, graceful shutdown,
server reflection."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer

from .conftest import (
    Replica,
    act,
    auth,
    call_action,
    card_text,
    create_fixed_game,
    directive_action,
    expect_error,
    new_players,
    play_action,
    reason_of,
    running_replica,
    trailers,
    view_of,
    wait_until,
)

SPECTATOR = auth("operations-spectator", role="spectator")
GAME_SERVICE = "truc.v1.GameService"
RATE_SIGNALS = 3
RATE_WINDOW_MS = 60_000
MAX_MESSAGE_BYTES = 2048


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """This module's Redis: no replica of another module sweeps its deadlines."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def tuned(own_redis: RedisServer) -> Iterator[Replica]:
    """A replica with a fast deadline sweep, a tight signal limit and a small message limit."""
    with running_replica(
        own_redis.url,
        TRUC_DEADLINE_POLL_MS="50",
        TRUC_RATE_SIGNALS=str(RATE_SIGNALS),
        TRUC_RATE_WINDOW_MS=str(RATE_WINDOW_MS),
        TRUC_MAX_MESSAGE_BYTES=str(MAX_MESSAGE_BYTES),
    ) as replica:
        yield replica


@pytest.fixture(scope="module")
def client(tuned: Replica) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    channel = grpc.insecure_channel(tuned.address)
    yield game_service_pb2_grpc.GameServiceStub(channel)
    channel.close()


def _health(address: str, service: str = "") -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=3
        )
        return int(reply.status)


def _events_of(view: game_pb2.GameView, version: int) -> list[game_pb2.Event]:
    return [e for e in view.events if e.version == version]


def _wait_for_version(
    client: game_service_pb2_grpc.GameServiceStub, name: str, version: int, timeout: float
) -> float:
    return wait_until(
        lambda: int(view_of(client, name, SPECTATOR).etag) >= version,
        timeout=timeout,
        what=f"{name} at version {version}",
    )


# ---------------------------------------------------------------- deadlines


def test_a_turn_deadline_plays_the_lowest_card_for_the_seat(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    created = create_fixed_game(client, players, turn_seconds=1)
    name, start = created.name, time.time()
    assert created.game.to_act == 0
    deadline = created.game.deadline.ToMilliseconds() / 1000
    assert start + 0.5 < deadline < start + 1.5
    _wait_for_version(client, name, 2, timeout=3.0)
    assert time.time() >= deadline - 0.05  # not before the deadline
    view = view_of(client, name, auth(players[0]))
    events = _events_of(view, 2)
    timed_out = [e.turn_timed_out for e in events if e.HasField("turn_timed_out")]
    assert len(timed_out) == 1 and timed_out[0].seat == 0
    assert card_text(timed_out[0].action.play_card) == "5Sw"  # the lowest in trick order
    played = [e.card_played for e in events if e.HasField("card_played")]
    assert [(p.seat, card_text(p.card)) for p in played] == [(0, "5Sw")]
    assert sorted(card_text(c) for c in view.hand) == ["2Co", "KCu"]


def test_a_truc_call_left_unanswered_is_folded_at_the_deadline(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players, turn_seconds=1).name
    called = act(client, name, auth(players[0]), call_action(game_pb2.CALL_TRUC), etag="1")
    assert called.game.to_act == 3 and called.game.prompt == game_pb2.PROMPT_TRUC_ANSWER
    _wait_for_version(client, name, 3, timeout=3.0)
    view = view_of(client, name, SPECTATOR)
    events = _events_of(view, 3)
    timed_out = [e.turn_timed_out for e in events if e.HasField("turn_timed_out")]
    assert [(t.seat, t.action.call) for t in timed_out] == [(3, game_pb2.CALL_FOLD)]
    assert game_pb2.Called(seat=3, call=game_pb2.CALL_FOLD) in [
        e.called for e in events if e.HasField("called")
    ]
    assert (view.scores.team_a, view.scores.team_b) == (1, 0)
    assert view.hands_played == 1


def test_a_deadline_fires_after_the_only_replica_is_replaced() -> None:
    with RedisServer() as redis:
        first = Replica(redis.url, TRUC_DEADLINE_POLL_MS="50")
        try:
            with grpc.insecure_channel(first.address) as channel:
                players = new_players()
                created = create_fixed_game(
                    game_service_pb2_grpc.GameServiceStub(channel), players, turn_seconds=1
                )
                name, start = created.name, time.time()
        finally:
            first.kill()
            first.stop()
        assert time.time() - start < 0.8, "killed too late: it may have fired the deadline"
        with (
            running_replica(redis.url, TRUC_DEADLINE_POLL_MS="50") as second,
            grpc.insecure_channel(second.address) as channel,
        ):
            client = game_service_pb2_grpc.GameServiceStub(channel)
            _wait_for_version(client, name, 2, timeout=3.0)
            view = view_of(client, name, SPECTATOR)
    timed_out = [e.turn_timed_out for e in view.events if e.HasField("turn_timed_out")]
    assert [t.seat for t in timed_out] == [0]
    assert [e.version for e in view.events if e.HasField("turn_timed_out")] == [2]


# ---------------------------------------------------------------- rate limits


def test_the_signal_after_the_limit_is_rate_limited_with_a_retry_delay(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    captain, other_captain = auth(players[0]), auth(players[3])
    directives = (
        game_pb2.DIRECTIVE_PLAY_HIGH,
        game_pb2.DIRECTIVE_PLAY_LOW,
        game_pb2.DIRECTIVE_STAY_QUIET,
    )
    for directive in directives[:RATE_SIGNALS]:
        act(client, name, captain, directive_action(directive))
    for message in (
        directive_action(game_pb2.DIRECTIVE_TRUC),
        game_pb2.Action(signal=game_pb2.SIGNAL_DUS),  # seat 0 holds 2Co: a true signal
    ):
        error = expect_error(
            partial(act, client, name, captain, message),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
        )
        retry_after = trailers(error).get("retry_after_ms")
        assert isinstance(retry_after, str), trailers(error)
        assert 0 < int(retry_after) <= RATE_WINDOW_MS
    assert view_of(client, name, SPECTATOR).etag == str(1 + RATE_SIGNALS)
    # The limit is per player and per kind: others may still signal, seat 0 may still play.
    act(client, name, other_captain, directive_action(game_pb2.DIRECTIVE_PLAY_LOW))
    act(client, name, captain, play_action("5Sw"))
    assert view_of(client, name, SPECTATOR).etag == str(3 + RATE_SIGNALS)


# ---------------------------------------------------------------- message size


def test_a_request_over_the_message_limit_is_refused_and_the_replica_goes_on(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    seat0 = auth(players[0])
    padded_action = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id="r" * 10_000
    )
    padded_create = game_service_pb2.CreateGameRequest(
        players=[f"{p}-{'x' * 1700}" for p in new_players()]
    )
    assert padded_action.ByteSize() > 4 * MAX_MESSAGE_BYTES
    assert padded_create.ByteSize() > 4 * MAX_MESSAGE_BYTES
    expect_error(
        partial(client.SubmitAction, padded_action, metadata=seat0),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
    expect_error(
        partial(client.CreateGame, padded_create, metadata=auth("lobby", role="lobby")),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
    # Under the size limit, the same kind of mistake is the service's own error.
    small = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id="r" * 100
    )
    assert small.ByteSize() < MAX_MESSAGE_BYTES
    expect_error(
        partial(client.SubmitAction, small, metadata=seat0),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    assert view_of(client, name, seat0).etag == "1"
    assert act(client, name, seat0, play_action("5Sw")).game.etag == "2"


# ---------------------------------------------------------------- health


def test_health_follows_redis_and_calls_fail_unavailable_meanwhile() -> None:
    redis = RedisServer().start()
    try:
        with (
            running_replica(redis.url) as replica,
            grpc.insecure_channel(replica.address) as channel,
        ):
            client = game_service_pb2_grpc.GameServiceStub(channel)
            serving = health_pb2.HealthCheckResponse.SERVING
            assert _health(replica.address) == serving
            assert _health(replica.address, GAME_SERVICE) == serving
            players = new_players()
            name = create_fixed_game(client, players).name
            port = redis.port
            redis.stop()
            took = wait_until(
                lambda: _health(replica.address) == health_pb2.HealthCheckResponse.NOT_SERVING,
                timeout=5.0,
                what="NOT_SERVING once Redis is gone",
            )
            assert _health(replica.address, GAME_SERVICE) != serving
            assert took < 5.0
            for call in (
                partial(view_of, client, name, auth(players[0])),
                partial(act, client, name, auth(players[0]), play_action("5Sw")),
                partial(create_fixed_game, client, new_players()),
            ):
                error = expect_error(call, grpc.StatusCode.UNAVAILABLE)
                assert reason_of(error) == "STORE_UNAVAILABLE"
            redis = RedisServer(port=port, password=redis.password).start()
            wait_until(
                lambda: _health(replica.address) == serving,
                timeout=5.0,
                what="SERVING once Redis is back",
            )
            assert _health(replica.address, GAME_SERVICE) == serving
            # The new Redis is empty, but the replica uses it again.
            name = create_fixed_game(client, new_players()).name
            assert view_of(client, name, SPECTATOR).etag == "1"
    finally:
        redis.stop()


# ---------------------------------------------------------------- shutdown


def test_sigterm_during_a_long_watch_exits_cleanly_within_the_grace_period(
    own_redis: RedisServer,
) -> None:
    grace = 2.0
    replica = Replica(own_redis.url, TRUC_GRACE_SECONDS=str(int(grace)))
    try:
        channel = grpc.insecure_channel(replica.address)
        client = game_service_pb2_grpc.GameServiceStub(channel)
        players = new_players()
        name = create_fixed_game(client, players).name
        watch = iter(
            client.WatchGame(
                game_service_pb2.WatchGameRequest(name=name),
                metadata=auth(players[0]),
                timeout=60,
            )
        )
        assert next(watch).version == 1  # the stream is open and waiting for more
        start = time.monotonic()
        code = replica.stop()
        took = time.monotonic() - start
    finally:
        replica.stop()
    assert code == 0, replica.log()[-2000:]
    assert took < grace + 2.0, f"stopped after {took:.1f} s (grace {grace} s)"
    with pytest.raises(grpc.RpcError):  # the watch ended with the server, not with its deadline
        next(watch)
    assert time.monotonic() - start < 10
    channel.close()


# ---------------------------------------------------------------- reflection


def _grpcurl() -> str | None:
    local = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "grpcurl"
    return str(local) if local.exists() else shutil.which("grpcurl")


def test_reflection_lists_the_game_and_health_services(tuned: Replica) -> None:
    binary = _grpcurl()
    if binary is None:
        pytest.skip("grpcurl is not installed (.venv/bin/grpcurl or on PATH)")
    try:
        listed = subprocess.run(
            [binary, "-plaintext", tuned.address, "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"grpcurl could not run: {exc}")
    assert listed.returncode == 0, listed.stderr
    services = listed.stdout.split()
    assert GAME_SERVICE in services
    assert "grpc.health.v1.Health" in services
