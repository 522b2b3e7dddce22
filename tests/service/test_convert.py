"""The proto <-> engine conversions (truc_protocol.convert): real engine games,
real generated messages, no mocks."""

from __future__ import annotations

import itertools
import random
import typing
from dataclasses import dataclass

import pytest
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
    options_from_proto,
    options_to_proto,
    team_to_proto,
    view_to_proto,
)
from truc_protocol.errors import InvalidArgument
from truc_rules import (
    DECK,
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


@pytest.mark.parametrize("action", EVERY_ACTION, ids=str)
def test_every_engine_action_round_trips(action: Action) -> None:
    msg = action_to_proto(action)
    wire = game_pb2.Action.FromString(msg.SerializeToString())
    back = action_from_proto(wire)
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
