"""Declaration values (rules.md §4): every example of §4 and the périque/ace edge cases."""

from __future__ import annotations

import pytest

from truc_rules import embit_value, flor_value, has_flor, parse_cards
from truc_rules.truc_y_flou.declarations import showdown_key


def cards(text: str) -> tuple[object, ...]:
    return parse_cards(text.split())


@pytest.mark.parametrize(
    ("hand", "value"),
    [
        ("4Cu 6Cu KSw", 30),  # §4.3
        ("7Sw JCo", 34),  # §4.3: 7 + périque
        ("JCo KSw 4Cu", 31),  # §4.3: the périque pairs with the 4
        ("7Sw 6Sw 5Sw", 33),  # best pair of a flor hand (§4.3: a flor hand has an embit too)
        ("JCo NCl 3Sw", 34),  # two périques are an embit of 34 on their own
        ("KSw JSw 2Co", 20),  # court cards count 0
        ("1Sw 1Cu 7Sw", 27),  # ace 0 by default
    ],
)
def test_embit_values_of_rules_section_4(hand: str, value: int) -> None:
    assert embit_value(parse_cards(hand.split())) == value


@pytest.mark.parametrize(
    ("hand", "value"),
    [
        ("7Co 6Co KCo", 33),  # §4.4
        ("JCo NCl 7Cu", 41),  # §4.4: the maximum
        ("JCo NCl KSw", 34),  # §4.4
        ("JCo 7Sw 6Sw", 40),  # one périque and two of a suit
        ("1Cu 2Cu 3Cu", 25),
    ],
)
def test_flor_values_of_rules_section_4(hand: str, value: int) -> None:
    assert flor_value(parse_cards(hand.split())) == value
    assert has_flor(parse_cards(hand.split()))


@pytest.mark.parametrize("hand", ["4Cu 6Cu KSw", "JCo 7Sw 6Co", "1Sw 1Cl 1Co"])
def test_hands_without_flor(hand: str) -> None:
    assert flor_value(parse_cards(hand.split())) is None
    assert not has_flor(parse_cards(hand.split()))


def test_a_hand_of_three_suits_has_no_embit() -> None:
    assert embit_value(parse_cards(["4Cu", "6Co", "KSw"])) is None


def test_no_embit_showdown_key_is_the_highest_single_card() -> None:
    # §4.5: without an embit, the higher single card value decides.
    assert showdown_key(parse_cards(["4Cu", "6Co", "KSw"]))[:2] == (0, 6)
    assert showdown_key(parse_cards(["4Cu", "6Cu", "KSw"]))[:2] == (1, 30)


def test_ace_value_option_counts_aces_as_one() -> None:
    hand = parse_cards(["1Sw", "7Sw", "KCo"])
    assert embit_value(hand, ace_value=0) == 27
    assert embit_value(hand, ace_value=1) == 28
    assert flor_value(parse_cards(["1Co", "2Co", "3Co"]), ace_value=1) == 26


def test_perique_counts_seven_and_may_duplicate_a_seven() -> None:
    # §4.2: 7Sw with the périque NCl makes 34, as if a second 7 of swords.
    assert embit_value(parse_cards(["7Sw", "NCl", "2Co"])) == 34
