"""The scripted demo of ``make run``: a table of clients (six for Truc y Flou;
two, four... for the rule set ``make run ARGS="--ruleset ..."`` names) queue
through the lobby and play a whole match through the game service, told hand
by hand.

Each client signs in as a guest with a display name, queues alone for a table
of the options, and plays its seat with a :class:`~truc_bots.BotPlayer`
(heuristic policy, over a ``Play`` session) using the game token of its
matched ticket. The viewer is the narrator, and sees every hand: each seat's
client also follows the game on a session of its own token
(:class:`~truc_client.session.GameSession`), and a seat's cards are printed
from that seat's own view (its ``CardsDealt``; no hidden card is fetched any
other way). Seat 0's session tells the rest, in the compact words of
:class:`~truc_client.narration.Narrator` (``compact``):

* per hand: its header, the hands as dealt (as ``truc demo`` prints them:
  :meth:`Narrator.dealt_line <truc_client.narration.Narrator.dealt_line>`,
  one definition), the calls and answers, one line per trick, and the hand's
  summary (credits, the accepted stake, the running scores in A-B order);
* then a pause of ``pace`` seconds (``make run``: ``RUN_PACE`` or ``--pace``,
  1 s by default; 0 in tests), so the match reads at a person's pace while the
  bots play on at theirs (the sessions queue what is not read yet).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Final, TextIO

import grpc
from truc.v1 import (
    game_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_bots import BotPlayer, HeuristicPolicy

from .narration import (
    Narrator,
    is_family,
    printable,
    rule_set_name,
    score_text,
    seat_label,
    seat_name,
)
from .session import GameSession
from .terminal import rule_options, table_seats

__all__ = ["DEMO_NAMES", "play_demo_match"]

DEMO_NAMES: Final = ("Ana", "Bernat", "Clàudia", "Dídac", "Èlia", "Ferran")
"""The guests' display names, seat by seat of the queue (any script will do)."""
_DEAL_WAIT: Final = 10.0
"""Seconds to wait for a seat's own view of its cards before saying it is unseen."""


class _Deals:
    """Each seat's dealt cards, read from that seat's own session: by (hand,
    deal of the hand, seat); a redeal is the hand's second deal."""

    def __init__(self) -> None:
        self._dealt: dict[tuple[int, int, int], game_pb2.CardsDealt] = {}
        self._arrived: defaultdict[tuple[int, int, int], asyncio.Event] = defaultdict(asyncio.Event)

    async def follow(self, session: GameSession, seat: int) -> None:
        hand, deal = 0, 0
        async with session:
            async for update in session:
                for event in update.events:
                    kind = event.WhichOneof("kind")
                    if kind == "hand_started":
                        hand, deal = event.hand_started.hand_number, 0
                    elif kind == "cards_dealt" and event.cards_dealt.seat == seat:
                        key = (hand, deal, seat)
                        self._dealt[key] = event.cards_dealt
                        self._arrived[key].set()
                        deal += 1
                if update.over:
                    return

    async def get(self, hand: int, deal: int, seat: int) -> game_pb2.CardsDealt | None:
        key = (hand, deal, seat)
        try:
            await asyncio.wait_for(self._arrived[key].wait(), _DEAL_WAIT)
        except TimeoutError:
            return None
        return self._dealt.get(key)


async def play_demo_match(
    lobby_address: str,
    game_address: str,
    *,
    out: TextIO,
    seed: int = 7,
    options: game_pb2.RuleOptions | None = None,
    pace: float = 0.0,
) -> int:
    """Play one match of ``options`` (Truc y Flou's defaults when None) through
    the services, told hand by hand with ``pace`` seconds between hands; 0
    when it finished."""
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
    tasks: list[asyncio.Task[object]] = []
    try:
        guests = [
            await lobby.SignInGuest(
                lobby_service_pb2.SignInGuestRequest(display_name=DEMO_NAMES[i % len(DEMO_NAMES)])
            )
            for i in range(seats)
        ]
        tickets = []
        for guest in guests:
            meta = (("authorization", "Bearer " + guest.token),)
            created = await lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=options), metadata=meta
            )
            tickets.append((created.ticket.name, meta))
        queued = ", ".join(printable(g.display_name or g.player) for g in guests)
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
        names = {
            a.seat: seat_label(a.seat, a.display_name, a.player, bot=a.bot) for a in first.table
        }
        print(f"seated in {printable(first.game)}:", file=out)
        for seat in sorted(first.table, key=lambda a: a.seat):
            role = "captain " if not family and seat.seat in (0, 3) else ""
            print(f"   {role}{seat_name(seat.seat)} {names[seat.seat]}", file=out)
        if options.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC:
            print("   each hand the dealer and eldest govern their sides", file=out)
        bots = [
            BotPlayer(game, t.game, t.game_token, HeuristicPolicy(seed + t.seat)) for t in matched
        ]
        players = [asyncio.create_task(bot.run()) for bot in bots]
        deals = _Deals()
        for ticket in matched:
            if ticket.seat != 0:
                session = GameSession(game, ticket.game, _meta(ticket))
                tasks.append(asyncio.create_task(deals.follow(session, ticket.seat)))
        seat0 = next(t for t in matched if t.seat == 0)
        narrator = Narrator(
            ticket_rules(seat0, options), names=names, options=options, compact=True
        )
        final = await _narrate(
            game, seat0, out=out, narrator=narrator, deals=deals, seats=seats, pace=pace
        )
        results = await asyncio.gather(*players)
        assert all(r.finished for r in results)
        team = "A" if final.winner == game_pb2.TEAM_A else "B"
        won = score_text(final.manches, "games" if family else "manches")
        hands = f"{final.hands_played} hand{'s' if final.hands_played != 1 else ''}"
        print(f"match over: team {team} wins, {won}, after {hands}", file=out)
        return 0
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await lobby_channel.close(None)
        await game_channel.close(None)


def ticket_rules(ticket: lobby_pb2.Ticket, options: game_pb2.RuleOptions) -> int:
    """The rule set of a matched ticket (the options queued with, if it does not say)."""
    return ticket.rule_set or options.rule_set


def _meta(ticket: lobby_pb2.Ticket) -> tuple[tuple[str, str], ...]:
    return (("authorization", "Bearer " + ticket.game_token),)


async def _narrate(
    game: game_service_pb2_grpc.GameServiceAsyncStub,
    ticket: lobby_pb2.Ticket,
    *,
    out: TextIO,
    narrator: Narrator,
    deals: _Deals,
    seats: int,
    pace: float,
) -> game_pb2.GameView:
    """Seat 0's session, told: every seat's cards at each deal (each from its
    own session), a pause after each hand."""
    hand, deal = 0, 0
    calls: list[str] = []  # a run of calls and answers, told on one line

    def say(line: str) -> None:
        if calls:
            print(" · ".join(calls), file=out)
            calls.clear()
        print(line, file=out, flush=True)

    async with GameSession(game, ticket.game, _meta(ticket)) as session:
        async for update in session:
            # A session that queued many versions hands them over as one update
            # (over once the last is in): every hand but the match's last pauses.
            kinds = [event.WhichOneof("kind") for event in update.events]
            last_hand = max((i for i, k in enumerate(kinds) if k == "hand_ended"), default=-1)
            for index, (event, kind) in enumerate(zip(update.events, kinds, strict=True)):
                if kind == "hand_started":
                    hand, deal = event.hand_started.hand_number, 0
                if kind == "cards_dealt":
                    for seat in range(seats):
                        dealt = (
                            event.cards_dealt if seat == 0 else await deals.get(hand, deal, seat)
                        )
                        if dealt is None:
                            say(f"   {narrator.who(seat)}: its cards were not seen")
                        else:
                            say(narrator.dealt_line(dealt))
                    deal += 1
                    continue
                line = narrator.describe(event)
                if line is not None and kind == "called":
                    calls.append(line)
                elif line is not None:
                    say(line)
                if kind == "hand_ended":
                    say("")
                    if pace > 0 and not (update.over and index == last_hand):
                        await asyncio.sleep(pace)
            if update.view.finished:
                if calls:
                    say("")
                return update.view
    raise RuntimeError(f"{ticket.game} ended without finishing")  # a fixed-deal game's end
