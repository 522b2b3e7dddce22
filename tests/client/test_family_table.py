"""The terminal's table, choices and narration in the rule sets of variants.md:
two- and four-seat tables, French cards, governors and instructions, the calls
of each rule set in words. Views come from the engine through the protocol's
converter, as the service sends them (pure: no process, no network)."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console, RenderableType
from truc.v1 import game_pb2

from tests.bots.conftest import (
    FAMILY_IDS,
    FAMILY_TABLES,
    family_action,
    family_options,
    family_play,
    family_start,
    family_view,
)
from tests.rules.play import PLAIN_DEAL, seq, start
from tests.rules.play import play as ty_play
from truc_client.choices import choices_for
from truc_client.narration import Narrator, action_text, card_text, describe, prompt_text
from truc_client.table import render_screen, render_table
from truc_protocol.convert import card_to_proto, events_to_proto, view_to_proto
from truc_rules import registry
from truc_rules.family import FamilyState
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou import view_for as ty_view_for

pytestmark = pytest.mark.unit

NOW = 1_000_000.0
FRENCH = RuleSet.FRENCH_TRUC
SACKSON = RuleSet.SACKSON_TRUC
PARTNERSHIP = RuleSet.PARTNERSHIP_TRUC
CATALAN = RuleSet.CATALAN_TRUC


def text_of(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def screen(state: FamilyState, seat: int, log: list[str] | None = None) -> str:
    view = family_view(state, seat)
    return text_of(render_screen(view, choices_for(view), now=NOW, log=log or []))


def told(state: FamilyState, steps: str) -> list[str]:
    """The narration, for seat 0, of the events of ``steps`` (each must be legal)."""
    narrator = Narrator(family_view(state, 0).rule_set)
    lines: list[str] = []
    for token in steps.split():
        seat, what = token.split(":")
        transition = registry.apply_action(
            state, int(seat), family_action(state.variant.rule_set, what)
        )
        view = registry.view_for(transition.state, 0, transition.events)
        for event in events_to_proto(view.events, 2):
            line = narrator.describe(event)
            if line is not None:
                lines.append(line)
        after = transition.state
        assert isinstance(after, FamilyState)
        state = after
    return lines


def _row_of(text: str, needle: str) -> int:
    """The first line of the table (below its title) holding ``needle``."""
    return next(i for i, line in enumerate(text.splitlines()) if i and needle in line)


def _column_of(text: str, needle: str) -> int:
    line = text.splitlines()[_row_of(text, needle)]
    return line.index(needle)


# --------------------------------------------------------------------------- tables

FRENCH_DEAL = (("9He", "TSp", "JDi"), ("7Cl", "8He", "ASp"))


def test_a_two_seat_table_has_the_opponent_across_and_french_cards() -> None:
    state = family_play(family_start(FRENCH, *FRENCH_DEAL, dealer=1), "0:RAISE")
    text = screen(state, 1)
    assert "you are S1(B)" in text
    assert "S2(" not in text and "S3(" not in text  # two seats only
    assert _row_of(text, "S0(A)") < _row_of(text, "S1(B)")  # the opponent sits at the top
    assert "your hand: 7Cl♣  8He♥  ASp♠" in text
    assert 'pending: S0(A) calls RAISE ("two more?"), S1(B) to answer' in text
    assert "▶ you answer the RAISE" in text
    assert "1) call ACCEPT (play on)" in text and "2) call FOLD (give up the hand)" in text
    assert "points A 0 - B 0 (to 12)   games A 0 - B 0 (to 2)" in text
    assert "captain" not in text and "governor" not in text
    # Seat 0's cards are nowhere on seat 1's screen.
    for hidden in FRENCH_DEAL[0]:
        assert card_text(card_to_proto(registry.deck_of(FRENCH).parse(hidden))) not in text


def test_a_spoiled_trick_and_an_accepted_raise_on_the_table() -> None:
    # 9He against 9Sp: the same rank on both sides spoils the trick (V1.4).
    state = family_start(FRENCH, ("9He", "TSp", "JDi"), ("9Sp", "8He", "ASp"), dealer=1)
    state = family_play(state, "0:RAISE 1:ACCEPT 0:9He 1:9Sp")
    text = screen(state, 0)
    assert "tricks won: A 0 · B 0  (1: spoiled)" in text
    assert "stake: RAISE accepted · the hand is worth 2 points" in text
    assert "pardes" not in text


def test_the_turn_offers_the_calls_of_french_truc_in_words() -> None:
    view = family_view(family_start(FRENCH, *FRENCH_DEAL, dealer=1), 0)
    texts = [c.text for c in choices_for(view)]
    assert texts == [
        "play 9He♥",
        "play TSp♠",
        "play JDi♦",
        'call RAISE ("two more?")',
        "call MON_RESTE (my rest: this hand for the game)",
        "call PROPOSE_REDEAL (propose a redeal: new cards for both)",
        "call FOLD (concede the hand)",
    ]
    assert prompt_text(view, you=True) == "play (or raise)"
    sackson = family_view(family_start(SACKSON, *FRENCH_DEAL, dealer=1), 0)
    assert 'call RAISE ("double?")' in [c.text for c in choices_for(sackson)]


def test_the_answers_of_mon_reste_and_of_a_redeal_in_words() -> None:
    start_state = family_start(FRENCH, *FRENCH_DEAL, dealer=1)
    mon_reste = family_view(family_play(start_state, "0:MON_RESTE"), 1)
    assert [c.text for c in choices_for(mon_reste)] == [
        "call FOLD (give up the hand)",
        "call MON_RESTE (accept: this hand decides the game)",
    ]
    assert prompt_text(mon_reste) == "answers MON_RESTE"
    redeal = family_play(start_state, "0:PROPOSE_REDEAL")
    view = family_view(redeal, 1)
    assert [c.text for c in choices_for(view)] == [
        "call ACCEPT (the redeal)",
        "call REFUSE (refuse the redeal: keep these cards)",
    ]
    assert prompt_text(view, you=True) == "answer the redeal proposal"
    assert "pending: S0(A) proposes a redeal, S1(B) (the dealer) to answer" in screen(redeal, 1)
    answered = family_play(family_start(FRENCH, *FRENCH_DEAL, dealer=1), "0:MON_RESTE 1:MON_RESTE")
    assert "this hand decides the game" in screen(answered, 0)


# Partnership Truc, dealer seat 3: eldest seat 0 governs team A, seat 3 team B.
PARTNER_DEAL = (
    ("9He", "TDi", "JSp"),
    ("8Cl", "QSp", "KDi"),
    ("7He", "KHe", "9Sp"),
    ("ACl", "JDi", "TSp"),
)


def test_a_four_seat_table_has_the_partner_across_and_the_governors_marked() -> None:
    state = family_play(
        family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3), "2:~SEVEN 0:!PLAY_SEVEN"
    )
    state = family_play(state, "0:9He 1:8Cl")
    text = screen(state, 2)
    # Seat 2 at the bottom, its partner (seat 0) at the top, the opponents beside.
    assert _row_of(text, "S0(A) ★governor") < _row_of(text, "S3(B) ★governor")
    assert _row_of(text, "S3(B) ★governor") == _row_of(text, "S1(B)")
    assert _row_of(text, "S1(B)") < _row_of(text, "▶ S2(A)")
    assert _column_of(text, "S1(B)") < _column_of(text, "S3(B)")  # S3 plays after S2: right
    assert "governors: S3(B) and S0(A) (only they answer raises and concede)" in text
    assert "S2(A) ★governor" not in text and "S1(B) ★governor" not in text
    assert "[9He♥]" in text and "[8Cl♣]" in text  # the trick in progress
    assert "your governor's instruction PLAY_SEVEN binds your next card" in text
    assert "team signals: S2(A) SEVEN · S0(A) instructs PLAY_SEVEN" in text
    view = family_view(state, 2)
    texts = [c.text for c in choices_for(view)]
    assert texts[0] == "play 7He♥" and not any(t.startswith("play KHe") for t in texts)
    assert "s1) signal SEVEN (a smile: I hold a 7)" in text
    governor = family_view(state, 0)
    assert "instruct LEAVE_IT_TO_ME (leave it to me: play one of your lowest cards next)" in [
        c.text for c in choices_for(governor)
    ]


def test_the_other_side_sees_no_signal_of_the_team() -> None:
    state = family_play(
        family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3), "2:~SEVEN 0:!PLAY_SEVEN"
    )
    for seat in (1, 3):
        assert "team signals: none this hand" in screen(state, seat)


@pytest.mark.parametrize(("rule_set", "values"), FAMILY_TABLES, ids=FAMILY_IDS)
def test_no_screen_of_a_real_game_shows_another_seats_card(
    rule_set: RuleSet, values: dict[str, object]
) -> None:
    """Random legal play; every seat's screen after every action (the table, the
    hand, the signals, its narrated events) shows its own cards and none the
    others still hold."""
    rng = random.Random(9)
    transition = registry.new_game(family_options(rule_set, **values), seed=3)
    seats = registry.seat_count(transition.state)
    logs: list[list[str]] = [[] for _ in range(seats)]
    narrators: list[Narrator] = []
    for step in range(80):
        state = transition.state
        assert isinstance(state, FamilyState)
        for seat in range(seats):
            view = registry.view_for(state, seat, transition.events)
            message = view_to_proto(
                view, name="games/g", players=["p"] * seats, etag=str(step), deadline_ms=None
            )
            if not narrators or len(narrators) <= seat:
                narrators.append(Narrator(message.rule_set))
            for event in events_to_proto(view.events, step):
                line = narrators[seat].describe(event)
                if line is not None and line.startswith("── hand"):
                    logs[seat].clear()
                if line is not None:
                    logs[seat].append(line)
            message.ClearField("events")
            text = text_of(render_screen(message, choices_for(message), now=NOW, log=logs[seat]))
            for mine in state.hands[seat]:
                assert card_text(card_to_proto(mine)) in text
            for other in range(seats):
                if other != seat:
                    for hidden in state.hands[other]:
                        assert card_text(card_to_proto(hidden)) not in text, (step, seat, hidden)
        if state.to_act is None:
            break
        legal = registry.legal_actions(state, state.to_act)
        transition = registry.apply_action(state, state.to_act, rng.choice(legal))


# --------------------------------------------------------------------------- narration


def test_french_truc_in_words_raise_redeal_mon_reste_and_a_spoiled_trick() -> None:
    deals = (("9He", "TSp", "JDi"), ("9Sp", "8He", "ASp"))
    redealt = (("7He", "TDi", "JSp"), ("7Sp", "KHe", "QCl"))
    state = family_start(FRENCH, *deals, more=[redealt], dealer=1)
    lines = told(state, "0:PROPOSE_REDEAL 1:ACCEPT 0:RAISE 1:ACCEPT 0:7He 1:7Sp")
    assert lines[0] == "S0(A) proposes a redeal (PROPOSE_REDEAL)"
    assert lines[1] == "S1(B) accepts the redeal (ACCEPT): three new cards each"
    assert "   S0(A) holds 7He♥ TDi♦ JSp♠" in lines
    assert 'S0(A): RAISE — "two more?"' in lines
    assert "S1(B) accepts S0(A)'s RAISE (ACCEPT)" in lines
    assert "RAISE accepted by team B (S1(B)): the hand is worth 2 points" in lines
    assert "trick 1 is spoiled: nobody wins it" in lines
    refused = told(family_start(FRENCH, *deals, dealer=1), "0:PROPOSE_REDEAL 1:REFUSE")
    assert refused[-1] == "S1(B) refuses the redeal (REFUSE): play goes on with these cards"
    mon_reste = told(family_start(FRENCH, *deals, dealer=1), "0:MON_RESTE 1:MON_RESTE")
    assert mon_reste == [
        'S0(A): MON_RESTE — "my rest": this hand for the game',
        "S1(B) answers S0(A)'s MON_RESTE with MON_RESTE",
        "MON_RESTE answered with MON_RESTE: this hand decides the game",
    ]
    folded = told(family_start(FRENCH, *deals, dealer=1), "0:RAISE 1:FOLD")
    assert folded[:2] == [
        'S0(A): RAISE — "two more?"',
        "S1(B) folds (FOLD) to S0(A)'s RAISE",
    ]
    assert "hand 1 over (conceded)" in folded


def test_sackson_and_catalan_calls_in_words() -> None:
    sackson_deal = (("9He", "TSp", "JDi"), ("9Sp", "8He", "ASp"))
    sackson = told(family_start(SACKSON, *sackson_deal, dealer=1), "0:RAISE")
    assert sackson == ['S0(A): RAISE — "double?"']
    catalan = family_start(
        CATALAN,
        ("3Sw", "4Co", "5Cu"),
        ("2Sw", "6Co", "7Cu"),
        ("1Co", "JCo", "KCu"),
        ("NSw", "KSw", "4Sw"),
        dealer=3,
    )
    lines = told(catalan, "0:TRUC 1:ACCEPT 0:3Sw 1:~DUS")
    assert lines[:3] == [
        "S0(A): TRUC",
        "S1(B) accepts S0(A)'s TRUC (ACCEPT)",
        "TRUC accepted by team B (S1(B)): the hand is worth 2 points",
    ]
    # Seat 0 does not see team B's signal; seat 1's partner would.
    assert not any("DUS" in line for line in lines)


def test_partnership_hands_name_their_governors_and_instructions() -> None:
    state = family_start(PARTNERSHIP, *PARTNER_DEAL, dealer=3)
    lines = told(state, "2:~SEVEN 0:!LEAVE_IT_TO_ME")
    assert lines == [
        "S2(A) signals SEVEN to the governor (a smile: I hold a 7)",
        "S0(A) instructs the partner: LEAVE_IT_TO_ME "
        "(leave it to me: play one of your lowest cards next)",
    ]
    started = game_pb2.Event(
        hand_started=game_pb2.HandStarted(hand_number=2, dealer=0, eldest=1, cutter=-1, manche=1)
    )
    assert Narrator(game_pb2.RULE_SET_PARTNERSHIP_TRUC).describe(started) == (
        "── hand 2 (game 1): S0(A) deals, S1(B) leads; governors S0(A) and S1(B)"
    )
    assert describe(started) == "── hand 2 (manche 1): S0(A) deals, S1(B) leads"


def test_truc_y_flou_names_the_team_that_accepted_a_truc() -> None:
    """Seat 0 (team A) calls TRUC; team B's captain, seat 3, accepts: team B
    (and seat 3) accepted, as the events say; the table shows the narration's
    account, not ``last_raiser``."""
    called = ty_play(start(PLAIN_DEAL), *seq("0:TRUC"))
    transition_state = ty_play(called, *seq("3:ACCEPT"))
    view = view_to_proto(
        ty_view_for(transition_state, 0), name="g", players=["p"] * 6, etag="3", deadline_ms=None
    )
    narrator = Narrator(view.rule_set)
    call = game_pb2.Event(called=game_pb2.Called(seat=0, call=game_pb2.CALL_TRUC))
    accept = game_pb2.Event(called=game_pb2.Called(seat=3, call=game_pb2.CALL_ACCEPT))
    raised = game_pb2.Event(stake_raised=game_pb2.StakeRaised(call=game_pb2.CALL_TRUC, stake=2))
    assert narrator.describe(call) == "S0(A): TRUC"
    assert narrator.describe(accept) == "S3(B): ACCEPT"
    assert narrator.describe(raised) == (
        "TRUC accepted by team B (S3(B)): the hand is worth 2 points"
    )
    assert "truc: TRUC accepted by team B (S3(B)) · the hand is worth 2 points" in text_of(
        render_table(view, now=NOW, accepted_by=narrator.accepted_by)
    )
    assert action_text(game_pb2.Action(call=game_pb2.CALL_ACCEPT), view) == "call ACCEPT"
