"""Reads cost their caller, never the service: GetGame's seat check comes before
any read of the log, GetGame is counted per player and game (in the read's own
script) and capped in flight per player, and the replays of an applied request
id and the actions a session refuses on its own copy of the game count at the
player's rate too. A real Redis and real game-service processes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

import grpc
import pytest
from redis import Redis
from truc.v1 import game_pb2, game_service_pb2

from truc_dev_redis import RedisServer
from truc_protocol.status import retry_after_ms

from .conftest import (
    LOBBY_AUTH,
    SPECTATOR,
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    expect_error,
    new_players,
    next_request,
    play_action,
    running_replica,
    stub,
    view_of,
)
from .sessions import action_request, open_refused, open_request, play, receive

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub
else:
    from truc.v1.game_service_pb2_grpc import GameServiceStub as GameServiceAsyncStub

RESOURCE_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
WINDOW_MS = "60000"
CALLS = 128
PAUSE_MS = 1000


def log_reads(redis: Redis) -> int:
    """GET calls so far (the log is the only string a game's reads GET)."""
    stats = cast(dict[str, dict[str, int]], redis.info("commandstats"))
    return int(stats.get("cmdstat_get", {}).get("calls", 0))


def played(replica: Replica, moves: int) -> tuple[str, list[str]]:
    """A fixed game with ``moves`` actions applied (its log is not empty)."""
    client = stub(replica.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    tokens = [auth(p) for p in players]
    for _ in range(moves):
        request, token = next_request(client, name, tokens)
        client.SubmitAction(request, metadata=token)
    return name, players


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """A Redis of this module's own, so its command counts are this module's."""
    with RedisServer() as server:
        yield server


def test_an_unseated_reader_is_refused_before_the_log_is_read(own_redis: RedisServer) -> None:
    redis = Redis.from_url(own_redis.url)
    with running_replica(own_redis.url) as replica:
        name, players = played(replica, 3)
        client = stub(replica.address)
        before = log_reads(redis)
        assert view_of(client, name, auth(players[0])).seat == 0  # the control: a seated read
        assert log_reads(redis) == before + 1
        stranger = auth("stranger-" + uuid.uuid4().hex[:8])
        before = log_reads(redis)
        for _ in range(5):
            expect_error(
                lambda: view_of(client, name, stranger),
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_SEATED",
            )
        expect_error(
            lambda: next(
                iter(
                    client.WatchGame(
                        game_service_pb2.WatchGameRequest(name=name), metadata=stranger, timeout=5
                    )
                )
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SEATED",
        )

        refused = open_refused(replica.address, stranger, game_service_pb2.OpenSession(name=name))
        assert refused is not None and refused.code() == grpc.StatusCode.PERMISSION_DENIED
        assert log_reads(redis) == before, "an unseated caller made the service read the log"
    redis.close()


@pytest.fixture(scope="module")
def limited(redis_server: RedisServer) -> Iterator[Replica]:
    """A replica with small read and action limits over a long window."""
    with running_replica(
        redis_server.url,
        TRUC_RATE_READS="5",
        TRUC_RATE_ACTIONS="4",
        TRUC_RATE_WINDOW_MS=WINDOW_MS,
        TRUC_MAX_READS_IN_FLIGHT="0",
    ) as replica:
        yield replica


def _limited(error: grpc.RpcError) -> None:
    wait = retry_after_ms(error)
    assert wait is not None and 0 < wait <= int(WINDOW_MS), error


def test_get_game_is_counted_per_player_and_game(limited: Replica) -> None:
    client = stub(limited.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    other = create_fixed_game(client, players).name
    for _ in range(5):
        view_of(client, name, auth(players[0]))
    error = expect_error(
        lambda: view_of(client, name, auth(players[0])), RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    _limited(error)
    assert "reads of this game" in (error.details() or "")
    # Another player of the game, and the same player in another game, read on.
    assert view_of(client, name, auth(players[1])).seat == 1
    assert view_of(client, other, auth(players[0])).seat == 0
    # An unseated caller's reads count too (and are refused either way).
    stranger = auth("stranger-" + uuid.uuid4().hex[:8])
    reasons = set()
    for _ in range(8):
        try:
            view_of(client, name, stranger)
        except grpc.RpcError as refused:
            reasons.add(refused.code())
    assert reasons == {grpc.StatusCode.PERMISSION_DENIED, RESOURCE_EXHAUSTED}


def test_replays_of_an_applied_request_id_are_counted(limited: Replica) -> None:
    """TRUC_RATE_ACTIONS=4: the original and three replays are answered (the
    original's answer), the next replay is RATE_LIMITED."""
    client = stub(limited.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    request, token = next_request(client, name, [auth(p) for p in players])
    first = client.SubmitAction(request, metadata=token)
    for _ in range(3):
        assert client.SubmitAction(request, metadata=token).game.etag == first.game.etag
    error = expect_error(
        lambda: client.SubmitAction(request, metadata=token), RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    _limited(error)


async def _session_replies(
    address: str, name: str, token: Metadata, actions: list[tuple[game_pb2.Action, str]]
) -> list[game_service_pb2.PlayResponse]:
    """The reply to each of ``actions`` (action, request id) sent on one session."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = play(channel, token)
        await call.write(open_request(name, 0))
        assert await receive(call) is not None
        replies = []
        for action, request_id in actions:
            await call.write(action_request(action, request_id))
            message = await receive(call)
            assert message is not None
            replies.append(message)
        call.cancel()
        return replies


def test_actions_a_session_refuses_on_its_own_copy_are_counted(limited: Replica) -> None:
    """Cards not in hand, refused against the replica's copy of the game (no
    commit): the first four are refused by the rules, the rest RATE_LIMITED."""
    client = stub(limited.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    # Seat 0 holds 2Co 5Sw KCu (conftest.TRUC_REFUSED_DEAL): 7Cl is another seat's.
    wrong = [(play_action("7Cl"), f"wrong-{n}") for n in range(6)]
    replies = asyncio.run(_session_replies(limited.address, name, auth(players[0]), wrong))
    reasons = [m.refused.reason for m in replies]
    assert reasons[:4] == ["CARD_NOT_IN_HAND"] * 4, reasons
    assert reasons[4:] == ["RATE_LIMITED"] * 2, reasons
    assert int(replies[-1].refused.metadata["retry_after_ms"]) > 0
    assert view_of(client, name, auth(players[1])).etag == "1"  # nothing applied


def test_a_spectator_s_session_actions_are_counted(limited: Replica) -> None:
    client = stub(limited.address)
    name = create_fixed_game(client, new_players()).name
    actions = [(play_action("5Sw"), f"s-{n}") for n in range(6)]
    replies = asyncio.run(_session_replies(limited.address, name, SPECTATOR, actions))
    reasons = [m.refused.reason for m in replies]
    assert reasons == ["NOT_SEATED"] * 4 + ["RATE_LIMITED"] * 2, reasons


def test_replays_on_a_session_are_counted(limited: Replica) -> None:
    """One action applied, then resent with its request id: repeats (counted)
    until the rate is spent, then RATE_LIMITED."""
    client = stub(limited.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    request, token = next_request(client, name, [auth(p) for p in players])
    sends = [(request.action, "again")] * 6
    replies = asyncio.run(_session_replies(limited.address, name, token, sends))
    kinds = [
        "refused:" + m.refused.reason
        if m.HasField("refused")
        else "repeated"
        if m.repeated
        else "v"
        for m in replies
    ]
    assert kinds == [
        "v",
        "repeated",
        "repeated",
        "repeated",
        "refused:RATE_LIMITED",
        "refused:RATE_LIMITED",
    ], kinds


def test_get_game_calls_in_flight_are_capped_per_player(own_redis: RedisServer) -> None:
    """TRUC_MAX_READS_IN_FLIGHT=2: 128 GetGame calls from one player while Redis
    is paused (so every admitted call is still in flight): two are let through,
    the others refused RATE_LIMITED at once, without waiting for Redis; the
    lobby's are never capped."""
    redis = Redis.from_url(own_redis.url)
    with running_replica(
        own_redis.url, TRUC_RATE_READS="0", TRUC_MAX_READS_IN_FLIGHT="2"
    ) as replica:
        name, players = played(replica, 12)

        async def burst(token: Metadata) -> list[grpc.StatusCode]:
            clients = [
                GameServiceAsyncStub(grpc.aio.insecure_channel(replica.address)) for _ in range(8)
            ]
            request = game_service_pb2.GetGameRequest(name=name)

            async def one(index: int) -> grpc.StatusCode:
                try:
                    await clients[index % len(clients)].GetGame(request, metadata=token)
                except grpc.aio.AioRpcError as error:
                    assert error.code() == RESOURCE_EXHAUSTED, error
                    return error.code()
                return grpc.StatusCode.OK

            await asyncio.gather(*(one(i) for i in range(len(clients))))  # connected
            redis.client_pause(PAUSE_MS, all=True)
            return await asyncio.gather(*(one(i) for i in range(CALLS)))

        seated = asyncio.run(burst(auth(players[0])))
        lobby = asyncio.run(burst(LOBBY_AUTH))
    redis.close()
    assert seated.count(grpc.StatusCode.OK) >= 2
    assert seated.count(RESOURCE_EXHAUSTED) >= CALLS // 2, f"{CALLS} reads at once were served"
    assert lobby.count(grpc.StatusCode.OK) == CALLS
