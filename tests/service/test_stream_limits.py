"""Open streams are limited: WatchGame streams and Play sessions per player on
every replica (leases in Redis, so a killed replica's stop counting once they
run out) and per replica in all; a watch resuming past the game's version is
OUT_OF_RANGE. Real Redis, real game-service processes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer

from .conftest import (
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    expect_error,
    new_players,
    running_replica,
    stub,
    wait_until,
)
from .sessions import PlayCall, open_request, play, receive

RESOURCE_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
PER_PLAYER = 3
LEASE_SECONDS = 3


class Held:
    """A WatchGame stream the server holds open."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def cancel(self) -> None:
        self._call.cancel()


def watch(
    client: game_service_pb2_grpc.GameServiceStub, name: str, token: Metadata, after: int = 0
) -> Held:
    """A WatchGame stream that has sent its first message (so the server holds
    it open); raises the refusal of one that could not open."""
    call = client.WatchGame(
        game_service_pb2.WatchGameRequest(name=name, after_version=after), metadata=token
    )
    next(iter(call))
    return Held(call)


def refused_watch(client: game_service_pb2_grpc.GameServiceStub, name: str, token: Metadata) -> str:
    """The reason a new WatchGame of ``token`` is refused with (it must be)."""
    error = expect_error(lambda: watch(client, name, token), RESOURCE_EXHAUSTED, "RATE_LIMITED")
    return error.details() or ""


def can_watch(client: game_service_pb2_grpc.GameServiceStub, name: str, token: Metadata) -> bool:
    try:
        call = watch(client, name, token)
    except grpc.RpcError as error:
        assert error.code() == RESOURCE_EXHAUSTED, error
        return False
    call.cancel()
    return True


@pytest.fixture(scope="module")
def pair(redis_server: RedisServer) -> Iterator[list[Replica]]:
    """Two replicas, each player allowed PER_PLAYER streams in all."""
    env = {
        "TRUC_MAX_STREAMS_PER_PLAYER": str(PER_PLAYER),
        "TRUC_STREAM_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    with (
        running_replica(redis_server.url, **env) as a,
        running_replica(redis_server.url, **env) as b,
    ):
        yield [a, b]


def test_a_player_s_streams_are_limited_across_replicas(pair: list[Replica]) -> None:
    a, b = (stub(r.address) for r in pair)
    players = new_players()
    name = create_fixed_game(a, players).name
    token = auth(players[0])
    held = [watch(a, name, token), watch(a, name, token), watch(b, name, token)]
    assert "streams open at once" in refused_watch(b, name, token)
    assert "streams open at once" in refused_watch(a, name, token)
    # Another player of the game is not affected.
    other = watch(b, name, auth(players[1]))
    other.cancel()
    # A stream that closes gives its place back.
    held.pop().cancel()
    wait_until(lambda: can_watch(a, name, token), timeout=5, what="the closed stream's place")
    for call in held:
        call.cancel()


def test_sessions_count_with_watch_streams(pair: list[Replica]) -> None:
    a = stub(pair[0].address)
    players = new_players()
    name = create_fixed_game(a, players).name
    token = auth(players[2])

    async def run() -> tuple[str, str]:
        async with grpc.aio.insecure_channel(pair[1].address) as channel:
            calls: list[PlayCall] = []
            for _ in range(PER_PLAYER):
                call = play(channel, token)
                await call.write(open_request(name, 0))
                assert await receive(call) is not None
                calls.append(call)
            extra = play(channel, token)
            await extra.write(open_request(name, 0))
            try:
                await receive(extra)
                session = "OK"
            except grpc.aio.AioRpcError as error:
                session = f"{error.code().name} {error.details()}"
            # The sessions hold the player's streams: a watch is refused too.
            watched = refused_watch(a, name, token)
            for call in calls:
                call.cancel()
            return session, watched

    session, watched = asyncio.run(run())
    assert session.startswith("RESOURCE_EXHAUSTED") and "streams open at once" in session
    assert "streams open at once" in watched
    wait_until(lambda: can_watch(a, name, token), timeout=5, what="the sessions' places")


def test_a_killed_replica_s_streams_stop_counting_after_their_lease(
    redis_server: RedisServer, pair: list[Replica]
) -> None:
    survivor = stub(pair[0].address)
    players = new_players()
    name = create_fixed_game(survivor, players).name
    token = auth(players[3])
    doomed = Replica(
        redis_server.url,
        TRUC_MAX_STREAMS_PER_PLAYER=str(PER_PLAYER),
        TRUC_STREAM_LEASE_SECONDS=str(LEASE_SECONDS),
    )
    try:
        held = [watch(stub(doomed.address), name, token) for _ in range(PER_PLAYER)]
        assert "streams open at once" in refused_watch(survivor, name, token)
        # The holding replica renews the leases: past one lease they still count.
        time.sleep(LEASE_SECONDS + 1)
        assert "streams open at once" in refused_watch(survivor, name, token)
        doomed.kill()  # no stream is closed: its leases are left to run out
        took = wait_until(
            lambda: can_watch(survivor, name, token), timeout=3 * LEASE_SECONDS, what="expiry"
        )
        assert took <= LEASE_SECONDS + 1, f"the dead replica's streams counted {took:.1f} s"
        del held
    finally:
        doomed.stop()


def test_a_replica_holds_at_most_its_streams_in_all(redis_server: RedisServer) -> None:
    with running_replica(redis_server.url, TRUC_MAX_STREAMS="2") as replica:
        client = stub(replica.address)
        players = new_players()
        name = create_fixed_game(client, players).name
        held = [watch(client, name, auth(players[0])), watch(client, name, auth(players[1]))]
        assert "streams on this replica" in refused_watch(client, name, auth(players[2]))
        held.pop().cancel()
        wait_until(
            lambda: can_watch(client, name, auth(players[2])), timeout=5, what="a free place"
        )
        for call in held:
            call.cancel()


def test_a_watch_past_the_game_s_version_is_out_of_range(pair: list[Replica]) -> None:
    client = stub(pair[0].address)
    players = new_players()
    name = create_fixed_game(client, players).name
    for after in (2, 10**6):
        expect_error(
            lambda: watch(client, name, auth(players[0]), after=after),  # noqa: B023
            grpc.StatusCode.OUT_OF_RANGE,
            "AFTER_VERSION_AHEAD",
        )
    # Refused streams hold nothing: the player still has every place.
    calls = [watch(client, name, auth(players[0])) for _ in range(PER_PLAYER)]
    for call in calls:
        call.cancel()
