"""Compact, versioned binary encoding of a full :class:`GameState` (for storage).

Layout: the magic byte ``T``, the format version, then every field in a fixed
order, one byte each (cards are 0-39, seats 0-5, scores and points at most
255, as the target score is at most 250) except the seed (8 bytes) and the
two hand counters (2 bytes each); lists are a count byte and their items.
Optional values are stored plus one (0 = None); the stock is not stored,
since it is exactly the cards not dealt. A mid-hand state takes about 80
bytes and decodes with plain indexing (no per-field calls).
``decode_state(encode_state(s)) == s`` for every state the engine produces; a
truncated, corrupt or newer-format value raises
:class:`~truc_rules.errors.InvalidSetup`.

Version history: 1 — LEB128 varints (never stored outside development);
2 — fixed-width bytes, about twice as fast to decode.

Events have their own encoding (compact JSON), shared by every rule set:
:mod:`truc_rules.event_codec` (re-exported here).
"""

from __future__ import annotations

from typing import Final

from truc_rules.cards import DECK, Card
from truc_rules.errors import InvalidSetup
from truc_rules.event_codec import decode_events, encode_events

from .actions import CALLS, DIRECTIVES, SIGNALS, Call, Directive, Signal
from .options import CutMode, Responder, RuleOptions
from .ranking import PeriqueTrickRank
from .state import (
    Credit,
    EmbitContest,
    FlorExchange,
    GameState,
    Phase,
    Prompt,
    Trick,
    TrucCall,
)

__all__ = [
    "FORMAT_VERSION",
    "decode_events",
    "decode_state",
    "encode_events",
    "encode_state",
]

MAGIC: Final = 0x54  # "T"
FORMAT_VERSION: Final = 2

_CALLS: Final = CALLS
_CALL_INDEX: Final = {c: i for i, c in enumerate(_CALLS)}
_MESSAGES: Final[tuple[Signal | Directive, ...]] = (*SIGNALS, *DIRECTIVES)
_MESSAGE_INDEX: Final = {m: i for i, m in enumerate(_MESSAGES)}
_PERIQUE: Final = tuple(PeriqueTrickRank)
_PERIQUE_INDEX: Final = {p: i for i, p in enumerate(_PERIQUE)}
_RESPONDER: Final = tuple(Responder)
_RESPONDER_INDEX: Final = {r: i for i, r in enumerate(_RESPONDER)}
_CUT: Final = tuple(CutMode)
_CUT_INDEX: Final = {c: i for i, c in enumerate(_CUT)}
_PHASES: Final = tuple(Phase)
_PROMPTS: Final = tuple(Prompt)
_NO_HANDS: Final[tuple[tuple[Card, ...], ...]] = ((),) * 6
_OPTIONS: dict[bytes, RuleOptions] = {}
"""Decoded option sets by their 7 bytes (a table's options never change)."""
_CREDITS: Final = {
    (team + 2 * manche, points): Credit(team, points, bool(manche))
    for team in (0, 1)
    for manche in (0, 1)
    for points in range(30)
}


def _call_byte(call: Call | None) -> int:
    return 0 if call is None else _CALL_INDEX[call] + 1


def _credit_bytes(out: bytearray, credit: Credit | None) -> None:
    if credit is None:
        out.append(0)
    else:
        out.append(1 + credit.team + 2 * credit.wins_manche)
        out.append(credit.points)


def encode_state(state: GameState) -> bytes:
    """The state as compact bytes (see the module docstring)."""
    o = state.options
    out = bytearray(
        (
            MAGIC,
            FORMAT_VERSION,
            _PERIQUE_INDEX[o.perique_trick_rank],
            o.play_out_all_tricks,
            o.ace_value,
            _RESPONDER_INDEX[o.responder],
            _CUT_INDEX[o.cut],
            o.target_score,
            o.manches_to_win,
        )
    )
    if state.seed is None:
        out.append(0)
    else:
        out.append(1)
        out += state.seed.to_bytes(8, "little")
    out.append(len(state.deals))
    for deal in state.deals:
        for hand in deal:
            out += bytes(hand)
    out.append(len(state.draws))
    for pair in state.draws:
        out += bytes(pair)
    to_act = state.to_act
    out += bytes(
        (
            state.phase,
            0 if to_act is None else to_act + 1,
            state.prompt,
            *state.scores,
            *state.manches,
            len(state.history),
        )
    )
    for entry in state.history:
        out += bytes(entry)
    out += state.hand_number.to_bytes(2, "little")
    out += state.hands_played.to_bytes(2, "little")
    out.append(state.dealer)
    dealt = state.dealt
    if not dealt[0]:
        out.append(0)
    else:
        out.append(1)
        held = 0
        bit = 0
        for seat in range(6):
            hand = state.hands[seat]
            for card in dealt[seat]:
                out.append(card)
                if card in hand:
                    held |= 1 << bit
                bit += 1
        out += held.to_bytes(3, "little")
    out.append(len(state.tricks))
    for trick in state.tricks:
        team = trick.winner_team
        winner = trick.winning_seat
        out.append(trick.leader)
        out.append(0 if team is None else team + 1)
        out.append(0 if winner is None else winner + 1)
        out += bytes(trick.cards)
    out.append(state.leader)
    out.append(len(state.trick_cards))
    out += bytes(state.trick_cards)
    out += bytes((state.declared, state.truc_called, state.stake_level, state.last_raiser + 1))
    truc = state.truc_call
    if truc is None:
        out.append(0)
    else:
        out += bytes((truc.rung, truc.caller, truc.answerer))
    embit = state.embit
    if embit is None:
        out.append(0)
    else:
        out += bytes(
            (
                _call_byte(embit.call),
                embit.opener,
                embit.rest,
                embit.polled,
                _call_byte(embit.challenge),
                embit.challenger + 1,
                embit.raise_points,
                _call_byte(embit.answer),
            )
        )
        _credit_bytes(out, embit.result)
        out.append(embit.credited)
    out.append(len(state.flors))
    for ex in state.flors:
        out += bytes(
            (
                ex.declarer,
                ex.polled,
                _call_byte(ex.challenge),
                ex.challenger + 1,
                _call_byte(ex.declarer_answer),
                _call_byte(ex.challenger_answer),
            )
        )
        _credit_bytes(out, ex.result)
        out.append(ex.credited)
    out.append(state.decided + 1)
    out.append(len(state.revealed))
    out += bytes(state.revealed)
    out.append(len(state.signals))
    for seat, message in state.signals:
        out.append(seat)
        out.append(_MESSAGE_INDEX[message])
    return bytes(out)


def decode_state(data: bytes) -> GameState:
    """The state encoded by :func:`encode_state`; InvalidSetup if ``data`` is not one."""
    if len(data) < 2 or data[0] != MAGIC:
        raise InvalidSetup("not an encoded game state")
    if data[1] != FORMAT_VERSION:
        raise InvalidSetup(
            f"game state format {data[1]} is not supported (this is {FORMAT_VERSION})"
        )
    try:
        return _decode(bytes(data))
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise InvalidSetup(f"corrupt game state: {exc}") from None


def _take(data: bytes, i: int, n: int) -> tuple[Card, ...]:
    if i + n > len(data):
        raise ValueError("truncated")
    return tuple([DECK[c] for c in data[i : i + n]])


def _seat(value: int) -> int:
    if value > 5:
        raise ValueError(f"bad seat {value}")
    return value


def _credit_at(data: bytes, i: int) -> tuple[Credit | None, int]:
    head = data[i]
    if head == 0:
        return None, i + 1
    head -= 1
    return _CREDITS.get((head, data[i + 1])) or Credit(head & 1, data[i + 1], bool(head & 2)), i + 2


def _call_at(value: int) -> Call | None:
    return None if value == 0 else _CALLS[value - 1]


def _decode(data: bytes) -> GameState:
    options = _OPTIONS.get(data[2:9])
    if options is None:
        options = RuleOptions(
            perique_trick_rank=_PERIQUE[data[2]],
            play_out_all_tricks=bool(data[3]),
            ace_value=data[4],
            responder=_RESPONDER[data[5]],
            cut=_CUT[data[6]],
            target_score=data[7],
            manches_to_win=data[8],
        )
        if len(_OPTIONS) < 1024:
            _OPTIONS[data[2:9]] = options
    i = 9
    seed = None
    if data[i]:
        if i + 9 > len(data):
            raise ValueError("truncated seed")
        seed = int.from_bytes(data[i + 1 : i + 9], "little")
        i += 9
    else:
        i += 1
    deals = []
    count = data[i]
    i += 1
    for _ in range(count):
        flat = _take(data, i, 18)
        deals.append((flat[0:3], flat[3:6], flat[6:9], flat[9:12], flat[12:15], flat[15:18]))
        i += 18
    draws = []
    count = data[i]
    i += 1
    for _ in range(count):
        pair = _take(data, i, 2)
        draws.append((pair[0], pair[1]))
        i += 2
    phase = _PHASES[data[i]]
    to_act = data[i + 1] - 1 if data[i + 1] else None
    prompt = _PROMPTS[data[i + 2]]
    scores = (data[i + 3], data[i + 4])
    manches = (data[i + 5], data[i + 6])
    count = data[i + 7]
    i += 8
    history = []
    for _ in range(count):
        history.append((data[i], data[i + 1], data[i + 2]))
        i += 3
    hand_number = data[i] | data[i + 1] << 8
    hands_played = data[i + 2] | data[i + 3] << 8
    dealer = _seat(data[i + 4])
    i += 5
    if data[i]:
        flat = _take(data, i + 1, 18)
        held = data[i + 19] | data[i + 20] << 8 | data[i + 21] << 16
        i += 22
        dealt: tuple[tuple[Card, ...], ...] = (
            flat[0:3],
            flat[3:6],
            flat[6:9],
            flat[9:12],
            flat[12:15],
            flat[15:18],
        )
        hands = tuple(
            tuple([flat[b] for b in range(s * 3, s * 3 + 3) if held >> b & 1]) for s in range(6)
        )
        in_deal = set(flat)
        stock = tuple([c for c in DECK if c not in in_deal])
    else:
        i += 1
        dealt = hands = _NO_HANDS
        stock = ()
    tricks = []
    count = data[i]
    i += 1
    for _ in range(count):
        team = data[i + 1]
        seat = data[i + 2]
        tricks.append(
            Trick(
                _seat(data[i]),
                _take(data, i + 3, 6),
                team - 1 if team else None,
                seat - 1 if seat else None,
            )
        )
        i += 9
    leader = _seat(data[i])
    count = data[i + 1]
    trick_cards = _take(data, i + 2, count)
    i += 2 + count
    declared = data[i]
    truc_called = bool(data[i + 1])
    stake_level = data[i + 2]
    last_raiser = data[i + 3] - 1
    rung = data[i + 4]
    i += 5
    truc_call = None
    if rung:
        truc_call = TrucCall(rung, _seat(data[i]), _seat(data[i + 1]))
        i += 2
    embit = None
    head = data[i]
    if head:
        result, j = _credit_at(data, i + 8)
        embit = EmbitContest(
            call=_CALLS[head - 1],
            opener=_seat(data[i + 1]),
            rest=data[i + 2],
            polled=data[i + 3],
            challenge=_call_at(data[i + 4]),
            challenger=data[i + 5] - 1,
            raise_points=data[i + 6],
            answer=_call_at(data[i + 7]),
            result=result,
            credited=bool(data[j]),
        )
        i = j + 1
    else:
        i += 1
    flors = []
    count = data[i]
    i += 1
    for _ in range(count):
        result, j = _credit_at(data, i + 6)
        flors.append(
            FlorExchange(
                declarer=_seat(data[i]),
                polled=data[i + 1],
                challenge=_call_at(data[i + 2]),
                challenger=data[i + 3] - 1,
                declarer_answer=_call_at(data[i + 4]),
                challenger_answer=_call_at(data[i + 5]),
                result=result,
                credited=bool(data[j]),
            )
        )
        i = j + 1
    decided = data[i] - 1
    count = data[i + 1]
    revealed = _take(data, i + 2, count)
    i += 2 + count
    count = data[i]
    i += 1
    signals = []
    for _ in range(count):
        signals.append((_seat(data[i]), _MESSAGES[data[i + 1]]))
        i += 2
    if i != len(data):
        raise ValueError("trailing bytes")
    return GameState(
        options=options,
        seed=seed,
        deals=tuple(deals),
        draws=tuple(draws),
        phase=phase,
        to_act=to_act,
        prompt=prompt,
        scores=scores,
        manches=manches,
        history=tuple(history),
        hand_number=hand_number,
        hands_played=hands_played,
        dealer=dealer,
        dealt=dealt,
        hands=hands,
        stock=stock,
        tricks=tuple(tricks),
        leader=leader,
        trick_cards=trick_cards,
        declared=declared,
        truc_called=truc_called,
        stake_level=stake_level,
        last_raiser=last_raiser,
        truc_call=truc_call,
        embit=embit,
        flors=tuple(flors),
        decided=decided,
        revealed=revealed,
        signals=tuple(signals),
    )
