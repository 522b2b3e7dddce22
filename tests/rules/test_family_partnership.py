"""partnership_truc (variants.md V4): governors, partners' ties, honest signals
and binding instructions; pinned with fixed deals, then as properties of random
matches in which governors instruct often.

With dealer 3 the governors are seat 3 (team B) and eldest seat 0 (team A);
seat 2 is seat 0's partner and seat 1 is seat 3's.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from truc_rules import family, partnership_truc, registry
from truc_rules.actions import (
    Call,
    Directive,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
    Signal,
)
from truc_rules.errors import IllegalAction, Reason
from truc_rules.events import DirectiveSent, SignalSent
from truc_rules.family import FamilyState, Prompt
from truc_rules.rule_set import RuleSet

from .test_family_properties import refereed, seeds
from .test_family_rules import act, action, calls, cards, refused, start

PARTNERSHIP = RuleSet.PARTNERSHIP_TRUC

DEAL = (
    ("7He", "KHe", "9He"),
    ("8Sp", "QSp", "TSp"),
    ("7Di", "ADi", "9Di"),
    ("8Cl", "JCl", "TCl"),
)
"""Seat 0 and its partner seat 2 each hold a 7; seats 1 and 3 each an 8."""
SECOND = (
    ("AHe", "QHe", "JHe"),
    ("ASp", "KSp", "JSp"),
    ("8Di", "KDi", "TDi"),
    ("ACl", "KCl", "QCl"),
)


def game(
    *deals: tuple[tuple[str, str, str], ...], dealer: int = 3, **options: object
) -> FamilyState:
    return start(PARTNERSHIP, *(deals or (DEAL, SECOND)), dealer=dealer, options=options)


# ---------------------------------------------------------------------------- V4.2, V4.3: governors


def test_the_governors_are_the_dealer_and_eldest() -> None:
    """V4.2, V6: this hand's dealer and eldest; the next hand's are the next two."""
    state = game()
    assert state.governors == (3, 0)
    assert family.view_for(state, 1).governors == (3, 0)
    state = act(state, "0:FOLD")
    assert state.dealer == 0 and state.governors == (0, 1)


def test_only_governors_concede_and_the_opposing_governor_answers_every_raise() -> None:
    """V4.2: any player raises or calls MON_RESTE at its turn; the opposing
    governor answers; a non-governor's FOLD is refused (V6)."""
    state = game()
    assert "FOLD" in calls(state)  # seat 0 governs team A
    state = act(state, "0:9He")
    assert "FOLD" not in calls(state) and state.to_act == 1
    assert refused(state, "1:FOLD") == Reason.NOT_ALLOWED_NOW
    state = act(state, "1:RAISE")
    assert state.to_act == 0 and state.prompt == Prompt.RAISE_ANSWER
    assert refused(state, "2:ACCEPT") == Reason.NOT_YOUR_TURN
    assert refused(state, "3:ACCEPT") == Reason.NOT_YOUR_TURN
    state = act(state, "0:ACCEPT 1:TSp")
    assert "FOLD" not in calls(state) and {"RAISE", "MON_RESTE"} <= calls(state)
    state = act(state, "2:MON_RESTE")
    assert state.to_act == 3, "the dealer governs team B"
    assert refused(state, "1:FOLD") == Reason.NOT_YOUR_TURN
    assert act(state, "3:FOLD").scores == (2, 0)
    state = act(state, "3:MON_RESTE 2:9Di")
    assert state.to_act == 3 and "FOLD" in calls(state), "the dealer concedes for team B"
    assert act(state, "3:FOLD").manches == (1, 0), "after MON_RESTE a concession gives the game"


def test_only_eldest_proposes_a_redeal_and_only_the_dealer_answers_it() -> None:
    """V4.3."""
    state = game(DEAL, SECOND, DEAL)
    assert "PROPOSE_REDEAL" in calls(state)
    state = act(state, "0:PROPOSE_REDEAL")
    assert state.to_act == 3 and calls(state) == {"ACCEPT", "REFUSE"}
    assert refused(state, "1:ACCEPT") == Reason.NOT_YOUR_TURN
    state = act(state, "3:ACCEPT")
    assert [list(map(str, h)) for h in state.hands] == [list(h) for h in SECOND]
    assert state.to_act == 0 and "PROPOSE_REDEAL" not in calls(state)
    state = act(state, "0:JHe")
    assert "PROPOSE_REDEAL" not in calls(state)
    assert refused(state, "1:PROPOSE_REDEAL") == Reason.NOT_ALLOWED_NOW


# --------------------------------------------------------------------------------------- V4.4: ties


def test_partners_tied_on_top_win_when_one_of_them_led() -> None:
    """V4.4: their side wins and the leader leads next."""
    state = act(game(), "0:7He 1:8Sp 2:7Di 3:8Cl")
    trick = state.tricks[0]
    assert trick.winner_team == 0 and trick.winning_seat == 0 and state.to_act == 0


def test_partners_tied_on_top_spoil_the_trick_when_neither_led() -> None:
    """V4.4: as though one of the tied cards were the other side's: spoiled, and
    whoever led leads again."""
    state = act(game(dealer=0), "1:8Sp 2:7Di 3:8Cl 0:7He")
    trick = state.tricks[0]
    assert trick.leader == 1
    assert trick.winner_team is None and trick.winning_seat is None and state.to_act == 1


def test_top_ranks_of_both_sides_spoil_the_trick() -> None:
    """V4.4, V1.4."""
    state = act(game(), "0:9He 1:8Sp 2:ADi 3:8Cl")
    assert state.tricks[0].winner_team is None and state.to_act == 0


# ------------------------------------------------------------------------------------ V4.5: signals


def test_only_the_governors_partner_signals_and_only_about_cards_it_holds() -> None:
    """V4.5: SEVEN, EIGHT, ACE, honest; a governor does not signal; the partner
    does not instruct; nothing of another rule set."""
    state = game()
    assert {a for a in registry.legal_actions(state, 2) if isinstance(a, SendSignal)} == {
        SendSignal(Signal.SEVEN),
        SendSignal(Signal.ACE),
    }
    assert refused(state, "2:sig=EIGHT") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:sig=SEVEN") == Reason.NOT_ALLOWED_NOW, "a governor does not signal"
    assert refused(state, "1:sig=SEVEN") == Reason.NOT_ALLOWED_NOW, "seat 1 holds no 7"
    assert refused(state, "2:sig=TRES") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "2:dir=PLAY_LOW") == Reason.NOT_ALLOWED_NOW, (
        "the partner does not instruct"
    )
    assert refused(state, "0:dir=PLAY_HIGH") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "0:dir=EMBIDE") == Reason.NOT_ALLOWED_NOW
    state = act(state, "0:9He 1:8Sp 2:7Di")
    assert refused(state, "2:sig=SEVEN") == Reason.NOT_ALLOWED_NOW, "the 7 was played"


def test_opponents_never_see_signals_or_instructions() -> None:
    """V4.5: the team-private channel, in views and in events."""
    state = game()
    for step in ("2:sig=SEVEN", "0:dir=LEAVE_IT_TO_ME", "1:sig=EIGHT"):
        seat, what = step.split(":")
        transition = registry.apply_action(state, int(seat), _action(state, what))
        assert isinstance(transition.state, FamilyState)
        state = transition.state
        team = int(seat) % 2
        for viewer in range(4):
            view = registry.view_for(state, viewer, transition.events)
            sent = [e for e in view.events if isinstance(e, SignalSent | DirectiveSent)]
            assert bool(sent) == (viewer % 2 == team)
            assert all(s % 2 == viewer % 2 for s, _ in view.signals)
        spectator = registry.view_for(state, None, transition.events)
        assert spectator.signals == () and not spectator.events
    assert family.view_for(state, 2).instruction == Directive.LEAVE_IT_TO_ME
    assert family.view_for(state, 0).instruction is None
    assert family.view_for(state, 1).instruction is None
    assert [m for _, m in family.view_for(state, 1).signals] == ["EIGHT"]


def _action(state: FamilyState, what: str) -> SendSignal | SendDirective:
    move = action(state, what)
    assert isinstance(move, SendSignal | SendDirective)
    return move


# -------------------------------------------------------------------------- V4.5: instructions bind


def test_play_seven_binds_the_partner_to_a_seven_until_its_next_card() -> None:
    """V4.5: sent at any moment (here before the partner's turn); other cards
    NOT_ALLOWED_NOW, a card not held CARD_NOT_IN_HAND (V6); used up by the card."""
    state = act(game(), "0:dir=PLAY_SEVEN 0:9He 1:8Sp")
    assert state.to_act == 2 and cards(state, 2) == {"7Di"}
    assert refused(state, "2:ADi") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "2:9Di") == Reason.NOT_ALLOWED_NOW
    assert refused(state, "2:7He") == Reason.CARD_NOT_IN_HAND
    assert refused(state, "2:7Sw") == Reason.CARD_NOT_IN_HAND
    assert registry.default_action(state) == PlayCard(registry.deck_of(PARTNERSHIP).parse("7Di")), (
        "the deadline's card obeys too"
    )
    state = act(state, "2:7Di")
    assert state.instructions[2] is None
    state = act(state, "3:8Cl")  # seat 2 won trick 1 and leads: free again
    assert state.to_act == 2 and cards(state, 2) == {"ADi", "9Di"}


def test_play_seven_without_a_seven_binds_nothing_but_is_used_up() -> None:
    """V6."""
    state = act(game(), "3:dir=PLAY_SEVEN 0:9He")
    assert state.to_act == 1 and cards(state, 1) == {"8Sp", "QSp", "TSp"}
    state = act(state, "1:QSp")
    assert state.instructions[1] is None


@pytest.mark.parametrize("directive", ["PLAY_LOW", "LEAVE_IT_TO_ME"])
@pytest.mark.parametrize(("order", "lowest"), [("seven_eight", {"9Di"}), ("seven_ace", {"8Di"})])
def test_play_low_binds_the_partner_to_its_lowest_cards_in_the_trick_order(
    directive: str, order: str, lowest: set[str]
) -> None:
    """V4.5, V6: "lowest-ranked" by the rule set's trick order, with trick_order
    (the 8 is high in seven_eight and lowest in seven_ace)."""
    deal = (DEAL[0], DEAL[1], ("7Di", "8Di", "9Di"), DEAL[3])
    state = act(game(deal, SECOND, trick_order=order), f"0:dir={directive} 0:9He 1:8Sp")
    assert cards(state, 2) == lowest
    for card in {"7Di", "8Di", "9Di"} - lowest:
        assert refused(state, f"2:{card}") == Reason.NOT_ALLOWED_NOW


def test_equally_low_cards_are_all_allowed() -> None:
    """V4.5: "one of their lowest-ranked cards"."""
    deal = (DEAL[0], DEAL[1], ("9Di", "9Sp", "ADi"), DEAL[3])
    state = act(game(deal, SECOND), "0:dir=PLAY_LOW 0:9He 1:8Sp")
    assert cards(state, 2) == {"9Di", "9Sp"}


def test_the_latest_instruction_replaces_an_earlier_one() -> None:
    """V4.5."""
    state = act(game(), "0:dir=PLAY_SEVEN 0:dir=PLAY_LOW 0:9He 1:8Sp")
    assert cards(state, 2) == {"9Di"}
    state = act(game(), "0:dir=PLAY_LOW 0:dir=PLAY_SEVEN 0:9He 1:8Sp")
    assert cards(state, 2) == {"7Di"}


def test_an_instruction_binds_across_a_redeal_but_not_beyond_the_hand() -> None:
    """V6: an instruction given before a redeal still binds after it; V4.5: none
    outlives the hand."""
    state = act(game(DEAL, SECOND, DEAL), "3:dir=PLAY_LOW 0:PROPOSE_REDEAL 3:ACCEPT 0:JHe")
    assert cards(state, 1) == {"JSp"}, "seat 1's new lowest card"
    state = act(game(DEAL, SECOND), "3:dir=PLAY_LOW 0:FOLD")
    assert state.instructions == (None,) * 4
    assert state.to_act == 1 and cards(state, 1) == {"ASp", "KSp", "JSp"}


def test_a_governor_instructs_its_own_partner_only() -> None:
    """V4.5: seat 3's instruction binds seat 1, not seat 2."""
    state = act(game(), "3:dir=LEAVE_IT_TO_ME 0:9He")
    assert cards(state, 1) == {"TSp"}
    state = act(state, "1:TSp")
    assert cards(state, 2) == {"7Di", "ADi", "9Di"}


def test_an_instruction_changes_no_score() -> None:
    """V4.5: instructions and signals change no score, stake or turn."""
    state = game()
    after = act(state, "0:dir=PLAY_LOW 2:sig=ACE 3:dir=PLAY_SEVEN 1:sig=EIGHT")
    assert (after.scores, after.stake, after.to_act, after.prompt) == (
        state.scores,
        state.stake,
        state.to_act,
        state.prompt,
    )


# --------------------------------------------------------------------------------------- properties

_SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(seed=seeds, play_seed=seeds)
def test_in_random_matches_instructions_bind_and_only_governors_answer_or_concede(
    seed: int, play_seed: int
) -> None:
    """Random matches where a message is sent at half the steps: whenever the seat
    on turn is bound, its legal cards are exactly the allowed ones and every other
    card it holds is refused NOT_ALLOWED_NOW; every raise, MON_RESTE and redeal is
    answered by a governor; only governors may FOLD at their turn."""
    options = partnership_truc.options()
    bound = 0
    for step, referee in refereed(options, seed, play_seed, chatty=0.5):
        state = step.after
        seat = state.to_act
        if seat is None:
            continue
        governors = {state.dealer, (state.dealer + 1) % 4}
        if state.pending is not None:
            assert seat in governors and state.pending.caller % 2 != seat % 2
            continue
        legal = registry.legal_actions(state, seat)
        held = set(state.hands[seat])
        allowed = set(referee.playable(state, seat))
        assert {a.card for a in legal if isinstance(a, PlayCard)} == allowed
        if seat not in governors:
            assert MakeCall(Call.FOLD) not in legal
        if referee.instructions[seat] is not None and allowed != held:
            bound += 1
            for card in held - allowed:
                with pytest.raises(IllegalAction) as exc:
                    registry.apply_action(state, seat, PlayCard(card))
                assert exc.value.reason == Reason.NOT_ALLOWED_NOW
    assert bound > 0, "no instruction restricted a card in the whole match"
