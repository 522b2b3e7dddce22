"""GetReplay and spectator grants through the real service (a Redis, a
game-service process, gRPC over a socket).

A replay is every version from 1, each with its events and the viewer's view
then, exactly as WatchGame streamed them (a spectator's, a seat's), in pages
whose size and token are checked before anything is read; it is counted as a
GetGame. A spectator grant (a spectator token naming one game) opens that game
only, with the spectator's view, and never acts."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Sequence
from functools import partial

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer
from truc_game.replays import page_token
from truc_protocol.tokens import STREAM_SCOPE
from truc_service.tokens import issue_token

from .conftest import (
    LOBBY_AUTH,
    SECRET,
    SPECTATOR,
    Metadata,
    auth,
    card_text,
    cards_in,
    create_fixed_game,
    expect_error,
    new_players,
    running_replica,
    view_of,
)
from .sessions import open_request, play, receive

INVALID = grpc.StatusCode.INVALID_ARGUMENT
DENIED = grpc.StatusCode.PERMISSION_DENIED


def grant(game: str, *, player: str = "a-watcher", scope: str | None = None) -> Metadata:
    """A spectator grant for ``game`` ("games/{id}"), as the lobby issues one."""
    token = issue_token(SECRET, player, role="spectator", game=game, scope=scope)
    return (("authorization", "Bearer " + token),)


def played_out(
    client: game_service_pb2_grpc.GameServiceStub,
    rule_set: game_pb2.RuleSet.ValueType,
    seats: int,
    *,
    seed: int = 3,
    chatter: float = 0.2,
) -> tuple[str, list[str]]:
    """A short random match (target 2, one manche) played to its end, team
    messages now and then."""
    tag = uuid.uuid4().hex[:8]
    players = [f"{tag}-p{seat}" for seat in range(seats)]
    tokens = [auth(p) for p in players]
    options = game_pb2.RuleOptions(rule_set=rule_set, target_score=2, manches_to_win=1)
    request = game_service_pb2.CreateGameRequest(
        players=players, options=options, display_names=[f"Player {s}" for s in range(seats)]
    )
    name = client.CreateGame(request, metadata=LOBBY_AUTH).name
    rng = random.Random(seed)
    for _ in range(2000):
        views = [view_of(client, name, token) for token in tokens]
        if views[0].finished:
            return name, players
        talkers = [s for s, v in enumerate(views) if v.legal_messages]
        if talkers and rng.random() < chatter:
            seat = rng.choice(talkers)
            action = rng.choice(views[seat].legal_messages)
        else:
            seat = views[0].to_act
            action = rng.choice(views[seat].legal_moves)
        client.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                name=name, action=action, request_id=uuid.uuid4().hex
            ),
            metadata=tokens[seat],
        )
    raise AssertionError("the match did not end")


def replay(
    client: game_service_pb2_grpc.GameServiceStub,
    name: str,
    token: Metadata,
    *,
    page_size: int = 0,
    as_spectator: bool = False,
    minimal: bool = False,
) -> tuple[list[game_service_pb2.ReplayStep], list[game_service_pb2.GetReplayResponse]]:
    """Every step of the replay, page after page, and the pages."""
    steps: list[game_service_pb2.ReplayStep] = []
    pages: list[game_service_pb2.GetReplayResponse] = []
    token_text = ""
    while True:
        page = client.GetReplay(
            game_service_pb2.GetReplayRequest(
                name=name,
                page_size=page_size,
                page_token=token_text,
                as_spectator=as_spectator,
                response_view=(
                    game_service_pb2.RESPONSE_VIEW_MINIMAL
                    if minimal
                    else game_service_pb2.RESPONSE_VIEW_UNSPECIFIED
                ),
            ),
            metadata=token,
        )
        pages.append(page)
        steps.extend(page.steps)
        token_text = page.next_page_token
        if not token_text:
            return steps, pages


def watched(
    client: game_service_pb2_grpc.GameServiceStub, name: str, token: Metadata
) -> list[game_service_pb2.WatchGameResponse]:
    stream = client.WatchGame(
        game_service_pb2.WatchGameRequest(name=name, after_version=0), metadata=token, timeout=30
    )
    return list(stream)


def same_as_watched(
    steps: Sequence[game_service_pb2.ReplayStep],
    watch: Sequence[game_service_pb2.WatchGameResponse],
) -> None:
    assert [s.version for s in steps] == [w.version for w in watch]
    for step, seen in zip(steps, watch, strict=True):
        assert list(step.events) == list(seen.events), step.version
        assert step.game == seen.game, step.version
        assert not step.game.events


@pytest.mark.parametrize(
    ("rule_set", "seats"),
    [(game_pb2.RULE_SET_TRUC_Y_FLOU, 6), (game_pb2.RULE_SET_PARTNERSHIP_TRUC, 4)],
    ids=["truc_y_flou", "partnership_truc"],
)
def test_a_replay_is_what_watch_game_streamed_to_a_spectator_and_to_each_seat(
    client: game_service_pb2_grpc.GameServiceStub,
    rule_set: game_pb2.RuleSet.ValueType,
    seats: int,
) -> None:
    name, players = played_out(client, rule_set, seats)
    latest = int(view_of(client, name, SPECTATOR).etag)
    steps, pages = replay(client, name, SPECTATOR, page_size=7)
    assert [s.version for s in steps] == list(range(1, latest + 1))
    assert all(len(p.steps) == 7 for p in pages[:-1]) and 1 <= len(pages[-1].steps) <= 7
    assert all(p.latest_version == latest and p.finished for p in pages)
    same_as_watched(steps, watched(client, name, SPECTATOR))
    assert all(not s.game.HasField("seat") and not s.game.hand for s in steps)
    # A grant of this game, the lobby, and a seat asking as a spectator: the same steps.
    assert replay(client, name, grant(name), page_size=50)[0] == steps
    assert replay(client, name, LOBBY_AUTH, page_size=200)[0] == steps
    assert replay(client, name, auth(players[1]), as_spectator=True)[0] == steps
    for seat in (0, seats - 1):
        token = auth(players[seat])
        mine, _ = replay(client, name, token, page_size=11)
        assert all(s.game.seat == seat for s in mine)
        same_as_watched(mine, watched(client, name, token))
        assert mine != steps
    # A seat's team messages are in its replay's events and not in the other team's.
    senders = {
        seat: {
            e.signal_sent.seat if e.HasField("signal_sent") else e.directive_sent.seat
            for s in replay(client, name, auth(players[seat]))[0]
            for e in s.events
            if e.HasField("signal_sent") or e.HasField("directive_sent")
        }
        for seat in range(seats)
    }
    assert any(senders.values()), "no team message was sent: the test saw too little"
    assert all(sender % 2 == seat % 2 for seat in senders for sender in senders[seat])


def test_a_live_game_replays_up_to_its_latest_version_and_a_page_token_resumes_it(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    tokens = [auth(p) for p in players]
    for _ in range(3):
        seat = view_of(client, name, SPECTATOR).to_act
        move = view_of(client, name, tokens[seat]).legal_moves[0]
        client.SubmitAction(
            game_service_pb2.SubmitActionRequest(name=name, action=move, request_id="r" + str(_)),
            metadata=tokens[seat],
        )
    first = client.GetReplay(
        game_service_pb2.GetReplayRequest(name=name, page_size=2), metadata=tokens[0]
    )
    assert [s.version for s in first.steps] == [1, 2]
    assert (first.latest_version, first.finished) == (4, False)
    rest = client.GetReplay(
        game_service_pb2.GetReplayRequest(name=name, page_token=first.next_page_token),
        metadata=tokens[0],
    )
    assert [s.version for s in rest.steps] == [3, 4] and rest.next_page_token == ""
    assert rest.steps[-1].game == _without_events(view_of(client, name, tokens[0]))
    minimal, _ = replay(client, name, tokens[0], minimal=True)
    assert [s.version for s in minimal] == [1, 2, 3, 4]
    assert all(not s.game.seats and s.game.etag == str(s.version) for s in minimal)
    full = (*first.steps, *rest.steps)
    assert [list(s.events) for s in minimal] == [list(s.events) for s in full]


def _without_events(view: game_pb2.GameView) -> game_pb2.GameView:
    view.ClearField("events")
    return view


def test_get_replay_checks_its_request_before_reading_anything(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    other = create_fixed_game(client, players).name
    token = auth(players[0])

    def ask(**fields: object) -> game_service_pb2.GetReplayResponse:
        request = game_service_pb2.GetReplayRequest(**{"name": name, **fields})  # type: ignore[arg-type]
        response: game_service_pb2.GetReplayResponse = client.GetReplay(request, metadata=token)
        return response

    for size in (-1, 201, 10_000):
        error = expect_error(partial(ask, page_size=size), INVALID, "BAD_REQUEST")
        assert "page_size" in (error.details() or "")
    assert len(ask(page_size=200).steps) == 1
    game_id = name.removeprefix("games/")
    for bad in (
        "garbage",
        "x" * 500,
        page_token(other.removeprefix("games/"), 1),  # another game's
        page_token(game_id, 2),  # past the game's latest version (1)
        page_token(game_id, 1) + "==",  # another spelling of a real token
        page_token(game_id, 1)[:-1] + "!",
    ):
        error = expect_error(partial(ask, page_token=bad), INVALID, "BAD_REQUEST")
        assert "page_token" in (error.details() or "")
    assert ask(page_token=page_token(game_id, 1)).steps == []  # after the last version: none
    expect_error(partial(ask, response_view=99), INVALID, "BAD_REQUEST")
    expect_error(partial(ask, name="games/"), INVALID, "BAD_NAME")
    expect_error(partial(ask, name="games/nope-" + uuid.uuid4().hex), grpc.StatusCode.NOT_FOUND)
    stranger = auth("stranger-" + uuid.uuid4().hex[:8])
    for as_spectator in (False, True):
        request = game_service_pb2.GetReplayRequest(name=name, as_spectator=as_spectator)
        expect_error(partial(client.GetReplay, request, metadata=stranger), DENIED, "NOT_SEATED")


def test_get_replay_is_counted_with_get_game(redis_server: RedisServer) -> None:
    with (
        running_replica(redis_server.url, TRUC_RATE_READS="3", TRUC_RATE_WINDOW_MS="60000") as one,
        grpc.insecure_channel(one.address) as channel,
    ):
        limited = game_service_pb2_grpc.GameServiceStub(channel)
        players = new_players()
        name = create_fixed_game(limited, players).name
        token = auth(players[0])
        request = game_service_pb2.GetReplayRequest(name=name)
        view_of(limited, name, token)
        for _ in range(2):
            limited.GetReplay(request, metadata=token)
        exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED
        expect_error(partial(limited.GetReplay, request, metadata=token), exhausted, "RATE_LIMITED")
        expect_error(partial(view_of, limited, name, token), exhausted, "RATE_LIMITED")


# ------------------------------------------------------------------ grants


def test_a_spectator_grant_opens_its_game_only_with_the_spectator_s_view(
    client: game_service_pb2_grpc.GameServiceStub, address: str
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    other = create_fixed_game(client, players).name
    mine = grant(name)
    # Its own game: GetGame, WatchGame, GetReplay, a session; no seat, no hidden card.
    view = view_of(client, name, mine)
    assert not view.HasField("seat") and not view.hand and not view.legal_actions
    assert view == view_of(client, name, SPECTATOR)
    public = {card_text(c) for c in cards_in(view_of(client, name, SPECTATOR))}
    assert {card_text(c) for c in cards_in(view)} == public
    assert not any(e.HasField("cards_dealt") for e in view.events)
    stream = client.WatchGame(game_service_pb2.WatchGameRequest(name=name), metadata=mine)
    first = next(iter(stream))
    stream.cancel()  # type: ignore[no-untyped-call]
    assert first.version == 1 and not first.game.HasField("seat") and not first.game.hand
    assert replay(client, name, mine)[0]
    # Another game: refused, whatever the call.
    reads = {
        "GetGame": lambda: view_of(client, other, mine),
        "GetReplay": lambda: client.GetReplay(
            game_service_pb2.GetReplayRequest(name=other), metadata=mine
        ),
        "WatchGame": lambda: next(
            iter(
                client.WatchGame(
                    game_service_pb2.WatchGameRequest(name=other), metadata=mine, timeout=5
                )
            )
        ),
    }
    for call in reads.values():
        error = expect_error(call, DENIED, "GRANT_OTHER_GAME")
        assert name in (error.details() or "") and other in (error.details() or "")

    async def session(game: str, token: Metadata) -> grpc.aio.AioRpcError | int:
        async with grpc.aio.insecure_channel(address) as channel:
            call = play(channel, token)
            await call.write(open_request(game, 0))
            try:
                message = await receive(call)
            except grpc.aio.AioRpcError as error:
                return error
            call.cancel()
            assert message is not None and not message.game.HasField("seat")
            return message.version

    assert asyncio.run(session(name, mine)) == 1
    refused = asyncio.run(session(other, mine))
    assert isinstance(refused, grpc.aio.AioRpcError) and refused.code() == DENIED
    # A stream grant watches its game, and still nothing but watch streams.
    streaming = grant(name, scope=STREAM_SCOPE)
    stream = client.WatchGame(
        game_service_pb2.WatchGameRequest(name=name), metadata=streaming, timeout=5
    )
    assert next(iter(stream)).version == 1
    stream.cancel()  # type: ignore[no-untyped-call]
    expect_error(lambda: view_of(client, name, streaming), DENIED, "STREAM_TOKEN_WATCH_ONLY")
    expect_error(
        lambda: view_of(client, other, grant(other, scope=STREAM_SCOPE)),
        DENIED,
        "STREAM_TOKEN_WATCH_ONLY",
    )


def test_a_spectator_token_naming_a_seated_player_only_looks(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = new_players()
    name = create_fixed_game(client, players).name
    seat = view_of(client, name, SPECTATOR).to_act
    move = view_of(client, name, auth(players[seat])).legal_moves[0]
    for token in (grant(name, player=players[seat]), auth(players[seat], role="spectator")):
        view = view_of(client, name, token)
        assert not view.HasField("seat") and not view.hand and not view.legal_moves
        request = game_service_pb2.SubmitActionRequest(
            name=name, action=move, request_id=uuid.uuid4().hex
        )
        expect_error(partial(client.SubmitAction, request, metadata=token), DENIED, "NOT_SEATED")
        steps, _ = replay(client, name, token)
        assert not steps[0].game.HasField("seat")
    # A player token of a player without a seat is refused as before.
    stranger = auth("stranger-" + uuid.uuid4().hex[:8])
    expect_error(lambda: view_of(client, name, stranger), DENIED, "NOT_SEATED")
