"""The bots rank cards by the engine's §3.1 trick order itself: one table object
(:func:`truc_rules.truc_y_flou.ranking.trick_class`), not an equal copy."""

from __future__ import annotations

import pytest
from truc.v1 import cards_pb2, game_pb2

import truc_bots
from truc_bots import card_class, class_table
from truc_protocol.convert import card_to_proto, options_from_proto
from truc_rules import DECK, PeriqueTrickRank, RuleOptions
from truc_rules.truc_y_flou.ranking import trick_class

PROTO_VALUES = game_pb2.PeriqueTrickRank.values()


def _option(number: game_pb2.PeriqueTrickRank.ValueType) -> PeriqueTrickRank:
    options = options_from_proto(game_pb2.RuleOptions(perique_trick_rank=number))
    assert isinstance(options, RuleOptions)
    return options.perique_trick_rank


@pytest.mark.parametrize("number", PROTO_VALUES, ids=game_pb2.PeriqueTrickRank.keys())
def test_the_bots_hold_the_very_table_of_trick_class(
    number: game_pb2.PeriqueTrickRank.ValueType,
) -> None:
    engine = trick_class(_option(number))
    assert class_table(number) is engine
    view = game_pb2.GameView(options=game_pb2.RuleOptions(perique_trick_rank=number))
    assert truc_bots._Read(view).classes is engine  # what every decision reads


def test_every_option_value_of_the_engine_has_its_table() -> None:
    tables = {_option(n): class_table(n) for n in PROTO_VALUES}
    assert set(tables) == set(PeriqueTrickRank)
    for option, table in tables.items():
        assert table is trick_class(option)
    assert class_table(999) is trick_class(PeriqueTrickRank.LOWEST)  # unknown: the default


@pytest.mark.parametrize("number", PROTO_VALUES, ids=game_pb2.PeriqueTrickRank.keys())
def test_card_class_reads_each_proto_card_in_the_engine_table(
    number: game_pb2.PeriqueTrickRank.ValueType,
) -> None:
    engine = trick_class(_option(number))
    for card in DECK:
        assert card_class(card_to_proto(card), number) == engine[card], card
    assert card_class(cards_pb2.Card(), number) == 99  # no card
    assert card_class(cards_pb2.Card(suit=cards_pb2.SUIT_SWORDS), number) == 99
