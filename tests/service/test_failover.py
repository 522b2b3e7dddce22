"""A replica dies mid-game (SIGKILL): the other one finishes the game, and a
client retrying on it with the same request id gets the first answer."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer

from .conftest import (
    SPECTATOR,
    TRUC_REFUSED_DEAL,
    Replica,
    auth,
    create_fixed_game,
    new_players,
    next_request,
    view_of,
)


@pytest.fixture(scope="module")
def pair(redis_server: RedisServer) -> Iterator[list[Replica]]:
    """Two replicas of this module's own: the test kills one of them."""
    started = [Replica(redis_server.url), Replica(redis_server.url)]
    yield started
    for replica in started:
        replica.stop()


def test_a_game_survives_the_death_of_a_replica_and_retries_are_applied_once(
    pair: list[Replica],
) -> None:
    channels = [grpc.insecure_channel(r.address) for r in pair]
    doomed, survivor = (game_service_pb2_grpc.GameServiceStub(c) for c in channels)
    players = new_players()
    tokens = [auth(p) for p in players]
    # From 22-22 in the belle, these deals played card by card end the match
    # after 36 actions (3 hands).
    name = create_fixed_game(
        doomed,
        players,
        deals=[TRUC_REFUSED_DEAL] * 8,
        start_scores=(22, 22),
        start_manches=(1, 1),
    ).name
    applied = 0
    for step in range(16):  # the first half, calls alternating between the replicas
        client = (doomed, survivor)[step % 2]
        request, token = next_request(client, name, tokens)
        (survivor, doomed)[step % 2].SubmitAction(request, metadata=token)
        applied += 1

    # One action answered by the doomed replica; the client loses the answer.
    answered, answered_token = next_request(doomed, name, tokens)
    first_answer = doomed.SubmitAction(answered, metadata=answered_token)
    applied += 1
    # Another sent to it as it is killed: applied or not, the client cannot know.
    in_flight, in_flight_token = next_request(doomed, name, tokens)
    future = doomed.SubmitAction.future(in_flight, metadata=in_flight_token, timeout=10)
    pair[0].kill()
    try:
        lost_answer: game_service_pb2.SubmitActionResponse | None = future.result()
    except grpc.RpcError:
        lost_answer = None

    # The client retries both on the survivor, with the same request ids.
    retried = survivor.SubmitAction(in_flight, metadata=in_flight_token)
    applied += 1
    assert retried.game.etag == str(int(in_flight.etag) + 1)
    if lost_answer is not None:
        assert retried == lost_answer
    again = survivor.SubmitAction(answered, metadata=answered_token)
    assert again == first_answer
    assert view_of(survivor, name, SPECTATOR).etag == str(applied + 1)

    # The survivor finishes the game, without an error.
    view = view_of(survivor, name, SPECTATOR)
    while view.HasField("to_act"):
        request, token = next_request(survivor, name, tokens)
        view = survivor.SubmitAction(request, metadata=token).game
        applied += 1
        assert applied < 100
    final = view_of(survivor, name, tokens[0])
    assert final.finished and final.phase == game_pb2.PHASE_MATCH_OVER
    assert int(final.etag) == applied + 1
    played = [e for e in final.events if e.HasField("card_played")]
    assert len(played) == applied  # every action once: none lost, none doubled
    for channel in channels:
        channel.close()
