"""The documented errors of bad requests: unknown games, bad names, taken game
ids, wrong player lists, fixed deals on a server without the test flag."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from functools import partial

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer

from .conftest import (
    LOBBY_AUTH,
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    expect_error,
    new_players,
    play_action,
    running_replica,
    view_of,
)

INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def client(replicas: list[Replica]) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    channel = grpc.insecure_channel(replicas[1].address)
    yield game_service_pb2_grpc.GameServiceStub(channel)
    channel.close()


def _calls_on(
    client: game_service_pb2_grpc.GameServiceStub, name: str, metadata: Metadata
) -> dict[str, Callable[[], object]]:
    return {
        "GetGame": partial(
            client.GetGame, game_service_pb2.GetGameRequest(name=name), metadata=metadata
        ),
        "SubmitAction": partial(
            client.SubmitAction,
            game_service_pb2.SubmitActionRequest(name=name, action=play_action("5Sw")),
            metadata=metadata,
        ),
        "WatchGame": lambda: list(
            client.WatchGame(
                game_service_pb2.WatchGameRequest(name=name), metadata=metadata, timeout=5
            )
        ),
    }


METHODS = ["GetGame", "SubmitAction", "WatchGame"]


@pytest.mark.parametrize("method", METHODS)
def test_an_unknown_game_is_not_found(
    method: str, client: game_service_pb2_grpc.GameServiceStub
) -> None:
    name = f"games/never-created-{uuid.uuid4().hex}"
    call = _calls_on(client, name, auth("someone"))[method]
    expect_error(call, grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")


BAD_NAMES = ["game/x", "games/", "games/a b", "", "x", "games/a/b", "games/" + "a" * 65]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_name_is_an_invalid_argument(
    name: str, method: str, client: game_service_pb2_grpc.GameServiceStub
) -> None:
    call = _calls_on(client, name, auth("someone"))[method]
    expect_error(call, INVALID_ARGUMENT, "BAD_NAME")


def test_a_name_at_the_length_limit_is_a_good_name(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    game_id = uuid.uuid4().hex * 2  # 64 characters
    players = new_players()
    created = create_fixed_game(client, players, game_id=game_id)
    assert created.name == f"games/{game_id}"
    assert view_of(client, created.name, auth(players[0])).seat == 0


def test_a_taken_game_id_already_exists_and_the_game_is_untouched(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    game_id = f"dup-{uuid.uuid4().hex[:12]}"
    first = new_players()
    create_fixed_game(client, first, game_id=game_id)
    intruders = new_players()
    expect_error(
        partial(create_fixed_game, client, intruders, game_id=game_id),
        grpc.StatusCode.ALREADY_EXISTS,
        "GAME_EXISTS",
    )
    view = view_of(client, f"games/{game_id}", auth(first[2]))
    assert view.seat == 2 and view.etag == "1"
    assert [s.player for s in view.seats] == first
    expect_error(
        partial(view_of, client, f"games/{game_id}", auth(intruders[0])),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_SEATED",
    )


def test_a_bad_game_id_is_refused(client: game_service_pb2_grpc.GameServiceStub) -> None:
    for game_id in ("a b", "x" * 65, "slash/ed"):
        expect_error(
            partial(create_fixed_game, client, new_players(), game_id=game_id),
            INVALID_ARGUMENT,
            "BAD_REQUEST",
        )


def _players_cases() -> dict[str, list[str]]:
    players = new_players()
    return {
        "five players": players[:5],
        "seven players": [*players, "a-seventh"],
        "no players": [],
        "a duplicate player": [*players[:5], players[0]],
        "an empty player id": [*players[:5], ""],
    }


@pytest.mark.parametrize("case", list(_players_cases()))
def test_create_needs_six_distinct_players(
    case: str, client: game_service_pb2_grpc.GameServiceStub
) -> None:
    players = _players_cases()[case]
    expect_error(
        partial(
            client.CreateGame,
            game_service_pb2.CreateGameRequest(players=players),
            metadata=LOBBY_AUTH,
        ),
        INVALID_ARGUMENT,
        "BAD_REQUEST",
    )


def test_an_empty_action_and_a_long_request_id_are_invalid(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    seat0 = auth(players[0])
    expect_error(
        partial(
            client.SubmitAction,
            game_service_pb2.SubmitActionRequest(name=name, action=game_pb2.Action()),
            metadata=seat0,
        ),
        INVALID_ARGUMENT,
        "BAD_ACTION",
    )
    expect_error(
        partial(
            client.SubmitAction,
            game_service_pb2.SubmitActionRequest(
                name=name, action=play_action("5Sw"), request_id="r" * 65
            ),
            metadata=seat0,
        ),
        INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    assert view_of(client, name, seat0).etag == "1"


def test_fixed_deals_need_the_servers_test_flag(redis_server: RedisServer) -> None:
    with (
        running_replica(redis_server.url, TRUC_ALLOW_FIXED_DEALS="0") as replica,
        grpc.insecure_channel(replica.address) as channel,
    ):
        client = game_service_pb2_grpc.GameServiceStub(channel)
        expect_error(
            partial(create_fixed_game, client, new_players()),
            INVALID_ARGUMENT,
            "FIXED_DEALS_DISABLED",
        )
        # The same request without fixed deals is fine there.
        created = client.CreateGame(
            game_service_pb2.CreateGameRequest(players=new_players(), dealer=5),
            metadata=LOBBY_AUTH,
        )
        assert created.game.phase == game_pb2.PHASE_PLAY
