"""Races on one game across two replicas: the compare-and-set lets exactly one
action through, and a retried request id is applied once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator, Sequence
from functools import partial

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    Metadata,
    Replica,
    act,
    auth,
    create_fixed_game,
    expect_error,
    new_players,
    play_action,
    reason_of,
    view_of,
)

SEAT0_HAND = ("2Co", "5Sw", "KCu")
"""Seat 0's cards in TRUC_REFUSED_DEAL; with dealer 5, seat 0 leads."""

Outcome = game_service_pb2.SubmitActionResponse | grpc.aio.AioRpcError


@pytest.fixture(scope="module")
def clients(replicas: list[Replica]) -> Iterator[list[game_service_pb2_grpc.GameServiceStub]]:
    channels = [grpc.insecure_channel(r.address) for r in replicas]
    yield [game_service_pb2_grpc.GameServiceStub(c) for c in channels]
    for channel in channels:
        channel.close()


async def _submit_all(
    addresses: Sequence[str],
    requests: Sequence[game_service_pb2.SubmitActionRequest],
    metadata: Metadata,
) -> list[Outcome]:
    """Send every request at once, request i to replica i % len(addresses)."""
    channels = [grpc.aio.insecure_channel(a) for a in addresses]
    try:
        for channel in channels:
            await asyncio.wait_for(channel.channel_ready(), 10)
        stubs = [game_service_pb2_grpc.GameServiceStub(c) for c in channels]

        async def one(i: int) -> Outcome:
            try:
                return await stubs[i % len(stubs)].SubmitAction(
                    requests[i], metadata=metadata, timeout=20
                )
            except grpc.aio.AioRpcError as error:
                return error

        return list(await asyncio.gather(*(one(i) for i in range(len(requests)))))
    finally:
        for channel in channels:
            await channel.close(None)


def _kinds(view: game_pb2.GameView, kind: str) -> list[game_pb2.Event]:
    return [e for e in view.events if e.WhichOneof("kind") == kind]


def _split(
    outcomes: Sequence[Outcome],
) -> tuple[list[game_service_pb2.SubmitActionResponse], list[grpc.aio.AioRpcError]]:
    successes = [o for o in outcomes if isinstance(o, game_service_pb2.SubmitActionResponse)]
    failures = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    return successes, failures


def _race(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub], *, etag: bool
) -> tuple[str, Metadata, game_pb2.GameView, list[Outcome]]:
    """50 concurrent plays by seat 0 (every card of its hand, some the same) on both replicas."""
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    seat0 = auth(players[0])
    before = view_of(clients[1], name, seat0)
    assert before.to_act == 0 and before.etag == "1"
    tag = uuid.uuid4().hex
    requests = [
        game_service_pb2.SubmitActionRequest(
            name=name,
            action=play_action(SEAT0_HAND[i % 3]),
            etag=before.etag if etag else "",
            request_id=f"{tag}-{i}",
        )
        for i in range(50)
    ]
    outcomes = asyncio.run(_submit_all([r.address for r in replicas], requests, seat0))
    return name, seat0, before, outcomes


def _assert_applied_once(
    clients: list[game_service_pb2_grpc.GameServiceStub],
    name: str,
    seat0: Metadata,
    before: game_pb2.GameView,
    winner: game_service_pb2.SubmitActionResponse,
) -> None:
    after = view_of(clients[0], name, seat0)
    assert int(after.etag) == int(before.etag) + 1
    assert winner.game.etag == after.etag
    played = [e.card_played for e in winner.events if e.WhichOneof("kind") == "card_played"]
    assert len(played) == 1 and played[0].seat == 0
    assert len(after.hand) == 2 and played[0].card not in after.hand
    assert len(_kinds(after, "card_played")) == 1
    assert after.to_act == 1


def test_fifty_concurrent_actions_with_the_current_etag_apply_exactly_one(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    name, seat0, before, outcomes = _race(replicas, clients, etag=True)
    successes, failures = _split(outcomes)
    assert len(successes) == 1, [(f.code(), f.details()) for f in failures]
    for failure in failures:
        code, reason = failure.code(), reason_of(failure)
        assert (code == grpc.StatusCode.ABORTED and reason in ("STALE_ETAG", "CONFLICT")) or (
            code == grpc.StatusCode.FAILED_PRECONDITION
        ), (code, reason, failure.details())
    _assert_applied_once(clients, name, seat0, before, successes[0])


def test_fifty_concurrent_actions_without_etag_apply_exactly_one(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    name, seat0, before, outcomes = _race(replicas, clients, etag=False)
    successes, failures = _split(outcomes)
    assert len(successes) == 1, [(f.code(), f.details()) for f in failures]
    for failure in failures:
        code, reason = failure.code(), reason_of(failure)
        # Requests that read the game after the winner committed are refused by
        # the rules; those that read it before lose the compare-and-set, which
        # the API documents as ABORTED CONFLICT. Never STALE_ETAG: none was sent.
        assert (
            code == grpc.StatusCode.FAILED_PRECONDITION
            and reason in ("NOT_YOUR_TURN", "CARD_NOT_IN_HAND")
        ) or (code == grpc.StatusCode.ABORTED and reason == "CONFLICT"), (
            code,
            reason,
            failure.details(),
        )
    assert any(f.code() == grpc.StatusCode.FAILED_PRECONDITION for f in failures)
    _assert_applied_once(clients, name, seat0, before, successes[0])


def test_a_retried_request_id_is_applied_once_and_answered_the_same(
    replicas: list[Replica], clients: list[game_service_pb2_grpc.GameServiceStub]
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    seat0 = auth(players[0])
    before = view_of(clients[0], name, seat0)
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("KCu"), etag=before.etag, request_id=str(uuid.uuid4())
    )
    # Three copies at once, spread over both replicas, then one more to each.
    outcomes = asyncio.run(_submit_all([r.address for r in replicas], [request] * 3, seat0))
    successes, failures = _split(outcomes)
    assert not failures, [(f.code(), f.details()) for f in failures]
    successes += [client.SubmitAction(request, metadata=seat0) for client in clients]
    first = successes[0]
    assert first.game.etag == "2"
    assert [e.WhichOneof("kind") for e in first.events] == ["card_played"]
    for reply in successes[1:]:
        assert reply.game.etag == first.game.etag
        assert list(reply.events) == list(first.events)
        assert reply.game == first.game
    _assert_applied_once(clients, name, seat0, before, first)
    # The game moved on: the request id still answers what it did, not a new play.
    act(clients[1], name, auth(players[1]), play_action("4Co"))
    again = clients[0].SubmitAction(request, metadata=seat0)
    assert again.game.etag == "2" and list(again.events) == list(first.events)
    assert view_of(clients[1], name, seat0).etag == "3"


def test_a_stale_etag_is_aborted_and_changes_nothing(
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    seat0, seat1 = auth(players[0]), auth(players[1])
    act(clients[0], name, seat0, play_action("2Co"), etag="1")
    before = view_of(clients[1], name, seat1)
    assert before.etag == "2" and before.to_act == 1
    request_id = str(uuid.uuid4())
    for stale in ("1", "3", "99"):
        expect_error(
            partial(
                act, clients[1], name, seat1, play_action("4Co"), etag=stale, request_id=request_id
            ),
            grpc.StatusCode.ABORTED,
            "STALE_ETAG",
        )
    after = view_of(clients[0], name, seat1)
    assert after == before
    # The refused request id was not recorded: sent with the current etag, it applies.
    reply = act(clients[0], name, seat1, play_action("4Co"), etag="2", request_id=request_id)
    assert reply.game.etag == "3"
    assert [e.card_played.seat for e in reply.events if e.HasField("card_played")] == [1]


def test_a_request_id_belongs_to_its_player(
    clients: list[game_service_pb2_grpc.GameServiceStub],
) -> None:
    players = new_players()
    name = create_fixed_game(clients[0], players).name
    shared = str(uuid.uuid4())
    first = act(clients[0], name, auth(players[0]), play_action("2Co"), request_id=shared)
    assert first.game.etag == "2"
    # Seat 1 sending the same request id gets its own action applied, not seat 0's answer.
    second = act(clients[1], name, auth(players[1]), play_action("4Co"), request_id=shared)
    assert second.game.etag == "3"
    assert second.game.seat == 1
    assert [e.card_played.seat for e in second.events if e.HasField("card_played")] == [1]
