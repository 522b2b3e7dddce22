"""Play sessions' views when many sessions share one replica: the work shared
between the sessions of a version (decoding it, the public part of the view,
each event's bytes) must never carry one seat's view to another, and every
message must be exactly what GetGame answers at that version."""

from __future__ import annotations

import asyncio

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    TRUC_REFUSED_DEAL,
    Replica,
    act,
    auth,
    card_text,
    create_fixed_game,
    directive_action,
    new_players,
)
from .sessions import PlayCall, open_request, play, receive

SPECTATOR = auth("a-spectator", role="spectator")


def _without_events(view: game_pb2.GameView) -> game_pb2.GameView:
    copy = game_pb2.GameView()
    copy.CopyFrom(view)
    copy.ClearField("events")
    return copy


def test_every_seat_on_a_session_gets_exactly_its_own_view(replicas: list[Replica]) -> None:
    players = new_players()
    tokens = [auth(p) for p in players]
    watchers = [*tokens, SPECTATOR]
    with grpc.insecure_channel(replicas[1].address) as channel:
        client = game_service_pb2_grpc.GameServiceStub(channel)
        name = create_fixed_game(client, players).name

        def views() -> list[game_pb2.GameView]:
            return [
                client.GetGame(game_service_pb2.GetGameRequest(name=name), metadata=md).game
                for md in watchers
            ]

        async def scenario() -> tuple[
            list[list[game_service_pb2.PlayResponse]], list[list[game_pb2.GameView]]
        ]:
            async with grpc.aio.insecure_channel(replicas[0].address) as sessions:
                calls: list[PlayCall] = [play(sessions, md) for md in watchers]
                for call in calls:
                    await call.write(open_request(name, 0))
                got: list[list[game_service_pb2.PlayResponse]] = [[] for _ in watchers]

                async def next_version() -> None:
                    for call, into in zip(calls, got, strict=True):
                        message = await receive(call)
                        assert message is not None
                        into.append(message)

                await next_version()  # version 1
                expected = [views()]
                # A directive of team A's captain (team B must never see it),
                # then the whole hand, each seat playing its first legal card.
                act(client, name, tokens[0], directive_action(game_pb2.DIRECTIVE_PLAY_HIGH))
                while True:
                    await next_version()
                    expected.append(views())
                    spectator = expected[-1][-1]
                    if spectator.phase == game_pb2.PHASE_NO_DEAL:
                        break
                    seat = spectator.to_act
                    mine = expected[-1][seat]
                    card = next(
                        a for a in mine.legal_actions if a.WhichOneof("kind") == "play_card"
                    )
                    act(client, name, tokens[seat], card, etag=mine.etag)
                for call in calls:
                    assert await receive(call) is None  # the stream ends with the deals
                return got, expected

        got, expected = asyncio.run(scenario())
    assert [m.version for m in got[0]] == list(range(1, 15))
    for version, references in enumerate(expected, start=1):
        for watcher, reference in enumerate(references):
            message = got[watcher][version - 1]
            assert message.version == version and message.from_version == version
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
            for event in message.events:
                if event.HasField("cards_dealt"):
                    assert event.cards_dealt.seat == seat  # only its own deal
                    assert {card_text(c) for c in event.cards_dealt.cards} == own
            directives = [s for s in message.game.signals if s.HasField("directive")]
            assert bool(directives) == (seat % 2 == 0 and message.version >= 2)
    for message in got[6]:  # the spectator
        assert not message.game.HasField("seat")
        assert not message.game.hand and not message.game.dealt and not message.game.signals
