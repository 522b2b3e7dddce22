"""Six guests queue alone and are seated in one game, two teams of three."""

from __future__ import annotations

import time

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, lobby_pb2, lobby_service_pb2

from .conftest import Stack, sign_in


def test_six_solo_guests_are_seated_in_one_game(stack: Stack) -> None:
    lobby = stack.lobby()
    guests = [sign_in(stack.lobby(i), f"solo{i}") for i in range(6)]
    tickets = [
        stack.lobby(i).CreateTicket(lobby_service_pb2.CreateTicketRequest(), metadata=meta).ticket
        for i, (_, meta) in enumerate(guests)
    ]
    assert all(t.state == lobby_pb2.TICKET_STATE_QUEUED for t in tickets)
    deadline = time.monotonic() + 15
    seen: list[lobby_pb2.Ticket] = []
    while time.monotonic() < deadline:
        seen = [
            lobby.GetTicket(lobby_service_pb2.GetTicketRequest(name=t.name), metadata=meta).ticket
            for t, (_, meta) in zip(tickets, guests, strict=True)
        ]
        if all(t.state == lobby_pb2.TICKET_STATE_MATCHED for t in seen):
            break
        time.sleep(0.1)
    assert all(t.state == lobby_pb2.TICKET_STATE_MATCHED for t in seen), seen
    assert len({t.game for t in seen}) == 1
    assert sorted(t.seat for t in seen) == list(range(6))
    assert all(t.team == (game_pb2.TEAM_A if t.seat % 2 == 0 else game_pb2.TEAM_B) for t in seen)
    # The game token works on the game service for that seat.
    game = game_service_pb2_grpc.GameServiceStub(grpc.insecure_channel(stack.game.address))
    first = seen[0]
    view = game.GetGame(
        game_service_pb2.GetGameRequest(name=first.game),
        metadata=(("authorization", "Bearer " + first.game_token),),
    ).game
    assert view.seat == first.seat
