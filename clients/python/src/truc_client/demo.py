"""The scripted demo of ``make run``: a table of clients (six for Truc y Flou;
two, four... for the rule set ``make run RULESET=...`` names) queue through the
lobby and play a whole match through the game service, printed as it happens.

Each client signs in as a guest, queues alone for a table of the rule set, and
plays its seat with a
:class:`~truc_bots.BotPlayer` (heuristic policy, over a ``Play`` session)
using the game token of its matched ticket. The match is narrated from seat
0's chair, through a session of its own on seat 0's token
(:class:`~truc_client.session.GameSession`, which resumes by itself): its
cards are shown, the others' only when a showdown reveals them.
"""

from __future__ import annotations

import asyncio
from typing import TextIO

import grpc
from truc.v1 import (
    game_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_bots import BotPlayer, HeuristicPolicy

from .narration import Narrator, is_family, rule_set_name, seat_name
from .session import GameSession
from .terminal import rule_options, table_seats

__all__ = ["play_demo_match"]


async def play_demo_match(
    lobby_address: str,
    game_address: str,
    *,
    out: TextIO,
    seed: int = 7,
    options: game_pb2.RuleOptions | None = None,
) -> int:
    """Play one match of ``options`` (Truc y Flou's defaults when None) through
    the services; 0 when it finished."""
    options = options or rule_options()
    seats = table_seats(options)
    family = is_family(options.rule_set)
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
            for i in range(seats)
        ]
        tickets = []
        for guest in guests:
            meta = (("authorization", "Bearer " + guest.token),)
            created = await lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=options), metadata=meta
            )
            tickets.append((created.ticket.name, meta))
        queued = ", ".join(g.player for g in guests)
        print(f"{seats} guests queued for {rule_set_name(options.rule_set)}: {queued}", file=out)

        async def seated(name: str, meta: tuple[tuple[str, str], ...]) -> lobby_pb2.Ticket | None:
            # Every client watches its ticket at once: the lobby seats followed tickets only.
            stream = lobby.WatchTicket(
                lobby_service_pb2.WatchTicketRequest(name=name), metadata=meta
            )
            async for change in stream:
                if change.ticket.state == lobby_pb2.TICKET_STATE_MATCHED:
                    return change.ticket
            return None

        watched = await asyncio.gather(*(seated(name, meta) for name, meta in tickets))
        matched = [t for t in watched if t is not None]
        if len(matched) != seats:
            print(f"the lobby did not seat the {seats} guests", file=out)
            return 1
        first = matched[0]
        print(f"seated in {first.game}:", file=out)
        for seat in sorted(first.table, key=lambda a: a.seat):
            role = "captain " if not family and seat.seat in (0, 3) else ""
            print(f"   {role}{seat_name(seat.seat)} {seat.player}", file=out)
        if options.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC:
            print("   each hand the dealer and eldest govern their sides", file=out)
        bots = [
            BotPlayer(game, t.game, t.game_token, HeuristicPolicy(seed + t.seat)) for t in matched
        ]
        players = [asyncio.create_task(bot.run()) for bot in bots]
        seat0 = next(t for t in matched if t.seat == 0)
        final = await _narrate(game, seat0, out, ticket_rules(seat0, options))
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


def ticket_rules(ticket: lobby_pb2.Ticket, options: game_pb2.RuleOptions) -> int:
    """The rule set of a matched ticket (the options queued with, if it does not say)."""
    return ticket.rule_set or options.rule_set


async def _narrate(
    game: game_service_pb2_grpc.GameServiceAsyncStub,
    ticket: lobby_pb2.Ticket,
    out: TextIO,
    rule_set: int,
) -> game_pb2.GameView:
    meta = (("authorization", "Bearer " + ticket.game_token),)
    narrator = Narrator(rule_set)
    async with GameSession(game, ticket.game, meta) as session:
        async for update in session:
            for event in update.events:
                line = narrator.describe(event)
                if line is not None:
                    print(line, file=out, flush=True)
            if update.view.finished:
                return update.view
    raise RuntimeError(f"{ticket.game} ended without finishing")  # a fixed-deal game's end
