"""The action log encoding (truc_rules.action_codec): two bytes per entry whose
numbers are fixed here (a new enum member cannot move an old one), every action
of every rule set read back for every seat, and anything else refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truc_rules import registry
from truc_rules.action_codec import (
    ActionRecord,
    decode_action,
    decode_actions,
    decode_record,
    decode_records,
    encode_action,
    encode_actions,
)
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
from truc_rules.cards import DECK, PIQUET_CARDS, Card
from truc_rules.errors import InvalidSetup
from truc_rules.rule_set import RuleSet

from .test_replay import _SETTINGS, options_of, random_match, seeds

pytestmark = pytest.mark.unit

# The stored numbers, written out once more: a test fails when one moves.
KINDS = {PlayCard: 0, MakeCall: 1, ChooseDealer: 2, CutDeck: 3, SendSignal: 4, SendDirective: 5}
CALLS = {
    "EMBIDE": 0,
    "MI_FALTA": 1,
    "RESTOU_Y_TROUCOU": 2,
    "FLOR": 3,
    "PASS": 4,
    "CANTAR": 5,
    "U_AOUTE": 6,
    "DUS_DE_MES": 7,
    "DETZ_DE_MES": 8,
    "RESTOU": 9,
    "FLOR_TAMBIEN": 10,
    "ALIMIDOU_CON_FLOR": 11,
    "ALIMIDOU_CANTAR": 12,
    "ALIBARESTOU_CON_FLOR": 13,
    "TRUC": 14,
    "RETRUC": 15,
    "BALOU_QUATRO": 16,
    "BALOU_SEIZ": 17,
    "BALOU_PARTIDO": 18,
    "ACCEPT": 19,
    "FOLD": 20,
    "RAISE": 21,
    "MON_RESTE": 22,
    "PROPOSE_REDEAL": 23,
    "REFUSE": 24,
}
SIGNALS = {
    "ESPASA": 0,
    "BASTO": 1,
    "MANILLA_SW": 2,
    "MANILLA_CO": 3,
    "TRES": 4,
    "DUS": 5,
    "SEVEN": 6,
    "EIGHT": 7,
    "ACE": 8,
    "AS": 9,
}
DIRECTIVES = {
    "LET_THEM_TAKE_IT": 0,
    "PLAY_HIGH": 1,
    "PLAY_LOW": 2,
    "EMBIDE": 3,
    "TRUC": 4,
    "STAY_QUIET": 5,
    "PLAY_SEVEN": 6,
    "LEAVE_IT_TO_ME": 7,
}


def payload(action: Action) -> int:
    """The second byte of an entry, from the numbers above."""
    match action:
        case PlayCard(card=card):
            return int(card)
        case MakeCall(call=call):
            return CALLS[call.name]
        case ChooseDealer(dealer=dealer):
            return dealer
        case CutDeck(position=position):
            return position
        case SendSignal(signal=signal):
            return SIGNALS[signal.name]
        case SendDirective(directive=directive):
            return DIRECTIVES[directive.name]
    raise AssertionError(action)


EVERY_ACTION: tuple[Action, ...] = (
    *(PlayCard(c) for c in Card),
    *(MakeCall(c) for c in Call),
    *(SendSignal(s) for s in Signal),
    *(SendDirective(d) for d in Directive),
    *(ChooseDealer(s) for s in range(6)),
    *(CutDeck(p) for p in range(1, 40)),
)


def test_every_member_has_its_fixed_number() -> None:
    """Every call, signal and directive is listed above (a new member must be
    given its number), and every entry's bytes are exactly the ones above."""
    assert set(CALLS) == set(Call.__members__)
    assert set(SIGNALS) == set(Signal.__members__)
    assert set(DIRECTIVES) == set(Directive.__members__)
    for action in EVERY_ACTION:
        for seat in range(6):
            head = KINDS[type(action)] << 4 | seat
            assert encode_action(seat, action) == bytes((head, payload(action))), action
            assert encode_action(seat, action, timed_out=True) == bytes((head | 8, payload(action)))


def test_a_stored_log_reads_the_same() -> None:
    """A log as it is stored, byte for byte."""
    log = bytes.fromhex("2203 0314 330e 0539 4109 5502 1415 3818 0537")
    assert decode_records(log) == [
        ActionRecord(2, ChooseDealer(3)),
        ActionRecord(3, PlayCard(Card.CO_1)),
        ActionRecord(3, CutDeck(14)),
        ActionRecord(5, PlayCard(Card.FC_8)),
        ActionRecord(1, SendSignal(Signal.AS)),
        ActionRecord(5, SendDirective(Directive.PLAY_LOW)),
        ActionRecord(4, MakeCall(Call.RAISE)),
        ActionRecord(0, CutDeck(24), timed_out=True),
        ActionRecord(5, PlayCard(Card.DI_A)),
    ]
    assert encode_actions(decode_records(log)) == log


def test_every_action_card_and_value_round_trips_for_every_seat() -> None:
    """Every card of both packs, every call, signal and directive, every dealer
    and cut, for each seat 0-5, as a pair, as a record with either origin, and
    all of them as one log."""
    records = []
    for action in EVERY_ACTION:
        for seat in range(6):
            data = encode_action(seat, action)
            assert len(data) == 2
            assert decode_action(data) == (seat, action)
            assert decode_record(data) == ActionRecord(seat, action, False)
            timed_out = encode_action(seat, action, timed_out=True)
            assert decode_action(timed_out) == (seat, action)
            assert decode_record(timed_out) == ActionRecord(seat, action, True)
            records += [ActionRecord(seat, action), ActionRecord(seat, action, True)]
    log = encode_actions(records)
    assert len(log) == 2 * len(records)
    assert decode_records(log) == records
    assert decode_actions(log) == [(r.seat, r.action) for r in records]
    assert encode_actions((r.seat, r.action) for r in records) == encode_actions(
        r._replace(timed_out=False) for r in records
    )
    for pack in (DECK, PIQUET_CARDS):
        plays = [PlayCard(c) for c in pack]
        assert decode_actions(encode_actions((3, p) for p in plays)) == [(3, p) for p in plays]
    assert encode_actions([]) == b"" and decode_actions(b"") == []


@pytest.mark.parametrize("rule_set", list(RuleSet))
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_every_legal_action_of_random_games_round_trips(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """At every state of random matches of every rule set, every action listed
    for every seat of the table reads back as that seat's."""
    match = random_match(data.draw(options_of(rule_set)), seed, play_seed)
    seats = registry.seat_count(match.first)
    seen: set[Action] = set()
    for state in (match.first, *match.states):
        for seat in range(seats):
            for action in registry.legal_actions(state, seat):
                assert decode_action(encode_action(seat, action)) == (seat, action)
                seen.add(action)
    assert any(isinstance(a, PlayCard) for a in seen)
    assert any(isinstance(a, MakeCall) for a in seen)


def test_random_games_list_every_kind_of_action() -> None:
    """The games above reach every kind (the cutter's cut, the draw's dealer,
    signals and directives included), so each kind's legal values are checked."""
    kinds: set[type] = set()
    for rule_set in RuleSet:
        for options in (
            registry.default_options(rule_set),
            registry.options_from_mapping(
                rule_set, {"cut": "cutter"} if rule_set == RuleSet.TRUC_Y_FLOU else {}
            ),
        ):
            match = random_match(options, seed=1, play_seed=2)
            for state in (match.first, *match.states):
                for seat in range(registry.seat_count(state)):
                    for action in registry.legal_actions(state, seat):
                        assert decode_action(encode_action(seat, action)) == (seat, action)
                        kinds.add(type(action))
    assert kinds == set(KINDS)


@pytest.mark.parametrize(
    ("data", "fault"),
    [
        (b"", "no bytes"),
        (b"\x00", "truncated"),
        (b"\x13", "truncated"),
        (b"\x00\x00\x00", "1 bytes after"),
        (b"\x00\x00\x00\x00", "2 bytes after"),
        (b"\x60\x00", "unknown action kind 6"),
        (b"\xf0\x00", "unknown action kind 15"),
        (b"\x06\x00", "seat 6"),
        (b"\x07\x00", "seat 7"),
        (b"\x0e\x00", "seat 6"),
        (b"\x00\x48", "PlayCard has no value 72"),
        (b"\x00\xff", "PlayCard has no value 255"),
        (b"\x10\x19", "MakeCall has no value 25"),
        (b"\x20\x06", "ChooseDealer has no value 6"),
        (b"\x30\x00", "CutDeck has no value 0"),
        (b"\x30\x28", "CutDeck has no value 40"),
        (b"\x40\x0a", "SendSignal has no value 10"),
        (b"\x50\x08", "SendDirective has no value 8"),
    ],
)
def test_a_corrupt_entry_is_refused(data: bytes, fault: str) -> None:
    for decode in (decode_action, decode_record):
        with pytest.raises(InvalidSetup, match=f"corrupt action log entry: {fault}"):
            decode(data)
    if 0 < len(data) <= 2:  # in a log, after a good entry: refused at its offset
        with pytest.raises(InvalidSetup, match=f"corrupt action log at byte 2: {fault}"):
            decode_records(b"\x01\x00" + data)


@pytest.mark.parametrize(
    ("seat", "action"),
    [
        (6, PlayCard(Card.SW_1)),
        (8, PlayCard(Card.SW_1)),
        (-1, PlayCard(Card.SW_1)),
        (0, CutDeck(0)),
        (0, CutDeck(40)),
        (0, ChooseDealer(6)),
        (0, ChooseDealer(-1)),
        (0, MakeCall("NOT_A_CALL")),  # type: ignore[arg-type]
    ],
)
def test_what_no_rule_set_can_apply_is_not_encoded(seat: int, action: Action) -> None:
    for timed_out in (False, True):
        with pytest.raises(ValueError, match="no action log entry"):
            encode_action(seat, action, timed_out=timed_out)
        with pytest.raises(ValueError, match="no action log entry"):
            encode_actions([ActionRecord(seat, action, timed_out)])


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_any_bytes_are_a_log_that_writes_them_back_or_refused(data: bytes) -> None:
    try:
        records = decode_records(data)
    except InvalidSetup:
        return
    assert encode_actions(records) == data
