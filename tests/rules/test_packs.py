"""Each rule set plays with its own pack: another pack's card is an error in a
setup and refused as not in hand in an action (variants.md V7)."""

from __future__ import annotations

import pytest

from truc_rules import Card, InvalidSetup, PlayCard, Reason, apply_action, new_game
from truc_rules.cards import PIQUET, SPANISH
from truc_rules.errors import IllegalAction

pytestmark = pytest.mark.unit

_SPANISH_DEAL = tuple(tuple(SPANISH.cards[3 * i : 3 * i + 3]) for i in range(6))


def test_truc_y_flou_refuses_a_deal_holding_a_piquet_card() -> None:
    deal = ((Card.HE_7, *_SPANISH_DEAL[0][1:]), *_SPANISH_DEAL[1:])
    with pytest.raises(InvalidSetup, match="not cards of the Spanish pack: 7He"):
        new_game(deals=[deal], dealer=0)


def test_truc_y_flou_refuses_a_draw_of_a_piquet_card() -> None:
    with pytest.raises(InvalidSetup, match="Spanish pack"):
        new_game(deals=[_SPANISH_DEAL], draws=[(Card.HE_7, Card.SW_1)])


def test_a_piquet_card_played_in_truc_y_flou_is_not_in_hand() -> None:
    state = new_game(deals=[_SPANISH_DEAL], dealer=5).state
    assert state.to_act == 0
    with pytest.raises(IllegalAction) as refused:
        apply_action(state, 0, PlayCard(Card.FC_7))
    assert refused.value.reason == Reason.CARD_NOT_IN_HAND


def test_the_notation_is_read_in_a_pack() -> None:
    assert SPANISH.parse("7Cl") == Card.CL_7 and PIQUET.parse("7Cl") == Card.FC_7
    assert SPANISH.read("7He") == Card.HE_7  # another pack's card: refused by the engine
    assert PIQUET.read("1Sw") == Card.SW_1
    assert PIQUET.read("9Sw") is None and SPANISH.read("1He") is None
    with pytest.raises(ValueError, match="piquet"):
        PIQUET.parse("1Sw")
    assert len(SPANISH.cards) == 40 and len(PIQUET.cards) == 32
    assert {str(c) for c in PIQUET.cards} >= {"7He", "TSp", "QDi", "ACl"}
