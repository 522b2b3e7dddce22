"""WatchGame: every version once, in order, filtered for the watcher's seat,
across reconnections to another replica, until the match is over."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import grpc
import pytest
import redis
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    TRUC_REFUSED_DEAL,
    Metadata,
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
)

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

    from truc_dev_redis import RedisServer

SPECTATOR = auth("a-spectator", role="spectator")
READ_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def clients(replicas: list[Replica]) -> Iterator[list[game_service_pb2_grpc.GameServiceStub]]:
    channels = [grpc.insecure_channel(r.address) for r in replicas]
    yield [game_service_pb2_grpc.GameServiceStub(c) for c in channels]
    for channel in channels:
        channel.close()


def _watch_request(name: str, after_version: int = 0) -> game_service_pb2.WatchGameRequest:
    return game_service_pb2.WatchGameRequest(name=name, after_version=after_version)


async def _next(
    call: grpc.aio.UnaryStreamCall[
        game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
    ],
) -> game_service_pb2.WatchGameResponse | None:
    """The stream's next message; None when it ended (fails on a timeout)."""
    message = await asyncio.wait_for(call.read(), READ_TIMEOUT)
    return message if isinstance(message, game_service_pb2.WatchGameResponse) else None


async def _read_to_end(
    call: grpc.aio.UnaryStreamCall[
        game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
    ],
    into: list[game_service_pb2.WatchGameResponse],
) -> None:
    while (message := await _next(call)) is not None:
        into.append(message)


async def _play_one(stub: GameServiceAsyncStub, name: str, tokens: Sequence[Metadata]) -> str:
    """The seat to act plays its first legal card; the new etag."""
    spectator = await stub.GetGame(game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR)
    seat = spectator.game.to_act
    mine = await stub.GetGame(game_service_pb2.GetGameRequest(name=name), metadata=tokens[seat])
    play = next(a for a in mine.game.legal_actions if a.WhichOneof("kind") == "play_card")
    reply = await stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(name=name, action=play, etag=mine.game.etag),
        metadata=tokens[seat],
    )
    return reply.game.etag


def _versions(messages: Sequence[game_service_pb2.WatchGameResponse]) -> list[int]:
    return [m.version for m in messages]


def _dealt(messages: Sequence[game_service_pb2.WatchGameResponse]) -> list[game_pb2.CardsDealt]:
    return [e.cards_dealt for m in messages for e in m.events if e.HasField("cards_dealt")]


def _check_consistent(messages: Sequence[game_service_pb2.WatchGameResponse]) -> None:
    for message in messages:
        assert message.game.etag == str(message.version)
        assert not message.game.events
        assert all(e.version == message.version for e in message.events)


# A fixed-deal hand played card by card (the first legal card each time) ends
# after 12 plays, at version 13, with no deal left: the stream ends there.
HAND_VERSIONS = 13


def test_a_watcher_gets_every_version_in_order_filtered_for_its_seat(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    tokens = [auth(p) for p in players]
    watchers = {"seat 2": tokens[2], "seat 5": tokens[5], "spectator": SPECTATOR}

    async def scenario() -> dict[str, list[game_service_pb2.WatchGameResponse]]:
        async with (
            grpc.aio.insecure_channel(replicas[0].address) as watching,
            grpc.aio.insecure_channel(replicas[1].address) as playing,
        ):
            watch_stub = game_service_pb2_grpc.GameServiceStub(watching)
            play_stub = game_service_pb2_grpc.GameServiceStub(playing)
            got: dict[str, list[game_service_pb2.WatchGameResponse]] = {w: [] for w in watchers}
            calls = {
                w: watch_stub.WatchGame(_watch_request(name), metadata=md, timeout=30)
                for w, md in watchers.items()
            }
            for w, call in calls.items():  # every watcher is live before the play starts
                first = await _next(call)
                assert first is not None
                got[w].append(first)
            readers = [asyncio.create_task(_read_to_end(c, got[w])) for w, c in calls.items()]
            for _ in range(HAND_VERSIONS - 1):
                await _play_one(play_stub, name, tokens)
            await asyncio.wait_for(asyncio.gather(*readers), READ_TIMEOUT)
            return got

    got = asyncio.run(scenario())
    for messages in got.values():
        assert _versions(messages) == list(range(1, HAND_VERSIONS + 1))
        _check_consistent(messages)
        assert messages[-1].game.phase == game_pb2.PHASE_NO_DEAL
        plays = [e.card_played for m in messages for e in m.events if e.HasField("card_played")]
        assert len(plays) == 12  # every seat's plays are public
    for seat in (2, 5):
        messages = got[f"seat {seat}"]
        dealt = _dealt(messages)
        assert len(dealt) == 1 and dealt[0].seat == seat
        assert [card_text(c) for c in dealt[0].cards] == list(TRUC_REFUSED_DEAL[seat])
        assert all(m.game.seat == seat for m in messages)
        assert [card_text(c) for c in messages[0].game.hand] == list(TRUC_REFUSED_DEAL[seat])
    spectator = got["spectator"]
    assert _dealt(spectator) == []
    assert all(not m.game.HasField("seat") and not m.game.hand for m in spectator)


def test_a_watcher_that_reconnects_to_the_other_replica_misses_nothing_and_sees_nothing_twice(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    tokens = [auth(p) for p in players]

    async def scenario() -> tuple[list[int], list[int]]:
        async with (
            grpc.aio.insecure_channel(replicas[0].address) as first_replica,
            grpc.aio.insecure_channel(replicas[1].address) as second_replica,
        ):
            stubs = [
                game_service_pb2_grpc.GameServiceStub(c) for c in (first_replica, second_replica)
            ]
            before: list[int] = []
            call = stubs[0].WatchGame(_watch_request(name), metadata=tokens[1], timeout=30)
            first = await _next(call)
            assert first is not None
            before.append(first.version)
            for _ in range(4):  # live: each play arrives before the next one is made
                await _play_one(stubs[1], name, tokens)
                message = await _next(call)
                assert message is not None
                before.append(message.version)
            call.cancel()  # the watcher goes away mid-game ...
            for _ in range(3):  # ... and the game goes on without it
                await _play_one(stubs[0], name, tokens)
            resumed = stubs[1].WatchGame(
                _watch_request(name, after_version=before[-1]), metadata=tokens[1], timeout=30
            )
            after: list[int] = []
            for _ in range(3):  # what it missed, from the log
                message = await _next(resumed)
                assert message is not None
                after.append(message.version)
            reader_messages: list[game_service_pb2.WatchGameResponse] = []
            reader = asyncio.create_task(_read_to_end(resumed, reader_messages))
            while (await _play_one(stubs[0], name, tokens)) != str(HAND_VERSIONS):
                pass
            await asyncio.wait_for(reader, READ_TIMEOUT)
            _check_consistent(reader_messages)
            return before, after + _versions(reader_messages)

    before, after = asyncio.run(scenario())
    assert before == [1, 2, 3, 4, 5]
    assert after == list(range(6, HAND_VERSIONS + 1))


def test_the_stream_ends_by_itself_when_the_match_is_over(
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    players = new_players()
    # Team A needs one point for the manche that wins the match: a refused truc.
    name = create_fixed_game(clients[0], players, start_scores=(24, 0), start_manches=(1, 0)).name
    watch = iter(clients[1].WatchGame(_watch_request(name), metadata=auth(players[4]), timeout=20))
    first = next(watch)
    assert first.version == 1 and not first.game.finished
    act(clients[0], name, auth(players[0]), call_action(game_pb2.CALL_TRUC))
    act(clients[0], name, auth(players[3]), call_action(game_pb2.CALL_FOLD))
    rest = list(watch)  # ends without a deadline or an error
    assert _versions(rest) == [2, 3]
    last = rest[-1].game
    assert last.finished and last.phase == game_pb2.PHASE_MATCH_OVER
    assert last.winner == game_pb2.TEAM_A
    assert [e.WhichOneof("kind") for e in rest[-1].events][-1] == "match_ended"


def test_resuming_after_the_final_version_of_a_finished_match_ends_at_once(
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players, start_scores=(24, 0), start_manches=(1, 0)).name
    act(clients[0], name, auth(players[0]), call_action(game_pb2.CALL_TRUC))
    final = act(clients[0], name, auth(players[3]), call_action(game_pb2.CALL_FOLD)).game
    assert final.finished and final.etag == "3"
    resumed = clients[1].WatchGame(
        _watch_request(name, after_version=3), metadata=auth(players[3]), timeout=2
    )
    assert list(resumed) == []


def test_two_hundred_watchers_on_one_replica_all_get_every_version(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    games = []
    for _ in range(4):
        players = new_players()
        created = create_fixed_game(clients[0], players, start_scores=(24, 0), start_manches=(1, 0))
        games.append((created.name, [auth(p) for p in players]))
    per_game = 50
    # Versions: 1 (created), 2-4 (three directives of captain 0), 5 (TRUC), 6 (FOLD: over).
    final_version = 6

    async def scenario() -> list[list[int]]:
        async with grpc.aio.insecure_channel(replicas[0].address) as watching:
            stub = game_service_pb2_grpc.GameServiceStub(watching)
            got: list[list[game_service_pb2.WatchGameResponse]] = []
            calls = []
            for name, tokens in games:
                for i in range(per_game):
                    metadata = tokens[i % 6] if i % 7 else SPECTATOR
                    calls.append(
                        stub.WatchGame(_watch_request(name), metadata=metadata, timeout=60)
                    )
                    got.append([])
            readers = [
                asyncio.create_task(_read_to_end(c, g)) for c, g in zip(calls, got, strict=True)
            ]
            deadline = asyncio.get_running_loop().time() + 20
            while not all(got):  # every watcher is live (has version 1)
                assert asyncio.get_running_loop().time() < deadline, "watchers did not start"
                await asyncio.sleep(0.05)
            with grpc.insecure_channel(replicas[1].address) as channel:
                player = game_service_pb2_grpc.GameServiceStub(channel)
                for name, tokens in games:
                    for directive in (
                        game_pb2.DIRECTIVE_PLAY_HIGH,
                        game_pb2.DIRECTIVE_PLAY_LOW,
                        game_pb2.DIRECTIVE_STAY_QUIET,
                    ):
                        act(player, name, tokens[0], directive_action(directive))
                    act(player, name, tokens[0], call_action(game_pb2.CALL_TRUC))
                    act(player, name, tokens[3], call_action(game_pb2.CALL_FOLD))
            await asyncio.wait_for(asyncio.gather(*readers), 30)
            for messages in got:
                assert messages[-1].game.finished
            return [_versions(m) for m in got]

    versions = asyncio.run(scenario())
    assert len(versions) == 200
    assert all(v == list(range(1, final_version + 1)) for v in versions)


def test_a_player_of_another_game_may_not_watch(
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    name = create_fixed_game(clients[0], new_players()).name
    outsider = new_players()
    create_fixed_game(clients[0], outsider)
    expect_error(
        lambda: list(clients[1].WatchGame(_watch_request(name), metadata=auth(outsider[0]))),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_SEATED",
    )


def test_a_version_whose_announcement_was_lost_still_reaches_the_watcher(
    redis_server: RedisServer,
    replicas: list[Replica],
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    """Pub/sub messages are lost while a hub's connection is down; the hub asks
    the watchers of a game it has heard nothing of for a while to re-read its log."""
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    tokens = [auth(p) for p in players]
    watch = iter(clients[0].WatchGame(_watch_request(name), metadata=tokens[1], timeout=30))
    assert next(watch).version == 1
    admin = redis.Redis.from_url(redis_server.url)
    stop = threading.Event()

    def cut_pubsub() -> None:  # keep every pub/sub connection down for a while
        while not stop.wait(0.02):
            admin.client_kill_filter(_type="pubsub")

    cutter = threading.Thread(target=cut_pubsub)
    cutter.start()
    try:
        time.sleep(0.2)
        act(clients[1], name, tokens[0], play_action("5Sw"))  # version 2, announced to nobody
        time.sleep(0.5)
    finally:
        stop.set()
        cutter.join()
        admin.close()
    start = time.monotonic()
    message = next(watch)  # from the log, within the hub's heal time (5 s) and a tick
    assert message.version == 2
    assert [e.WhichOneof("kind") for e in message.events] == ["card_played"]
    assert time.monotonic() - start < 8
