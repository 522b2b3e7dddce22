"""The rules of variants.md V1-V3, V5-V7 pinned with fixed deals, one rule per
test (partnership Truc's governors, ties and instructions are in
``test_family_partnership.py``). Games are built with the registry, as the
service builds them, and played with a compact notation::

    act(state, "0:RAISE 1:ACCEPT 0:9He 1:sig=TRES 2:dir=PLAY_LOW")
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pytest

from truc_client.scenarios import run_scenario
from truc_rules import french_truc, registry, sackson_truc
from truc_rules.actions import (
    Action,
    Call,
    ChooseDealer,
    CutDeck,
    Directive,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
    Signal,
)
from truc_rules.cards import PIQUET, SPANISH, Card, Deck
from truc_rules.errors import IllegalAction, InvalidSetup, Reason
from truc_rules.family import FamilyState, Phase, Prompt
from truc_rules.rule_set import RuleSet

FRENCH = RuleSet.FRENCH_TRUC
SACKSON = RuleSet.SACKSON_TRUC
PARTNERSHIP = RuleSet.PARTNERSHIP_TRUC
CATALAN = RuleSet.CATALAN_TRUC
PIQUET_SETS = (FRENCH, SACKSON, PARTNERSHIP)

# Seat 0 is eldest (dealer 1) in the two-seat games below.
EXAMPLE = (("9He", "TSp", "JDi"), ("7Cl", "8He", "ASp"))
"""variants.md's example deal: seat 1 holds the two best cards."""
SPOILED = (("7He", "8He", "9He"), ("7Sp", "8Sp", "9Sp"))
"""Every trick spoiled (equal ranks), whatever the order."""


def deck(rule_set: RuleSet) -> Deck:
    return SPANISH if rule_set == CATALAN else PIQUET


def start(
    rule_set: RuleSet,
    *deals: Sequence[Sequence[str]],
    dealer: int = 1,
    scores: tuple[int, int] = (0, 0),
    manches: tuple[int, int] = (0, 0),
    options: Mapping[str, object] | None = None,
    **more: object,
) -> FamilyState:
    """A game of ``rule_set`` from fixed deals (seat 0's hand first), with the
    rule options ``options`` and ``more``."""
    pack = deck(rule_set)
    parsed = [tuple(tuple(pack.parse(c) for c in hand) for hand in deal) for deal in deals]
    state = registry.new_game(
        registry.options_from_mapping(rule_set, {**(options or {}), **more}),
        deals=parsed,
        dealer=dealer,
        scores=scores,
        manches=manches,
    ).state
    assert isinstance(state, FamilyState)
    return state


def action(state: FamilyState, what: str) -> Action:
    """``RAISE`` (a call), ``sig=TRES``, ``dir=PLAY_LOW``, or a card of either pack."""
    if what.startswith("sig="):
        return SendSignal(Signal(what[4:]))
    if what.startswith("dir="):
        return SendDirective(Directive(what[4:]))
    if what in Call.__members__:
        return MakeCall(Call(what))
    card = deck(state.options.rule_set).read(what)
    assert card is not None, what
    return PlayCard(card)


def act(state: FamilyState, steps: str) -> FamilyState:
    """Apply ``"seat:what"`` steps, each of which must be legal."""
    for token in steps.split():
        seat, what = token.split(":")
        move = action(state, what)
        assert move in registry.legal_actions(state, int(seat)), f"{token} is not legal"
        after = registry.apply_action(state, int(seat), move).state
        assert isinstance(after, FamilyState)
        state = after
    return state


def refused(state: FamilyState, token: str) -> Reason:
    """The reason ``"seat:what"`` is refused (the state must not change)."""
    seat, what = token.split(":")
    before = registry.encode_state(state)
    with pytest.raises(IllegalAction) as exc:
        registry.apply_action(state, int(seat), action(state, what))
    assert registry.encode_state(state) == before
    return exc.value.reason


def calls(state: FamilyState, seat: int | None = None) -> set[str]:
    """The calls in the legal list of ``seat`` (the seat to act by default)."""
    who = state.to_act if seat is None else seat
    assert who is not None
    return {a.call.value for a in registry.legal_actions(state, who) if isinstance(a, MakeCall)}


def cards(state: FamilyState, seat: int) -> set[str]:
    return {str(a.card) for a in registry.legal_actions(state, seat) if isinstance(a, PlayCard)}


# --------------------------------------------------------------------------------- V1, V2.1: tricks

ORDERS = {
    (FRENCH, "seven_eight"): "7 8 A K Q J T 9",
    (FRENCH, "seven_ace"): "7 A K Q J T 9 8",
    (SACKSON, "seven_eight"): "7 8 A K Q J T 9",
    (SACKSON, "seven_ace"): "7 A K Q J T 9 8",
    (CATALAN, None): "3 2 1 K N J 7 6 5 4",
}


@pytest.mark.parametrize(("rule_set", "order"), ORDERS)
def test_each_rank_beats_the_next_lower_whatever_the_suits(
    rule_set: RuleSet, order: str | None
) -> None:
    """V1.3, V2.1, V5.1: the trick order, highest first; only the rank counts."""
    options: dict[str, object] = {"trick_order": order} if order else {"seats": 2}
    ranks = ORDERS[rule_set, order].split()
    suits = ("Sw", "Cl", "Co", "Cu") if rule_set == CATALAN else ("He", "Di", "Cl", "Sp")
    for high, low in itertools.pairwise(ranks):
        # Seat 0 leads the lower card in the first suit; seat 1 beats it from the last.
        rest = [r for r in ranks if r not in (high, low)]
        hands = (
            (low + suits[0], rest[0] + suits[1], rest[1] + suits[1]),
            (high + suits[3], rest[2] + suits[2], rest[3] + suits[2]),
        )
        state = act(
            start(rule_set, hands, options=options), f"0:{low}{suits[0]} 1:{high}{suits[3]}"
        )
        assert state.tricks[0].winner_team == 1, f"{high} must beat {low} in {order}"
        assert state.to_act == 1, "the trick's winner leads the next"


@pytest.mark.parametrize("rule_set", [FRENCH, SACKSON, CATALAN])
def test_equal_ranks_spoil_the_trick_and_its_leader_leads_again(rule_set: RuleSet) -> None:
    """V1.4: a spoiled trick belongs to nobody; whoever led it leads again."""
    hands = (("3Sw", "4Cl", "5Co"), ("3Cu", "6Sw", "7Cl")) if rule_set == CATALAN else SPOILED
    options: dict[str, object] = {"seats": 2} if rule_set == CATALAN else {}
    first = hands[0][0], hands[1][0]
    state = act(start(rule_set, hands, options=options), f"0:{first[0]} 1:{first[1]}")
    assert state.tricks[0].winner_team is None and state.tricks[0].winning_seat is None
    assert state.to_act == 0


def test_all_three_tricks_spoiled_score_nothing() -> None:
    """V1.4: all spoiled, nobody scores the hand; the deal passes on."""
    state = start(FRENCH, SPOILED, EXAMPLE)
    state = act(state, "0:7He 1:7Sp 0:8He 1:8Sp 0:9He 1:9Sp")
    assert state.scores == (0, 0) and state.hands_played == 1
    assert state.dealer == 0 and state.to_act == 1


def test_play_stops_once_the_hand_is_decided_unless_the_option_says_otherwise() -> None:
    """V1.4: two tricks decide the hand; with play_out_all_tricks the third is
    played, nobody may concede or raise once decided, and the winner is the same."""
    state = act(start(FRENCH, EXAMPLE, EXAMPLE), "0:9He 1:7Cl 1:8He 0:TSp")
    assert state.scores == (0, 1) and state.hands_played == 1
    state = act(
        start(FRENCH, EXAMPLE, EXAMPLE, play_out_all_tricks=True), "0:9He 1:7Cl 1:8He 0:TSp"
    )
    assert state.hands_played == 0 and state.to_act == 1
    assert calls(state) == set(), "no raise, no concession once the hand is decided (V6)"
    assert refused(state, "1:FOLD") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:RAISE") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:ASp 0:JDi")
    assert state.scores == (0, 1) and state.hands_played == 1


# --------------------------------------------------------------------- V1.7, V2.3, V3, V5.3: raises


@pytest.mark.parametrize(("rule_set", "stakes"), [(FRENCH, (2, 4, 6)), (SACKSON, (2, 4, 8))])
def test_raises_climb_the_ladder_one_per_turn_and_the_hand_pays_the_stake(
    rule_set: RuleSet, stakes: tuple[int, int, int]
) -> None:
    """V2.3 (+2 after the first), V3 (doubles); V1.7: one raise per turn, the
    opponent answers, the same player may raise again at a later turn."""
    state = act(start(rule_set, EXAMPLE), "0:RAISE")
    assert state.to_act == 1 and state.prompt == Prompt.RAISE_ANSWER
    assert calls(state) == {"ACCEPT", "FOLD"}
    state = act(state, "1:ACCEPT")
    assert state.stake == stakes[0] and state.to_act == 0
    assert "RAISE" not in calls(state) and "MON_RESTE" not in calls(state)
    assert refused(state, "0:RAISE") == Reason.NOT_ALLOWED_NOW
    state = act(state, "0:9He 1:RAISE 0:ACCEPT")
    assert state.stake == stakes[1]
    state = act(state, "1:7Cl 1:RAISE 0:ACCEPT")  # seat 1's next turn: it may raise again
    assert state.stake == stakes[2]
    state = act(state, "1:8He 0:TSp")
    assert state.scores == (0, stakes[2])


def test_a_raise_is_open_only_while_the_stake_is_below_the_target() -> None:
    """V1.7: at stake 4 of a game to 3 nobody raises; points past the target are
    discarded (V1.5) and the game is won."""
    state = act(start(FRENCH, EXAMPLE, target_score=3), "0:RAISE 1:ACCEPT 0:9He 1:RAISE 0:ACCEPT")
    assert state.stake == 4
    state = act(state, "1:7Cl")
    assert "RAISE" not in calls(state) and "MON_RESTE" not in calls(state)
    assert refused(state, "1:RAISE") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:8He 0:TSp")
    assert state.manches == (0, 1) and state.history == ((1, 0, 3),) and state.scores == (0, 0)
    assert not calls(start(FRENCH, EXAMPLE, target_score=1)) & {"RAISE", "MON_RESTE"}


def test_catalan_truc_goes_to_two_retruc_to_three_and_nothing_above() -> None:
    """V5.3, V6: TRUC only at stake 1, RETRUC only at stake 2; answered by the
    caller's next seat."""
    hands = (("4Sw", "5Cl", "6Co"), ("3Cu", "2Sw", "1Cl"))
    state = start(CATALAN, hands, seats=2)
    assert calls(state) == {"TRUC", "FOLD"}
    assert refused(state, "0:RETRUC") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:RAISE") == Reason.NOT_ALLOWED_NOW, "RAISE is another rule set's"
    assert refused(state, "0:MON_RESTE") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:PROPOSE_REDEAL") == Reason.NOT_ALLOWED_NOW
    state = act(state, "0:TRUC 1:ACCEPT 0:4Sw")
    assert state.stake == 2 and calls(state) == {"RETRUC", "FOLD"}
    state = act(state, "1:RETRUC 0:ACCEPT")
    assert state.stake == 3
    state = act(state, "1:3Cu")
    assert calls(state) == {"FOLD"}, "nothing above RETRUC"
    state = act(state, "1:2Sw 0:5Cl")
    assert state.scores == (0, 3)


@pytest.mark.parametrize("rule_set", [FRENCH, SACKSON])
def test_a_concession_gives_the_stake_and_a_refused_raise_the_stake_before_it(
    rule_set: RuleSet,
) -> None:
    """V1.6, V6: conceding at one's turn (also after one's own accepted raise)
    gives the other side the current stake; folding a raise gives the raiser's
    side the stake before the raise."""
    state = act(start(rule_set, EXAMPLE, EXAMPLE), "0:RAISE 1:ACCEPT")
    assert "FOLD" in calls(state)
    assert act(state, "0:FOLD").scores == (0, 2)
    state = act(state, "0:9He 1:RAISE 0:FOLD")
    assert state.scores == (0, 2) and state.hands_played == 1
    assert state.to_act == 1 and state.dealer == 0, "the next hand is dealt by dealer + 1"


def test_a_call_answered_out_of_place_is_refused_with_the_v6_precedence() -> None:
    """V6: while an answer is awaited a card is NOT_ALLOWED_NOW even when it is
    not in hand (another pack's included); the other seat is NOT_YOUR_TURN."""
    state = act(start(FRENCH, EXAMPLE), "0:RAISE")
    assert refused(state, "1:7Cl") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:9He") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:7Sw") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:RAISE") == Reason.NOT_ALLOWED_NOW, "no counter-raise (V1.7)"
    assert refused(state, "1:REFUSE") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:MON_RESTE") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:ACCEPT") == Reason.NOT_YOUR_TURN
    assert refused(state, "0:9He") == Reason.NOT_YOUR_TURN
    state = act(state, "1:ACCEPT")
    assert refused(state, "0:7Cl") == Reason.CARD_NOT_IN_HAND
    assert refused(state, "0:1Sw") == Reason.CARD_NOT_IN_HAND, "a card of the Spanish pack"
    assert refused(state, "0:ACCEPT") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:TRUC") == Reason.NOT_ALLOWED_NOW


# ---------------------------------------------------------------------------------- V2.4: mon reste


def test_mon_reste_folded_gives_the_caller_the_stake_before_it() -> None:
    """V2.4: the jump is to the caller's need; ACCEPT is no answer to it; FOLD
    gives the caller the stake before it and ends the hand."""
    state = act(start(FRENCH, EXAMPLE, scores=(5, 3)), "0:MON_RESTE")
    assert state.pending is not None and state.pending.stake == 7
    assert state.prompt == Prompt.MON_RESTE_ANSWER and calls(state) == {"FOLD", "MON_RESTE"}
    assert refused(state, "1:ACCEPT") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:FOLD")
    assert state.scores == (6, 3) and state.hands_played == 1


def test_mon_reste_answered_mon_reste_makes_the_hand_decide_the_game() -> None:
    """V2.4: the winner's score becomes the target; no raise of any kind follows."""
    state = act(start(FRENCH, EXAMPLE, EXAMPLE, scores=(5, 3)), "0:MON_RESTE 1:MON_RESTE")
    assert state.mon_reste and state.to_act == 0
    assert calls(state) == {"FOLD"}
    state = act(state, "0:9He")
    assert calls(state) == {"FOLD"}
    assert refused(state, "1:RAISE") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:MON_RESTE") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:7Cl 1:8He 0:TSp")
    assert state.manches == (0, 1) and state.history == ((1, 5, 12),)
    assert state.scores == (0, 0)


def test_after_mon_reste_all_spoiled_scores_nothing_and_a_concession_gives_the_game() -> None:
    """V2.4: nobody wins the hand, nobody scores; V6: conceding gives the other
    side the game."""
    state = act(start(FRENCH, SPOILED, SPOILED, scores=(5, 3)), "0:MON_RESTE 1:MON_RESTE")
    done = act(state, "0:7He 1:7Sp 0:8He 1:8Sp 0:9He 1:9Sp")
    assert done.scores == (5, 3) and done.manches == (0, 0) and done.hands_played == 1
    conceded = act(state, "0:FOLD")
    assert conceded.manches == (0, 1) and conceded.history == ((1, 5, 12),)


def test_mon_reste_needs_the_callers_need_above_the_stake_but_its_answer_does_not() -> None:
    """V2.4, V6: at stake 2 a side needing 2 may not call MON_RESTE; the other
    side's MON_RESTE is still answered MON_RESTE by it."""
    state = start(FRENCH, EXAMPLE, scores=(10, 0))
    assert "MON_RESTE" in calls(state), "need 2 is above the stake 1"
    state = act(state, "0:RAISE 1:ACCEPT 0:9He")
    assert "MON_RESTE" in calls(state), "seat 1 needs 12"
    state = act(state, "1:7Cl 1:8He")  # seat 1 won trick 1 and leads; seat 0's turn at stake 2
    assert "MON_RESTE" not in calls(state)
    assert refused(state, "0:MON_RESTE") == Reason.NOT_ALLOWED_NOW
    state = act(start(FRENCH, EXAMPLE, scores=(10, 0)), "0:RAISE 1:ACCEPT 0:9He 1:MON_RESTE")
    assert calls(state) == {"FOLD", "MON_RESTE"}
    assert act(state, "0:MON_RESTE").mon_reste


def test_mon_reste_counts_as_the_turns_raise() -> None:
    """V6: one raise per turn, MON_RESTE included."""
    state = act(start(FRENCH, EXAMPLE), "0:RAISE 1:ACCEPT")
    assert "MON_RESTE" not in calls(state)
    assert refused(state, "0:MON_RESTE") == Reason.NOT_ALLOWED_NOW


# ------------------------------------------------------------------------------------- V2.5: redeal

REDEALT = (("QHe", "KHe", "AHe"), ("QSp", "KSp", "ASp"))


@pytest.mark.parametrize("rule_set", [FRENCH, SACKSON])
def test_an_accepted_redeal_takes_the_next_deal_and_eldest_acts_again(rule_set: RuleSet) -> None:
    """V2.5, V7: the dealer answers ACCEPT or REFUSE (a FOLD or a card is no
    answer); new cards; at most one redeal per hand; later hands take the
    entries after it."""
    state = start(rule_set, EXAMPLE, REDEALT, SPOILED)
    assert "PROPOSE_REDEAL" in calls(state)
    state = act(state, "0:PROPOSE_REDEAL")
    assert state.to_act == 1 and state.prompt == Prompt.REDEAL_ANSWER
    assert calls(state) == {"ACCEPT", "REFUSE"}
    assert refused(state, "1:FOLD") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:7Cl") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:ACCEPT")
    assert [list(map(str, h)) for h in state.hands] == [list(h) for h in REDEALT]
    assert state.to_act == 0 and state.hands_played == 0 and state.stake == 1
    assert "PROPOSE_REDEAL" not in calls(state)
    assert {"RAISE", "MON_RESTE", "FOLD"} <= calls(state)
    state = act(state, "0:AHe 1:ASp 0:KHe 1:KSp 0:QHe 1:QSp")
    assert [list(map(str, h)) for h in state.hands] == [list(h) for h in SPOILED]


def test_a_refused_redeal_leaves_the_hands_and_is_not_proposed_again() -> None:
    """V2.5, V6: after REFUSE there is none; play goes on with the dealt hands."""
    state = act(start(FRENCH, EXAMPLE, REDEALT), "0:PROPOSE_REDEAL 1:REFUSE")
    assert [list(map(str, h)) for h in state.hands] == [list(h) for h in EXAMPLE]
    assert state.to_act == 0 and "PROPOSE_REDEAL" not in calls(state)
    assert refused(state, "0:PROPOSE_REDEAL") == Reason.NOT_ALLOWED_NOW
    assert "RAISE" in calls(state), "the redeal was no raise"


def test_a_redeal_is_proposed_only_by_the_non_dealer_at_its_first_turn() -> None:
    """V2.5: before any raise or card."""
    state = start(FRENCH, EXAMPLE, REDEALT)
    assert "PROPOSE_REDEAL" not in calls(act(state, "0:RAISE 1:ACCEPT"))
    state = act(state, "0:9He")
    assert "PROPOSE_REDEAL" not in calls(state), "the dealer does not propose"
    assert refused(state, "1:PROPOSE_REDEAL") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:7Cl 1:8He")
    assert "PROPOSE_REDEAL" not in calls(state), "no longer eldest's first turn"


def test_a_redeal_with_no_deal_left_ends_the_scenario() -> None:
    """scenarios.md, V7: a redeal takes the next entry; when none is left no seat
    acts and every action is NOT_YOUR_TURN."""
    state = act(start(FRENCH, EXAMPLE), "0:PROPOSE_REDEAL 1:ACCEPT")
    assert state.phase == Phase.NO_DEAL and state.to_act is None
    assert registry.default_action(state) is None


@pytest.mark.parametrize("rule_set", [FRENCH, PARTNERSHIP, CATALAN])
def test_once_the_deals_run_out_every_action_is_not_your_turn(rule_set: RuleSet) -> None:
    """V6: NOT_YOUR_TURN also for every action once a scenario has run out of deals."""
    if rule_set == FRENCH:
        state = act(start(FRENCH, EXAMPLE), "0:FOLD")
    elif rule_set == PARTNERSHIP:
        four = (("7He", "8He", "9He"), ("7Sp", "8Sp", "9Sp"), ("AHe", "KHe", "QHe"))
        state = act(start(PARTNERSHIP, (*four, ("ASp", "KSp", "QSp")), dealer=3), "0:FOLD")
    else:
        deal = (
            ("3Sw", "4Cl", "5Co"),
            ("3Cu", "6Sw", "7Cl"),
            ("1Sw", "2Cl", "KSw"),
            ("1Cu", "2Cu", "KCu"),
        )
        state = act(start(CATALAN, deal, dealer=3), "0:FOLD")
    assert state.phase == Phase.NO_DEAL and state.to_act is None
    universe: list[Action] = [
        *(PlayCard(c) for c in Card),
        *(MakeCall(c) for c in Call),
        *(SendSignal(s) for s in Signal),
        *(SendDirective(d) for d in Directive),
        ChooseDealer(0),
        CutDeck(1),
    ]
    for seat in range(-1, state.seats + 1):
        assert registry.legal_actions(state, seat) == ()
        for move in universe:
            with pytest.raises(IllegalAction) as exc:
                registry.apply_action(state, seat, move)
            assert exc.value.reason == Reason.NOT_YOUR_TURN, f"seat {seat} {move}"


# ------------------------------------------------------------------------ V1.5: games and the match


def test_a_match_is_the_best_of_three_games_and_the_deal_rotates_across_games() -> None:
    """V1.2, V1.5: a game won at 12 (points past it discarded), the next game at
    0-0 dealt by the next dealer; the belle decides; then GAME_OVER."""
    state = start(FRENCH, EXAMPLE, EXAMPLE, EXAMPLE, scores=(0, 11), manches=(1, 0))
    state = act(state, "0:RAISE 1:ACCEPT 0:9He 1:7Cl 1:8He 0:TSp")
    assert state.manches == (1, 1) and state.history == ((1, 0, 12),)
    assert state.scores == (0, 0) and state.dealer == 0 and state.to_act == 1
    assert state.belle
    state = act(start(FRENCH, EXAMPLE, scores=(0, 11), manches=(1, 1)), "0:FOLD")
    assert state.phase == Phase.MATCH_OVER and state.winner == 1 and state.manches == (1, 2)
    assert state.to_act is None and registry.default_action(state) is None
    assert refused(state, "0:9He") == Reason.GAME_OVER
    assert refused(state, "1:sig=SEVEN") == Reason.GAME_OVER


# --------------------------------------------------------------------------------- V5: catalan truc

CATALAN_DEAL = (
    ("4Sw", "3Cl", "5Co"),
    ("6Sw", "7Cl", "JCo"),
    ("3Co", "2Sw", "KCu"),
    ("4Cu", "5Cu", "6Cu"),
)
"""Dealer 3, eldest 0. Seats 0 and 2 (team A) both hold a 3."""


def test_catalan_raises_are_answered_by_the_callers_next_seat_and_anyone_concedes() -> None:
    """V5.3: the first opponent of the caller in the order of play answers; any
    player concedes for their side at their own turn."""
    state = start(CATALAN, CATALAN_DEAL, dealer=3)
    assert "FOLD" in calls(state, 0)
    state = act(state, "0:4Sw 1:TRUC")
    assert state.to_act == 2 and state.pending is not None and state.pending.answerer == 2
    assert refused(state, "0:ACCEPT") == Reason.NOT_YOUR_TURN
    state = act(state, "2:ACCEPT 1:6Sw 2:RETRUC")
    assert state.to_act == 3
    state = act(state, "3:ACCEPT")
    assert state.stake == 3 and state.to_act == 2
    assert act(state, "2:3Co 3:FOLD").scores == (3, 0), "seat 3 concedes for team B"


def test_catalan_partners_tied_win_and_the_first_tied_card_leads() -> None:
    """V6: ties between partners in catalan_truc: their side wins the trick and
    the first of the tied cards played leads the next (here not the leader)."""
    state = act(start(CATALAN, CATALAN_DEAL, dealer=0), "1:6Sw 2:3Co 3:4Cu 0:3Cl")
    trick = state.tricks[0]
    assert trick.leader == 1
    assert trick.winner_team == 0 and trick.winning_seat == 2
    assert state.to_act == 2


def test_catalan_signals_are_honest_directives_are_any_players_but_embide() -> None:
    """V5.4, V6: TRES, DUS, AS only about a card still held; the directives of
    rules.md §7 but EMBIDE, by any player; none of another rule set's; none at all
    with two seats."""
    state = start(CATALAN, CATALAN_DEAL, dealer=3)
    messages = {str(a) for a in registry.legal_actions(state, 2) if not isinstance(a, MakeCall)}
    assert {"signal TRES", "signal DUS"} <= messages and "signal AS" not in messages
    assert refused(state, "2:sig=AS") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "1:sig=TRES") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "2:sig=SEVEN") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "2:sig=ESPASA") == Reason.NOT_ALLOWED_NOW
    for directive in ("LET_THEM_TAKE_IT", "PLAY_HIGH", "PLAY_LOW", "TRUC", "STAY_QUIET"):
        for seat in range(4):
            assert SendDirective(Directive(directive)) in registry.legal_actions(state, seat)
    assert refused(state, "1:dir=EMBIDE") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:dir=PLAY_SEVEN") == Reason.NOT_ALLOWED_NOW
    sent = act(state, "1:dir=PLAY_HIGH 0:3Cl")
    assert refused(sent, "0:sig=TRES") == Reason.NOT_ALLOWED_NOW, "the 3 was played"
    two = start(CATALAN, (("3Sw", "2Cl", "1Co"), ("4Sw", "5Cl", "6Co")), seats=2)
    assert all(isinstance(a, PlayCard | MakeCall) for a in registry.legal_actions(two, 0))
    assert refused(two, "0:sig=TRES") == Reason.NOT_ALLOWED_NOW
    assert refused(two, "0:dir=PLAY_HIGH") == Reason.NOT_ALLOWED_NOW


def test_catalan_advice_binds_nothing() -> None:
    """V5.4: directives are advice and change no score or legal card."""
    state = start(CATALAN, CATALAN_DEAL, dealer=3)
    advised = act(state, "2:dir=PLAY_LOW")
    assert cards(advised, 0) == cards(state, 0) == {"4Sw", "3Cl", "5Co"}
    assert advised.scores == state.scores and advised.stake == state.stake


@pytest.mark.parametrize("rule_set", [FRENCH, SACKSON])
def test_two_player_games_have_no_signals_or_directives(rule_set: RuleSet) -> None:
    """V6: every signal and directive is refused NOT_ALLOWED_NOW, in turn or not."""
    state = start(rule_set, EXAMPLE)
    for seat in (0, 1):
        assert all(isinstance(a, PlayCard | MakeCall) for a in registry.legal_actions(state, seat))
        for signal in Signal:
            assert refused(state, f"{seat}:sig={signal}") == Reason.NOT_ALLOWED_NOW
        for directive in Directive:
            assert refused(state, f"{seat}:dir={directive}") == Reason.NOT_ALLOWED_NOW


# ------------------------------------------------------------------------ V6, V7: options and setup


def test_each_rule_set_has_its_defaults_and_only_its_options() -> None:
    """V2.2, V3, V4.1, V5.2, V6."""
    defaults: dict[RuleSet, dict[str, object]] = {
        FRENCH: {"target_score": 12, "trick_order": "seven_eight"},
        SACKSON: {"target_score": 16, "trick_order": "seven_eight"},
        PARTNERSHIP: {"target_score": 12, "trick_order": "seven_eight"},
        CATALAN: {"target_score": 12, "seats": 4},
    }
    for rule_set, own in defaults.items():
        options = registry.default_options(rule_set)
        mapping = registry.options_to_mapping(options)
        assert mapping == {**own, "manches_to_win": 2, "play_out_all_tricks": False}
        assert registry.options_from_mapping(rule_set, mapping) == options
        assert registry.seat_count(options) == (2 if rule_set in (FRENCH, SACKSON) else 4)
    for rule_set, name, value in [
        (FRENCH, "seats", 2),
        (PARTNERSHIP, "seats", 4),
        (CATALAN, "trick_order", "seven_eight"),
        (FRENCH, "perique_trick_rank", "top"),
        (SACKSON, "ace_value", 0),
        (FRENCH, "trick_order", "seven_nine"),
        (CATALAN, "seats", 3),
        (CATALAN, "seats", 6),
        (FRENCH, "play_out_all_tricks", 1),
        (FRENCH, "target_score", "12"),
    ]:
        with pytest.raises(InvalidSetup):
            registry.options_from_mapping(rule_set, {name: value})
    assert registry.seat_count(registry.options_from_mapping(CATALAN, {"seats": 2})) == 2


def test_a_deal_or_start_outside_the_rules_is_an_invalid_setup() -> None:
    """V7: a card of another pack in a deal is an error; V6: scores start below
    the target; a deal is one hand of three per seat; the dealer is a seat."""
    with pytest.raises(InvalidSetup):
        registry.new_game(
            registry.default_options(FRENCH),
            deals=[((Card.SW_1, Card.HE_7, Card.HE_8), (Card.HE_9, Card.HE_T, Card.HE_J))],
        )
    for bad in [
        {"scores": (12, 0)},
        {"scores": (0, 12)},
        {"manches": (2, 0)},
        {"dealer": 2},
        {"dealer": -1},
    ]:
        with pytest.raises(InvalidSetup):
            start(FRENCH, EXAMPLE, **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidSetup):
        start(FRENCH, (("9He", "TSp", "JDi"), ("7Cl", "8He", "9He")))  # a card twice
    with pytest.raises(InvalidSetup):
        start(FRENCH, (("9He", "TSp"), ("7Cl", "8He")))
    with pytest.raises(InvalidSetup):
        start(CATALAN, (("3Sw", "2Cl", "1Co"), ("4Sw", "5Cl", "6Co")))  # two hands for four
    with pytest.raises(InvalidSetup):
        registry.new_game(registry.default_options(FRENCH))  # neither seed nor deals
    for seed in (-1, 2**63):
        with pytest.raises(InvalidSetup):
            registry.new_game(registry.default_options(FRENCH), seed=seed)
    with pytest.raises(InvalidSetup):  # another rule set's options
        french_truc.new_game(sackson_truc.options(), seed=1)
    with pytest.raises(InvalidSetup):
        registry.new_game(registry.default_options(FRENCH), seed=1, draws=[])


def test_the_first_dealer_comes_from_the_seed_and_replays() -> None:
    """V1.2: the engine chooses the first dealer from the seed; eldest acts first."""
    for rule_set in (FRENCH, PARTNERSHIP, CATALAN):
        options = registry.default_options(rule_set)
        dealers = set()
        for seed in range(40):
            first = registry.new_game(options, seed=seed).state
            again = registry.new_game(options, seed=seed).state
            assert isinstance(first, FamilyState)
            assert registry.encode_state(first) == registry.encode_state(again)
            assert first.to_act == (first.dealer + 1) % first.seats
            dealers.add(first.dealer)
        assert dealers == set(range(registry.seat_count(options)))


def test_the_example_of_variants_md_runs_as_a_scenario() -> None:
    """V7's example, through the scenario runner."""
    run = run_scenario(
        {
            "name": "french truc: an accepted raise is worth 2",
            "ruleset": "french_truc",
            "start": {"dealer": 1, "scores": [0, 0], "manches": [0, 0]},
            "deals": [[["9He", "TSp", "JDi"], ["7Cl", "8He", "ASp"]]],
            "actions": [
                {"seat": 0, "call": "RAISE"},
                {"seat": 1, "call": "ACCEPT"},
                {"seat": 0, "play": "9He"},
                {"seat": 1, "play": "7Cl"},
                {"seat": 1, "play": "8He"},
                {"seat": 0, "play": "TSp"},
            ],
            "expect": {"scores": [0, 2], "hands_played": 1},
        }
    )
    assert run.result.scores == (0, 2)
    assert not run.problems
