"""Who may do what: bearer tokens, seats, hidden cards, the lobby, and a
replica that refuses to start without its JWT secret."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import partial

import grpc
import pytest
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET

from .conftest import (
    TRUC_REFUSED_DEAL,
    Metadata,
    Replica,
    act,
    auth,
    card_text,
    cards_in,
    create_fixed_game,
    expect_error,
    new_players,
    play_action,
    view_of,
)

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED
FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


@pytest.fixture(scope="module")
def client(replicas: list[Replica]) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    channel = grpc.insecure_channel(replicas[0].address)
    yield game_service_pb2_grpc.GameServiceStub(channel)
    channel.close()


@pytest.fixture(scope="module")
def game(client: game_service_pb2_grpc.GameServiceStub) -> tuple[str, list[str]]:
    """A fixed-deal game at version 1, seat 0 to act (tests must not change it)."""
    players = new_players()
    return create_fixed_game(client, players).name, players


def _every_call(
    client: game_service_pb2_grpc.GameServiceStub, name: str, metadata: Metadata | None
) -> dict[str, Callable[[], object]]:
    """GetGame, SubmitAction, WatchGame and CreateGame on ``name`` with ``metadata``."""
    return {
        "GetGame": partial(
            client.GetGame, game_service_pb2.GetGameRequest(name=name), metadata=metadata
        ),
        "SubmitAction": partial(
            client.SubmitAction,
            game_service_pb2.SubmitActionRequest(
                name=name, action=play_action("5Sw"), request_id="auth-test"
            ),
            metadata=metadata,
        ),
        "WatchGame": lambda: list(
            client.WatchGame(
                game_service_pb2.WatchGameRequest(name=name), metadata=metadata, timeout=5
            )
        ),
        "CreateGame": partial(
            client.CreateGame,
            game_service_pb2.CreateGameRequest(players=new_players()),
            metadata=metadata,
        ),
    }


BAD_TOKENS: dict[str, tuple[Metadata | None, str]] = {
    "no metadata": (None, "TOKEN_MISSING"),
    "other metadata only": ((("x-player", "p0"),), "TOKEN_MISSING"),
    "garbage token": ((("authorization", "Bearer not.a.jwt"),), "TOKEN_INVALID"),
    "not a bearer": ((("authorization", "Basic dXNlcjpwYXNz"),), "TOKEN_INVALID"),
    "another secret": (
        auth("the-lobby", role="lobby", secret="another-secret-0123456789abcdef-xyz"),
        "TOKEN_INVALID",
    ),
    "expired": (auth("the-lobby", role="lobby", ttl=-60), "TOKEN_EXPIRED"),
}


@pytest.mark.parametrize("method", ["GetGame", "SubmitAction", "WatchGame", "CreateGame"])
@pytest.mark.parametrize("case", list(BAD_TOKENS))
def test_a_call_without_a_valid_token_is_unauthenticated(
    case: str,
    method: str,
    client: game_service_pb2_grpc.GameServiceStub,
    game: tuple[str, list[str]],
) -> None:
    name, players = game
    metadata, reason = BAD_TOKENS[case]
    expect_error(_every_call(client, name, metadata)[method], UNAUTHENTICATED, reason)
    assert view_of(client, name, auth(players[0])).etag == "1"


def test_the_same_claims_with_a_valid_signature_are_accepted(
    client: game_service_pb2_grpc.GameServiceStub, game: tuple[str, list[str]]
) -> None:
    """The control for the cases above: only the token was wrong."""
    name, players = game
    assert view_of(client, name, auth(players[0])).seat == 0
    created = client.CreateGame(
        game_service_pb2.CreateGameRequest(players=new_players()),
        metadata=auth("the-lobby", role="lobby"),
    )
    assert created.name.startswith("games/")


def test_a_seat_acts_only_as_itself(client: game_service_pb2_grpc.GameServiceStub) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    tokens = [auth(p) for p in players]
    # Seat 0 is to act. Seat 1 tries seat 0's card, then its own: the request
    # names no seat, so it is seat 1 acting, out of turn.
    for text in ("5Sw", "4Co"):
        expect_error(
            partial(act, client, name, tokens[1], play_action(text)),
            FAILED_PRECONDITION,
            "NOT_YOUR_TURN",
        )
    assert view_of(client, name, tokens[0]).etag == "1"
    reply = act(client, name, tokens[0], play_action("5Sw"))
    assert [(e.card_played.seat, card_text(e.card_played.card)) for e in reply.events] == [
        (0, "5Sw")
    ]
    # Seat 1 is to act now. Seat 0 (and seat 3) cannot play seat 1's card for it.
    for seat in (0, 3):
        expect_error(
            partial(act, client, name, tokens[seat], play_action("4Co")),
            FAILED_PRECONDITION,
            "NOT_YOUR_TURN",
        )
    assert view_of(client, name, tokens[1]).etag == "2"
    reply = act(client, name, tokens[1], play_action("4Co"))
    assert [(e.card_played.seat, card_text(e.card_played.card)) for e in reply.events] == [
        (1, "4Co")
    ]


def test_a_player_without_a_seat_in_the_game_is_denied(
    client: game_service_pb2_grpc.GameServiceStub, game: tuple[str, list[str]]
) -> None:
    name, players = game
    other_game_players = new_players()
    create_fixed_game(client, other_game_players)
    for outsider in (auth(other_game_players[0]), auth("nobody-at-all")):
        calls = _every_call(client, name, outsider)
        del calls["CreateGame"]
        for call in calls.values():
            expect_error(call, PERMISSION_DENIED, "NOT_SEATED")
    # A spectator token may look, but not act.
    spectator = auth("a-spectator", role="spectator")
    assert not view_of(client, name, spectator).HasField("seat")
    expect_error(
        partial(act, client, name, spectator, play_action("5Sw")), PERMISSION_DENIED, "NOT_SEATED"
    )
    assert view_of(client, name, auth(players[0])).etag == "1"


def test_get_game_shows_only_the_callers_cards(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    tokens = [auth(p) for p in players]
    own = set(TRUC_REFUSED_DEAL[2])
    public: set[str] = set()
    for step in range(3):
        response = client.GetGame(game_service_pb2.GetGameRequest(name=name), metadata=tokens[2])
        view = response.game
        assert view.seat == 2
        assert [card_text(c) for c in view.dealt] == list(TRUC_REFUSED_DEAL[2])
        assert {card_text(c) for c in view.hand} == own - public
        seen = {card_text(c) for c in cards_in(response)}
        assert seen <= own | public, f"another seat's hidden cards: {seen - own - public}"
        assert own - public <= seen
        dealt = [e.cards_dealt for e in view.events if e.HasField("cards_dealt")]
        assert [d.seat for d in dealt] == [2]
        if step == 2:
            break
        # Seats 0 and 1 play a card each: those become public.
        text = TRUC_REFUSED_DEAL[step][0]
        act(client, name, tokens[step], play_action(text))
        public.add(text)
    assert public == {"2Co", "3Sw"}
    spectator = client.GetGame(
        game_service_pb2.GetGameRequest(name=name),
        metadata=auth("a-spectator", role="spectator"),
    )
    assert {card_text(c) for c in cards_in(spectator)} == public
    assert not any(e.HasField("cards_dealt") for e in spectator.game.events)


def test_only_the_lobby_may_create_games(client: game_service_pb2_grpc.GameServiceStub) -> None:
    players = new_players()
    for token in (auth(players[0]), auth("a-spectator", role="spectator")):
        expect_error(
            partial(
                client.CreateGame,
                game_service_pb2.CreateGameRequest(players=players),
                metadata=token,
            ),
            PERMISSION_DENIED,
            "LOBBY_ONLY",
        )


def test_a_replica_without_a_jwt_secret_refuses_to_start(redis_server: RedisServer) -> None:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("TRUC_JWT_SECRET", "TRUC_DEV_MODE")
    }
    environment.update(REDIS_URL=redis_server.url, TRUC_GAME_PORT="0")
    finished = subprocess.run(
        [sys.executable, "-m", "truc_game"],
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert finished.returncode == 2, finished.stderr
    assert "TRUC_JWT_SECRET" in finished.stderr
    assert "listening" not in finished.stderr + finished.stdout


def test_the_development_key_is_not_accepted_by_a_replica_with_a_secret(
    client: game_service_pb2_grpc.GameServiceStub, game: tuple[str, list[str]]
) -> None:
    name, players = game
    expect_error(
        partial(view_of, client, name, auth(players[0], secret=DEV_SECRET)),
        UNAUTHENTICATED,
        "TOKEN_INVALID",
    )
