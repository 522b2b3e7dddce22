"""A finished match moves its human players' ratings (team Elo), once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2_grpc, lobby_pb2, lobby_service_pb2

from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer

from .conftest import Stack, sign_in


@pytest.fixture(scope="module")
def bot_stack(redis_server: RedisServer) -> Iterator[Stack]:
    started = Stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="1", TRUC_MATCH_INTERVAL_MS="50")
    yield started
    started.stop()


def test_a_human_seated_with_bots_is_rated_after_the_match(bot_stack: Stack) -> None:
    lobby = bot_stack.lobby()
    player, meta = sign_in(lobby, "rated")
    # Options no other test's left-over ticket asks for: this table is ours and bots'.
    options = game_pb2.RuleOptions(target_score=17)
    ticket = lobby.CreateTicket(
        lobby_service_pb2.CreateTicketRequest(options=options), metadata=meta
    ).ticket
    assert [m.rating for m in ticket.members] == [1500.0]
    deadline = time.monotonic() + 20
    while ticket.state != lobby_pb2.TICKET_STATE_MATCHED and time.monotonic() < deadline:
        time.sleep(0.2)
        ticket = lobby.GetTicket(
            lobby_service_pb2.GetTicketRequest(name=ticket.name), metadata=meta
        ).ticket
    assert ticket.state == lobby_pb2.TICKET_STATE_MATCHED
    assert sum(a.bot for a in ticket.table) == 5
    # Seated, the player may not queue again until the game ends.
    with pytest.raises(grpc.RpcError) as refused:
        lobby.CreateTicket(lobby_service_pb2.CreateTicketRequest(), metadata=meta)
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS

    async def play() -> bool:
        channel = grpc.aio.insecure_channel(bot_stack.game.address)
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        final = await BotPlayer(stub, ticket.game, ticket.game_token, HeuristicPolicy(1)).run()
        await channel.close(None)
        return bool(final.finished) and final.winner == ticket.team

    won = asyncio.run(asyncio.wait_for(play(), 120))
    rating = 1500.0
    deadline = time.monotonic() + 15
    while rating == 1500.0 and time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            again = lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(), metadata=meta
            ).ticket
        except grpc.RpcError as still_playing:  # released once the result is in
            assert still_playing.code() == grpc.StatusCode.ALREADY_EXISTS
            continue
        rating = again.members[0].rating
        lobby.CancelTicket(lobby_service_pb2.CancelTicketRequest(name=again.name), metadata=meta)
    # Five bots rated like the human: even teams, so a win is +16 and a loss -16.
    assert rating == pytest.approx(1516.0 if won else 1484.0), (player, won, rating)
