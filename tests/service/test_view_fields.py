"""What every view says of the seats and the choices, through the real service
(a Redis, a game-service process, gRPC over a socket): the players' display
names (validated and stored at CreateGame, shown by GetGame, SubmitAction,
WatchGame, Play and GetReplay); legal_moves and legal_messages (the moves only
for the seat to act, the team messages apart, legal_actions both together) over
a whole random match of every rule set; and a finished match's scores, the
last manche's (not 0-0), in every rule set."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from collections.abc import Sequence

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    LOBBY_AUTH,
    SPECTATOR,
    Metadata,
    auth,
    expect_error,
    view_of,
)
from .sessions import open_request, play, receive

INVALID = grpc.StatusCode.INVALID_ARGUMENT
MESSAGES = ("signal", "directive")
RULE_SETS = {
    game_pb2.RULE_SET_TRUC_Y_FLOU: 6,
    game_pb2.RULE_SET_FRENCH_TRUC: 2,
    game_pb2.RULE_SET_SACKSON_TRUC: 2,
    game_pb2.RULE_SET_PARTNERSHIP_TRUC: 4,
    game_pb2.RULE_SET_CATALAN_TRUC: 4,
}
NAMES = ("José María", "Ørjan", "山田 太郎", "👩\u200d👩\u200d👧", "Zoë", "Bot 5")
"""Display names in several scripts (an emoji sequence joined by U+200D too)."""


def players_of(count: int) -> list[str]:
    tag = uuid.uuid4().hex[:8]
    return [f"{tag}-p{seat}" for seat in range(count)]


def create(
    client: game_service_pb2_grpc.GameServiceStub,
    players: Sequence[str],
    *,
    rule_set: game_pb2.RuleSet.ValueType = game_pb2.RULE_SET_TRUC_Y_FLOU,
    names: Sequence[str] = (),
    game_id: str = "",
    target: int = 0,
) -> game_service_pb2.CreateGameResponse:
    options = game_pb2.RuleOptions(rule_set=rule_set, target_score=target)
    if target:
        options.manches_to_win = 1
    request = game_service_pb2.CreateGameRequest(
        game_id=game_id, players=list(players), options=options, display_names=list(names)
    )
    response: game_service_pb2.CreateGameResponse = client.CreateGame(request, metadata=LOBBY_AUTH)
    return response


def submit(
    client: game_service_pb2_grpc.GameServiceStub,
    name: str,
    token: Metadata,
    action: game_pb2.Action,
) -> game_service_pb2.SubmitActionResponse:
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=action, request_id=uuid.uuid4().hex
    )
    response: game_service_pb2.SubmitActionResponse = client.SubmitAction(request, metadata=token)
    return response


def shown_names(view: game_pb2.GameView) -> list[str]:
    return [seat.display_name for seat in view.seats]


# ------------------------------------------------------------------ display names


def test_display_names_are_stored_with_the_game_and_every_view_shows_them(
    client: game_service_pb2_grpc.GameServiceStub, address: str
) -> None:
    players = players_of(6)
    created = create(client, players, names=NAMES)
    name = created.name
    assert shown_names(created.game) == list(NAMES)
    assert [s.player for s in created.game.seats] == players
    for token in (auth(players[2]), SPECTATOR, LOBBY_AUTH):
        assert shown_names(view_of(client, name, token)) == list(NAMES)
    seat = created.game.to_act
    mine = view_of(client, name, auth(players[seat]))
    acted = submit(client, name, auth(players[seat]), mine.legal_moves[0])
    assert shown_names(acted.game) == list(NAMES)
    watch = client.WatchGame(
        game_service_pb2.WatchGameRequest(name=name, after_version=0), metadata=SPECTATOR
    )
    first = next(iter(watch))
    watch.cancel()  # type: ignore[no-untyped-call]
    assert first.version == 1 and shown_names(first.game) == list(NAMES)
    replay = client.GetReplay(game_service_pb2.GetReplayRequest(name=name), metadata=SPECTATOR)
    assert [shown_names(step.game) for step in replay.steps] == [list(NAMES)] * 2

    async def session_names() -> list[str]:
        async with grpc.aio.insecure_channel(address) as channel:
            call = play(channel, auth(players[0]))
            await call.write(open_request(name, 0))
            message = await receive(call)
            call.cancel()
            assert message is not None and message.version == 2
            return shown_names(message.game)

    assert asyncio.run(session_names()) == list(NAMES)
    # A game created without names shows none.
    bare = create(client, players_of(2), rule_set=game_pb2.RULE_SET_FRENCH_TRUC)
    assert shown_names(bare.game) == ["", ""]


@pytest.mark.parametrize(
    ("names", "reason", "says"),
    [
        (NAMES[:5], "BAD_REQUEST", "one per seat (6), got 5"),
        ((*NAMES[:2], "Eve\u202e", *NAMES[3:]), "BAD_DISPLAY_NAME", "(seat 2): "),
        ((*NAMES[:3], "", *NAMES[4:]), "BAD_DISPLAY_NAME", "(seat 3)"),
        ((*NAMES[:4], "x" * 33, NAMES[5]), "BAD_DISPLAY_NAME", "(seat 4): a display name has at"),
        ((*NAMES[:5], " Ana"), "BAD_DISPLAY_NAME", "(seat 5): send it in NFC"),
        (("Jose\u0301", *NAMES[1:]), "BAD_DISPLAY_NAME", "(seat 0): send it in NFC"),
        (("a\x00b", *NAMES[1:]), "BAD_DISPLAY_NAME", "control character"),
    ],
    ids=["count", "bidi", "empty", "long", "untrimmed", "not-nfc", "control"],
)
def test_create_game_refuses_a_bad_display_name_naming_the_seat_and_creates_nothing(
    client: game_service_pb2_grpc.GameServiceStub,
    names: Sequence[str],
    reason: str,
    says: str,
) -> None:
    players = players_of(6)
    game_id = "names-" + uuid.uuid4().hex[:12]
    error = expect_error(
        lambda: create(client, players, names=names, game_id=game_id), INVALID, reason
    )
    assert says in (error.details() or ""), error.details()
    expect_error(
        lambda: view_of(client, f"games/{game_id}", LOBBY_AUTH),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )


def test_a_repeated_create_game_with_the_same_names_is_the_same_game_and_other_names_are_not(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(6)
    game_id = "names-" + uuid.uuid4().hex[:12]
    first = create(client, players, names=NAMES, game_id=game_id)
    again = create(client, players, names=NAMES, game_id=game_id)
    assert again.name == first.name and again.game.etag == first.game.etag
    assert shown_names(again.game) == list(NAMES)
    renamed = (*NAMES[:5], "Someone else")
    expect_error(
        lambda: create(client, players, names=renamed, game_id=game_id),
        grpc.StatusCode.ALREADY_EXISTS,
        "GAME_EXISTS",
    )
    expect_error(
        lambda: create(client, players, game_id=game_id),
        grpc.StatusCode.ALREADY_EXISTS,
        "GAME_EXISTS",
    )
    assert shown_names(view_of(client, first.name, SPECTATOR)) == list(NAMES)


# ------------------------------------------------------------------ legal moves and messages


def _key(action: game_pb2.Action) -> bytes:
    return action.SerializeToString(deterministic=True)


def check_choices(view: game_pb2.GameView, seat: int | None) -> None:
    """legal_moves: no team message, only for the seat to act; legal_messages:
    only team messages; legal_actions: the two together; a spectator: none."""
    moves = [_key(a) for a in view.legal_moves]
    messages = [_key(a) for a in view.legal_messages]
    both = [_key(a) for a in view.legal_actions]
    assert Counter(moves) + Counter(messages) == Counter(both), view
    assert all(a.WhichOneof("kind") not in MESSAGES for a in view.legal_moves)
    assert all(a.WhichOneof("kind") in MESSAGES for a in view.legal_messages)
    to_act = view.to_act if view.HasField("to_act") else None
    if seat is None:
        assert not view.HasField("seat") and not both
    elif seat == to_act and not view.finished:
        assert moves, f"seat {seat} is to act and has no move"
    else:
        assert not moves, f"seat {seat} is not to act (to_act {to_act}) and has moves"


@pytest.mark.parametrize("rule_set", list(RULE_SETS), ids=game_pb2.RuleSet.Name)
def test_legal_moves_are_the_seat_to_act_s_and_messages_apart_over_a_whole_random_match(
    client: game_service_pb2_grpc.GameServiceStub, rule_set: game_pb2.RuleSet.ValueType
) -> None:
    seats = RULE_SETS[rule_set]
    players = players_of(seats)
    tokens = [auth(p) for p in players]
    created = create(client, players, rule_set=rule_set, target=3)
    name = created.name
    rng = random.Random(rule_set)
    sent = Counter[str]()
    for _ in range(3000):
        public = view_of(client, name, SPECTATOR)
        check_choices(public, None)
        if public.finished:
            break
        views = [view_of(client, name, token) for token in tokens]
        for seat, view in enumerate(views):
            check_choices(view, seat)
        talkers = [s for s, v in enumerate(views) if v.legal_messages]
        if talkers and rng.random() < 0.2 and sent["message"] < 40:
            seat = rng.choice(talkers)
            action = rng.choice(views[seat].legal_messages)
            sent["message"] += 1
            sent["off turn"] += seat != public.to_act
        else:
            seat = public.to_act
            action = rng.choice(views[seat].legal_moves)
        response = submit(client, name, tokens[seat], action)
        check_choices(response.game, seat)
    else:
        raise AssertionError("the match did not end")
    if rule_set in (game_pb2.RULE_SET_TRUC_Y_FLOU, game_pb2.RULE_SET_PARTNERSHIP_TRUC):
        assert sent["off turn"], "no team message was sent off turn: the test saw too little"


# ------------------------------------------------------------------ final scores


@pytest.mark.parametrize("rule_set", list(RULE_SETS), ids=game_pb2.RuleSet.Name)
def test_a_finished_match_shows_the_last_manche_s_final_scores(
    client: game_service_pb2_grpc.GameServiceStub, rule_set: game_pb2.RuleSet.ValueType
) -> None:
    seats = RULE_SETS[rule_set]
    players = players_of(seats)
    tokens = [auth(p) for p in players]
    name = create(client, players, rule_set=rule_set, target=2).name
    rng = random.Random(7)
    for _ in range(2000):
        public = view_of(client, name, SPECTATOR)
        if public.finished:
            break
        mine = view_of(client, name, tokens[public.to_act])
        submit(client, name, tokens[public.to_act], rng.choice(mine.legal_moves))
    else:
        raise AssertionError("the match did not end")
    last = public.history[-1]
    final = (public.scores.team_a, public.scores.team_b)
    assert final == (last.scores.team_a, last.scores.team_b)
    assert max(final) >= 2, f"the winner's score {final} is under the target"
    for token in tokens:  # every seat's view says the same
        mine = view_of(client, name, token)
        assert (mine.scores.team_a, mine.scores.team_b) == final
