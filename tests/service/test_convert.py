"""The proto <-> engine conversions (truc_protocol.convert): real engine games,
real generated messages, no mocks."""

from __future__ import annotations

import dataclasses
import itertools
import random
import typing
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from truc.v1 import cards_pb2, game_pb2

from truc_protocol.convert import (
    action_from_proto,
    action_to_proto,
    card_from_proto,
    card_to_proto,
    deal_from_proto,
    event_to_proto,
    minimal_view_to_proto,
    options_from_proto,
    options_to_proto,
    public_view_to_proto,
    seat_view_from_public,
    team_to_proto,
    view_to_proto,
)
from truc_protocol.errors import InvalidArgument
from truc_rules import (
    Action,
    Call,
    Card,
    ChooseDealer,
    CutDeck,
    CutMode,
    Directive,
    MakeCall,
    PeriqueTrickRank,
    Phase,
    PlayCard,
    Responder,
    RuleOptions,
    Signal,
    apply_action,
    legal_actions,
    new_game,
    view_for,
)
from truc_rules.cards import DECK, PIQUET, SPANISH, Deck, Suit
from truc_rules.errors import IllegalAction, Reason
from truc_rules.family import FamilyState, FamilyView
from truc_rules.family import Phase as FamilyPhase
from truc_rules.registry import (
    FAMILY,
    AnyTransition,
    deck_of,
    default_options,
    options_from_mapping,
    seat_count,
)
from truc_rules.registry import apply_action as registry_apply
from truc_rules.registry import legal_actions as registry_legal
from truc_rules.registry import new_game as registry_new_game
from truc_rules.registry import view_for as registry_view
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou.actions import CALL, CHOOSE_DEALER, DIRECTIVE, PLAY, SIGNAL, TRUC_LADDER
from truc_rules.truc_y_flou.events import (
    Called,
    CardPlayed,
    CardsDealt,
    CreditReason,
    DealerChosen,
    DealsExhausted,
    DeckCut,
    DeclarationSettled,
    DirectiveSent,
    DrawCard,
    EmbitVoided,
    Event,
    FlorShowdown,
    HandEnded,
    HandStarted,
    MancheEnded,
    MatchEnded,
    PointsCredited,
    Shown,
    SignalSent,
    StakeRaised,
    TrickCompleted,
    TurnTimedOut,
)
from truc_rules.truc_y_flou.state import UNDECIDED
from truc_rules.truc_y_flou.views import GameView

pytestmark = pytest.mark.unit  # pure: no Redis, no server

PLAYERS = ("users/ana", "users/bel", "users/cai", "users/dan", "users/eva", "users/fil")

EVERY_ACTION: tuple[Action, ...] = (
    *PLAY.values(),
    *CALL.values(),
    *SIGNAL.values(),
    *DIRECTIVE.values(),
    *CHOOSE_DEALER,
    *(CutDeck(p) for p in range(1, 40)),
)


def call_number(name: str) -> game_pb2.Call.ValueType:
    return game_pb2.Call.Value(name)


# --- cards and actions ---


def test_every_card_converts_by_suit_and_rank_plus_one() -> None:
    for card in DECK:
        msg = card_to_proto(card)
        assert msg.suit == card.suit + 1
        assert msg.rank == card.rank + 1
        assert cards_pb2.Suit.Name(msg.suit) == f"SUIT_{card.suit.name}"
        assert cards_pb2.Rank.Name(msg.rank) == f"RANK_{card.rank.name}"
        assert card_from_proto(msg, "card") is card


def test_card_to_proto_hands_out_a_new_message_each_time() -> None:
    first = card_to_proto(Card.SW_1)
    first.suit = cards_pb2.SUIT_CUPS
    assert card_to_proto(Card.SW_1).suit == cards_pb2.SUIT_SWORDS


def pack_of_action(action: Action) -> Deck:
    """The pack a game must play with for ``action``'s card to be read as itself."""
    return PIQUET if isinstance(action, PlayCard) and action.card in PIQUET else SPANISH


@pytest.mark.parametrize("action", EVERY_ACTION, ids=repr)
def test_every_engine_action_round_trips(action: Action) -> None:
    msg = action_to_proto(action)
    wire = game_pb2.Action.FromString(msg.SerializeToString())
    back = action_from_proto(wire, pack_of_action(action))
    assert back == action
    assert type(back) is type(action)
    if not isinstance(action, CutDeck):
        assert back is action, "the interned instance is returned"


def test_action_to_proto_fills_the_right_oneof() -> None:
    assert action_to_proto(PLAY[Card.CO_J]).WhichOneof("kind") == "play_card"
    assert action_to_proto(CALL[Call.TRUC]).call == game_pb2.CALL_TRUC
    assert action_to_proto(SIGNAL[Signal.ESPASA]).signal == game_pb2.SIGNAL_ESPASA
    assert action_to_proto(DIRECTIVE[Directive.TRUC]).directive == game_pb2.DIRECTIVE_TRUC
    assert action_to_proto(CHOOSE_DEALER[0]).WhichOneof("kind") == "choose_dealer"
    assert action_to_proto(CutDeck(20)).cut_deck == 20
    # A fresh message: changing it changes nothing for the next caller.
    msg = action_to_proto(CALL[Call.TRUC])
    msg.call = game_pb2.CALL_FOLD
    assert action_to_proto(CALL[Call.TRUC]).call == game_pb2.CALL_TRUC


def test_equal_but_not_interned_actions_convert() -> None:
    assert action_to_proto(PlayCard(Card.CU_K)) == action_to_proto(PLAY[Card.CU_K])
    assert action_to_proto(MakeCall(Call.FOLD)) == action_to_proto(CALL[Call.FOLD])


def test_out_of_range_seats_and_positions_pass_through_to_the_engine() -> None:
    assert action_from_proto(game_pb2.Action(choose_dealer=7)) == ChooseDealer(7)
    assert action_from_proto(game_pb2.Action(choose_dealer=-1)) == ChooseDealer(-1)
    assert action_from_proto(game_pb2.Action(cut_deck=0)) == CutDeck(0)
    assert action_from_proto(game_pb2.Action(cut_deck=40)) == CutDeck(40)
    assert action_from_proto(game_pb2.Action(choose_dealer=0)) is CHOOSE_DEALER[0]


def _unknown_call_on_the_wire() -> game_pb2.Action:
    # Field 2 (call), varint 99: what a newer client could send.
    return game_pb2.Action.FromString(bytes([0x10, 99]))


MALFORMED_ACTIONS: dict[str, tuple[game_pb2.Action, str]] = {
    "empty": (game_pb2.Action(), "action:"),
    "call unspecified": (game_pb2.Action(call=game_pb2.CALL_UNSPECIFIED), "action.call"),
    "call 99": (game_pb2.Action(call=game_pb2.Call.ValueType(99)), "action.call"),
    "call 99 from the wire": (_unknown_call_on_the_wire(), "action.call"),
    "call -1": (game_pb2.Action(call=game_pb2.Call.ValueType(-1)), "action.call"),
    "signal unspecified": (
        game_pb2.Action(signal=game_pb2.SIGNAL_UNSPECIFIED),
        "action.signal",
    ),
    "signal 99": (game_pb2.Action(signal=game_pb2.Signal.ValueType(99)), "action.signal"),
    "directive unspecified": (
        game_pb2.Action(directive=game_pb2.DIRECTIVE_UNSPECIFIED),
        "action.directive",
    ),
    "directive 99": (
        game_pb2.Action(directive=game_pb2.Directive.ValueType(99)),
        "action.directive",
    ),
    "card without suit": (
        game_pb2.Action(play_card=cards_pb2.Card(rank=cards_pb2.RANK_ONE)),
        "action.play_card",
    ),
    "card without rank": (
        game_pb2.Action(play_card=cards_pb2.Card(suit=cards_pb2.SUIT_SWORDS)),
        "action.play_card",
    ),
    "empty card": (game_pb2.Action(play_card=cards_pb2.Card()), "action.play_card"),
    "card suit 99": (
        game_pb2.Action(
            play_card=cards_pb2.Card(suit=cards_pb2.Suit.ValueType(99), rank=cards_pb2.RANK_ONE)
        ),
        "action.play_card",
    ),
    "card rank 11": (
        game_pb2.Action(
            play_card=cards_pb2.Card(suit=cards_pb2.SUIT_CUPS, rank=cards_pb2.Rank.ValueType(11))
        ),
        "action.play_card",
    ),
}


@pytest.mark.parametrize("case", MALFORMED_ACTIONS)
def test_malformed_actions_are_bad_action(case: str) -> None:
    msg, field = MALFORMED_ACTIONS[case]
    with pytest.raises(InvalidArgument) as caught:
        action_from_proto(msg)
    assert caught.value.reason == "BAD_ACTION"
    assert caught.value.message.startswith(field)


def test_a_bad_card_outside_an_action_is_bad_request() -> None:
    with pytest.raises(InvalidArgument) as caught:
        card_from_proto(cards_pb2.Card(), "fixed_deals[0].hands[1].cards[2]")
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message.startswith("fixed_deals[0].hands[1].cards[2]: ")


# --- options, deals, teams ---

PERIQUES = {
    game_pb2.PERIQUE_TRICK_RANK_UNSPECIFIED: PeriqueTrickRank.LOWEST,
    game_pb2.PERIQUE_TRICK_RANK_LOWEST: PeriqueTrickRank.LOWEST,
    game_pb2.PERIQUE_TRICK_RANK_NATURAL: PeriqueTrickRank.NATURAL,
    game_pb2.PERIQUE_TRICK_RANK_TOP: PeriqueTrickRank.TOP,
}
RESPONDERS = {
    game_pb2.RESPONDER_UNSPECIFIED: Responder.CAPTAIN,
    game_pb2.RESPONDER_CAPTAIN: Responder.CAPTAIN,
    game_pb2.RESPONDER_CALLER: Responder.CALLER,
}
CUTS = {
    game_pb2.CUT_MODE_UNSPECIFIED: CutMode.AUTOMATIC,
    game_pb2.CUT_MODE_AUTOMATIC: CutMode.AUTOMATIC,
    game_pb2.CUT_MODE_CUTTER: CutMode.CUTTER,
}


def test_empty_options_are_the_defaults() -> None:
    options = options_from_proto(game_pb2.RuleOptions())
    assert options == RuleOptions()
    assert options.perique_trick_rank is PeriqueTrickRank.LOWEST
    assert options.responder is Responder.CAPTAIN
    assert options.cut is CutMode.AUTOMATIC
    assert (options.target_score, options.manches_to_win) == (25, 2)


def test_every_option_combination_round_trips() -> None:
    for perique, responder, cut, play_out, ace, target, manches in itertools.product(
        PERIQUES, RESPONDERS, CUTS, (False, True), (0, 1), (0, 1, 12, 250), (0, 1, 9)
    ):
        msg = game_pb2.RuleOptions(
            perique_trick_rank=perique,
            play_out_all_tricks=play_out,
            ace_value=ace,
            responder=responder,
            cut=cut,
            target_score=target,
            manches_to_win=manches,
        )
        options = options_from_proto(msg)
        assert options == RuleOptions(
            perique_trick_rank=PERIQUES[perique],
            play_out_all_tricks=play_out,
            ace_value=ace,
            responder=RESPONDERS[responder],
            cut=CUTS[cut],
            target_score=target or 25,
            manches_to_win=manches or 2,
        )
        explicit = options_to_proto(options)
        assert explicit.perique_trick_rank != game_pb2.PERIQUE_TRICK_RANK_UNSPECIFIED
        assert explicit.responder != game_pb2.RESPONDER_UNSPECIFIED
        assert explicit.cut != game_pb2.CUT_MODE_UNSPECIFIED
        assert explicit.target_score == options.target_score
        assert explicit.manches_to_win == options.manches_to_win
        assert options_from_proto(explicit) == options


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (game_pb2.RuleOptions(ace_value=2), "options.ace_value: "),
        (game_pb2.RuleOptions(ace_value=-1), "options.ace_value: "),
        (game_pb2.RuleOptions(target_score=-5), "options.target_score: "),
        (game_pb2.RuleOptions(target_score=251), "options.target_score: "),
        (game_pb2.RuleOptions(manches_to_win=10), "options.manches_to_win: "),
        (
            game_pb2.RuleOptions(perique_trick_rank=game_pb2.PeriqueTrickRank.ValueType(99)),
            "options.perique_trick_rank: ",
        ),
        (
            game_pb2.RuleOptions(responder=game_pb2.Responder.ValueType(3)),
            "options.responder: ",
        ),
        (game_pb2.RuleOptions(cut=game_pb2.CutMode.ValueType(-2)), "options.cut: "),
    ],
)
def test_bad_options_are_bad_request(msg: game_pb2.RuleOptions, field: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        options_from_proto(msg)
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message.startswith(field)


def _deal_message(hands: tuple[tuple[Card, ...], ...]) -> game_pb2.Deal:
    return game_pb2.Deal(
        hands=[game_pb2.Hand(cards=[card_to_proto(c) for c in hand]) for hand in hands]
    )


DEAL = tuple(tuple(DECK[3 * s + i] for i in range(3)) for s in range(6))


def test_a_deal_converts() -> None:
    assert deal_from_proto(_deal_message(DEAL), "fixed_deals[0]") == DEAL


def test_a_deal_with_duplicates_is_left_to_the_engine() -> None:
    twice = ((Card.SW_1,) * 3,) * 6
    assert deal_from_proto(_deal_message(twice), "fixed_deals[0]") == twice


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (game_pb2.Deal(), "fixed_deals[1]: "),
        (_deal_message(DEAL[:5]), "fixed_deals[1]: "),
        (_deal_message((*DEAL, DEAL[0])), "fixed_deals[1]: "),
        (_deal_message((*DEAL[:2], DEAL[2][:2], *DEAL[3:])), "fixed_deals[1].hands[2]: "),
        (_deal_message((*DEAL[:5], (*DEAL[5], Card.CU_K))), "fixed_deals[1].hands[5]: "),
    ],
)
def test_a_malformed_deal_is_bad_request(msg: game_pb2.Deal, field: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(msg, "fixed_deals[1]")
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message.startswith(field)


def test_a_bad_card_in_a_deal_names_its_place() -> None:
    msg = _deal_message(DEAL)
    msg.hands[4].cards[1].rank = cards_pb2.RANK_UNSPECIFIED
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(msg, "fixed_deals[0]")
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message.startswith("fixed_deals[0].hands[4].cards[1]: ")


def test_teams() -> None:
    assert team_to_proto(0) == game_pb2.TEAM_A
    assert team_to_proto(1) == game_pb2.TEAM_B
    for other in (None, -1, 2, 7):
        assert team_to_proto(other) == game_pb2.TEAM_UNSPECIFIED


# --- events ---

SHOWN = (Shown(seat=4, value=33, has_declaration=True, cards=(Card.CO_7, Card.CO_6)),)

# One instance of every event class, and the oneof field it must fill.
EVERY_EVENT: tuple[tuple[Event, str], ...] = (
    (DrawCard(0, Card.CO_7), "draw_card"),
    (DealerChosen(3, 5), "dealer_chosen"),
    (HandStarted(2, 5, 0, 4, 1, False), "hand_started"),
    (DeckCut(4, 17), "deck_cut"),
    (CardsDealt(2, (Card.SW_1, Card.CL_1, Card.CU_K), 1, None), "cards_dealt"),
    (DealsExhausted(), "deals_exhausted"),
    (Called(1, Call.ALIMIDOU_CON_FLOR), "called"),
    (DeclarationSettled("flor", 1, 6, False, SHOWN), "declaration_settled"),
    (FlorShowdown(0, SHOWN), "flor_showdown"),
    (EmbitVoided(1, 2), "embit_voided"),
    (StakeRaised(Call.BALOU_PARTIDO, 0), "stake_raised"),
    (CardPlayed(5, Card.CL_N, 3), "card_played"),
    (TrickCompleted(2, None, None, None), "trick_completed"),
    (PointsCredited(0, 3, CreditReason.BONUS, (10, 4)), "points_credited"),
    (HandEnded(7, None, "manche_over"), "hand_ended"),
    (MancheEnded(1, (20, 25), (0, 1)), "manche_ended"),
    (MatchEnded(1, (1, 2)), "match_ended"),
    (SignalSent(4, Signal.MANILLA_CO), "signal_sent"),
    (DirectiveSent(3, Directive.TRUC), "directive_sent"),
    (TurnTimedOut(2, PLAY[Card.CU_4]), "turn_timed_out"),
)


def test_every_event_class_is_covered_here() -> None:
    assert {type(e) for e, _ in EVERY_EVENT} == set(typing.get_args(Event))


@pytest.mark.parametrize(("event", "kind"), EVERY_EVENT, ids=lambda x: type(x).__name__)
def test_every_event_class_converts(event: Event, kind: str) -> None:
    msg = event_to_proto(event, 41)
    assert msg.version == 41
    assert msg.WhichOneof("kind") == kind
    assert game_pb2.Event.FromString(msg.SerializeToString()) == msg


def test_event_fields() -> None:
    dealt = event_to_proto(CardsDealt(2, (Card.SW_1, Card.CL_1, Card.CU_K), 1, None), 1)
    assert [card_from_proto(c, "c") for c in dealt.cards_dealt.cards] == [
        Card.SW_1,
        Card.CL_1,
        Card.CU_K,
    ]
    assert dealt.cards_dealt.HasField("embit")
    assert dealt.cards_dealt.embit == 1
    assert not dealt.cards_dealt.HasField("flor")

    assert not event_to_proto(DealerChosen(-1, 5), 1).dealer_chosen.HasField("seat")
    chosen = event_to_proto(DealerChosen(0, 5), 1).dealer_chosen
    assert chosen.HasField("seat")
    assert (chosen.seat, chosen.dealer) == (0, 5)

    pardes = event_to_proto(TrickCompleted(2, None, None, None), 1).trick_completed
    assert pardes.winner == game_pb2.TEAM_UNSPECIFIED
    assert not pardes.HasField("winning_seat")
    assert not pardes.HasField("next_leader")
    won = event_to_proto(TrickCompleted(1, 1, 3, 3), 1).trick_completed
    assert (won.winner, won.winning_seat, won.next_leader) == (game_pb2.TEAM_B, 3, 3)
    assert won.HasField("winning_seat")

    for how, number in [
        ("tricks", game_pb2.HAND_END_TRICKS),
        ("fold", game_pb2.HAND_END_FOLD),
        ("all_pardes", game_pb2.HAND_END_ALL_PARDES),
        ("manche_over", game_pb2.HAND_END_MANCHE_OVER),
    ]:
        assert event_to_proto(HandEnded(1, 0, how), 1).hand_ended.how == number

    for contest, contest_number in [
        ("embit", game_pb2.CONTEST_EMBIT),
        ("flor", game_pb2.CONTEST_FLOR),
    ]:
        settled = event_to_proto(DeclarationSettled(contest, 0, 3, True, SHOWN), 1)
        assert settled.declaration_settled.contest == contest_number
        assert settled.declaration_settled.team == game_pb2.TEAM_A
        assert settled.declaration_settled.wins_manche
        shown = settled.declaration_settled.shown[0]
        assert (shown.seat, shown.value, shown.has_declaration) == (4, 33, True)
        assert len(shown.cards) == 2

    for reason in CreditReason:
        credited = event_to_proto(PointsCredited(1, 2, reason, (3, 4)), 1).points_credited
        assert game_pb2.CreditReason.Name(credited.reason) == f"CREDIT_REASON_{reason.name}"
        assert (credited.scores.team_a, credited.scores.team_b) == (3, 4)

    ended = event_to_proto(MancheEnded(1, (20, 25), (0, 1)), 1).manche_ended
    assert (ended.winner, ended.scores.team_b, ended.manches.team_b) == (game_pb2.TEAM_B, 25, 1)

    timed = event_to_proto(TurnTimedOut(2, CALL[Call.FOLD]), 1).turn_timed_out
    assert timed.seat == 2
    assert action_from_proto(timed.action) is CALL[Call.FOLD]


@dataclass(frozen=True)
class NotAnEvent:
    seat: int


def test_an_unknown_event_raises_type_error() -> None:
    with pytest.raises(TypeError):
        event_to_proto(NotAnEvent(1), 1)  # type: ignore[arg-type]


# --- views ---


def _proto_cards(cards: typing.Iterable[cards_pb2.Card]) -> list[Card]:
    return [card_from_proto(c, "card") for c in cards]


def check_view(view: GameView, msg: game_pb2.GameView) -> None:
    """Semantic facts every converted view must satisfy."""
    assert game_pb2.GameView.FromString(msg.SerializeToString()) == msg
    assert msg.rule_set == game_pb2.RULE_SET_TRUC_Y_FLOU
    assert msg.seat_count == 6
    assert not msg.governors
    assert msg.instruction == game_pb2.DIRECTIVE_UNSPECIFIED
    assert not msg.mon_reste
    assert not msg.redeal_proposed
    if view.seat is None:
        assert not msg.HasField("seat")
        assert not msg.hand
        assert not msg.dealt
        assert not msg.legal_actions
        assert not msg.HasField("embit_value")
        assert not msg.HasField("flor_value")
        assert not any(e.HasField("cards_dealt") for e in msg.events)
        assert not msg.signals
    else:
        assert msg.HasField("seat")
        assert msg.seat == view.seat
    assert _proto_cards(msg.hand) == list(view.hand)
    assert _proto_cards(msg.dealt) == list(view.dealt)
    assert msg.HasField("to_act") == (view.to_act is not None)
    if view.to_act is not None:
        assert msg.to_act == view.to_act
    assert [action_from_proto(a) for a in msg.legal_actions] == list(view.legal_actions)
    assert (msg.scores.team_a, msg.scores.team_b) == view.scores
    assert (msg.manches.team_a, msg.manches.team_b) == view.manches
    assert game_pb2.Phase.Name(msg.phase) == f"PHASE_{view.phase.name}"
    assert game_pb2.Prompt.Name(msg.prompt) == f"PROMPT_{view.prompt.name}"
    assert [s.hand_size for s in msg.seats] == list(view.hand_sizes)
    assert [s.seat for s in msg.seats] == list(range(6))
    assert [s.captain for s in msg.seats] == [s in view.captains for s in range(6)]
    assert [s.player for s in msg.seats] == list(PLAYERS)
    assert [_proto_cards(s.shown) for s in msg.seats] == [list(h) for h in view.shown]
    assert len(msg.tricks) == len(view.tricks)
    for proto_trick, trick in zip(msg.tricks, view.tricks, strict=True):
        assert _proto_cards(p.card for p in proto_trick.plays) == list(trick.cards)
        assert proto_trick.winner == team_to_proto(trick.winner_team)
    assert [(p.seat, card_from_proto(p.card, "c")) for p in msg.current_trick.plays] == list(
        view.trick_cards
    )
    assert msg.stake == view.stake
    if view.stake_level == 0:
        assert msg.stake_call == game_pb2.CALL_UNSPECIFIED
    else:
        assert msg.stake_call == call_number(f"CALL_{TRUC_LADDER[view.stake_level - 1].name}")
    assert msg.HasField("truc_call") == (view.truc_call is not None)
    assert msg.HasField("embit") == (view.embit is not None)
    if view.embit is not None:
        assert msg.embit.HasField("challenger") == (view.embit.challenger >= 0)
        assert msg.embit.HasField("result") == (view.embit.result is not None)
    assert len(msg.flors) == len(view.flors)
    assert msg.hand_decided == (view.decided != UNDECIDED)
    assert len(msg.signals) == len(view.signals)
    assert len(msg.events) == len(view.events)
    assert [e.WhichOneof("kind") for e in msg.events] == [
        event_to_proto(e, 0).WhichOneof("kind") for e in view.events
    ]


options_strategy = st.builds(
    RuleOptions,
    perique_trick_rank=st.sampled_from(PeriqueTrickRank),
    play_out_all_tricks=st.booleans(),
    ace_value=st.sampled_from([0, 1]),
    responder=st.sampled_from(Responder),
    cut=st.sampled_from(CutMode),
    target_score=st.sampled_from([25, 12]),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=options_strategy,
    seed=st.integers(min_value=0, max_value=2**63 - 1),
    play_seed=st.integers(min_value=0, max_value=2**32),
)
def test_random_games_convert_every_event_and_view(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    rng = random.Random(play_seed)
    transition = new_game(options, seed=seed)
    version = 0
    kinds: set[str] = set()
    while True:
        state = transition.state
        version += 1
        for event in transition.events:
            event_msg = event_to_proto(event, version)
            assert event_msg.version == version
            kind = event_msg.WhichOneof("kind")
            assert kind is not None
            kinds.add(kind)
            assert event_msg.SerializeToString()
        if state.to_act is None or rng.random() < 0.25:
            versions = [version] * len(transition.events)
            for seat in (*range(6), None):
                view = view_for(state, seat, transition.events)
                msg = view_to_proto(
                    view,
                    name="games/g1",
                    players=PLAYERS,
                    etag=str(version),
                    deadline_ms=None if seat == 1 else 1_700_000_000_000 + version,
                    event_versions=versions[: len(view.events)],
                )
                check_view(view, msg)
                assert options_from_proto(msg.options) == options
                assert msg.etag == str(version)
                assert all(e.version == version for e in msg.events)
        if state.to_act is None:
            break
        seat = state.to_act
        transition = apply_action(state, seat, rng.choice(legal_actions(state, seat)))
    assert state.phase == Phase.MATCH_OVER
    # (Random play may end every hand by calls, without a card: card plays are not required.)
    assert {"hand_started", "match_ended"} <= kinds


def test_view_options_deadline_versions_and_players() -> None:
    transition = new_game(RuleOptions(cut=CutMode.CUTTER), seed=7)
    state = transition.state
    view = view_for(state, 0, transition.events)
    msg = view_to_proto(
        view,
        name="games/g2",
        players=PLAYERS[:2],
        etag="e1",
        deadline_ms=1_700_000_000_123,
        event_versions=[9] * len(view.events),
    )
    assert msg.name == "games/g2"
    assert [s.player for s in msg.seats] == [*PLAYERS[:2], "", "", "", ""]
    assert (msg.deadline.seconds, msg.deadline.nanos) == (1_700_000_000, 123_000_000)
    assert options_from_proto(msg.options) == state.options
    assert msg.events
    assert all(e.version == 9 for e in msg.events)
    assert list(msg.draws) == [card_to_proto(c) for pair in state.draws for c in pair]
    assert [s.team for s in msg.seats] == [game_pb2.TEAM_A, game_pb2.TEAM_B] * 3

    spectator = view_to_proto(
        view_for(state, None, transition.events),
        name="games/g2",
        players=PLAYERS,
        etag="e1",
        deadline_ms=None,
    )
    assert not spectator.HasField("deadline")
    assert not spectator.HasField("seat")
    assert all(e.version == 0 for e in spectator.events)

    with pytest.raises(ValueError, match="event versions"):
        view_to_proto(
            view, name="g", players=PLAYERS, etag="", deadline_ms=None, event_versions=[1]
        )


def test_legal_moves_are_only_the_seat_to_act_s_and_legal_messages_the_team_messages() -> None:
    """The split of legal_actions (the engine never offers a move off turn, so
    the rule that a seat not to act has no legal_moves is checked on a view
    made to hold one)."""
    state = new_game(RuleOptions(), seed=3).state
    seat = state.to_act
    assert seat is not None
    view = view_for(state, seat)
    moves = view.legal_actions  # the draw's winner names the dealer
    assert moves and all(isinstance(a, ChooseDealer) for a in moves)
    messages = (SIGNAL[Signal.ESPASA], DIRECTIVE[Directive.TRUC])
    offered = dataclasses.replace(view, legal_actions=(*moves, *messages))

    def kinds(actions: Sequence[game_pb2.Action]) -> list[str]:
        return [str(a.WhichOneof("kind")) for a in actions]

    to_act = view_to_proto(offered, name="g", players=PLAYERS, etag="", deadline_ms=None)
    assert list(to_act.legal_moves) == [action_to_proto(a) for a in moves]
    assert kinds(to_act.legal_messages) == ["signal", "directive"]
    assert list(to_act.legal_actions) == [*to_act.legal_moves, *to_act.legal_messages]
    other = dataclasses.replace(offered, to_act=(seat + 1) % 6)
    off_turn = view_to_proto(other, name="g", players=PLAYERS, etag="", deadline_ms=None)
    assert not off_turn.legal_moves and off_turn.legal_messages == to_act.legal_messages
    assert off_turn.legal_actions == to_act.legal_actions
    # The watch path builds the same fields.
    public = public_view_to_proto(
        other, name="g", players=PLAYERS, etag="", deadline_ms=None
    ).SerializeToString()
    shared = game_pb2.GameView()
    seat_view_from_public(shared, public, other)
    assert shared.legal_moves == off_turn.legal_moves
    assert shared.legal_messages == off_turn.legal_messages


def test_display_names_go_beside_the_players_and_are_empty_past_their_end() -> None:
    state = new_game(RuleOptions(), seed=3).state
    names = ("José María", "山田")
    for view in (view_for(state, 0), view_for(state, None)):
        msg = view_to_proto(
            view, name="g", players=PLAYERS, etag="", deadline_ms=None, display_names=names
        )
        assert [s.display_name for s in msg.seats] == [*names, "", "", "", ""]
        assert [s.player for s in msg.seats] == list(PLAYERS[:6])
    family = registry_new_game(default_options(RuleSet.FRENCH_TRUC), seed=3).state
    msg = public_view_to_proto(
        registry_view(family, None),
        name="g",
        players=PLAYERS[:2],
        etag="",
        deadline_ms=None,
        display_names=names,
    )
    assert [s.display_name for s in msg.seats] == list(names)


# --- the rule sets of variants.md: cards of both packs, actions, deals, views ---

FAMILY_SETS = tuple(r for r in RuleSet if r != RuleSet.TRUC_Y_FLOU)
PACKS = (
    (SPANISH, RuleSet.TRUC_Y_FLOU),
    (SPANISH, RuleSet.CATALAN_TRUC),
    (PIQUET, RuleSet.FRENCH_TRUC),
)
CLUBS = cards_pb2.SUIT_CLUBS


def proto(suit: int, rank: int) -> cards_pb2.Card:
    return cards_pb2.Card(suit=cards_pb2.Suit.ValueType(suit), rank=cards_pb2.Rank.ValueType(rank))


@pytest.mark.parametrize(("deck", "rule_set"), PACKS, ids=str)
def test_every_card_of_a_pack_is_read_as_itself_in_that_pack(deck: Deck, rule_set: RuleSet) -> None:
    assert deck_of(rule_set) is deck
    for card in deck.cards:
        msg = card_to_proto(card)
        suit = "CLUBS" if card.suit == Suit.FRENCH_CLUBS else card.suit.name
        assert cards_pb2.Suit.Name(msg.suit) == f"SUIT_{suit}"
        assert cards_pb2.Rank.Name(msg.rank) == f"RANK_{card.rank.name}"
        assert card_from_proto(msg, "card", deck) is card
        assert card_from_proto(msg, "card", rule_set) is card


def test_a_proto_card_both_packs_have_is_read_in_the_games_pack() -> None:
    for rank, spanish, french in [
        (cards_pb2.RANK_SEVEN, Card.CL_7, Card.FC_7),
        (cards_pb2.RANK_JACK, Card.CL_J, Card.FC_J),
        (cards_pb2.RANK_KING, Card.CL_K, Card.FC_K),
    ]:
        msg = proto(CLUBS, rank)
        assert card_from_proto(msg, "card") is spanish  # the default pack is Truc y Flou's
        assert card_from_proto(msg, "card", RuleSet.CATALAN_TRUC) is spanish
        for rule_set in (RuleSet.FRENCH_TRUC, RuleSet.SACKSON_TRUC, RuleSet.PARTNERSHIP_TRUC):
            assert card_from_proto(msg, "card", rule_set) is french
        assert action_from_proto(game_pb2.Action(play_card=msg), PIQUET) is PLAY[french]
        assert action_from_proto(game_pb2.Action(play_card=msg), SPANISH) is PLAY[spanish]


def test_a_card_only_the_other_pack_has_is_that_packs_card() -> None:
    # The engine then refuses it as not in hand (see the engine test below).
    assert card_from_proto(proto(cards_pb2.SUIT_HEARTS, cards_pb2.RANK_SEVEN), "c") is Card.HE_7
    assert card_from_proto(proto(CLUBS, cards_pb2.RANK_ACE), "c", SPANISH) is Card.FC_A
    assert card_from_proto(proto(cards_pb2.SUIT_SWORDS, cards_pb2.RANK_ONE), "c", PIQUET) is (
        Card.SW_1
    )
    assert card_from_proto(proto(CLUBS, cards_pb2.RANK_THREE), "c", PIQUET) is Card.CL_3


@pytest.mark.parametrize(
    ("suit", "rank"),
    [
        (cards_pb2.SUIT_HEARTS, cards_pb2.RANK_ONE),
        (cards_pb2.SUIT_SPADES, cards_pb2.RANK_KNIGHT),
        (cards_pb2.SUIT_CUPS, cards_pb2.RANK_QUEEN),
        (cards_pb2.SUIT_COINS, cards_pb2.RANK_TEN),
    ],
)
@pytest.mark.parametrize("pack", [SPANISH, PIQUET], ids=str)
def test_a_card_of_neither_pack_is_bad_action(suit: int, rank: int, pack: Deck) -> None:
    with pytest.raises(InvalidArgument) as caught:
        action_from_proto(game_pb2.Action(play_card=proto(suit, rank)), pack)
    assert caught.value.reason == "BAD_ACTION"
    assert caught.value.message.startswith("action.play_card: ")
    assert "no card of either pack" in caught.value.message


def family_vocabulary(rule_set: RuleSet) -> list[Action]:
    variant = FAMILY[rule_set].variant
    return [
        *(PLAY[c] for c in variant.deck.cards),
        *(CALL[c] for c in variant.calls),
        *(SIGNAL[s] for s in variant.signals),
        *(DIRECTIVE[d] for d in variant.directives),
    ]


@pytest.mark.parametrize("rule_set", FAMILY_SETS)
def test_every_family_action_round_trips_in_its_games_pack(rule_set: RuleSet) -> None:
    actions = family_vocabulary(rule_set)
    assert len([a for a in actions if isinstance(a, PlayCard)]) == len(deck_of(rule_set).cards)
    for action in actions:
        wire = game_pb2.Action.FromString(action_to_proto(action).SerializeToString())
        assert action_from_proto(wire, rule_set) is action


def test_new_calls_signals_and_directives_have_their_proto_names() -> None:
    for call in (Call.RAISE, Call.MON_RESTE, Call.PROPOSE_REDEAL, Call.REFUSE):
        assert action_to_proto(CALL[call]).call == call_number(f"CALL_{call.name}")
    for signal in (Signal.SEVEN, Signal.EIGHT, Signal.ACE, Signal.AS):
        assert action_to_proto(SIGNAL[signal]).signal == game_pb2.Signal.Value(
            f"SIGNAL_{signal.name}"
        )
    for directive in (Directive.PLAY_SEVEN, Directive.LEAVE_IT_TO_ME):
        assert action_to_proto(DIRECTIVE[directive]).directive == game_pb2.Directive.Value(
            f"DIRECTIVE_{directive.name}"
        )


FRENCH_DEAL = ((Card.FC_7, Card.HE_9, Card.SP_T), (Card.DI_8, Card.HE_A, Card.SP_J))


def test_the_engine_refuses_another_packs_card_and_takes_an_ambiguous_one_in_its_own() -> None:
    state = registry_new_game(
        default_options(RuleSet.FRENCH_TRUC), deals=[FRENCH_DEAL], dealer=1
    ).state
    assert state.to_act == 0
    spanish_seven = game_pb2.Action(play_card=card_to_proto(Card.SW_7))
    with pytest.raises(IllegalAction) as caught:
        registry_apply(state, 0, action_from_proto(spanish_seven, RuleSet.FRENCH_TRUC))
    assert caught.value.reason == Reason.CARD_NOT_IN_HAND
    clubs_seven = game_pb2.Action(play_card=proto(CLUBS, cards_pb2.RANK_SEVEN))
    played = registry_apply(state, 0, action_from_proto(clubs_seven, RuleSet.FRENCH_TRUC))
    assert CardPlayed(0, Card.FC_7, 1) in played.events


def test_a_deal_of_each_table_size_converts_in_its_pack() -> None:
    two = game_pb2.Deal(
        hands=[game_pb2.Hand(cards=[card_to_proto(c) for c in h]) for h in FRENCH_DEAL]
    )
    assert deal_from_proto(two, "fixed_deals[0]", 2, RuleSet.FRENCH_TRUC) == FRENCH_DEAL
    assert deal_from_proto(two, "fixed_deals[0]", 2, PIQUET) == FRENCH_DEAL
    # A deal holds cards of the game's pack only: the piquet nine of hearts is
    # no Spanish card (the clubs seven before it is read as the seven of bastos).
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(two, "fixed_deals[0]", 2)
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message == (
        "fixed_deals[0].hands[0].cards[1]: 9He is not a card of the Spanish pack"
    )
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(_deal_message(DEAL[:2]), "fixed_deals[2]", 2, RuleSet.SACKSON_TRUC)
    assert caught.value.message == (
        "fixed_deals[2].hands[0].cards[0]: 1Sw is not a card of the piquet pack"
    )
    assert card_from_proto(card_to_proto(Card.HE_9), "fixed_draws[0]") is Card.HE_9
    with pytest.raises(InvalidArgument) as caught:
        card_from_proto(card_to_proto(Card.HE_9), "fixed_draws[0]", strict=True)
    assert caught.value.reason == "BAD_REQUEST"
    four = _deal_message(DEAL[:4])
    assert deal_from_proto(four, "fixed_deals[0]", 4, RuleSet.CATALAN_TRUC) == DEAL[:4]
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(four, "fixed_deals[3]", 2, PIQUET)
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message == "fixed_deals[3]: a deal has 2 hands, not 4"
    with pytest.raises(InvalidArgument) as caught:
        deal_from_proto(two, "fixed_deals[0]")
    assert caught.value.message == "fixed_deals[0]: a deal has 6 hands, not 2"


def test_a_hand_without_a_cut_has_cutter_minus_one() -> None:
    transition = registry_new_game(default_options(RuleSet.PARTNERSHIP_TRUC), seed=3)
    (started,) = [e for e in transition.events if isinstance(e, HandStarted)]
    msg = event_to_proto(started, 1).hand_started
    assert msg.cutter == -1
    assert (msg.dealer, msg.eldest) == (started.dealer, (started.dealer + 1) % 4)
    chosen = event_to_proto(transition.events[0], 1).dealer_chosen
    assert not chosen.HasField("seat")


def _played_cards(view: FamilyView) -> set[Card]:
    return {c for t in view.tricks for c in t.cards} | {c for _, c in view.trick_cards}


def check_family_view(view: FamilyView, msg: game_pb2.GameView, players: Sequence[str]) -> None:
    """Semantic facts every converted view of a variants.md game must satisfy."""
    pack = deck_of(view.rule_set)
    seats = view.seat_count

    def cards(items: typing.Iterable[cards_pb2.Card]) -> list[Card]:
        return [card_from_proto(c, "card", pack) for c in items]

    assert game_pb2.GameView.FromString(msg.SerializeToString()) == msg
    assert game_pb2.RuleSet.Name(msg.rule_set) == f"RULE_SET_{view.rule_set.name}"
    assert msg.seat_count == seats == len(msg.seats)
    assert options_from_proto(msg.options) == view.options
    assert msg.HasField("seat") == (view.seat is not None)
    if view.seat is not None:
        assert msg.seat == view.seat
    assert cards(msg.hand) == list(view.hand)
    assert cards(msg.dealt) == list(view.dealt)
    assert [action_from_proto(a, pack) for a in msg.legal_actions] == list(view.legal_actions)
    assert msg.HasField("to_act") == (view.to_act is not None)
    assert msg.to_act == (view.to_act or 0)
    assert game_pb2.Phase.Name(msg.phase) == f"PHASE_{view.phase.name}"
    assert game_pb2.Prompt.Name(msg.prompt) == f"PROMPT_{view.prompt.name}"
    assert (msg.scores.team_a, msg.scores.team_b) == view.scores
    assert (msg.manches.team_a, msg.manches.team_b) == view.manches
    assert [(h.winner, h.scores.team_a, h.scores.team_b) for h in msg.history] == [
        (team_to_proto(w), a, b) for w, a, b in view.history
    ]
    assert (msg.finished, msg.winner) == (view.finished, team_to_proto(view.winner))
    assert (msg.hand_number, msg.hands_played) == (view.hand_number, view.hands_played)
    assert (msg.dealer, msg.eldest, msg.belle) == (view.dealer, view.eldest, view.belle)
    assert list(msg.governors) == list(view.governors)
    if view.rule_set == RuleSet.PARTNERSHIP_TRUC:
        assert list(msg.governors) == [view.dealer, view.eldest]
    else:
        assert not msg.governors
    for info in msg.seats:
        assert info.team == (game_pb2.TEAM_A if info.seat % 2 == 0 else game_pb2.TEAM_B)
        assert info.governor == (info.seat in view.governors)
        assert not info.captain
        assert not info.shown
    assert [s.seat for s in msg.seats] == list(range(seats))
    assert [s.player for s in msg.seats] == list(players[:seats])
    assert [s.hand_size for s in msg.seats] == list(view.hand_sizes)
    assert len(msg.tricks) == len(view.tricks)
    for proto_trick, trick in zip(msg.tricks, view.tricks, strict=True):
        assert proto_trick.leader == trick.leader
        assert [(p.seat, card_from_proto(p.card, "c", pack)) for p in proto_trick.plays] == [
            ((trick.leader + i) % seats, c) for i, c in enumerate(trick.cards)
        ]
        assert proto_trick.winner == team_to_proto(trick.winner_team)
        assert proto_trick.HasField("winning_seat") == (trick.winning_seat is not None)
        if trick.winner_team is None:
            assert proto_trick.winner == game_pb2.TEAM_UNSPECIFIED  # spoiled
        else:
            assert proto_trick.winning_seat == trick.winning_seat
    assert msg.current_trick.leader == view.leader
    assert [(p.seat, card_from_proto(p.card, "c", pack)) for p in msg.current_trick.plays] == (
        list(view.trick_cards)
    )
    assert msg.stake == view.stake
    assert msg.mon_reste == view.mon_reste
    if view.mon_reste:
        assert msg.stake == 0
    assert msg.redeal_proposed == view.redeal_proposed
    assert msg.stake_call == (
        game_pb2.CALL_UNSPECIFIED
        if view.stake_call is None
        else call_number(f"CALL_{view.stake_call.name}")
    )
    assert msg.HasField("truc_call") == (view.pending is not None)
    if view.pending is not None:
        assert msg.truc_call.call == call_number(f"CALL_{view.pending.call.name}")
        assert (msg.truc_call.caller, msg.truc_call.answerer) == (
            view.pending.caller,
            view.pending.answerer,
        )
        assert msg.to_act == view.pending.answerer
    assert msg.hand_decided == (view.decided != UNDECIDED)
    assert msg.hand_winner == team_to_proto(view.decided)
    assert [(m.seat, m.WhichOneof("message"), m.signal or m.directive) for m in msg.signals] == [
        (
            seat,
            "signal" if isinstance(m, Signal) else "directive",
            game_pb2.Signal.Value(f"SIGNAL_{m.name}")
            if isinstance(m, Signal)
            else game_pb2.Directive.Value(f"DIRECTIVE_{m.name}"),
        )
        for seat, m in view.signals
    ]
    assert msg.instruction == (
        game_pb2.DIRECTIVE_UNSPECIFIED
        if view.instruction is None
        else game_pb2.Directive.Value(f"DIRECTIVE_{view.instruction.name}")
    )
    # Nothing of Truc y Flou's own is filled.
    for absent in ("embit", "embit_value", "flor_value"):
        assert not msg.HasField(absent)
    assert not msg.flors and not msg.draws and not msg.espintou
    assert msg.last_raiser == game_pb2.TEAM_UNSPECIFIED
    assert [e.WhichOneof("kind") for e in msg.events] == [
        event_to_proto(e, 0).WhichOneof("kind") for e in view.events
    ]
    # Privacy: no card but the viewer's own and those played is anywhere in it.
    allowed = set(view.dealt) | _played_cards(view)
    for event in view.events:
        if isinstance(event, CardsDealt):
            assert event.seat == view.seat
            allowed |= set(event.cards)
        elif isinstance(event, CardPlayed):
            allowed.add(event.card)
    assert {card_from_proto(c, "c", pack) for c in proto_cards_in(msg)} <= allowed
    if view.seat is None:
        assert not msg.hand and not msg.dealt and not msg.legal_actions and not msg.signals


def proto_cards_in(message: Message) -> list[cards_pb2.Card]:
    """Every Card anywhere in ``message``."""
    if isinstance(message, cards_pb2.Card):
        return [message]
    found: list[cards_pb2.Card] = []
    for field, value in message.ListFields():
        if field.message_type is not None:
            for item in value if field.is_repeated else [value]:
                found.extend(proto_cards_in(item))
    return found


FAMILY_PLAYERS = ("users/ana", "users/bel", "users/cai", "users/dan")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule_set=st.sampled_from(FAMILY_SETS),
    play_out=st.booleans(),
    seven_ace=st.booleans(),
    two_seats=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**63 - 1),
    play_seed=st.integers(min_value=0, max_value=2**32),
)
def test_random_family_games_convert_every_event_and_view(
    *,
    rule_set: RuleSet,
    play_out: bool,
    seven_ace: bool,
    two_seats: bool,
    seed: int,
    play_seed: int,
) -> None:
    values: dict[str, object] = {"play_out_all_tricks": play_out, "target_score": 5}
    if rule_set == RuleSet.CATALAN_TRUC:
        values["seats"] = 2 if two_seats else 4
    elif seven_ace:
        values["trick_order"] = "seven_ace"
    options = options_from_mapping(rule_set, values)
    assert options_from_proto(options_to_proto(options)) == options
    rng = random.Random(play_seed)
    transition: AnyTransition = registry_new_game(options, seed=seed)
    seats = seat_count(options)
    version = 0
    kinds: set[str] = set()
    for _ in range(3000):
        state = transition.state
        assert isinstance(state, FamilyState)
        version += 1
        for event in transition.events:
            event_msg = event_to_proto(event, version)
            kinds.add(str(event_msg.WhichOneof("kind")))
            assert game_pb2.Event.FromString(event_msg.SerializeToString()) == event_msg
        if state.to_act is None or rng.random() < 0.3:
            public = None
            for seat in (*range(seats), None):
                view = registry_view(state, seat, transition.events)
                assert isinstance(view, FamilyView)
                msg = view_to_proto(
                    view,
                    name="games/f1",
                    players=FAMILY_PLAYERS[:seats],
                    etag=str(version),
                    deadline_ms=None if seat == 1 else 1_700_000_000_000 + version,
                    event_versions=[version] * len(view.events),
                )
                check_family_view(view, msg, FAMILY_PLAYERS)
                assert msg.etag == str(version)
                assert all(e.version == version for e in msg.events)
                # The watch path: the public part of any seat's view, plus this seat's own.
                if public is None:
                    public = public_view_to_proto(
                        view,
                        name="games/f1",
                        players=FAMILY_PLAYERS[:seats],
                        etag=str(version),
                        deadline_ms=None if seat == 1 else 1_700_000_000_000 + version,
                    ).SerializeToString()
                elif seat != 1:
                    split = game_pb2.GameView()
                    seat_view_from_public(split, public, view)
                    msg.ClearField("events")
                    assert split == msg
                minimal = minimal_view_to_proto(view, name="games/f1", etag=str(version))
                assert (minimal.phase, minimal.prompt, minimal.to_act) == (
                    msg.phase,
                    msg.prompt,
                    msg.to_act,
                )
        if state.to_act is None:
            break
        seat = state.to_act
        if rng.random() < 0.1:  # now and then a seat off turn signals or instructs
            seat = rng.randrange(seats)
        choices = registry_legal(state, seat)
        if not choices:
            continue
        transition = registry_apply(state, seat, rng.choice(choices))
    assert transition.state.phase == FamilyPhase.MATCH_OVER
    assert {"hand_started", "cards_dealt", "match_ended"} <= kinds


def test_every_family_option_combination_round_trips() -> None:
    for rule_set in FAMILY_SETS:
        variant = FAMILY[rule_set].variant
        orders = ["seven_eight", "seven_ace"] if "trick_order" in variant.option_names else [None]
        seats = list(variant.seat_choices) if "seats" in variant.option_names else [None]
        for order, table, play_out, target, manches in itertools.product(
            orders, seats, (False, True), (None, 1, 21), (None, 1, 3)
        ):
            values: dict[str, object] = {"play_out_all_tricks": play_out}
            for name, value in (
                ("trick_order", order),
                ("seats", table),
                ("target_score", target),
                ("manches_to_win", manches),
            ):
                if value is not None:
                    values[name] = value
            options = options_from_mapping(rule_set, values)
            explicit = options_to_proto(options)
            assert game_pb2.RuleSet.Name(explicit.rule_set) == f"RULE_SET_{rule_set.name}"
            assert explicit.seats == seat_count(options)
            assert explicit.target_score == options.target_score
            assert (explicit.trick_order != 0) == (order is not None)
            for name in ("perique_trick_rank", "ace_value", "responder", "cut"):
                assert not getattr(explicit, name)
            assert options_from_proto(explicit) == options
    # Zero values are each rule set's defaults.
    for rule_set in FAMILY_SETS:
        number = game_pb2.RuleSet.Value(f"RULE_SET_{rule_set.name}")
        assert options_from_proto(game_pb2.RuleOptions(rule_set=number)) == default_options(
            rule_set
        )
    assert options_from_proto(game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_SACKSON_TRUC)) == (
        default_options(RuleSet.SACKSON_TRUC)
    )
    assert default_options(RuleSet.SACKSON_TRUC).target_score == 16


FRENCH = game_pb2.RULE_SET_FRENCH_TRUC
CATALAN = game_pb2.RULE_SET_CATALAN_TRUC
PARTNERSHIP = game_pb2.RULE_SET_PARTNERSHIP_TRUC


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (game_pb2.RuleOptions(rule_set=FRENCH, ace_value=1), "options.ace_value: "),
        (game_pb2.RuleOptions(rule_set=FRENCH, cut=game_pb2.CUT_MODE_CUTTER), "options.cut: "),
        (
            game_pb2.RuleOptions(rule_set=PARTNERSHIP, responder=game_pb2.RESPONDER_CALLER),
            "options.responder: ",
        ),
        (
            game_pb2.RuleOptions(
                rule_set=CATALAN, perique_trick_rank=game_pb2.PERIQUE_TRICK_RANK_TOP
            ),
            "options.perique_trick_rank: ",
        ),
        (game_pb2.RuleOptions(rule_set=FRENCH, seats=4), "options.seats: "),
        (game_pb2.RuleOptions(rule_set=PARTNERSHIP, seats=2), "options.seats: "),
        (game_pb2.RuleOptions(rule_set=CATALAN, seats=3), "options.seats: "),
        (game_pb2.RuleOptions(rule_set=CATALAN, seats=6), "options.seats: "),
        (
            game_pb2.RuleOptions(rule_set=CATALAN, trick_order=game_pb2.TRICK_ORDER_SEVEN_ACE),
            "options.trick_order: ",
        ),
        (
            game_pb2.RuleOptions(rule_set=FRENCH, trick_order=game_pb2.TrickOrder.ValueType(9)),
            "options.trick_order: ",
        ),
        (game_pb2.RuleOptions(rule_set=PARTNERSHIP, target_score=251), "options.target_score: "),
        (game_pb2.RuleOptions(rule_set=FRENCH, manches_to_win=10), "options.manches_to_win: "),
        (
            game_pb2.RuleOptions(trick_order=game_pb2.TRICK_ORDER_SEVEN_EIGHT),
            "options.trick_order: ",
        ),
        (game_pb2.RuleOptions(seats=2), "options.seats: "),
        (game_pb2.RuleOptions(rule_set=game_pb2.RuleSet.ValueType(77)), "options.rule_set: "),
    ],
)
def test_options_another_rule_set_has_are_bad_request_naming_the_field(
    msg: game_pb2.RuleOptions, field: str
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        options_from_proto(msg)
    assert caught.value.reason == "BAD_REQUEST"
    assert caught.value.message.startswith(field), caught.value.message


def test_a_fixed_table_size_may_be_given_explicitly() -> None:
    for number, seats in ((FRENCH, 2), (PARTNERSHIP, 4), (game_pb2.RULE_SET_TRUC_Y_FLOU, 6)):
        assert seat_count(
            options_from_proto(game_pb2.RuleOptions(rule_set=number, seats=seats))
        ) == (seats)
    two = options_from_proto(game_pb2.RuleOptions(rule_set=CATALAN, seats=2))
    assert seat_count(two) == 2
