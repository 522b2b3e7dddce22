"""The scripted demo of ``make run``: six clients queue through the lobby and
play a whole match through the game service, printed as it happens.

Each client signs in as a guest, queues alone, and plays its seat with a
:class:`~truc_bots.BotPlayer` (heuristic policy) using the game token of
its matched ticket. The match is narrated from seat 0's chair: its cards are
shown, the others' only when a showdown reveals them.
"""

from __future__ import annotations

import asyncio
from typing import TextIO

import grpc
from truc.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_bots import BotPlayer, HeuristicPolicy

from .narration import describe, seat_name

__all__ = ["play_demo_match"]


async def play_demo_match(
    lobby_address: str, game_address: str, *, out: TextIO, seed: int = 7
) -> int:
    """Play one match through the services; 0 when it finished."""
    lobby_channel = grpc.aio.insecure_channel(lobby_address)
    game_channel = grpc.aio.insecure_channel(game_address)
    lobby: lobby_service_pb2_grpc.LobbyServiceAsyncStub = lobby_service_pb2_grpc.LobbyServiceStub(
        lobby_channel
    )
    game: game_service_pb2_grpc.GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(
        game_channel
    )
    try:
        guests = [
            await lobby.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name=f"demo{i}"))
            for i in range(6)
        ]
        tickets = []
        for guest in guests:
            meta = (("authorization", "Bearer " + guest.token),)
            created = await lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(), metadata=meta
            )
            tickets.append((created.ticket.name, meta))
        print(f"six guests queued: {', '.join(g.player for g in guests)}", file=out)
        matched: list[lobby_pb2.Ticket] = []
        for name, meta in tickets:
            stream = lobby.WatchTicket(
                lobby_service_pb2.WatchTicketRequest(name=name), metadata=meta
            )
            async for change in stream:
                if change.ticket.state == lobby_pb2.TICKET_STATE_MATCHED:
                    matched.append(change.ticket)
                    break
        if len(matched) != 6:
            print("the lobby did not seat the six guests", file=out)
            return 1
        first = matched[0]
        print(f"seated in {first.game}:", file=out)
        for seat in sorted(first.table, key=lambda a: a.seat):
            role = "captain " if seat.seat in (0, 3) else ""
            print(f"   {role}{seat_name(seat.seat)} {seat.player}", file=out)
        bots = [
            BotPlayer(game, t.game, t.game_token, HeuristicPolicy(seed + t.seat)) for t in matched
        ]
        players = [asyncio.create_task(bot.run()) for bot in bots]
        seat0 = next(t for t in matched if t.seat == 0)
        final = await _narrate(game, seat0, out)
        results = await asyncio.gather(*players)
        assert all(r.finished for r in results)
        team = "A" if final.winner == game_pb2.TEAM_A else "B"
        print(
            f"match over: team {team} wins {final.manches.team_a}-{final.manches.team_b} "
            f"after {final.hands_played} hands",
            file=out,
        )
        return 0
    finally:
        await lobby_channel.close(None)
        await game_channel.close(None)


async def _narrate(
    game: game_service_pb2_grpc.GameServiceAsyncStub, ticket: lobby_pb2.Ticket, out: TextIO
) -> game_pb2.GameView:
    meta = (("authorization", "Bearer " + ticket.game_token),)
    after = 0
    while True:
        stream = game.WatchGame(
            game_service_pb2.WatchGameRequest(name=ticket.game, after_version=after), metadata=meta
        )
        try:
            async for change in stream:
                after = change.version
                for event in change.events:
                    line = describe(event)
                    if line is not None:
                        print(line, file=out, flush=True)
                if change.game.finished:
                    return change.game
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.2)  # the stream dropped: resume from the last version
