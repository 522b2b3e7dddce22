"""Compact, versioned binary encoding of a full :class:`GameState` (for storage).

Layout: the magic byte ``T``, the format version, then every field in a fixed
order as unsigned LEB128 varints (almost all fit in one byte: cards are
0-39, seats 0-5). Optional values are stored plus one (0 = None); the
stock is not stored, since it is exactly the cards not dealt. A mid-hand state
takes about 80 bytes. ``decode_state(encode_state(s)) == s`` for every state the
engine produces; a truncated, corrupt or newer-format value raises
:class:`~truc_game.rules.errors.InvalidSetup`.

Version history: 1 — first format.
"""

from __future__ import annotations

from typing import Final

from .actions import Call, Directive, Signal
from .cards import DECK, Card, PeriqueTrickRank
from .errors import InvalidSetup
from .options import CutMode, Responder, RuleOptions
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

__all__ = ["FORMAT_VERSION", "decode_state", "encode_state"]

MAGIC: Final = 0x54  # "T"
FORMAT_VERSION: Final = 1

_CALLS: Final = tuple(Call)
_CALL_INDEX: Final = {c: i for i, c in enumerate(_CALLS)}
_MESSAGES: Final[tuple[Signal | Directive, ...]] = (*Signal, *Directive)
_MESSAGE_INDEX: Final = {m: i for i, m in enumerate(_MESSAGES)}
_PERIQUE: Final = tuple(PeriqueTrickRank)
_RESPONDER: Final = tuple(Responder)
_CUT: Final = tuple(CutMode)


class _Writer:
    __slots__ = ("out",)

    def __init__(self) -> None:
        self.out = bytearray((MAGIC, FORMAT_VERSION))

    def put(self, value: int) -> None:
        out = self.out
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)

    def opt(self, value: int | None) -> None:
        self.put(0 if value is None else value + 1)

    def cards(self, cards: tuple[Card, ...]) -> None:
        self.out.append(len(cards))
        self.out.extend(cards)

    def call(self, call: Call | None) -> None:
        self.put(0 if call is None else _CALL_INDEX[call] + 1)

    def credit(self, credit: Credit | None) -> None:
        if credit is None:
            self.put(0)
        else:
            self.put(1 + credit.team + 2 * credit.wins_manche)
            self.put(credit.points)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 2

    def get(self) -> int:
        data = self.data
        byte = data[self.pos]
        self.pos += 1
        if byte < 0x80:
            return byte
        value = byte & 0x7F
        shift = 7
        while True:
            byte = data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 70:
                raise ValueError("varint too long")

    def opt(self) -> int | None:
        value = self.get()
        return None if value == 0 else value - 1

    def seat(self) -> int:
        value = self.get()
        if value > 5:
            raise ValueError(f"bad seat {value}")
        return value

    def cards(self) -> tuple[Card, ...]:
        count = self.get()
        start = self.pos
        self.pos += count
        if self.pos > len(self.data):
            raise ValueError("truncated")
        return tuple(DECK[b] for b in self.data[start : self.pos])

    def call(self) -> Call | None:
        value = self.get()
        return None if value == 0 else _CALLS[value - 1]

    def credit(self) -> Credit | None:
        head = self.get()
        if head == 0:
            return None
        head -= 1
        return Credit(head & 1, self.get(), bool(head & 2))


def encode_state(state: GameState) -> bytes:
    """The state as compact bytes (see the module docstring)."""
    w = _Writer()
    put = w.put
    o = state.options
    put(_PERIQUE.index(o.perique_trick_rank))
    put(int(o.play_out_all_tricks))
    put(o.ace_value)
    put(_RESPONDER.index(o.responder))
    put(_CUT.index(o.cut))
    put(o.target_score)
    put(o.manches_to_win)
    w.opt(state.seed)
    put(len(state.deals))
    for deal in state.deals:
        for hand in deal:
            w.out.extend(hand)
    put(len(state.draws))
    for a, b in state.draws:
        w.out.extend((a, b))
    put(state.phase)
    w.opt(state.to_act)
    put(state.prompt)
    put(state.scores[0])
    put(state.scores[1])
    put(state.manches[0])
    put(state.manches[1])
    put(len(state.history))
    for entry in state.history:
        for value in entry:
            put(value)
    put(state.hand_number)
    put(state.hands_played)
    put(state.dealer)
    dealt = state.dealt
    if not dealt[0]:
        put(0)
    else:
        put(1)
        held = 0
        bit = 0
        for seat in range(6):
            hand = state.hands[seat]
            for card in dealt[seat]:
                w.out.append(card)
                if card in hand:
                    held |= 1 << bit
                bit += 1
        w.out.extend(held.to_bytes(3, "little"))
    put(len(state.tricks))
    for trick in state.tricks:
        put(trick.leader)
        w.opt(trick.winner_team)
        w.opt(trick.winning_seat)
        w.out.extend(trick.cards)
    put(state.leader)
    w.cards(state.trick_cards)
    put(state.declared)
    put(int(state.truc_called))
    put(state.stake_level)
    w.opt(state.last_raiser if state.last_raiser >= 0 else None)
    truc = state.truc_call
    if truc is None:
        put(0)
    else:
        put(truc.rung)
        put(truc.caller)
        put(truc.answerer)
    embit = state.embit
    if embit is None:
        put(0)
    else:
        w.call(embit.call)
        put(embit.opener)
        put(embit.rest)
        put(embit.polled)
        w.call(embit.challenge)
        w.opt(embit.challenger if embit.challenger >= 0 else None)
        put(embit.raise_points)
        w.call(embit.answer)
        w.credit(embit.result)
        put(int(embit.credited))
    put(len(state.flors))
    for ex in state.flors:
        put(ex.declarer)
        put(ex.polled)
        w.call(ex.challenge)
        w.opt(ex.challenger if ex.challenger >= 0 else None)
        w.call(ex.declarer_answer)
        w.call(ex.challenger_answer)
        w.credit(ex.result)
        put(int(ex.credited))
    put(state.decided + 1)
    w.cards(state.revealed)
    put(len(state.signals))
    for seat, message in state.signals:
        put(seat)
        put(_MESSAGE_INDEX[message])
    return bytes(w.out)


def decode_state(data: bytes) -> GameState:
    """The state encoded by :func:`encode_state`; InvalidSetup if ``data`` is not one."""
    if len(data) < 2 or data[0] != MAGIC:
        raise InvalidSetup("not an encoded game state")
    if data[1] != FORMAT_VERSION:
        raise InvalidSetup(
            f"game state format {data[1]} is not supported (this is {FORMAT_VERSION})"
        )
    try:
        state = _decode(_Reader(data))
    except (IndexError, ValueError, KeyError) as exc:
        raise InvalidSetup(f"corrupt game state: {exc}") from None
    return state


def _decode(r: _Reader) -> GameState:
    get = r.get
    options = RuleOptions(
        perique_trick_rank=_PERIQUE[get()],
        play_out_all_tricks=bool(get()),
        ace_value=get(),
        responder=_RESPONDER[get()],
        cut=_CUT[get()],
        target_score=get(),
        manches_to_win=get(),
    )
    seed = r.opt()
    data = r.data
    deals = []
    for _ in range(get()):
        flat = data[r.pos : r.pos + 18]
        r.pos += 18
        deals.append(tuple(tuple(DECK[c] for c in flat[i : i + 3]) for i in range(0, 18, 3)))
    draws = []
    for _ in range(get()):
        draws.append((DECK[data[r.pos]], DECK[data[r.pos + 1]]))
        r.pos += 2
    phase = Phase(get())
    to_act = r.opt()
    prompt = Prompt(get())
    scores = (get(), get())
    manches = (get(), get())
    history = tuple((get(), get(), get()) for _ in range(get()))
    hand_number = get()
    hands_played = get()
    dealer = r.seat()
    if get():
        flat = data[r.pos : r.pos + 18]
        held = int.from_bytes(data[r.pos + 18 : r.pos + 21], "little")
        r.pos += 21
        if len(flat) != 18:
            raise ValueError("truncated deal")
        dealt = tuple(tuple(DECK[c] for c in flat[i : i + 3]) for i in range(0, 18, 3))
        hands = tuple(
            tuple(DECK[flat[i]] for i in range(s * 3, s * 3 + 3) if held >> i & 1) for s in range(6)
        )
        in_deal = set(flat)
        stock = tuple(c for c in DECK if c not in in_deal)
    else:
        dealt = hands = ((),) * 6
        stock = ()
    tricks = []
    for _ in range(get()):
        leader = r.seat()
        winner_team = r.opt()
        winning_seat = r.opt()
        cards = tuple(DECK[c] for c in data[r.pos : r.pos + 6])
        r.pos += 6
        tricks.append(Trick(leader, cards, winner_team, winning_seat))
    leader = r.seat()
    trick_cards = r.cards()
    declared = get()
    truc_called = bool(get())
    stake_level = get()
    last_raiser = r.opt()
    rung = get()
    truc_call = TrucCall(rung, r.seat(), r.seat()) if rung else None
    embit = None
    head = r.call()
    if head is not None:
        embit = EmbitContest(
            call=head,
            opener=r.seat(),
            rest=get(),
            polled=get(),
            challenge=r.call(),
            challenger=_minus_one(r.opt()),
            raise_points=get(),
            answer=r.call(),
            result=r.credit(),
            credited=bool(get()),
        )
    flors = []
    for _ in range(get()):
        flors.append(
            FlorExchange(
                declarer=r.seat(),
                polled=get(),
                challenge=r.call(),
                challenger=_minus_one(r.opt()),
                declarer_answer=r.call(),
                challenger_answer=r.call(),
                result=r.credit(),
                credited=bool(get()),
            )
        )
    decided = get() - 1
    revealed = r.cards()
    signals = tuple((r.seat(), _MESSAGES[get()]) for _ in range(get()))
    if r.pos != len(data):
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
        history=history,
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
        last_raiser=_minus_one(last_raiser),
        truc_call=truc_call,
        embit=embit,
        flors=tuple(flors),
        decided=decided,
        revealed=revealed,
        signals=signals,
    )


def _minus_one(value: int | None) -> int:
    return -1 if value is None else value
