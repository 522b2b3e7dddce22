"""Compact, versioned binary encoding of a :class:`FamilyState` (for storage).

Layout: the magic byte ``F``, the format version, the rule set's number
(:data:`RULE_SET_NUMBERS`), the options, then every field in a fixed order,
one byte each (cards 0-71, seats, scores below 251) except the seed (8 bytes),
the hand counters and the stakes (2 bytes each); lists are a count byte and
their items; optional values are stored plus one (0 = None). Truc y Flou's
states start with ``T`` (:mod:`truc_rules.truc_y_flou.codec`), so the first
byte tells the two encodings apart.

``decode_state(encode_state(s), variant) == s`` for every state the engine
produces; a truncated, corrupt, other-rule-set or newer-format value raises
:class:`~truc_rules.errors.InvalidSetup`.

Version history: 1 — the first.
"""

from __future__ import annotations

from typing import Final

from truc_rules.actions import Call, Directive, Signal
from truc_rules.cards import Card
from truc_rules.errors import InvalidSetup
from truc_rules.rule_set import RuleSet

from .state import FamilyState, Pending, Phase, Prompt, Trick
from .variant import FamilyOptions, TrickOrder, Variant

__all__ = ["FORMAT_VERSION", "MAGIC", "RULE_SET_NUMBERS", "decode_state", "encode_state"]

MAGIC: Final = 0x46  # "F"
FORMAT_VERSION: Final = 1
RULE_SET_NUMBERS: Final = {
    RuleSet.FRENCH_TRUC: 1,
    RuleSet.SACKSON_TRUC: 2,
    RuleSet.PARTNERSHIP_TRUC: 3,
    RuleSet.CATALAN_TRUC: 4,
}
"""Stored numbers of the rule sets; never renumber."""

_CALLS: Final = tuple(Call)
_CALL_INDEX: Final = {c: i for i, c in enumerate(_CALLS)}
_SIGNALS: Final = tuple(Signal)
_DIRECTIVES: Final = tuple(Directive)
_SIGNAL_INDEX: Final = {s: i for i, s in enumerate(_SIGNALS)}
_DIRECTIVE_INDEX: Final = {d: i for i, d in enumerate(_DIRECTIVES)}
_ORDERS: Final = (None, *TrickOrder)
_ORDER_INDEX: Final = {o: i for i, o in enumerate(_ORDERS)}
_CARDS: Final = tuple(Card)
_PHASES: Final = {p.value: p for p in Phase}
_PROMPTS: Final = {p.value: p for p in Prompt}


def encode_state(state: FamilyState) -> bytes:
    """The state as compact bytes (see the module docstring)."""
    o = state.options
    out = bytearray(
        (
            MAGIC,
            FORMAT_VERSION,
            RULE_SET_NUMBERS[state.variant.rule_set],
            o.target_score,
            o.manches_to_win,
            o.play_out_all_tricks,
            _ORDER_INDEX[o.trick_order],
            o.seats,
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
    for hands in (state.dealt, state.hands):
        for hand in hands:
            out.append(len(hand))
            out += bytes(hand)
    out.append(len(state.stock))
    out += bytes(state.stock)
    out.append(len(state.tricks))
    for trick in state.tricks:
        out.append(trick.leader)
        out += bytes(trick.cards)
        out.append(0 if trick.winner_team is None else trick.winner_team + 1)
        out.append(0 if trick.winning_seat is None else trick.winning_seat + 1)
    out.append(state.leader)
    out.append(len(state.trick_cards))
    out += bytes(state.trick_cards)
    out += state.stake.to_bytes(2, "little")
    out.append(0 if state.stake_call is None else _CALL_INDEX[state.stake_call] + 1)
    out += bytes((state.raised, state.mon_reste, state.redeal_proposed, state.decided + 1))
    pending = state.pending
    if pending is None:
        out.append(0)
    else:
        out += bytes((1, _CALL_INDEX[pending.call], pending.caller, pending.answerer))
        out += pending.stake.to_bytes(2, "little")
    out.append(len(state.signals))
    for seat, message in state.signals:
        if isinstance(message, Signal):
            out += bytes((seat, 0, _SIGNAL_INDEX[message]))
        else:
            out += bytes((seat, 1, _DIRECTIVE_INDEX[message]))
    out += bytes(0 if d is None else _DIRECTIVE_INDEX[d] + 1 for d in state.instructions)
    return bytes(out)


def decode_state(data: bytes, variant: Variant) -> FamilyState:
    """The state ``encode_state`` wrote, for the rule set of ``variant``."""
    if len(data) < 8 or data[0] != MAGIC:
        raise InvalidSetup("not a stored game of the Truc family")
    if data[1] != FORMAT_VERSION:
        raise InvalidSetup(f"unknown stored format version {data[1]}")
    if data[2] != RULE_SET_NUMBERS[variant.rule_set]:
        raise InvalidSetup(f"the stored game is not a {variant.rule_set} game")
    try:
        state = _decode(data, variant)
        _check(state)
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise InvalidSetup(f"corrupt stored game: {exc}") from None
    return state


def _check(state: FamilyState) -> None:
    """Every stored value in its range: cards of the rule set's pack, seats of
    its table, teams 0 or 1 (ValueError otherwise)."""
    deck = state.variant.deck
    seats = state.seats
    cards = [
        *(c for deal in state.deals for hand in deal for c in hand),
        *(c for hand in state.dealt for c in hand),
        *(c for hand in state.hands for c in hand),
        *state.stock,
        *(c for trick in state.tricks for c in trick.cards),
        *state.trick_cards,
    ]
    if any(c not in deck for c in cards):
        raise ValueError(f"a card outside the {deck.name} pack")
    pending = state.pending
    seat_values = [
        state.dealer,
        state.leader,
        *([] if state.to_act is None else [state.to_act]),
        *(t.leader for t in state.tricks),
        *(t.winning_seat for t in state.tricks if t.winning_seat is not None),
        *(s for s, _ in state.signals),
        *([] if pending is None else [pending.caller, pending.answerer]),
    ]
    if any(not 0 <= s < seats for s in seat_values):
        raise ValueError(f"a seat outside the table of {seats}")
    teams = [*(w for w, _, _ in state.history), *(t.winner_team for t in state.tricks)]
    if any(t not in (0, 1, None) for t in teams) or state.decided not in (-1, 0, 1, 2):
        raise ValueError("a team that is neither A nor B")


def _decode(data: bytes, variant: Variant) -> FamilyState:
    options = FamilyOptions(
        rule_set=variant.rule_set,
        target_score=data[3],
        manches_to_win=data[4],
        play_out_all_tricks=bool(data[5]),
        trick_order=_ORDERS[data[6]],
        seats=data[7],
    )
    variant.check(options)
    seats = options.seats
    i = 8
    seed = None
    if data[i]:
        seed = int.from_bytes(data[i + 1 : i + 9], "little")
        i += 9
    else:
        i += 1
    count = data[i]
    i += 1
    deals = []
    for _ in range(count):
        deal = []
        for _ in range(seats):
            deal.append(tuple(_CARDS[c] for c in data[i : i + 3]))
            i += 3
        deals.append(tuple(deal))
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
    hand_number = int.from_bytes(data[i : i + 2], "little")
    hands_played = int.from_bytes(data[i + 2 : i + 4], "little")
    dealer = data[i + 4]
    i += 5
    sets = []
    for _ in range(2):
        hands = []
        for _ in range(seats):
            n = data[i]
            hands.append(tuple(_CARDS[c] for c in data[i + 1 : i + 1 + n]))
            i += 1 + n
        sets.append(tuple(hands))
    n = data[i]
    stock = tuple(_CARDS[c] for c in data[i + 1 : i + 1 + n])
    i += 1 + n
    count = data[i]
    i += 1
    tricks = []
    for _ in range(count):
        leader = data[i]
        cards = tuple(_CARDS[c] for c in data[i + 1 : i + 1 + seats])
        i += 1 + seats
        team = data[i] - 1 if data[i] else None
        winning = data[i + 1] - 1 if data[i + 1] else None
        i += 2
        tricks.append(Trick(leader, cards, team, winning))
    leader = data[i]
    n = data[i + 1]
    trick_cards = tuple(_CARDS[c] for c in data[i + 2 : i + 2 + n])
    i += 2 + n
    stake = int.from_bytes(data[i : i + 2], "little")
    stake_call = _CALLS[data[i + 2] - 1] if data[i + 2] else None
    raised, mon_reste, redeal_proposed = bool(data[i + 3]), bool(data[i + 4]), bool(data[i + 5])
    decided = data[i + 6] - 1
    i += 7
    pending = None
    if data[i]:
        pending = Pending(
            _CALLS[data[i + 1]],
            data[i + 2],
            data[i + 3],
            int.from_bytes(data[i + 4 : i + 6], "little"),
        )
        i += 6
    else:
        i += 1
    count = data[i]
    i += 1
    signals: list[tuple[int, Signal | Directive]] = []
    for _ in range(count):
        kind = data[i + 1]
        if kind not in (0, 1):
            raise ValueError("bad message kind")
        message = _SIGNALS[data[i + 2]] if kind == 0 else _DIRECTIVES[data[i + 2]]
        signals.append((data[i], message))
        i += 3
    instructions = tuple(_DIRECTIVES[d - 1] if d else None for d in data[i : i + seats])
    i += seats
    if len(instructions) != seats or i != len(data):
        raise ValueError("the stored game has the wrong length")
    return FamilyState(
        variant=variant,
        options=options,
        seed=seed,
        deals=tuple(deals),
        phase=phase,
        to_act=to_act,
        prompt=prompt,
        scores=scores,
        manches=manches,
        history=tuple(history),
        hand_number=hand_number,
        hands_played=hands_played,
        dealer=dealer,
        dealt=sets[0],
        hands=sets[1],
        stock=stock,
        tricks=tuple(tricks),
        leader=leader,
        trick_cards=trick_cards,
        stake=stake,
        stake_call=stake_call,
        raised=raised,
        pending=pending,
        mon_reste=mon_reste,
        redeal_proposed=redeal_proposed,
        decided=decided,
        signals=tuple(signals),
        instructions=instructions,
    )
