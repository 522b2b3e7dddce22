"""What a request may hold: unknown enum values are INVALID_ARGUMENT naming the
field, a request id reused for another action is REQUEST_ID_REUSED (the same
action is the replay it always was), player and request ids keep to their safe
alphabets, and a stream token opens WatchGame only. On SubmitAction, WatchGame,
Play and CreateGame, against a real game service on a real Redis."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_protocol.identifiers import PLAYER_ID_ALPHABET, REQUEST_ID_ALPHABET
from truc_service.tokens import STREAM_SCOPE, issue_token

from .conftest import (
    LOBBY_AUTH,
    SECRET,
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    expect_error,
    new_players,
    play_action,
    reason_of,
    stub,
    view_of,
)
from .sessions import action_request, open_refused, play, receive

INVALID = grpc.StatusCode.INVALID_ARGUMENT
UNKNOWN = 99
"""A number no enum of the protocol defines."""


@pytest.fixture
def game(replicas: list[Replica]) -> tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata]:
    """A fixed game at version 1 whose seat 0 (holding 2Co 5Sw KCu) is to play."""
    client = stub(replicas[0].address)
    players = new_players()
    name = create_fixed_game(client, players).name
    return client, name, auth(players[0])


def _details(error: grpc.RpcError) -> str:
    return error.details() or ""


# ------------------------------------------------------------------ unknown enum values


@pytest.mark.parametrize(
    ("field", "action"),
    [
        ("action.call", game_pb2.Action(call=UNKNOWN)),  # type: ignore[arg-type]
        ("action.signal", game_pb2.Action(signal=UNKNOWN)),  # type: ignore[arg-type]
        ("action.directive", game_pb2.Action(directive=UNKNOWN)),  # type: ignore[arg-type]
        (
            "action.play_card",
            game_pb2.Action(play_card={"suit": UNKNOWN, "rank": 1}),  # type: ignore[arg-type]
        ),
        (
            "action.play_card",
            game_pb2.Action(play_card={"suit": 1, "rank": UNKNOWN}),  # type: ignore[arg-type]
        ),
    ],
)
def test_an_unknown_enum_value_in_an_action_is_bad_action(
    game: tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata],
    field: str,
    action: game_pb2.Action,
) -> None:
    client, name, token = game
    request = game_service_pb2.SubmitActionRequest(name=name, action=action, request_id="r-1")
    error = expect_error(
        lambda: client.SubmitAction(request, metadata=token), INVALID, "BAD_ACTION"
    )
    assert _details(error).startswith(field), _details(error)


def test_an_unknown_response_view_is_bad_request_on_every_call(
    game: tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata], replicas: list[Replica]
) -> None:
    client, name, token = game
    submit = game_service_pb2.SubmitActionRequest(
        name=name,
        action=play_action("5Sw"),
        request_id="r-1",
        response_view=UNKNOWN,  # type: ignore[arg-type]
    )
    error = expect_error(
        lambda: client.SubmitAction(submit, metadata=token), INVALID, "BAD_REQUEST"
    )
    assert "response_view" in _details(error)
    watch = game_service_pb2.WatchGameRequest(name=name, response_view=UNKNOWN)  # type: ignore[arg-type]
    error = expect_error(
        lambda: next(iter(client.WatchGame(watch, metadata=token, timeout=5))),
        INVALID,
        "BAD_REQUEST",
    )
    assert "response_view" in _details(error)

    opening = game_service_pb2.OpenSession(name=name, response_view=UNKNOWN)  # type: ignore[arg-type]
    refused = open_refused(replicas[0].address, token, opening)
    assert refused is not None and reason_of(refused) == "BAD_REQUEST", refused
    assert "open.response_view" in _details(refused)
    assert view_of(client, name, token).etag == "1"  # nothing was applied


@pytest.mark.parametrize(
    ("field", "options"),
    [
        ("options.rule_set", {"rule_set": UNKNOWN}),
        ("options.perique_trick_rank", {"perique_trick_rank": UNKNOWN}),
        ("options.responder", {"responder": UNKNOWN}),
        ("options.cut", {"cut": UNKNOWN}),
        (
            "options.trick_order",
            {"rule_set": game_pb2.RULE_SET_FRENCH_TRUC, "trick_order": UNKNOWN},
        ),
    ],
)
def test_an_unknown_enum_value_in_create_game_s_options_is_bad_request(
    replicas: list[Replica], field: str, options: dict[str, int]
) -> None:
    client = stub(replicas[0].address)
    request = game_service_pb2.CreateGameRequest(
        players=new_players(),
        options=game_pb2.RuleOptions(**options),  # type: ignore[arg-type]
    )
    error = expect_error(
        lambda: client.CreateGame(request, metadata=LOBBY_AUTH), INVALID, "BAD_REQUEST"
    )
    assert _details(error).startswith(field), _details(error)


# ------------------------------------------------------------------ request ids


def test_a_request_id_reused_for_another_action_is_refused(
    game: tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata],
) -> None:
    client, name, token = game

    def submit(card: str, request_id: str) -> game_service_pb2.SubmitActionResponse:
        request = game_service_pb2.SubmitActionRequest(
            name=name, action=play_action(card), request_id=request_id
        )
        return client.SubmitAction(request, metadata=token)

    first = submit("5Sw", "the-id")
    assert first.game.etag == "2"
    error = expect_error(lambda: submit("2Co", "the-id"), INVALID, "REQUEST_ID_REUSED")
    assert "request_id" in _details(error)
    again = submit("5Sw", "the-id")  # the same action: the first answer again
    assert again.game.etag == "2" and again.events == first.events
    assert view_of(client, name, token).etag == "2"


def test_a_session_refuses_a_request_id_reused_for_another_action(
    game: tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata], replicas: list[Replica]
) -> None:
    client, name, token = game
    first = client.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            name=name, action=play_action("5Sw"), request_id="unary-id"
        ),
        metadata=token,
    )
    assert first.game.etag == "2"

    async def run() -> list[game_service_pb2.PlayResponse]:
        async with grpc.aio.insecure_channel(replicas[1].address) as channel:
            call = play(channel, token)
            await call.write(
                game_service_pb2.PlayRequest(
                    open=game_service_pb2.OpenSession(name=name, after_version=2)
                )
            )
            replies = []
            for card in ("2Co", "5Sw"):
                await call.write(action_request(play_action(card), "unary-id"))
                message = await receive(call)
                assert message is not None
                replies.append(message)
            call.cancel()
            return replies

    reused, repeated = asyncio.run(run())
    assert reused.refused.reason == "REQUEST_ID_REUSED", reused
    assert reused.refused.code == INVALID.value[0]
    assert repeated.repeated and repeated.version == 2, repeated
    assert view_of(client, name, token).etag == "2"


@pytest.mark.parametrize(
    "request_id", ["has space", "new\nline", "\x1b[31mred", 'quote"d', "k=v", "é", "x" * 65]
)
def test_a_request_id_outside_its_alphabet_is_bad_request(
    game: tuple[game_service_pb2_grpc.GameServiceStub, str, Metadata],
    replicas: list[Replica],
    request_id: str,
) -> None:
    client, name, token = game
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id=request_id
    )
    error = expect_error(
        lambda: client.SubmitAction(request, metadata=token), INVALID, "BAD_REQUEST"
    )
    assert REQUEST_ID_ALPHABET in _details(error)

    async def on_a_session() -> game_service_pb2.PlayResponse:
        async with grpc.aio.insecure_channel(replicas[0].address) as channel:
            call = play(channel, token)
            await call.write(
                game_service_pb2.PlayRequest(open=game_service_pb2.OpenSession(name=name))
            )
            assert await receive(call) is not None
            await call.write(action_request(play_action("5Sw"), request_id))
            message = await receive(call)
            assert message is not None
            call.cancel()
            return message

    refused = asyncio.run(on_a_session())
    assert (
        refused.refused.reason == "BAD_REQUEST" and REQUEST_ID_ALPHABET in refused.refused.message
    )
    assert view_of(client, name, token).etag == "1"
    # A request id of the alphabet, as long as allowed, is fine.
    good = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id="A-z_0.9:" + "x" * 56
    )
    assert client.SubmitAction(good, metadata=token).game.etag == "2"


@pytest.mark.parametrize(
    "bad", ["", "with space", "ctl\x07", "\x1b[2J", "new\nline", "uni\u00e9", "tab\t", "x" * 129]
)
def test_create_game_refuses_player_ids_outside_their_alphabet(
    replicas: list[Replica], bad: str
) -> None:
    client = stub(replicas[0].address)
    players = new_players()
    players[3] = bad
    request = game_service_pb2.CreateGameRequest(players=players)
    error = expect_error(
        lambda: client.CreateGame(request, metadata=LOBBY_AUTH), INVALID, "BAD_REQUEST"
    )
    assert PLAYER_ID_ALPHABET in _details(error)


def test_create_game_takes_player_ids_of_the_whole_alphabet(replicas: list[Replica]) -> None:
    client = stub(replicas[0].address)
    tag = uuid.uuid4().hex[:6]
    players = [f"auth0|{tag}", f"a.b+c@{tag}", f"u:{tag}-_", f"P{tag}", f"9{tag}", "x" * 122 + tag]
    created = client.CreateGame(
        game_service_pb2.CreateGameRequest(players=players), metadata=LOBBY_AUTH
    )
    assert created.game.etag == "1"
    assert view_of(client, created.name, auth(players[5])).seat == 5


# ------------------------------------------------------------------ stream tokens


def stream_token(player: str, *, role: str = "player") -> Metadata:
    """A short-lived stream token (claim scope=stream) for ``player``."""
    token = issue_token(SECRET, player, role=role, ttl_seconds=120, scope=STREAM_SCOPE)
    return (("authorization", "Bearer " + token),)


def test_a_stream_token_opens_watch_game_and_nothing_else(replicas: list[Replica]) -> None:
    client = stub(replicas[0].address)
    players = new_players()
    name = create_fixed_game(client, players).name
    token = auth(players[0])
    mine = stream_token(players[0])
    watch = client.WatchGame(game_service_pb2.WatchGameRequest(name=name), metadata=mine)
    assert next(iter(watch)).version == 1
    watch.cancel()  # type: ignore[no-untyped-call]
    denied = grpc.StatusCode.PERMISSION_DENIED
    expect_error(lambda: view_of(client, name, mine), denied, "STREAM_TOKEN_WATCH_ONLY")
    submit = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id="r-1"
    )
    expect_error(
        lambda: client.SubmitAction(submit, metadata=mine), denied, "STREAM_TOKEN_WATCH_ONLY"
    )
    create = game_service_pb2.CreateGameRequest(players=new_players())
    lobby = stream_token("the-lobby", role="lobby")
    expect_error(
        lambda: client.CreateGame(create, metadata=lobby), denied, "STREAM_TOKEN_WATCH_ONLY"
    )

    refused = open_refused(replicas[0].address, mine, game_service_pb2.OpenSession(name=name))
    assert refused is not None and reason_of(refused) == "STREAM_TOKEN_WATCH_ONLY", refused
    assert view_of(client, name, token).etag == "1"
