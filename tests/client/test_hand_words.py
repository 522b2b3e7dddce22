"""What terminal play and ``make run`` say about a hand (issue 16): who accepted a
truc (from the events, not ``last_raiser``), an embit a flor voided, the final
scores, the bonus by name, the hand's summary, the draw for the first deal,
display names (made printable), the choices from ``legal_moves`` and
``legal_messages`` with their explanations, and the rule options checked as the
service checks them. Pure: views and events built here, no process."""

from __future__ import annotations

import argparse

import pytest
from truc.v1 import game_pb2

from tests.client.test_table import card, hand_built_view, text_of
from truc_client.choices import choices_for
from truc_client.explanations import draw_text, explain
from truc_client.narration import Narrator, printable, seat_label
from truc_client.table import render_screen, render_table
from truc_client.terminal import add_arguments, checked_options, option_problem, run
from truc_protocol.errors import InvalidArgument

pytestmark = pytest.mark.unit

NOW = 1_000_000.0


def called(seat: int, call: int) -> game_pb2.Event:
    return game_pb2.Event(called=game_pb2.Called(seat=seat, call=call))  # type: ignore[arg-type]


def raised(call: int, stake: int) -> game_pb2.Event:
    return game_pb2.Event(
        stake_raised=game_pb2.StakeRaised(call=call, stake=stake)  # type: ignore[arg-type]
    )


def played(seat: int, text: str) -> game_pb2.Event:
    return game_pb2.Event(card_played=game_pb2.CardPlayed(seat=seat, card=card(text), trick=1))


def credited(team: int, points: int, reason: int, a: int, b: int) -> game_pb2.Event:
    return game_pb2.Event(
        points_credited=game_pb2.PointsCredited(
            team=team,  # type: ignore[arg-type]
            points=points,
            reason=reason,  # type: ignore[arg-type]
            scores=game_pb2.Score(team_a=a, team_b=b),
        )
    )


def trick_done(number: int, winner: int, seat: int) -> game_pb2.Event:
    return game_pb2.Event(
        trick_completed=game_pb2.TrickCompleted(
            trick=number,
            winner=winner,  # type: ignore[arg-type]
            winning_seat=seat,
        )
    )


def test_an_accepted_truc_names_the_team_and_seat_of_the_answer_not_last_raiser() -> None:
    """Team A's seat 2 calls TRUC, team B's captain accepts; the view's
    last_raiser (as a server might send it) says team B. The table and the
    narration say team B accepted, and which seat."""
    narrator = Narrator(names={3: "Dídac"})
    narrator.describe(called(2, game_pb2.CALL_TRUC))
    narrator.describe(called(3, game_pb2.CALL_ACCEPT))
    line = narrator.describe(raised(game_pb2.CALL_TRUC, 2))
    assert line == "TRUC accepted by team B (S3(B) Dídac): the hand is worth 2 points"
    view = hand_built_view()
    view.last_raiser = game_pb2.TEAM_B
    text = text_of(render_table(view, now=NOW, accepted_by=narrator.accepted_by))
    assert "truc: TRUC accepted by team B (S3(B) Dídac) · the hand is worth 2 points" in text
    assert "accepted by team A" not in text
    # A counter-raise: B's RETRUC answers A's TRUC, A's captain accepts it.
    counter = Narrator()
    for event in (
        called(2, game_pb2.CALL_TRUC),
        called(3, game_pb2.CALL_RETRUC),
        called(0, game_pb2.CALL_ACCEPT),
    ):
        counter.describe(event)
    assert counter.describe(raised(game_pb2.CALL_RETRUC, 3)) == (
        "RETRUC accepted by team A (S0(A)): the hand is worth 3 points"
    )


def test_an_embit_a_flor_voided_is_shown_void() -> None:
    view = hand_built_view()
    view.embit.CopyFrom(
        game_pb2.EmbitContest(
            call=game_pb2.CALL_EMBIDE,
            opener=1,
            challenge=game_pb2.CALL_CANTAR,
            challenger=2,
            result=game_pb2.Credit(team=game_pb2.TEAM_B, points=2),
            credited=True,
        )
    )
    view.flors.add(declarer=5)
    text = text_of(render_table(view, now=NOW))
    assert "embit: S1(B) EMBIDE, S2(A) CANTAR → void (a flor was declared)" in text
    assert "team B loses its +2" in text and "→ team B +2" not in text
    voided = game_pb2.Event(embit_voided=game_pb2.EmbitVoided(team=game_pb2.TEAM_B, points=2))
    assert Narrator().describe(voided) == "a flor voids the embit (team B loses its +2)"


def test_the_final_screen_shows_the_last_manches_points() -> None:
    """A finished match whose view reports 0-0 (an older service): the points
    come from the last manche's history entry; the manches in A-B order."""
    view = game_pb2.GameView(
        name="games/g1",
        seat=0,
        phase=game_pb2.PHASE_MATCH_OVER,
        finished=True,
        winner=game_pb2.TEAM_B,
        manches=game_pb2.Score(team_a=1, team_b=2),
        history=[
            game_pb2.MancheResult(
                winner=game_pb2.TEAM_A, scores=game_pb2.Score(team_a=25, team_b=3)
            ),
            game_pb2.MancheResult(
                winner=game_pb2.TEAM_B, scores=game_pb2.Score(team_a=12, team_b=25)
            ),
        ],
    )
    text = text_of(render_screen(view, (), now=NOW))
    assert "final points A 12 - B 25" in text
    assert "match over: team B wins" in text and "manches A 1 - B 2 (to 2)" in text
    assert "points A 0 - B 0" not in text


def test_a_bonus_says_espasa_or_basto() -> None:
    narrator = Narrator()
    for seat, text in enumerate(("4Co", "1Sw", "5Cu", "6Co", "KCu", "2Co")):
        narrator.describe(played(seat, text))
    narrator.describe(trick_done(1, game_pb2.TEAM_B, 1))
    line = narrator.describe(credited(game_pb2.TEAM_B, 2, game_pb2.CREDIT_REASON_BONUS, 0, 2))
    assert line == "team B +2 (bonus: Espasa) → A 0 - B 2"
    for seat, text in enumerate(("1Cl", "1Sw", "5Cu", "6Co", "KCu", "2Co")):
        narrator.describe(played(seat, text))
    narrator.describe(trick_done(2, game_pb2.TEAM_B, 1))
    both = narrator.describe(credited(game_pb2.TEAM_B, 3, game_pb2.CREDIT_REASON_BONUS, 0, 5))
    assert both == "team B +3 (bonus: Espasa and Basto) → A 0 - B 5"
    # Without the trick's cards (a narrator started late): by the points (§3.8).
    late = Narrator().describe(credited(game_pb2.TEAM_A, 1, game_pb2.CREDIT_REASON_BONUS, 1, 0))
    assert late == "team A +1 (bonus: Basto) → A 1 - B 0"


def test_each_hand_ends_with_a_summary_in_a_b_order() -> None:
    narrator = Narrator()
    start = game_pb2.HandStarted(hand_number=4, dealer=1, eldest=2, manche=1)
    narrator.describe(game_pb2.Event(hand_started=start))
    narrator.describe(called(3, game_pb2.CALL_TRUC))
    narrator.describe(called(0, game_pb2.CALL_ACCEPT))
    narrator.describe(raised(game_pb2.CALL_TRUC, 2))
    narrator.describe(credited(game_pb2.TEAM_B, 2, game_pb2.CREDIT_REASON_HAND, 7, 11))
    ended = game_pb2.HandEnded(hand_number=4, winner=game_pb2.TEAM_B, how=game_pb2.HAND_END_TRICKS)
    narrator.describe(game_pb2.Event(hand_ended=ended))
    assert narrator.hand_summary_lines() == [
        "hand 4 to team B on tricks: team B +2 (hand)",
        "TRUC accepted by team A (S0(A))",
        "points A 7 - B 11 · manches A 0 - B 0",
    ]
    compact = Narrator(compact=True)
    compact.describe(game_pb2.Event(hand_started=start))
    assert compact.describe(played(2, "3Sw")) is None  # a trick is one line
    assert compact.describe(played(3, "1Cl")) is None
    assert compact.describe(trick_done(1, game_pb2.TEAM_B, 3)) == (
        "   trick 1: S2(A) 3Sw⚔ · S3(B) 1Cl♣ → to team B (S3(B))"
    )
    assert (
        compact.describe(credited(game_pb2.TEAM_B, 1, game_pb2.CREDIT_REASON_BONUS, 0, 1)) is None
    )
    assert compact.describe(game_pb2.Event(hand_ended=ended)) == (
        "hand 4 to team B on tricks: team B +1 (bonus: Basto)"
        " · points A 0 - B 1 · manches A 0 - B 0"
    )


def test_the_draw_says_who_drew_the_lower_card_and_so_names_the_dealer() -> None:
    narrator = Narrator(names={0: "Ana", 3: "Dídac"})

    def draw(seat: int, text: str) -> str | None:
        return narrator.describe(
            game_pb2.Event(draw_card=game_pb2.DrawCard(seat=seat, card=card(text)))
        )

    assert draw(0, "3Sw") == "S0(A) Ana draws 3Sw⚔ for the first deal"
    assert draw(3, "3Co") == (
        "S3(B) Dídac draws 3Co☀ for the first deal: the same class in trick order,"
        " the captains draw again"
    )
    draw(0, "1Cu")
    assert draw(3, "4Co") == (
        "S3(B) Dídac draws 4Co☀ for the first deal: S3(B) Dídac drew the lower card in"
        " trick order, so team B chooses the first dealer"
    )
    chosen = game_pb2.Event(dealer_chosen=game_pb2.DealerChosen(seat=3, dealer=4))
    assert narrator.describe(chosen) == (
        "S3(B) Dídac names S4(A) first dealer (S5(B), after the dealer, leads the first trick)"
    )
    view = game_pb2.GameView(phase=game_pb2.PHASE_DRAW, seat=3, to_act=3)
    view.draws.extend([card("1Cu"), card("4Co")])
    assert "the lower card in trick order chooses the first dealer" in draw_text(view)
    assert "1Cu♥ vs 4Co☀" in draw_text(view)


def test_names_replace_ids_and_are_made_printable() -> None:
    hostile = "Jos\u00e9\u202e\x1b[31mMar\u00eda\n"
    assert printable(hostile) == "José\ufffd\ufffd[31mMaría\ufffd"
    assert printable("a\u200db") == "a\u200db"  # the emoji joiner a name may hold
    assert seat_label(4, "", "JoseMaria-6fec2ff75df6") == "JoseMaria-6fec2ff75df6"
    assert seat_label(4, "", "", bot=True) == "Bot 4"
    assert seat_label(4, "José María", "JoseMaria-6fec2ff75df6") == "José María"
    narrator = Narrator(names={5: hostile})
    line = narrator.describe(played(5, "4Co"))
    assert line == "S5(B) José\ufffd\ufffd[31mMaría\ufffd plays 4Co☀"
    view = hand_built_view()
    view.seats[1].display_name = "Ørjan"
    view.seats[4].display_name = "山田\u2066"
    text = text_of(render_table(view, now=NOW))
    assert "Ørjan" in text and "player-1" not in text
    assert "山田\ufffd" in text and "\u2066" not in text


def test_choices_come_from_legal_moves_and_messages_and_are_explained() -> None:
    view = hand_built_view()  # legal_actions: ACCEPT, FOLD, MANILLA_SW, BALOU_QUATRO
    fallback = choices_for(view)
    assert [c.text for c in fallback] == [
        "call ACCEPT",
        "call FOLD",
        "call BALOU_QUATRO",
        "signal MANILLA_SW",
    ]
    view.legal_moves.extend([game_pb2.Action(call=game_pb2.CALL_ACCEPT)])
    view.legal_messages.extend([game_pb2.Action(directive=game_pb2.DIRECTIVE_PLAY_LOW)])
    split = choices_for(view)
    assert [(c.key, c.text) for c in split] == [("1", "call ACCEPT"), ("s1", "direct PLAY_LOW")]
    accept, low = split
    assert accept.explanation == "take the RETRUC on: play on for 3 points"
    assert "advice only" in low.explanation
    fold = explain(game_pb2.Action(call=game_pb2.CALL_FOLD), view)
    assert fold == "refuse the RETRUC: the callers score 2, the hand ends"
    turn = game_pb2.GameView(phase=game_pb2.PHASE_PLAY, prompt=game_pb2.PROMPT_TURN)
    truc = explain(game_pb2.Action(call=game_pb2.CALL_TRUC), turn)
    assert "worth 2 points if accepted" in truc and "scores 1" in truc
    assert "Espasa" in explain(game_pb2.Action(play_card=card("1Sw")), turn)
    french = game_pb2.GameView(
        rule_set=game_pb2.RULE_SET_SACKSON_TRUC, prompt=game_pb2.PROMPT_TURN, stake=2
    )
    assert "worth 4" in explain(game_pb2.Action(call=game_pb2.CALL_RAISE), french)
    assert all(c.explanation for c in fallback)


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_rule_options_are_checked_as_the_service_checks_them() -> None:
    options, seats = checked_options(parsed("--target-score", "3", "--cut", "cutter"))
    assert (options.target_score, options.cut, seats) == (3, game_pb2.CUT_MODE_CUTTER, 6)
    options, seats = checked_options(parsed("--ruleset", "catalan_truc", "--seats", "2"))
    assert (options.rule_set, seats) == (game_pb2.RULE_SET_CATALAN_TRUC, 2)
    for argv, problem in (
        (("--seats", "4"), "--seats: truc_y_flou is played by 6 seats, not 4"),
        (("--target-score", "-3"), "--target-score: "),
        (("--ruleset", "french_truc", "--cut", "cutter"), "--cut: french_truc has no such"),
        (("--manches", "-1"), "--manches"),
    ):
        with pytest.raises(InvalidArgument) as refused:
            checked_options(parsed(*argv))
        assert option_problem(refused.value).startswith(problem), option_problem(refused.value)


def test_a_name_that_is_no_display_name_is_refused_before_signing_in(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(parsed("--name", "Eve\u202egnat")) == 2
    assert "--name: a display name may not hold a bidirectional control (U+202E)" in (
        capsys.readouterr().err
    )
    assert run(parsed("--name", "x" * 33)) == 2
    assert "at most 32 characters" in capsys.readouterr().err
