"""The bots in the rule sets of variants.md (french, sackson, partnership and
catalan truc), on the views the service would send (the engine's per-seat view
through the protocol's converter), in this process."""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable

import pytest
from truc.v1 import game_pb2

from truc_bots import HeuristicPolicy, Policy, RandomPolicy, card_strength, strength_table
from truc_bots.arena import duel, play_match
from truc_bots.family import FamilyPolicy, pick, play_out, position_of, tables_for
from truc_protocol.convert import action_from_proto, card_to_proto
from truc_rules import registry
from truc_rules.events import HandEnded
from truc_rules.family import FamilyOptions, FamilyState, Prompt
from truc_rules.registry import FAMILY
from truc_rules.rule_set import RuleSet

from .conftest import (
    FAMILY_IDS,
    FAMILY_TABLES,
    family_options,
    family_play,
    family_start,
    family_view,
    random_family_states,
)

pytestmark = pytest.mark.unit

FRENCH = RuleSet.FRENCH_TRUC
PARTNERSHIP = RuleSet.PARTNERSHIP_TRUC
CATALAN = RuleSet.CATALAN_TRUC
GAME_KINDS = ("play_card", "call")
POLICIES: tuple[Callable[[int], Policy], ...] = (RandomPolicy, HeuristicPolicy)


def _calls(action: game_pb2.Action) -> int:
    return action.call if action.WhichOneof("kind") == "call" else game_pb2.CALL_UNSPECIFIED


def _choices(state: FamilyState, seat: int, seeds: int = 10) -> set[int]:
    """The calls (CALL_UNSPECIFIED for a card) the heuristic makes here over ``seeds`` seeds."""
    view = family_view(state, seat)
    return {_calls(HeuristicPolicy(seed).choose(view)) for seed in range(seeds)}


# --------------------------------------------------------------------------- legality


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
@pytest.mark.parametrize("make", POLICIES, ids=["random", "heuristic"])
def test_a_policy_always_chooses_one_of_the_views_legal_actions(
    rule_set: RuleSet, values: dict[str, object], make: Callable[[int], Policy]
) -> None:
    states = random_family_states(rule_set, values, 60, seed=zlib.crc32(rule_set.value.encode()))
    prompts = set()
    for index, state in enumerate(states):
        seat = state.to_act
        assert seat is not None
        view = family_view(state, seat)
        action = make(index).choose(view)
        assert action in view.legal_actions, (index, action, view.prompt)
        registry.apply_action(state, seat, action_from_proto(action, rule_set))  # the engine agrees
        if make is RandomPolicy:
            assert action.WhichOneof("kind") in GAME_KINDS
        prompts.add(state.prompt)
    assert {Prompt.TURN, Prompt.RAISE_ANSWER} <= prompts  # the samples mean something


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
def test_heuristic_and_random_play_whole_matches_deterministically(
    rule_set: RuleSet, values: dict[str, object]
) -> None:
    options = family_options(rule_set, **values)
    seats = registry.seat_count(options)
    make = [HeuristicPolicy if s % 2 == 0 else RandomPolicy for s in range(seats)]
    first = play_match([m(s) for s, m in enumerate(make)], options, 42, record=True)
    again = play_match([m(s) for s, m in enumerate(make)], options, 42, record=True)
    assert first.winner is not None and first.log == again.log
    other = play_match([m(s + 100) for s, m in enumerate(make)], options, 42, record=True)
    assert other.log != first.log  # other seeds, other choices


def test_the_heuristic_never_concedes_at_its_own_turn() -> None:
    for rule_set, values in FAMILY_TABLES:
        for index, state in enumerate(random_family_states(rule_set, values, 40, seed=7)):
            if state.prompt != Prompt.TURN:
                continue
            seat = state.to_act
            assert seat is not None
            action = HeuristicPolicy(index).choose(family_view(state, seat))
            assert _calls(action) != game_pb2.CALL_FOLD, (rule_set, index)


# --------------------------------------------------------------------------- the engine's tables


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
def test_the_bots_rank_cards_with_the_engines_own_table(
    rule_set: RuleSet, values: dict[str, object]
) -> None:
    options = family_options(rule_set, **values)
    assert isinstance(options, FamilyOptions)
    variant = FAMILY[rule_set].variant
    engine = variant.strengths[options.trick_order]
    state = registry.new_game(options, seed=3).state
    view = family_view(state, state.to_act or 0)  # type: ignore[arg-type]
    assert strength_table(view) is engine  # the very tuple, not a copy
    for card in variant.deck.cards:
        assert card_strength(card_to_proto(card), view) == engine[card], card
    other = registry.deck_of(RuleSet.TRUC_Y_FLOU if variant.deck.name == "piquet" else FRENCH)
    strange = [card_strength(card_to_proto(c), view) for c in other.cards]
    # A card only the other pack has is no card of this game (-1).
    assert -1 in strange


def test_the_seven_ace_order_puts_the_eight_last() -> None:
    def order(**values: object) -> list[str]:
        state = registry.new_game(family_options(FRENCH, **values), seed=1).state
        view = family_view(state, state.to_act or 0)  # type: ignore[arg-type]
        deck = registry.deck_of(FRENCH)
        ranked = sorted(deck.cards, key=lambda c: -card_strength(card_to_proto(c), view))
        return list(dict.fromkeys(str(c)[0] for c in ranked))

    assert order() == list("78AKQJT9")
    assert order(trick_order="seven_ace") == list("7AKQJT98")


class _Pick:
    """Every seat plays as the heuristic's play-outs do (:func:`pick`), never calls."""

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        tables = tables_for(view)
        plays = view.current_trick.plays
        best = max((tables.strength(p.card) for p in plays), default=-1)
        mask = 0
        for p in plays:
            if tables.strength(p.card) == best:
                mask |= 1 << (p.seat % 2)
        cards = [a for a in view.legal_actions if a.WhichOneof("kind") == "play_card"]
        wanted = pick([tables.strength(a.play_card) for a in cards], best, mask, view.seat % 2)
        return next(a for a in cards if tables.strength(a.play_card) == wanted)


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
def test_a_play_out_with_the_true_hands_ends_as_the_engine_does(
    rule_set: RuleSet, values: dict[str, object]
) -> None:
    """The bots' play-outs settle tricks and hands as the engine does (spoiled
    tricks, partners' ties, who leads next): given every seat's real cards, the
    play-out's result is the engine's."""
    options = family_options(rule_set, **values)
    player = _Pick()
    hands = 0
    for seed in range(6):
        state = registry.new_game(options, seed=seed).state
        assert isinstance(state, FamilyState)
        predicted: float | None = None
        while state.to_act is not None and hands < 60:
            seat = state.to_act
            view = family_view(state, seat)
            if predicted is None:
                tables = tables_for(view)
                position = position_of(view, tables)
                truth = [[tables.power[c] for c in hand] for hand in state.hands]
                predicted = play_out(position, truth)
                team = seat % 2
            transition = registry.apply_action(
                state, seat, action_from_proto(player.choose(view), rule_set)
            )
            for event in transition.events:
                if isinstance(event, HandEnded):
                    assert event.how in ("tricks", "all_pardes", "manche_over")
                    actual = 0.5 if event.winner_team is None else float(event.winner_team == team)
                    assert predicted == actual, (seed, event)
                    predicted = None
                    hands += 1
            after = transition.state
            assert isinstance(after, FamilyState)
            state = after
    assert hands >= 30


# --------------------------------------------------------------------------- decisions

# French Truc, dealer seat 1: seat 0 is eldest and acts first.
WEAKEST = ("9He", "9Di", "TSp")
STRONGEST = ("7Sp", "7Cl", "8He")
MIDDLING = ("AHe", "KDi", "QSp")
OTHER = ("KHe", "QDi", "JSp")


def test_eldest_proposes_a_redeal_of_a_poor_hand_and_plays_for_the_game_with_a_strong_one() -> None:
    assert _choices(family_start(FRENCH, WEAKEST, OTHER, dealer=1), 0) == {
        game_pb2.CALL_PROPOSE_REDEAL
    }
    assert _choices(family_start(FRENCH, STRONGEST, OTHER, dealer=1), 0) == {
        game_pb2.CALL_MON_RESTE
    }


@pytest.mark.parametrize(
    ("dealt", "raise_answer", "mon_reste_answer", "redeal_answer"),
    [
        (STRONGEST, game_pb2.CALL_ACCEPT, game_pb2.CALL_MON_RESTE, game_pb2.CALL_REFUSE),
        (WEAKEST, game_pb2.CALL_FOLD, game_pb2.CALL_FOLD, game_pb2.CALL_ACCEPT),
    ],
    ids=["strong", "weak"],
)
def test_the_dealer_answers_by_the_strength_of_its_hand(
    dealt: tuple[str, ...], raise_answer: int, mon_reste_answer: int, redeal_answer: int
) -> None:
    start = family_start(FRENCH, MIDDLING, dealt, dealer=1)
    assert _choices(family_play(start, "0:RAISE"), 1) == {raise_answer}
    assert _choices(family_play(start, "0:MON_RESTE"), 1) == {mon_reste_answer}
    assert _choices(family_play(start, "0:PROPOSE_REDEAL"), 1) == {redeal_answer}


def test_a_raise_that_would_bring_nothing_is_not_made_and_a_free_one_always_is() -> None:
    # Needing one point at stake 1, a won hand wins the game already: no raise.
    ahead = family_start(FRENCH, STRONGEST, OTHER, dealer=1, scores=(11, 0))
    assert _choices(ahead, 0) == {game_pb2.CALL_UNSPECIFIED}
    # The other side needs one point: a lost hand loses the game whatever the
    # stake, so the heuristic raises (or plays for the game) on any hand.
    behind = family_start(FRENCH, MIDDLING, OTHER, dealer=1, scores=(0, 11))
    assert _choices(behind, 0) <= {game_pb2.CALL_RAISE, game_pb2.CALL_MON_RESTE}


def test_a_raise_on_a_lost_hand_is_folded() -> None:
    """Seat 0 lost trick 1 and holds the two lowest cards: it folds a raise."""
    lost = family_play(family_start(FRENCH, ("ASp", "9He", "9Di"), STRONGEST, dealer=1), "0:ASp")
    lost = family_play(lost, "1:7Sp 1:RAISE")
    assert _choices(lost, 0) == {game_pb2.CALL_FOLD}


def test_sackson_raises_again_at_its_next_turn_and_a_beaten_hand_folds() -> None:
    # Dealer 0: seat 1 leads an ace and raises; seat 0 holds 7 7 8.
    start = family_start(RuleSet.SACKSON_TRUC, STRONGEST, ("AHe", "9Cl", "TSp"), dealer=0)
    raised = family_play(start, "1:RAISE 0:ACCEPT 1:AHe")
    assert family_view(raised, 0).stake == 2
    assert _choices(raised, 0) <= {game_pb2.CALL_RAISE, game_pb2.CALL_MON_RESTE}
    # Seat 0 takes trick 1 with a 7 and raises again as it leads trick 2: seat 1
    # must now win both tricks left with a nine and a ten; at 4 points it folds.
    doubled = family_play(raised, "0:7Sp 0:RAISE")
    assert _choices(doubled, 1) == {game_pb2.CALL_FOLD}
    accepted = family_play(doubled, "1:ACCEPT")
    assert family_view(accepted, 1).stake == 4  # V3: every raise doubles


# Partnership Truc, dealer seat 3: eldest seat 0; governors 3 and 0, partners 1 and 2.
PARTNER_DEAL = (
    ("9He", "TDi", "JSp"),  # seat 0, governor of team A: poor cards
    ("8Cl", "QSp", "KDi"),
    ("7He", "KHe", "9Sp"),  # seat 2, seat 0's partner: a seven
    ("ACl", "JDi", "TSp"),
)


def test_a_partner_signals_each_card_it_may_once_then_plays() -> None:
    state = family_play(family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3), "0:9He 1:8Cl")
    policy = HeuristicPolicy(1)
    sent: list[int] = []
    while True:
        view = family_view(state, 2)
        action = policy.choose(view)
        if action.WhichOneof("kind") != "signal":
            break
        sent.append(action.signal)
        state = family_play(state, "2:~" + game_pb2.Signal.Name(action.signal)[7:])
    assert sent == [game_pb2.SIGNAL_SEVEN]
    assert action.WhichOneof("kind") == "play_card"


def test_the_governor_counts_its_partners_signalled_seven() -> None:
    quiet = family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3)
    told = family_play(quiet, "2:~SEVEN")
    without = FamilyPolicy(5).win_chance(family_view(quiet, 0))
    with_seven = FamilyPolicy(5).win_chance(family_view(told, 0))
    assert with_seven > without + 0.1
    tables = tables_for(family_view(told, 0))
    seven = tables.power[registry.deck_of(PARTNERSHIP).parse("7He")]
    assert position_of(family_view(told, 0), tables).forced == {2: [seven]}
    # A signal is team-private: the other side's view knows nothing of it.
    assert not family_view(told, 1).signals


@pytest.mark.parametrize(
    ("instruction", "card"), [("PLAY_SEVEN", "7He"), ("LEAVE_IT_TO_ME", "9Sp"), ("PLAY_LOW", "9Sp")]
)
def test_a_bound_partner_plays_what_its_governor_instructs(instruction: str, card: str) -> None:
    # Seat 2 signals its seven, raises and is accepted: its one move left is a card.
    state = family_play(
        family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3),
        f"0:!{instruction} 0:9He 1:8Cl 2:~SEVEN 2:RAISE 3:ACCEPT",
    )
    view = family_view(state, 2)
    assert view.instruction == game_pb2.Directive.Value("DIRECTIVE_" + instruction)
    bound = card_to_proto(registry.deck_of(PARTNERSHIP).parse(card))
    assert [a.play_card for a in view.legal_actions if a.WhichOneof("kind") == "play_card"] == [
        bound
    ]
    for seed in range(5):
        action = HeuristicPolicy(seed).choose(view)
        assert action.WhichOneof("kind") == "play_card" and action.play_card == bound


def test_only_the_governor_answers_a_raise_and_a_strong_team_accepts() -> None:
    # Seat 1 raises; the opposing governor is seat 0 (eldest), whose partner holds a 7.
    state = family_play(
        family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3), "2:~SEVEN 0:9He 1:RAISE"
    )
    assert state.to_act == 0 and state.prompt == Prompt.RAISE_ANSWER
    view = family_view(state, 0)
    assert list(view.governors) == [3, 0]
    assert {_calls(a) for a in view.legal_actions if a.WhichOneof("kind") == "call"} == {
        game_pb2.CALL_ACCEPT,
        game_pb2.CALL_FOLD,
    }
    # A non-governor is never asked, and never offered FOLD at its turn.
    turn = family_play(family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3), "0:9He")
    calls = {_calls(a) for a in family_view(turn, 1).legal_actions}
    assert game_pb2.CALL_FOLD not in calls and game_pb2.CALL_RAISE in calls


CATALAN_TOP = ("3Sw", "3Co", "2Cu")
CATALAN_LOW = ("4Sw", "5Co", "6Cu")


def test_catalan_truc_and_retruc_by_strength() -> None:
    strong = family_start(CATALAN, CATALAN_TOP, CATALAN_LOW, dealer=1, seats=2)
    assert _choices(strong, 0) == {game_pb2.CALL_TRUC}
    answered = family_play(
        family_start(CATALAN, CATALAN_LOW, CATALAN_TOP, dealer=1, seats=2), "0:TRUC"
    )
    assert _choices(answered, 1) == {game_pb2.CALL_ACCEPT}
    weak = family_play(
        family_start(CATALAN, ("1Sw", "5Co", "6Cu"), ("4Co", "4Cu", "5Cu"), dealer=1, seats=2),
        "0:TRUC",
    )
    assert _choices(weak, 1) == {game_pb2.CALL_FOLD}
    # RETRUC at stake 2, answered by the first opponent of the caller.
    retruc = family_play(
        family_start(CATALAN, CATALAN_LOW, CATALAN_TOP, dealer=1, seats=2), "0:TRUC 1:ACCEPT 0:4Sw"
    )
    assert _choices(retruc, 1) <= {game_pb2.CALL_RETRUC, game_pb2.CALL_UNSPECIFIED}
    assert game_pb2.CALL_RETRUC in _choices(retruc, 1)


def test_catalan_with_two_seats_has_no_messages_and_four_seats_signal() -> None:
    two = family_start(CATALAN, CATALAN_TOP, CATALAN_LOW, dealer=1, seats=2)
    assert not [a for a in family_view(two, 0).legal_actions if a.WhichOneof("kind") == "signal"]
    four = family_start(
        CATALAN, CATALAN_TOP, CATALAN_LOW, ("1Sw", "JCo", "KCu"), ("7Sw", "NCo", "KSw"), dealer=3
    )
    first = HeuristicPolicy(0).choose(family_view(four, 0))
    assert first.WhichOneof("kind") == "signal" and first.signal == game_pb2.SIGNAL_TRES


# --------------------------------------------------------------------------- strength

STRENGTH_MATCHES = int(os.environ.get("TRUC_BOT_MATCHES", "20"))
"""Matches per rule set (``TRUC_BOT_MATCHES=500`` for the benchmark's count;
``benchmarks/bots_bench.py`` prints the rates of 500)."""


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
def test_the_heuristic_beats_random_play_in_every_rule_set(
    rule_set: RuleSet, values: dict[str, object]
) -> None:
    result = duel(
        HeuristicPolicy,
        RandomPolicy,
        family_options(rule_set, **values),
        STRENGTH_MATCHES,
        seed=77_000,
    )
    print(f"{rule_set}: heuristic vs random {result.wins}/{result.matches} = {result.rate:.0%}")
    assert result.rate >= 0.6
