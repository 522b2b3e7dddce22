"""The storage encoding of the variants.md rule sets (``truc_rules.family.codec``):
exact round trips of states of every kind, and refusal (``InvalidSetup``, never
another exception) of truncated, extended, foreign, newer and corrupt bytes."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truc_rules import catalan_truc, french_truc, partnership_truc, registry, sackson_truc
from truc_rules.cards import Card
from truc_rules.errors import InvalidSetup
from truc_rules.family import FamilyRules, FamilyState
from truc_rules.family.codec import FORMAT_VERSION, MAGIC, RULE_SET_NUMBERS
from truc_rules.rule_set import RuleSet

from .test_family_partnership import DEAL, SECOND
from .test_family_rules import CATALAN_DEAL, EXAMPLE, REDEALT, act, start

RULES: dict[RuleSet, FamilyRules] = {
    RuleSet.FRENCH_TRUC: french_truc.RULES,
    RuleSet.SACKSON_TRUC: sackson_truc.RULES,
    RuleSet.PARTNERSHIP_TRUC: partnership_truc.RULES,
    RuleSet.CATALAN_TRUC: catalan_truc.RULES,
}


def samples() -> list[FamilyState]:
    """States of every kind: fresh and mid-hand, seeded and from fixed deals,
    with a pending raise, MON_RESTE, a redeal, signals, instructions, a finished
    game in the history, every option changed."""
    out: list[FamilyState] = []
    for rule_set, rules in RULES.items():
        fresh = rules.new_game(seed=2**62 + 17).state
        out.append(fresh)
        state = fresh
        for _ in range(7):  # a few default moves into the hand
            move = registry.default_action(state)
            assert move is not None and state.to_act is not None
            after = registry.apply_action(state, state.to_act, move).state
            assert isinstance(after, FamilyState)
            state = after
        out.append(state)
        options = {"target_score": 5, "manches_to_win": 3, "play_out_all_tricks": True}
        if rule_set == RuleSet.CATALAN_TRUC:
            options["seats"] = 2
        else:
            options["trick_order"] = "seven_ace"  # type: ignore[assignment]
        out.append(rules.new_game(rules.options(**options), seed=3, scores=(4, 2)).state)
    french = start(RuleSet.FRENCH_TRUC, EXAMPLE, REDEALT, EXAMPLE, scores=(7, 3), manches=(1, 0))
    out += [
        act(french, "0:RAISE"),
        act(french, "0:MON_RESTE 1:MON_RESTE 0:9He"),
        act(french, "0:PROPOSE_REDEAL"),
        act(french, "0:PROPOSE_REDEAL 1:ACCEPT 0:RAISE 1:ACCEPT"),
        act(
            start(RuleSet.FRENCH_TRUC, EXAMPLE, EXAMPLE, scores=(0, 11)), "0:RAISE 1:ACCEPT 0:FOLD"
        ),
    ]
    partnership = start(RuleSet.PARTNERSHIP_TRUC, DEAL, SECOND, dealer=3)
    out += [
        act(partnership, "2:sig=SEVEN 0:dir=PLAY_LOW 3:dir=LEAVE_IT_TO_ME 1:sig=EIGHT"),
        act(partnership, "0:dir=PLAY_SEVEN 0:9He 1:RAISE 0:ACCEPT 1:8Sp 2:7Di 3:8Cl"),
    ]
    catalan = start(RuleSet.CATALAN_TRUC, CATALAN_DEAL, dealer=3)
    out.append(act(catalan, "0:TRUC 1:ACCEPT 0:4Sw 2:sig=TRES 2:dir=PLAY_HIGH 1:RETRUC"))
    return out


SAMPLES = samples()


def test_every_kind_of_state_round_trips_exactly() -> None:
    for state in SAMPLES:
        data = registry.encode_state(state)
        assert data[:3] == bytes((MAGIC, FORMAT_VERSION, RULE_SET_NUMBERS[state.options.rule_set]))
        assert RULES[state.options.rule_set].decode_state(data) == state
        assert registry.decode_state(data) == state
        assert registry.encode_state(registry.decode_state(data)) == data


def test_every_truncation_and_any_trailing_byte_is_refused() -> None:
    for state in SAMPLES:
        data = registry.encode_state(state)
        rules = RULES[state.options.rule_set]
        for end in range(len(data)):
            with pytest.raises(InvalidSetup):
                registry.decode_state(data[:end])
            with pytest.raises(InvalidSetup):
                rules.decode_state(data[:end])
        with pytest.raises(InvalidSetup):
            registry.decode_state(data + b"\x00")


def test_another_rule_sets_or_a_newer_formats_bytes_are_refused() -> None:
    data = registry.encode_state(SAMPLES[0])  # french_truc
    for other in (sackson_truc, partnership_truc, catalan_truc):
        with pytest.raises(InvalidSetup):
            other.decode_state(data)
    for header in (
        bytes((MAGIC, FORMAT_VERSION + 1)),  # a newer format
        bytes((MAGIC, 0)),
        bytes((MAGIC, FORMAT_VERSION, 0)),  # no rule set 0
        bytes((MAGIC, FORMAT_VERSION, 9)),
        b"X\x01\x01",
    ):
        with pytest.raises(InvalidSetup):
            registry.decode_state(header + data[len(header) :])
    for junk in (b"", b"F", b"F\x01", b"\x00" * 40, b"\xff" * 40):
        with pytest.raises(InvalidSetup):
            registry.decode_state(junk)


@settings(max_examples=300, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(SAMPLES) - 1),
    position=st.integers(min_value=0),
    value=st.integers(min_value=0, max_value=255),
)
def test_a_corrupt_byte_is_refused_with_invalid_setup_and_nothing_else(
    index: int, position: int, value: int
) -> None:
    """Whatever one byte becomes, decoding raises InvalidSetup or yields a
    state; never another exception."""
    data = bytearray(registry.encode_state(SAMPLES[index]))
    data[position % len(data)] = value
    with contextlib.suppress(InvalidSetup):
        registry.decode_state(bytes(data))


# ----------------------------------------------------------------------------------- corrupt values
#
# Offsets in a seeded state with no history (the layout of truc_rules.family.codec):
# 0-7 the header and options, 8-16 the seed, 17 no fixed deals, 18 phase, 19 to_act + 1,
# 20 prompt, 21-22 scores, 23-24 manches, 25 no history, 26-29 hand counters,
# 30 dealer, 31 the size of seat 0's dealt hand, 32-34 its cards.
TO_ACT, DEALER, FIRST_CARD = 19, 30, 32


def _corrupt(state: FamilyState, position: int, value: int) -> bytes:
    data = bytearray(registry.encode_state(state))
    assert state.seed is not None and not state.deals and not state.history
    data[position] = value
    return bytes(data)


def test_the_offsets_used_below_are_those_of_the_layout() -> None:
    state = partnership_truc.new_game(seed=11).state
    data = registry.encode_state(state)
    assert state.to_act is not None
    assert data[TO_ACT] == state.to_act + 1 and data[DEALER] == state.dealer
    assert data[FIRST_CARD - 1] == 3 and data[FIRST_CARD] == state.dealt[0][0]


@pytest.mark.parametrize("position", [18, 20])
def test_an_unknown_phase_or_prompt_is_refused(position: int) -> None:
    with pytest.raises(InvalidSetup):
        registry.decode_state(_corrupt(french_truc.new_game(seed=11).state, position, 200))


def test_a_card_number_beyond_both_packs_is_refused() -> None:
    with pytest.raises(InvalidSetup):
        registry.decode_state(_corrupt(french_truc.new_game(seed=11).state, FIRST_CARD, 72))


# A value out of its range: a stored french_truc game holding a card of the
# Spanish pack, or a seat beyond the table, is corrupt (before commit 999bfcf the
# family codec decoded them, and the engine then failed on the state with
# IndexError instead of the InvalidSetup the codec promises).


def test_a_stored_card_of_another_pack_is_refused() -> None:
    """V7: a rule set holds only the cards of its own pack (1Sw in a piquet hand)."""
    data = _corrupt(french_truc.new_game(seed=11).state, FIRST_CARD, Card.SW_1)
    with pytest.raises(InvalidSetup):
        registry.decode_state(data)


def test_a_stored_seat_to_act_beyond_the_table_is_refused() -> None:
    """A partnership game has seats 0-3 (seat 9 "to act" made
    ``apply_action(decoded, 9, PlayCard(...))`` raise IndexError)."""
    data = _corrupt(partnership_truc.new_game(seed=11).state, TO_ACT, 10)
    with pytest.raises(InvalidSetup):
        registry.decode_state(data)


def test_a_stored_dealer_beyond_the_table_is_refused() -> None:
    """A dealer 9 of four seats makes "seat 9" a governor."""
    data = _corrupt(partnership_truc.new_game(seed=11).state, DEALER, 9)
    with pytest.raises(InvalidSetup):
        registry.decode_state(data)
