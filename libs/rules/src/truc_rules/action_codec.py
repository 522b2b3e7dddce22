"""How applied actions are stored: two bytes each, the seat and the action.

A game's action log is the concatenation of its entries, in the order they
were applied; with the game's first state it is enough to rebuild every later
version (:mod:`truc_rules.replay`). Each entry is::

    byte 0   kind << 4 | timed_out << 3 | seat
    byte 1   payload

* ``kind`` (0-15) is the action's position in _KINDS; its size (_SIZES) says
  how many bytes the entry has, so entries need no separator and a later kind
  may be longer without changing a stored byte. Every kind today has two.
* ``seat`` is 0-5; ``timed_out`` is set when the service took the action for
  a late seat (the rules' default action at a turn deadline; its version's
  events then begin with ``TurnTimedOut``).
* ``payload``: a card's number (0-71, both packs, as in stored states and
  events); a call's, signal's or directive's position in _CALLS, _SIGNALS or
  _DIRECTIVES; the dealer's seat (0-5); the cut position (1-39).

The tables are written out here, not taken from the enums' declaration order,
so that adding a member (always at the end of its table) changes no stored
entry: append, never reorder. Anything else is refused when read, with
:class:`~truc_rules.errors.InvalidSetup` as for every corrupt stored datum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

from truc_rules.actions import (
    CALL,
    CHOOSE_DEALER,
    DIRECTIVE,
    PLAY,
    SIGNAL,
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
from truc_rules.cards import Card
from truc_rules.errors import InvalidSetup

__all__ = [
    "ActionRecord",
    "decode_action",
    "decode_actions",
    "decode_record",
    "decode_records",
    "encode_action",
    "encode_actions",
]

SEATS: Final = 6
"""Seats 0-5: the most any rule set has."""
_TIMED_OUT: Final = 0x08

_KINDS: Final[tuple[type, ...]] = (
    PlayCard,
    MakeCall,
    ChooseDealer,
    CutDeck,
    SendSignal,
    SendDirective,
)
_SIZES: Final = (2, 2, 2, 2, 2, 2) + (0,) * (16 - len(_KINDS))
"""Bytes of an entry by kind; 0: no such kind."""

_CALLS: Final = (
    Call.EMBIDE,
    Call.MI_FALTA,
    Call.RESTOU_Y_TROUCOU,
    Call.FLOR,
    Call.PASS,
    Call.CANTAR,
    Call.U_AOUTE,
    Call.DUS_DE_MES,
    Call.DETZ_DE_MES,
    Call.RESTOU,
    Call.FLOR_TAMBIEN,
    Call.ALIMIDOU_CON_FLOR,
    Call.ALIMIDOU_CANTAR,
    Call.ALIBARESTOU_CON_FLOR,
    Call.TRUC,
    Call.RETRUC,
    Call.BALOU_QUATRO,
    Call.BALOU_SEIZ,
    Call.BALOU_PARTIDO,
    Call.ACCEPT,
    Call.FOLD,
    Call.RAISE,
    Call.MON_RESTE,
    Call.PROPOSE_REDEAL,
    Call.REFUSE,
)
_SIGNALS: Final = (
    Signal.ESPASA,
    Signal.BASTO,
    Signal.MANILLA_SW,
    Signal.MANILLA_CO,
    Signal.TRES,
    Signal.DUS,
    Signal.SEVEN,
    Signal.EIGHT,
    Signal.ACE,
    Signal.AS,
)
_DIRECTIVES: Final = (
    Directive.LET_THEM_TAKE_IT,
    Directive.PLAY_HIGH,
    Directive.PLAY_LOW,
    Directive.EMBIDE,
    Directive.TRUC,
    Directive.STAY_QUIET,
    Directive.PLAY_SEVEN,
    Directive.LEAVE_IT_TO_ME,
)
_CUT_POSITIONS: Final = range(1, 40)

# Each kind's actions by payload byte (None: no action has that payload).
_PAYLOADS: Final[tuple[tuple[Action | None, ...], ...]] = (
    tuple(PLAY[Card(number)] for number in range(72)),
    tuple(CALL[call] for call in _CALLS),
    CHOOSE_DEALER,
    tuple(CutDeck(p) if p in _CUT_POSITIONS else None for p in range(_CUT_POSITIONS.stop)),
    tuple(SIGNAL[signal] for signal in _SIGNALS),
    tuple(DIRECTIVE[directive] for directive in _DIRECTIVES),
)


class ActionRecord(NamedTuple):
    """One entry of an action log: who acted, what, and whether the service
    acted for the seat at its turn deadline."""

    seat: int
    action: Action
    timed_out: bool = False


def _tables() -> tuple[Mapping[tuple[int, Action], bytes], Mapping[bytes, ActionRecord]]:
    """Every entry there is (6 seats, 2 origins, 160 actions): the bytes of each
    (seat | flag, action), and the record of each valid byte string."""
    encoded: dict[tuple[int, Action], bytes] = {}
    decoded: dict[bytes, ActionRecord] = {}
    for kind, payloads in enumerate(_PAYLOADS):
        for payload, action in enumerate(payloads):
            if action is None:
                continue
            for seat in range(SEATS):
                for flag in (0, _TIMED_OUT):
                    data = bytes((kind << 4 | flag | seat, payload))
                    encoded[seat | flag, action] = data
                    decoded[data] = ActionRecord(seat, action, bool(flag))
    return encoded, decoded


_ENCODED, _DECODED = _tables()


def encode_action(seat: int, action: Action, *, timed_out: bool = False) -> bytes:
    """The log entry of ``seat`` taking ``action`` (two bytes); ``timed_out`` when
    the service took it for the seat at its turn deadline.

    ValueError for a seat outside 0-5 or an action no rule set can apply (a
    cut outside 1-39, a dealer outside 0-5, a value of none of the tables).
    """
    data = _ENCODED.get((seat | _TIMED_OUT if timed_out else seat, action))
    if data is None or not 0 <= seat < SEATS:
        raise ValueError(f"no action log entry for seat {seat!r}: {action!r}")
    return data


def encode_actions(actions: Iterable[tuple[int, Action] | ActionRecord]) -> bytes:
    """A whole log: the entries of ``actions`` one after the other (``b""`` for
    none). Pairs are actions of the seat; records keep their ``timed_out``."""
    return b"".join(
        [
            encode_action(item[0], item[1], timed_out=isinstance(item, ActionRecord) and item[2])
            for item in actions
        ]
    )


def decode_record(data: bytes) -> ActionRecord:
    """The one entry ``data`` holds; InvalidSetup if it is anything else."""
    record = _DECODED.get(bytes(data))
    if record is None:
        raise InvalidSetup(f"corrupt action log entry: {_fault(bytes(data))}")
    return record


def decode_action(data: bytes) -> tuple[int, Action]:
    """The seat and the action of the one entry ``data`` holds (whether or not the
    service took it at a deadline: :func:`decode_record` says); InvalidSetup if
    ``data`` is anything else."""
    record = decode_record(data)
    return record.seat, record.action


def decode_records(data: bytes) -> list[ActionRecord]:
    """Every entry of a log written by :func:`encode_actions`, in order;
    InvalidSetup (naming the entry's offset) if ``data`` is not such a log."""
    data = bytes(data)
    records: list[ActionRecord] = []
    append = records.append
    at = 0
    end = len(data)
    while at < end:
        size = _SIZES[data[at] >> 4]
        record = _DECODED.get(data[at : at + size]) if size else None
        if record is None:
            fault = _fault(data[at : at + (size or 1)])
            raise InvalidSetup(f"corrupt action log at byte {at}: {fault}")
        append(record)
        at += size
    return records


def decode_actions(data: bytes) -> list[tuple[int, Action]]:
    """The seat and action of every entry of a log, in order (see :func:`decode_records`)."""
    return [(record.seat, record.action) for record in decode_records(data)]


def _fault(entry: bytes) -> str:
    """What is wrong with the bytes of one entry (which no table holds)."""
    if not entry:
        return "no bytes"
    kind, seat = entry[0] >> 4, entry[0] & 0x07
    size = _SIZES[kind]
    if not size:
        return f"unknown action kind {kind}"
    if len(entry) < size:
        return f"truncated: {len(entry)} of {size} bytes"
    if len(entry) > size:
        return f"{len(entry) - size} bytes after the entry"
    if seat >= SEATS:
        return f"seat {seat} out of range"
    return f"{_KINDS[kind].__name__} has no value {entry[1]}"
