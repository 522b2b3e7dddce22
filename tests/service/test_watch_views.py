"""WatchGame's views when many watchers share one replica: the work shared between
the watchers of a version (decoding it, the public part of the view) must never
carry one seat's view to another, and every message must be exactly what
GetGame answers at that version. And the minimal views a watcher may ask for."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    LOBBY_AUTH,
    TRUC_REFUSED_DEAL,
    Metadata,
    Replica,
    act,
    auth,
    call_action,
    card_text,
    create_fixed_game,
    directive_action,
    new_players,
)

READ_TIMEOUT = 10.0
SPECTATOR = auth("a-spectator", role="spectator")

Messages = list[game_service_pb2.WatchGameResponse]
WatchCall = grpc.aio.UnaryStreamCall[
    game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
]


@pytest.fixture(scope="module")
def player_client(replicas: list[Replica]) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    """Plays and reads through the second replica; the watchers are on the first."""
    with grpc.insecure_channel(replicas[1].address) as channel:
        yield game_service_pb2_grpc.GameServiceStub(channel)


def _watch(
    stub: game_service_pb2_grpc.GameServiceAsyncStub,
    name: str,
    metadata: Metadata,
    view: game_service_pb2.ResponseView.ValueType = game_service_pb2.RESPONSE_VIEW_UNSPECIFIED,
) -> grpc.aio.UnaryStreamCall[
    game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
]:
    request = game_service_pb2.WatchGameRequest(name=name, response_view=view)
    return stub.WatchGame(request, metadata=metadata, timeout=60)


async def _read_all(call: WatchCall, into: Messages) -> None:
    async for message in call:
        into.append(message)


async def _until(got: Sequence[Messages], version: int) -> None:
    """Wait until every watcher has received ``version``."""
    deadline = asyncio.get_running_loop().time() + READ_TIMEOUT
    while not all(m and m[-1].version >= version for m in got):
        assert asyncio.get_running_loop().time() < deadline, f"version {version} not delivered"
        await asyncio.sleep(0.01)


def _without_events(view: game_pb2.GameView) -> game_pb2.GameView:
    copy = game_pb2.GameView()
    copy.CopyFrom(view)
    copy.ClearField("events")
    return copy


def test_every_seat_watching_through_one_replica_gets_exactly_its_own_view(
    replicas: list[Replica], player_client: game_service_pb2_grpc.GameServiceStub
) -> None:
    """Six seats and a spectator watch one game on one replica; at every version
    each message is what GetGame (no sharing) answers that watcher then."""
    players = new_players()
    name = create_fixed_game(player_client, players).name
    tokens = [auth(p) for p in players]
    watchers = [*tokens, SPECTATOR]

    def play_next(etag: str) -> str:
        """The seat to act plays its first legal card."""
        seat = player_client.GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR
        ).game.to_act
        mine = player_client.GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=tokens[seat]
        ).game
        play = next(a for a in mine.legal_actions if a.WhichOneof("kind") == "play_card")
        return act(player_client, name, tokens[seat], play, etag=etag).game.etag

    async def scenario() -> tuple[list[Messages], list[list[game_pb2.GameView]]]:
        async with grpc.aio.insecure_channel(replicas[0].address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            got: list[Messages] = [[] for _ in watchers]
            readers = [
                asyncio.create_task(_read_all(_watch(stub, name, md), into))
                for md, into in zip(watchers, got, strict=True)
            ]
            await _until(got, 1)
            expected: list[list[game_pb2.GameView]] = []
            # A directive of team A's captain (team B must never see it), then
            # the whole hand: the stream ends with the deals (version 14).
            etag = act(
                player_client, name, tokens[0], directive_action(game_pb2.DIRECTIVE_PLAY_HIGH)
            ).game.etag
            while True:
                version = int(etag)
                await _until(got, version)
                expected.append(
                    [
                        player_client.GetGame(
                            game_service_pb2.GetGameRequest(name=name), metadata=md
                        ).game
                        for md in watchers
                    ]
                )
                if expected[-1][-1].phase == game_pb2.PHASE_NO_DEAL:
                    break
                etag = play_next(etag)
            await asyncio.wait_for(asyncio.gather(*readers), READ_TIMEOUT)
            return got, expected

    got, expected = asyncio.run(scenario())
    assert [m.version for m in got[0]] == list(range(1, 15))
    for step, views in enumerate(expected):
        version = step + 2
        for watcher, reference in enumerate(views):
            message = got[watcher][version - 1]
            assert message.version == version
            assert message.game == _without_events(reference), (watcher, version)
            assert list(message.events) == [e for e in reference.events if e.version == version]
    for seat in range(6):
        own = set(TRUC_REFUSED_DEAL[seat])
        for message in got[seat]:
            assert message.game.seat == seat
            assert {card_text(c) for c in message.game.hand} <= own
            assert [card_text(c) for c in message.game.dealt] in ([], list(TRUC_REFUSED_DEAL[seat]))
            for action in message.game.legal_actions:
                if action.WhichOneof("kind") == "play_card":
                    assert card_text(action.play_card) in own
            directives = [s for s in message.game.signals if s.HasField("directive")]
            assert bool(directives) == (seat % 2 == 0 and message.version >= 2)
    for message in got[6]:  # the spectator
        assert not message.game.HasField("seat")
        assert not message.game.hand and not message.game.dealt and not message.game.signals


MINIMAL_FIELDS = (
    "name",
    "seat",
    "etag",
    "phase",
    "to_act",
    "prompt",
    "scores",
    "manches",
    "finished",
    "winner",
)


def _minimal_of(full: game_pb2.GameView) -> game_pb2.GameView:
    """The RESPONSE_VIEW_MINIMAL subset of a full view."""
    minimal = game_pb2.GameView()
    for field, value in full.ListFields():
        if field.name in MINIMAL_FIELDS:
            if field.message_type is not None:
                getattr(minimal, field.name).CopyFrom(value)
            else:
                setattr(minimal, field.name, value)
    return minimal


def test_a_minimal_watch_carries_only_the_minimal_view_and_every_event(
    replicas: list[Replica], player_client: game_service_pb2_grpc.GameServiceStub
) -> None:
    players = new_players()
    # Team A needs one point for the match: a refused truc ends it at version 5.
    name = create_fixed_game(
        player_client, players, start_scores=(24, 0), start_manches=(1, 0)
    ).name
    tokens = [auth(p) for p in players]
    minimal = game_service_pb2.RESPONSE_VIEW_MINIMAL
    full = game_service_pb2.RESPONSE_VIEW_FULL

    async def scenario() -> list[Messages]:
        async with grpc.aio.insecure_channel(replicas[0].address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            calls = [
                _watch(stub, name, tokens[3], full),
                _watch(stub, name, tokens[3], minimal),
                _watch(stub, name, tokens[0]),  # unspecified: full
                _watch(stub, name, tokens[0], minimal),
                _watch(stub, name, LOBBY_AUTH, minimal),  # as the lobby's results follower
            ]
            got: list[Messages] = [[] for _ in calls]
            readers = [
                asyncio.create_task(_read_all(c, into)) for c, into in zip(calls, got, strict=True)
            ]
            await _until(got, 1)
            act(player_client, name, tokens[0], directive_action(game_pb2.DIRECTIVE_PLAY_LOW))
            act(player_client, name, tokens[0], call_action(game_pb2.CALL_TRUC))
            act(player_client, name, tokens[3], call_action(game_pb2.CALL_FOLD))
            await asyncio.wait_for(asyncio.gather(*readers), READ_TIMEOUT)
            return got

    seat3_full, seat3_minimal, seat0_full, seat0_minimal, lobby = asyncio.run(scenario())
    for full_messages, minimal_messages in (
        (seat3_full, seat3_minimal),
        (seat0_full, seat0_minimal),
    ):
        assert [m.version for m in minimal_messages] == [1, 2, 3, 4]
        assert [m.version for m in full_messages] == [1, 2, 3, 4]
        for whole, lean in zip(full_messages, minimal_messages, strict=True):
            assert lean.events == whole.events
            assert lean.game == _minimal_of(whole.game)
            assert lean.game.etag == str(lean.version)
            assert whole.game.hand and whole.game.seats and whole.game.HasField("options")
            assert not lean.game.hand and not lean.game.legal_actions and not lean.game.seats
            assert not lean.game.HasField("options") and not lean.game.HasField("current_trick")
    assert [m.game.seat for m in seat0_minimal] == [0] * 4
    directives = [e for m in seat0_minimal for e in m.events if e.HasField("directive_sent")]
    assert len(directives) == 1
    assert not [e for m in seat3_minimal for e in m.events if e.HasField("directive_sent")]
    assert [m.version for m in lobby] == [1, 2, 3, 4]
    assert all(not m.game.HasField("seat") for m in lobby)
    end = lobby[-1].game
    assert end.finished and end.winner == game_pb2.TEAM_A
    assert end.phase == game_pb2.PHASE_MATCH_OVER
    assert not any(m.game.finished for m in lobby[:-1])
