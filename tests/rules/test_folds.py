"""Every fold value of rules.md §5 and §6, and where a fold leaves the hand."""

from __future__ import annotations

import pytest

from truc_rules import Phase

from .play import play, seq, start

# Seat 0 (A) and seat 4 (A) hold flors; seat 1 (B) holds a flor too.
FLOR_DEAL = (
    ("2Co", "5Co", "KCo"),  # A: flor 27
    ("3Sw", "4Sw", "6Sw"),  # B: flor 33
    ("3Co", "4Cu", "7Cl"),
    ("2Sw", "5Cu", "KCl"),
    ("6Cl", "4Cl", "1Cl"),  # A: flor 30
    ("6Co", "KSw", "5Cl"),
)


@pytest.mark.parametrize(
    ("calls", "team", "points"),
    [
        ("0:TRUC 3:FOLD", 0, 1),
        ("0:TRUC 3:RETRUC 0:FOLD", 1, 2),
        ("0:TRUC 3:RETRUC 0:BALOU_QUATRO 3:FOLD", 0, 3),
        ("0:TRUC 3:RETRUC 0:BALOU_QUATRO 3:BALOU_SEIZ 0:FOLD", 1, 4),
        ("0:TRUC 3:RETRUC 0:BALOU_QUATRO 3:BALOU_SEIZ 0:BALOU_PARTIDO 3:FOLD", 0, 6),
    ],
)
def test_truc_fold_values_rules_6_3(calls: str, team: int, points: int) -> None:
    state = play(start(scores=(4, 4)), *seq(calls))
    expected = [4, 4]
    expected[team] += points
    assert list(state.scores) == expected
    assert state.hands_played == 1  # §6.4: the fold ends the hand


def test_truc_fold_later_in_the_hand_keeps_bonus_and_ends_hand() -> None:
    hands = (
        ("1Sw", "5Sw", "KCu"),  # A: Espasa wins trick 1 (+2)
        ("3Sw", "4Co", "6Cu"),
        ("3Co", "4Sw", "7Cu"),
        ("2Sw", "5Cu", "KCo"),
        ("6Sw", "7Cl", "4Cu"),
        ("6Co", "KSw", "5Cl"),
    )
    state = play(start(hands), *seq("0:1Sw 1:3Sw 2:3Co 3:2Sw 4:6Sw 5:6Co"))
    assert state.scores == (2, 0)
    state = play(state, *seq("0:TRUC 3:FOLD"))
    assert state.scores == (3, 0)
    assert state.hands_played == 1


@pytest.mark.parametrize("raise_call", ["U_AOUTE", "DUS_DE_MES", "DETZ_DE_MES", "RESTOU"])
def test_embit_raise_folded_gives_the_raisers_two_rules_5_4(raise_call: str) -> None:
    state = play(start(), *seq(f"0:EMBIDE 1:{raise_call} 0:FOLD"))
    assert state.embit is not None and state.embit.result is not None
    assert (state.embit.result.team, state.embit.result.points) == (1, 2)
    # Credited at the end of trick 1 (§5.10), not before.
    assert state.scores == (0, 0)
    state = play(state, *seq("0:2Co 1:3Sw 2:3Co 3:2Sw 4:6Sw 5:6Co"))
    assert state.scores == (0, 2)


@pytest.mark.parametrize("opening", ["EMBIDE", "MI_FALTA"])
def test_embit_openings_passed_by_all_give_one_rules_5_4_5_5(opening: str) -> None:
    state = play(start(), *seq(f"0:{opening} 1:PASS 3:PASS 5:PASS"))
    state = play(state, *seq("0:2Co 1:3Sw 2:3Co 3:2Sw 4:6Sw 5:6Co"))
    assert state.scores == (1, 0)
    assert state.hands_played == 0  # the hand goes on


def test_restou_y_troucou_passed_gives_one_and_ends_the_hand_rules_5_7() -> None:
    state = play(start(scores=(3, 7)), *seq("0:RESTOU_Y_TROUCOU 1:PASS 3:PASS 5:PASS"))
    assert state.scores == (4, 7)
    assert state.hands_played == 1
    assert state.phase == Phase.NO_DEAL


def test_flor_alimidou_folded_by_declarer_gives_challengers_three_rules_5_8() -> None:
    state = play(start(FLOR_DEAL), *seq("0:FLOR 1:ALIMIDOU_CON_FLOR 0:FOLD"))
    assert state.scores == (0, 0)  # credited at the end of trick 1 (§5.10)
    state = play(state, *seq("0:2Co 1:3Sw 2:3Co 3:2Sw 4:6Cl 5:6Co"))
    assert state.scores == (0, 3)


def test_flor_alimidou_cantar_folded_gives_declarers_five_rules_5_8() -> None:
    state = play(start(FLOR_DEAL), *seq("0:FLOR 1:ALIMIDOU_CON_FLOR 0:ALIMIDOU_CANTAR 1:FOLD"))
    exchange = state.flors[0]
    assert exchange.result is not None
    assert (exchange.result.team, exchange.result.points) == (0, 5)


def test_flor_alibarestou_folded_gives_declarers_five_rules_5_8() -> None:
    calls = "0:FLOR 1:PASS 3:ALIMIDOU_CON_FLOR 0:ALIBARESTOU_CON_FLOR 3:FOLD"
    state = play(start(FLOR_DEAL), *seq(calls))
    exchange = state.flors[0]
    assert exchange.result is not None
    assert (exchange.result.team, exchange.result.points, exchange.result.wins_manche) == (
        0,
        5,
        False,
    )
