"""The rule sets of variants.md through the real service: a Redis, a game-service
process, gRPC over a socket. Whole games of French and partnership Truc played
from each seat's view; raises answered by the right seat, binding instructions,
another pack's cards, turn deadlines, CreateGame's validation per rule set; and a
Truc y Flou game stored before the rule sets existed still loads and plays."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import grpc
import pytest
from redis.asyncio import Redis
from truc.v1 import cards_pb2, game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer
from truc_game.adapters.redis_store import RedisGameStore
from truc_game.ports import GameMeta
from truc_rules import Card, RuleOptions
from truc_rules import encode_state as truc_y_flou_encode_state
from truc_rules import new_game as truc_y_flou_new_game
from truc_rules.truc_y_flou.codec import encode_events as truc_y_flou_encode_events

from .conftest import (
    LOBBY_AUTH,
    SPECTATOR,
    TRUC_REFUSED_DEAL,
    Metadata,
    auth,
    cards_in,
    expect_error,
    proto_card,
    running_replica,
    view_of,
    wait_until,
)

FRENCH = game_pb2.RULE_SET_FRENCH_TRUC
PARTNERSHIP = game_pb2.RULE_SET_PARTNERSHIP_TRUC
CATALAN = game_pb2.RULE_SET_CATALAN_TRUC
SACKSON = game_pb2.RULE_SET_SACKSON_TRUC

_FRENCH_SUITS = {
    "He": cards_pb2.SUIT_HEARTS,
    "Di": cards_pb2.SUIT_DIAMONDS,
    "Cl": cards_pb2.SUIT_CLUBS,
    "Sp": cards_pb2.SUIT_SPADES,
}
_FRENCH_RANKS = {
    "7": cards_pb2.RANK_SEVEN,
    "8": cards_pb2.RANK_EIGHT,
    "9": cards_pb2.RANK_NINE,
    "T": cards_pb2.RANK_TEN,
    "J": cards_pb2.RANK_JACK,
    "Q": cards_pb2.RANK_QUEEN,
    "K": cards_pb2.RANK_KING,
    "A": cards_pb2.RANK_ACE,
}


def french(text: str) -> cards_pb2.Card:
    """'7He' (piquet-pack notation) -> a proto card."""
    return cards_pb2.Card(suit=_FRENCH_SUITS[text[-2:]], rank=_FRENCH_RANKS[text[:-2]])


def key(card: cards_pb2.Card) -> tuple[int, int]:
    return (card.suit, card.rank)


FRENCH_DEAL = (("7Cl", "9He", "TSp"), ("8He", "ASp", "JDi"))
"""With dealer 1, seat 0 (eldest) acts first; its lowest card (7 8 A K Q J T 9) is 9He."""
PARTNERSHIP_DEAL = (
    ("9He", "KSp", "QDi"),
    ("8Cl", "TDi", "JHe"),
    ("ASp", "7He", "9Di"),
    ("TSp", "JCl", "QHe"),
)
"""With dealer 3: eldest (and governor of team A) is seat 0; seat 2, its partner,
holds a 7 that is not its lowest card (9Di is)."""


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """This module's Redis: its fast-sweeping replica acts on its deadlines alone."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def client(own_redis: RedisServer) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    with running_replica(own_redis.url, TRUC_DEADLINE_POLL_MS="50") as replica:
        channel = grpc.insecure_channel(replica.address)
        yield game_service_pb2_grpc.GameServiceStub(channel)
        channel.close()
        assert "Traceback" not in replica.log(), replica.log()


def players_of(count: int) -> list[str]:
    tag = uuid.uuid4().hex[:8]
    return [f"{tag}-p{seat}" for seat in range(count)]


def create(
    client: game_service_pb2_grpc.GameServiceStub,
    players: Sequence[str],
    options: game_pb2.RuleOptions,
    *,
    deals: Sequence[Sequence[Sequence[str]]] = (),
    dealer: int | None = None,
    turn_seconds: int = 0,
) -> game_service_pb2.CreateGameResponse:
    request = game_service_pb2.CreateGameRequest(
        players=list(players),
        options=options,
        turn_seconds=turn_seconds,
        fixed_deals=[
            game_pb2.Deal(hands=[game_pb2.Hand(cards=[french(c) for c in h]) for h in deal])
            for deal in deals
        ],
    )
    if dealer is not None:
        request.dealer = dealer
    response: game_service_pb2.CreateGameResponse = client.CreateGame(request, metadata=LOBBY_AUTH)
    return response


def submit(
    client: game_service_pb2_grpc.GameServiceStub,
    name: str,
    token: Metadata,
    action: game_pb2.Action,
    etag: str = "",
) -> game_service_pb2.SubmitActionResponse:
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=action, etag=etag, request_id=uuid.uuid4().hex
    )
    response: game_service_pb2.SubmitActionResponse = client.SubmitAction(request, metadata=token)
    return response


def play(card: cards_pb2.Card) -> game_pb2.Action:
    return game_pb2.Action(play_card=card)


def call(number: game_pb2.Call.ValueType) -> game_pb2.Action:
    return game_pb2.Action(call=number)


def check_private(view: game_pb2.GameView) -> None:
    """What one seat (or a spectator) sees holds no card of another seat's hand,
    and no signal of the other team."""
    own: set[tuple[int, int]] = {key(c) for c in (*view.hand, *view.dealt)}
    played: set[tuple[int, int]] = set()
    for event in view.events:
        if event.HasField("cards_dealt"):
            assert view.HasField("seat") and event.cards_dealt.seat == view.seat
            own |= {key(c) for c in event.cards_dealt.cards}
        elif event.HasField("card_played"):
            played.add(key(event.card_played.card))
        elif event.HasField("signal_sent") or event.HasField("directive_sent"):
            sender = event.signal_sent.seat or event.directive_sent.seat
            assert view.HasField("seat") and sender % 2 == view.seat % 2
    played |= {key(p.card) for t in (*view.tricks, view.current_trick) for p in t.plays}
    assert {key(c) for c in cards_in(view)} <= own | played
    assert len(own) <= 3 * (1 + sum(e.HasField("cards_dealt") for e in view.events))
    for message in view.signals:
        assert message.seat % 2 == view.seat % 2
    if not view.HasField("seat"):
        assert not view.hand and not view.dealt and not view.legal_actions and not view.signals


def play_to_the_end(
    client: game_service_pb2_grpc.GameServiceStub,
    name: str,
    tokens: Sequence[Metadata],
    rng: random.Random,
    *,
    chatter: float = 0.0,
) -> tuple[game_pb2.GameView, set[str]]:
    """Random legal actions from the seat to act's own view, until the match ends;
    now and then (``chatter``) a seat off turn sends one of its signals or
    directives. Every view is checked for privacy. The final spectator view and
    the kinds of action taken."""
    kinds: set[str] = set()
    for _ in range(5000):
        public = view_of(client, name, SPECTATOR)
        check_private(public)
        if public.finished:
            return public, kinds
        assert public.HasField("to_act")
        seat = public.to_act
        if chatter and rng.random() < chatter:
            seat = rng.randrange(public.seat_count)
        view = view_of(client, name, tokens[seat])
        check_private(view)
        assert view.seat == seat
        assert view.rule_set == public.rule_set and view.seat_count == len(tokens)
        choices = list(view.legal_actions)
        if seat != public.to_act:
            choices = [a for a in choices if a.WhichOneof("kind") in ("signal", "directive")]
            if not choices:
                continue
        cards = [a for a in choices if a.WhichOneof("kind") == "play_card"]
        # Cards most of the time, so that hands are played out and not all folded.
        action = rng.choice(cards if cards and rng.random() < 0.6 else choices)
        raise_ = call(game_pb2.CALL_RAISE)
        if "CALL_RAISE" not in kinds and raise_ in choices:
            action = raise_  # the first time a seat may raise, it does
        for kind in ("signal", "directive"):  # and the first time it may signal, instruct
            offered = [a for a in choices if a.WhichOneof("kind") == kind]
            if offered:
                kinds.add(f"{kind} offered")
                if kind not in kinds:
                    action = offered[0]
        kinds.add(
            game_pb2.Call.Name(action.call)
            if action.WhichOneof("kind") == "call"
            else str(action.WhichOneof("kind"))
        )
        response = submit(client, name, tokens[seat], action, etag=view.etag)
        assert int(response.game.etag) == int(view.etag) + 1
        assert response.events
    raise AssertionError("the match did not end")


def watched(
    client: game_service_pb2_grpc.GameServiceStub, name: str, token: Metadata
) -> list[game_service_pb2.WatchGameResponse]:
    """Every version of a finished game, as WatchGame streams it to ``token``'s seat."""
    stream = client.WatchGame(
        game_service_pb2.WatchGameRequest(name=name, after_version=0), metadata=token, timeout=30
    )
    return list(stream)


def test_a_french_truc_game_is_played_to_the_end_over_grpc(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(2)
    tokens = [auth(p) for p in players]
    options = game_pb2.RuleOptions(rule_set=FRENCH, target_score=7)
    created = create(client, players, options)
    game = created.game
    assert (game.rule_set, game.seat_count) == (FRENCH, 2)
    assert [(s.seat, s.player, s.hand_size) for s in game.seats] == [
        (0, players[0], 3),
        (1, players[1], 3),
    ]
    assert game.options.rule_set == FRENCH and game.options.target_score == 7
    assert game.options.trick_order == game_pb2.TRICK_ORDER_SEVEN_EIGHT
    assert not game.governors
    assert game.to_act == game.eldest == (game.dealer + 1) % 2
    started = [e.hand_started for e in game.events if e.HasField("hand_started")]
    assert [s.cutter for s in started] == [-1]

    final, kinds = play_to_the_end(client, created.name, tokens, random.Random(11))
    assert final.finished and final.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)
    winner = 0 if final.winner == game_pb2.TEAM_A else 1
    assert (final.manches.team_a, final.manches.team_b)[winner] == 2
    assert all(h.scores.team_a == 7 or h.scores.team_b == 7 for h in final.history)
    assert {"play_card", "CALL_RAISE"} <= kinds
    assert [e for e in final.events if e.HasField("match_ended")]
    for seat, token in enumerate(tokens):
        end = view_of(client, created.name, token)
        assert end.finished and end.seat == seat and not end.legal_actions
        # The watch path (the public part shared by every watcher, plus the seat's own).
        versions = watched(client, created.name, token)
        assert [v.version for v in versions] == list(range(1, int(end.etag) + 1))
        for change in versions:
            assert change.game.seat == seat
            assert (change.game.rule_set, change.game.seat_count) == (FRENCH, 2)
            change.game.events.extend(change.events)
            check_private(change.game)


def test_a_partnership_truc_game_is_played_to_the_end_over_grpc(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(4)
    tokens = [auth(p) for p in players]
    options = game_pb2.RuleOptions(rule_set=PARTNERSHIP, target_score=5, manches_to_win=1)
    created = create(client, players, options)
    game = created.game
    assert (game.rule_set, game.seat_count, len(game.seats)) == (PARTNERSHIP, 4, 4)
    assert list(game.governors) == [game.dealer, game.eldest]
    assert [s.governor for s in game.seats] == [s in game.governors for s in range(4)]
    assert [s.team for s in game.seats] == [game_pb2.TEAM_A, game_pb2.TEAM_B] * 2

    final, kinds = play_to_the_end(client, created.name, tokens, random.Random(5), chatter=0.1)
    assert final.finished
    assert {"play_card", "directive"} <= kinds
    # A signal needs a partner holding a 7, 8 or ace: sent the first time one could be.
    assert ("signal" in kinds) == ("signal offered" in kinds)
    # Each seat's log has its team's messages and none of the other team's.
    seen: set[int] = set()
    for seat, token in enumerate(tokens):
        end = view_of(client, created.name, token)
        senders = {
            e.signal_sent.seat if e.HasField("signal_sent") else e.directive_sent.seat
            for e in end.events
            if e.HasField("signal_sent") or e.HasField("directive_sent")
        }
        assert {s % 2 for s in senders} <= {seat % 2}
        seen |= senders
    assert seen
    for change in watched(client, created.name, tokens[1]):
        assert list(change.game.governors) == [change.game.dealer, change.game.eldest]
        change.game.events.extend(change.events)
        check_private(change.game)


def test_a_raise_is_answered_by_the_opponent_and_in_partnerships_by_the_opposing_governor(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(2)
    tokens = [auth(p) for p in players]
    name = create(
        client, players, game_pb2.RuleOptions(rule_set=FRENCH), deals=[FRENCH_DEAL], dealer=1
    ).name
    raised = submit(client, name, tokens[0], call(game_pb2.CALL_RAISE)).game
    assert (raised.prompt, raised.to_act) == (game_pb2.PROMPT_RAISE_ANSWER, 1)
    assert (raised.truc_call.call, raised.truc_call.caller, raised.truc_call.answerer) == (
        game_pb2.CALL_RAISE,
        0,
        1,
    )
    error = expect_error(
        lambda: submit(client, name, tokens[0], call(game_pb2.CALL_ACCEPT)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    assert error.details()
    accepted = submit(client, name, tokens[1], call(game_pb2.CALL_ACCEPT)).game
    assert (accepted.stake, accepted.stake_call, accepted.to_act) == (2, game_pb2.CALL_RAISE, 0)
    assert accepted.prompt == game_pb2.PROMPT_TURN and not accepted.HasField("truc_call")

    players = players_of(4)
    tokens = [auth(p) for p in players]
    name = create(
        client,
        players,
        game_pb2.RuleOptions(rule_set=PARTNERSHIP),
        deals=[PARTNERSHIP_DEAL],
        dealer=3,
    ).name
    assert list(view_of(client, name, SPECTATOR).governors) == [3, 0]
    submit(client, name, tokens[0], play(french("9He")))
    # Seat 1 is of the dealer's side: eldest (seat 0) governs the other side and answers.
    raised = submit(client, name, tokens[1], call(game_pb2.CALL_RAISE)).game
    assert (raised.truc_call.caller, raised.truc_call.answerer, raised.to_act) == (1, 0, 0)
    expect_error(
        lambda: submit(client, name, tokens[2], call(game_pb2.CALL_ACCEPT)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    assert submit(client, name, tokens[0], call(game_pb2.CALL_ACCEPT)).game.stake == 2
    submit(client, name, tokens[1], play(french("8Cl")))
    # Seat 2 does not govern: it may not concede for its side.
    mine = view_of(client, name, tokens[2])
    assert mine.to_act == 2
    assert call(game_pb2.CALL_FOLD) not in mine.legal_actions
    expect_error(
        lambda: submit(client, name, tokens[2], call(game_pb2.CALL_FOLD)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_ALLOWED_NOW",
    )


def test_a_binding_instruction_refuses_any_other_card_and_only_partners_see_it(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(4)
    tokens = [auth(p) for p in players]
    name = create(
        client,
        players,
        game_pb2.RuleOptions(rule_set=PARTNERSHIP),
        deals=[PARTNERSHIP_DEAL],
        dealer=3,
    ).name
    # Signals are honest and go from the governor's partner only.
    submit(client, name, tokens[2], game_pb2.Action(signal=game_pb2.SIGNAL_SEVEN))
    for seat, signal in ((2, game_pb2.SIGNAL_EIGHT), (0, game_pb2.SIGNAL_SEVEN)):
        expect_error(
            lambda seat=seat, signal=signal: submit(  # type: ignore[misc]
                client, name, tokens[seat], game_pb2.Action(signal=signal)
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NOT_ALLOWED_NOW",
        )
    leave = game_pb2.Action(directive=game_pb2.DIRECTIVE_LEAVE_IT_TO_ME)
    expect_error(
        lambda: submit(client, name, tokens[2], leave),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_ALLOWED_NOW",
    )
    submit(client, name, tokens[0], leave)
    submit(client, name, tokens[0], play(french("KSp")))
    submit(client, name, tokens[1], play(french("TDi")))
    partner = view_of(client, name, tokens[2])
    assert partner.to_act == 2 and partner.instruction == game_pb2.DIRECTIVE_LEAVE_IT_TO_ME
    assert [a.play_card for a in partner.legal_actions if a.HasField("play_card")] == [
        french("9Di")
    ]
    assert [(m.seat, m.WhichOneof("message")) for m in partner.signals] == [
        (2, "signal"),
        (0, "directive"),
    ]
    expect_error(
        lambda: submit(client, name, tokens[2], play(french("7He"))),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_ALLOWED_NOW",
    )
    for opponent in (1, 3):
        theirs = view_of(client, name, tokens[opponent])
        assert theirs.instruction == game_pb2.DIRECTIVE_UNSPECIFIED and not theirs.signals
        assert not [e for e in theirs.events if e.HasField("directive_sent")]
        assert not [e for e in theirs.events if e.HasField("signal_sent")]
        check_private(theirs)
    after = submit(client, name, tokens[2], play(french("9Di"))).game
    assert after.instruction == game_pb2.DIRECTIVE_UNSPECIFIED  # used up by the card


def test_a_card_of_the_other_pack_is_not_in_hand_and_clubs_are_read_in_the_games_pack(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(2)
    tokens = [auth(p) for p in players]
    name = create(
        client, players, game_pb2.RuleOptions(rule_set=FRENCH), deals=[FRENCH_DEAL], dealer=1
    ).name
    for spanish in ("1Sw", "3Cl", "NCo"):
        expect_error(
            lambda spanish=spanish: submit(  # type: ignore[misc]
                client, name, tokens[0], play(proto_card(spanish))
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "CARD_NOT_IN_HAND",
        )
    no_card = cards_pb2.Card(suit=cards_pb2.SUIT_HEARTS, rank=cards_pb2.RANK_ONE)
    expect_error(
        lambda: submit(client, name, tokens[0], play(no_card)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_ACTION",
    )
    assert view_of(client, name, SPECTATOR).etag == "1"  # nothing was applied
    # SUIT_CLUBS + RANK_SEVEN is the seven of clubs of the piquet pack here.
    played = submit(client, name, tokens[0], play(french("7Cl")))
    assert [(e.card_played.seat, key(e.card_played.card)) for e in played.events] == [
        (0, (cards_pb2.SUIT_CLUBS, cards_pb2.RANK_SEVEN))
    ]
    assert [key(c) for c in played.game.hand] == [key(french("9He")), key(french("TSp"))]

    # Catalan Truc plays the Spanish pack: a French card is not in hand there.
    players = players_of(2)
    tokens = [auth(p) for p in players]
    request = game_service_pb2.CreateGameRequest(
        players=players,
        options=game_pb2.RuleOptions(rule_set=CATALAN, seats=2),
        dealer=1,
        fixed_deals=[
            game_pb2.Deal(
                hands=[
                    game_pb2.Hand(cards=[proto_card(c) for c in ("7Cl", "3Sw", "4Co")]),
                    game_pb2.Hand(cards=[proto_card(c) for c in ("1Cu", "2Cl", "5Sw")]),
                ]
            )
        ],
    )
    name = client.CreateGame(request, metadata=LOBBY_AUTH).name
    expect_error(
        lambda: submit(client, name, tokens[0], play(french("7He"))),
        grpc.StatusCode.FAILED_PRECONDITION,
        "CARD_NOT_IN_HAND",
    )
    played = submit(client, name, tokens[0], play(proto_card("7Cl")))
    assert [key(e.card_played.card) for e in played.events if e.HasField("card_played")] == [
        key(proto_card("7Cl"))
    ]


def _timed_out(view: game_pb2.GameView, version: int) -> list[game_pb2.TurnTimedOut]:
    return [
        e.turn_timed_out
        for e in view.events
        if e.version == version and e.HasField("turn_timed_out")
    ]


def _wait_for_version(
    client: game_service_pb2_grpc.GameServiceStub, name: str, version: int
) -> game_pb2.GameView:
    wait_until(
        lambda: int(view_of(client, name, SPECTATOR).etag) >= version,
        timeout=5.0,
        what=f"{name} at version {version}",
    )
    return view_of(client, name, SPECTATOR)


def test_turn_deadlines_refuse_a_redeal_fold_a_raise_and_play_the_lowest_card(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(2)
    tokens = [auth(p) for p in players]
    created = create(
        client,
        players,
        game_pb2.RuleOptions(rule_set=FRENCH),
        deals=[FRENCH_DEAL, FRENCH_DEAL],
        dealer=1,
        turn_seconds=1,
    )
    name, start = created.name, time.time()
    assert start + 0.5 < created.game.deadline.ToMilliseconds() / 1000 < start + 1.5
    proposed = submit(client, name, tokens[0], call(game_pb2.CALL_PROPOSE_REDEAL)).game
    assert (proposed.prompt, proposed.to_act) == (game_pb2.PROMPT_REDEAL_ANSWER, 1)
    assert proposed.redeal_proposed

    view = _wait_for_version(client, name, 3)  # the dealer refuses, by default
    assert [(t.seat, t.action.call) for t in _timed_out(view, 3)] == [(1, game_pb2.CALL_REFUSE)]
    assert (view.prompt, view.to_act, view.hand_number) == (game_pb2.PROMPT_TURN, 0, 1)

    view = _wait_for_version(client, name, 4)  # eldest plays its lowest card: 9He
    (timed_out,) = _timed_out(view, 4)
    assert (timed_out.seat, key(timed_out.action.play_card)) == (0, key(french("9He")))
    assert [key(p.card) for p in view.current_trick.plays] == [key(french("9He"))]

    raised = submit(client, name, tokens[1], call(game_pb2.CALL_RAISE)).game
    assert raised.to_act == 0
    view = _wait_for_version(client, name, 6)  # the raise is folded: B scores the stake before it
    assert [(t.seat, t.action.call) for t in _timed_out(view, 6)] == [(0, game_pb2.CALL_FOLD)]
    assert (view.scores.team_a, view.scores.team_b, view.hands_played) == (0, 1, 1)


def test_a_turn_deadline_obeys_a_binding_instruction(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    players = players_of(4)
    tokens = [auth(p) for p in players]
    name = create(
        client,
        players,
        game_pb2.RuleOptions(rule_set=PARTNERSHIP),
        deals=[PARTNERSHIP_DEAL],
        dealer=3,
        turn_seconds=2,
    ).name
    submit(client, name, tokens[0], game_pb2.Action(directive=game_pb2.DIRECTIVE_PLAY_SEVEN))
    submit(client, name, tokens[0], play(french("KSp")))
    at = int(submit(client, name, tokens[1], play(french("TDi"))).game.etag)
    view = _wait_for_version(client, name, at + 1)
    # Not its lowest card (9Di): the seven its governor told it to play.
    (timed_out,) = _timed_out(view, at + 1)
    assert (timed_out.seat, key(timed_out.action.play_card)) == (2, key(french("7He")))


def deal_of(hands: Sequence[Sequence[str]], card: Callable[[str], cards_pb2.Card]) -> game_pb2.Deal:
    return game_pb2.Deal(hands=[game_pb2.Hand(cards=[card(c) for c in h]) for h in hands])


@dataclass(frozen=True)
class Refused:
    """A CreateGame that must be refused INVALID_ARGUMENT BAD_REQUEST, and how
    its message starts."""

    options: game_pb2.RuleOptions
    players: int
    message: str
    deals: tuple[game_pb2.Deal, ...] = ()
    dealer: int | None = None
    draws: tuple[cards_pb2.Card, ...] = ()


REFUSED = {
    "french, six players": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH), 6, "players: french_truc needs 2, got 6"
    ),
    "sackson, three players": Refused(
        game_pb2.RuleOptions(rule_set=SACKSON), 3, "players: sackson_truc needs 2, got 3"
    ),
    "partnership, two players": Refused(
        game_pb2.RuleOptions(rule_set=PARTNERSHIP), 2, "players: partnership_truc needs 4"
    ),
    "catalan, two players": Refused(
        game_pb2.RuleOptions(rule_set=CATALAN), 2, "players: catalan_truc needs 4"
    ),
    "catalan two seats, four players": Refused(
        game_pb2.RuleOptions(rule_set=CATALAN, seats=2), 4, "players: catalan_truc needs 2"
    ),
    "truc y flou, four players": Refused(game_pb2.RuleOptions(), 4, "players: truc_y_flou needs 6"),
    "french, dealer 2": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH), 2, "dealer: a seat 0-1", dealer=2
    ),
    "partnership, dealer 4": Refused(
        game_pb2.RuleOptions(rule_set=PARTNERSHIP), 4, "dealer: a seat 0-3", dealer=4
    ),
    "french, a deal of six hands": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH),
        2,
        "fixed_deals[0]: a deal has 2 hands, not 6",
        deals=(deal_of(TRUC_REFUSED_DEAL, proto_card),),
        dealer=0,
    ),
    "french, a deal of Spanish cards": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH),
        2,
        "fixed_deals[0].hands[0].cards[0]: 1Sw is not a card of the piquet pack",
        deals=(deal_of((("1Sw", "2Sw", "3Sw"), ("4Sw", "5Sw", "6Sw")), proto_card),),
        dealer=0,
    ),
    "truc y flou, a deal with a piquet card": Refused(
        game_pb2.RuleOptions(),
        6,
        "fixed_deals[0].hands[5].cards[2]: 8He is not a card of the Spanish pack",
        deals=(
            deal_of(
                (*TRUC_REFUSED_DEAL[:5], ("6Co", "KSw", "8He")),
                lambda c: french(c) if c == "8He" else proto_card(c),
            ),
        ),
        dealer=0,
    ),
    "truc y flou, a piquet card drawn": Refused(
        game_pb2.RuleOptions(),
        6,
        "fixed_draws[0]: 7He is not a card of the Spanish pack",
        deals=(deal_of(TRUC_REFUSED_DEAL, proto_card),),
        draws=(french("7He"), proto_card("1Sw")),
    ),
    "french, fixed draws": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH),
        2,
        "fixed_draws: french_truc has no draw",
        deals=(deal_of(FRENCH_DEAL, french),),
        draws=(french("7He"), french("8He")),
    ),
    "french, ace_value": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH, ace_value=1), 2, "options.ace_value: "
    ),
    "partnership, cut": Refused(
        game_pb2.RuleOptions(rule_set=PARTNERSHIP, cut=game_pb2.CUT_MODE_CUTTER),
        4,
        "options.cut: ",
    ),
    "catalan, trick_order": Refused(
        game_pb2.RuleOptions(rule_set=CATALAN, trick_order=game_pb2.TRICK_ORDER_SEVEN_ACE),
        4,
        "options.trick_order: ",
    ),
    "truc y flou, trick_order": Refused(
        game_pb2.RuleOptions(trick_order=game_pb2.TRICK_ORDER_SEVEN_ACE), 6, "options.trick_order: "
    ),
    "french, four seats": Refused(
        game_pb2.RuleOptions(rule_set=FRENCH, seats=4), 4, "options.seats: "
    ),
    "catalan, three seats": Refused(
        game_pb2.RuleOptions(rule_set=CATALAN, seats=3), 3, "options.seats: "
    ),
    "an unknown rule set": Refused(
        game_pb2.RuleOptions(rule_set=game_pb2.RuleSet.ValueType(42)), 2, "options.rule_set: "
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_create_game_refuses_what_the_rule_set_does_not_have(
    client: game_service_pb2_grpc.GameServiceStub, case: str
) -> None:
    refused = REFUSED[case]
    request = game_service_pb2.CreateGameRequest(
        players=players_of(refused.players),
        options=refused.options,
        fixed_deals=refused.deals,
        fixed_draws=refused.draws,
    )
    if refused.dealer is not None:
        request.dealer = refused.dealer
    error = expect_error(
        lambda: client.CreateGame(request, metadata=LOBBY_AUTH),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    assert (error.details() or "").startswith(refused.message), error.details()


def test_a_player_holds_one_seat_and_catalan_truc_seats_two_when_asked(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    twice = ["same-player", "same-player"]
    expect_error(
        lambda: create(client, twice, game_pb2.RuleOptions(rule_set=FRENCH)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    for options, count in (
        (game_pb2.RuleOptions(rule_set=CATALAN, seats=2), 2),
        (game_pb2.RuleOptions(rule_set=CATALAN), 4),
        (game_pb2.RuleOptions(rule_set=SACKSON), 2),
    ):
        players = players_of(count)
        game = create(client, players, options).game
        assert (game.rule_set, game.seat_count) == (options.rule_set, count)
        assert [s.player for s in game.seats] == players
        assert game.options.seats == count
        if options.rule_set == SACKSON:
            assert game.options.target_score == 16
        mine = view_of(client, f"games/{game.name.split('/')[-1]}", auth(players[0]))
        assert len(mine.hand) == 3
        check_private(mine)


def test_a_truc_y_flou_game_stored_before_the_rule_sets_still_loads_and_plays(
    client: game_service_pb2_grpc.GameServiceStub, own_redis: RedisServer
) -> None:
    """Version 1 of a game written to Redis as the service wrote it before this
    change: Truc y Flou's state codec and event codec (both unchanged)."""
    players = players_of(6)
    transition = truc_y_flou_new_game(
        RuleOptions(),
        deals=[tuple(tuple(Card.parse(c) for c in h) for h in TRUC_REFUSED_DEAL)],
        dealer=5,
    )
    game_id = f"legacy-{uuid.uuid4().hex[:8]}"

    async def store() -> bool:
        redis = Redis.from_url(own_redis.url)
        try:
            store = RedisGameStore(redis, ttl_seconds=600, finished_ttl_seconds=600)
            return await store.create(
                game_id,
                state=truc_y_flou_encode_state(transition.state),
                events=truc_y_flou_encode_events(transition.events),
                meta=GameMeta(tuple(players), 30),
                deadline_ms=None,
            )
        finally:
            await redis.aclose()

    assert asyncio.run(store())
    name = f"games/{game_id}"
    view = view_of(client, name, auth(players[0]))
    assert (view.rule_set, view.seat_count, view.to_act) == (game_pb2.RULE_SET_TRUC_Y_FLOU, 6, 0)
    assert sorted(card_text_of(c) for c in view.hand) == ["2Co", "5Sw", "KCu"]
    played = submit(client, name, auth(players[0]), play(proto_card("5Sw")), etag="1").game
    assert played.to_act == 1 and played.etag == "2"
    assert [s.captain for s in played.seats] == [True, False, False, True, False, False]


_RANKS = "1234567JNK"
_SUITS = ("Sw", "Cl", "Co", "Cu")


def card_text_of(card: cards_pb2.Card) -> str:
    return _RANKS[card.rank - 1] + _SUITS[card.suit - 1]
