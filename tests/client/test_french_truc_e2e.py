"""End to end: the Python client (:class:`truc_client.client.TrucClient`) plays a
French Truc seat to the end against a real game service on Redis, following the
game with WatchGame and acting with SubmitAction, while a second client plays
the other seat. Nothing is faked: real processes, real gRPC over sockets."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import (
    LOBBY_AUTH,
    SECRET,
    Replica,
    cards_in,
    redis_server,  # noqa: F401 - the session's Redis, a fixture
    running_replica,
)
from truc_client.client import StaleView, TrucClient, TrucError
from truc_dev_redis import RedisServer
from truc_service.tokens import issue_token

FRENCH_SUITS = {2, 5, 6, 7}  # SUIT_CLUBS, SUIT_HEARTS, SUIT_DIAMONDS, SUIT_SPADES
FRENCH_RANKS = {7, 8, 10, 11, 12, 13, 14, 15}  # 7, J, K, 8, 9, T, Q, A


@pytest.fixture(scope="module")
def game_service(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    with running_replica(redis_server.url) as replica:
        yield replica
        assert "Traceback" not in replica.log(), replica.log()


def create_french_game(address: str, players: list[str]) -> str:
    with grpc.insecure_channel(address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        created = stub.CreateGame(
            game_service_pb2.CreateGameRequest(
                players=players,
                options=game_pb2.RuleOptions(
                    rule_set=game_pb2.RULE_SET_FRENCH_TRUC, target_score=5
                ),
            ),
            metadata=LOBBY_AUTH,
        )
    assert created.game.rule_set == game_pb2.RULE_SET_FRENCH_TRUC
    assert created.game.seat_count == 2
    name: str = created.name
    return name


def check_seat_view(view: game_pb2.GameView, seat: int, events: list[game_pb2.Event]) -> None:
    """A view the client got: the seat's own, piquet cards only, none of the other hand's."""
    assert view.seat == seat and view.rule_set == game_pb2.RULE_SET_FRENCH_TRUC
    assert len(view.hand) == view.seats[seat].hand_size
    played = {
        (p.card.suit, p.card.rank) for t in (*view.tricks, view.current_trick) for p in t.plays
    }
    own = {(c.suit, c.rank) for c in (*view.hand, *view.dealt)}
    for card in cards_in(view):
        assert card.suit in FRENCH_SUITS and card.rank in FRENCH_RANKS
        assert (card.suit, card.rank) in own | played
    for event in events:
        assert not event.HasField("cards_dealt") or event.cards_dealt.seat == seat


class Seat:
    """One player: a TrucClient, a seeded random policy over the view's legal actions."""

    def __init__(self, client: TrucClient, game: str, seat: int) -> None:
        self.client = client
        self.game = game
        self.seat = seat
        self.rng = random.Random(seat)
        self.versions: list[int] = []
        self.kinds: set[str] = set()
        self.refusals = 0

    async def act(self, view: game_pb2.GameView) -> None:
        """Act while ``view`` says this seat is to act (deciding again on a stale view)."""
        for _ in range(20):
            if view.finished or not view.HasField("to_act") or view.to_act != self.seat:
                return
            legal = list(view.legal_actions)
            cards = [a for a in legal if a.HasField("play_card")]
            action = self.rng.choice(cards if cards and self.rng.random() < 0.6 else legal)
            raise_ = game_pb2.Action(call=game_pb2.CALL_RAISE)
            if "CALL_RAISE" not in self.kinds and raise_ in legal:
                action = raise_  # the first time it may, the seat raises
            try:
                if action.HasField("play_card"):
                    reply = await self.client.play(self.game, action.play_card, etag=view.etag)
                    self.kinds.add("play")
                elif action.HasField("call"):
                    reply = await self.client.call(self.game, action.call, etag=view.etag)
                    self.kinds.add(game_pb2.Call.Name(action.call))
                else:
                    reply = await self.client.submit(self.game, action, etag=view.etag)
            except StaleView as stale:
                view = stale.view
                continue
            except TrucError as error:
                if error.reason == "NOT_YOUR_TURN":
                    return
                raise
            check_seat_view(reply.game, self.seat, list(reply.events))
            return
        raise AssertionError("the action never got through")

    async def play(self) -> game_pb2.GameView:
        """Play the seat until the match is over; the last view."""
        view = await self.client.get_game(self.game)
        check_seat_view(view, self.seat, list(view.events))
        start = int(view.etag)
        await self.act(view)
        async for change in self.client.watch_game(self.game, after_version=start):
            self.versions.append(change.version)
            view = change.game
            check_seat_view(view, self.seat, list(change.events))
            await self.act(view)
        return view


def test_the_python_client_plays_a_french_truc_seat_to_the_end(game_service: Replica) -> None:
    tag = uuid.uuid4().hex[:8]
    players = [f"{tag}-ana", f"{tag}-bel"]
    game = create_french_game(game_service.address, players)

    async def scenario() -> tuple[list[game_pb2.GameView], list[Seat]]:
        seats: list[Seat] = []
        for seat, player in enumerate(players):
            # The lobby is not used: the game is created directly, the tokens issued here.
            client = TrucClient(game_service.address, game_service.address)
            client.use_token(issue_token(SECRET, player, ttl_seconds=600))
            seats.append(Seat(client, game, seat))
        try:
            async with asyncio.timeout(120):
                finals = await asyncio.gather(*(s.play() for s in seats))
            # A stranger's token is refused with its reason.
            stranger = TrucClient(game_service.address, game_service.address)
            stranger.use_token(issue_token(SECRET, f"{tag}-stranger", ttl_seconds=600))
            with pytest.raises(TrucError) as refused:
                await stranger.get_game(game)
            assert refused.value.reason == "NOT_SEATED"
            await stranger.close()
            return list(finals), seats
        finally:
            for one in seats:
                await one.client.close()

    finals, seats = asyncio.run(scenario())
    for seat, (final, player) in enumerate(zip(finals, seats, strict=True)):
        assert final.finished and final.seat == seat
        assert final.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)
        assert player.versions == sorted(set(player.versions)), "each version once, in order"
        assert player.versions[-1] == int(final.etag)
    assert finals[0].winner == finals[1].winner
    winner = 0 if finals[0].winner == game_pb2.TEAM_A else 1
    assert (finals[0].manches.team_a, finals[0].manches.team_b)[winner] == 2
    assert "play" in seats[0].kinds | seats[1].kinds
    assert "CALL_RAISE" in seats[0].kinds | seats[1].kinds
