"""Conversion between the rules engine's types and the gRPC protocol's messages.

This is the only module that knows both sides: the engine (``truc_rules``)
never sees a proto message, and the servicer never looks inside an engine
value. Requests are validated here only as far as the protocol goes (a field
set, an enum number known, a hand per seat of three cards each); what the
rules allow is left to the engine, which refuses the rest with its own reasons.

Every rule set of the family goes through the same functions: a view is a
Truc y Flou :class:`~truc_rules.truc_y_flou.views.GameView` or a variants.md
:class:`~truc_rules.family.FamilyView`, and each fills the fields of
``truc.v1.GameView`` that have a meaning in its rule set. A proto card is read
in its game's pack (:class:`~truc_rules.cards.Deck`): ``SUIT_CLUBS`` with
``RANK_SEVEN`` is the seven of bastos in the Spanish pack and the seven of
clubs in the piquet pack; a card only the other pack has is that pack's card,
which the engine refuses as not in hand.

It runs on every request (a full view about once per action), so the 72
cards, the interned actions and every enum mapping are built once, at import,
as tuples and dicts; converting is then table look-ups and keyword
constructors. Messages cached here are never handed out: a cached message put
into a message field or a repeated field is copied by protobuf.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, TypeVar

from truc.v1 import cards_pb2, game_pb2, game_service_pb2

from truc_protocol.errors import InvalidArgument
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
    SendDirective,
    SendSignal,
    Signal,
)
from truc_rules.cards import PIQUET, SPANISH, Card, Deck, Rank, Suit
from truc_rules.errors import InvalidSetup
from truc_rules.events import (
    Called,
    CardPlayed,
    CardsDealt,
    CreditReason,
    DealerChosen,
    DealsExhausted,
    DeckCut,
    DeclarationSettled,
    DirectiveSent,
    DrawCard,
    EmbitVoided,
    Event,
    FlorShowdown,
    HandEnded,
    HandStarted,
    MancheEnded,
    MatchEnded,
    PointsCredited,
    Shown,
    SignalSent,
    StakeRaised,
    TrickCompleted,
    TurnTimedOut,
)
from truc_rules.family import FamilyOptions, FamilyView, TrickOrder
from truc_rules.family import Phase as FamilyPhase
from truc_rules.family import Prompt as FamilyPrompt
from truc_rules.registry import FAMILY, AnyOptions, AnyView, deck_of, options_from_mapping
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou.actions import TRUC_LADDER
from truc_rules.truc_y_flou.options import CutMode, Responder, RuleOptions
from truc_rules.truc_y_flou.ranking import PeriqueTrickRank
from truc_rules.truc_y_flou.state import (
    UNDECIDED,
    Credit,
    EmbitContest,
    FlorExchange,
    Phase,
    Prompt,
)
from truc_rules.truc_y_flou.views import GameView

if TYPE_CHECKING:
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

__all__ = [
    "action_from_proto",
    "action_to_proto",
    "card_from_proto",
    "card_to_proto",
    "deal_from_proto",
    "event_to_proto",
    "events_to_proto",
    "minimal_view_from_proto",
    "minimal_view_to_proto",
    "options_from_proto",
    "options_to_proto",
    "play_response_bytes",
    "public_view_to_proto",
    "rule_set_from_proto",
    "rule_set_to_proto",
    "seat_view_bytes",
    "seat_view_from_public",
    "session_events_bytes",
    "team_to_proto",
    "view_to_proto",
    "watch_events_bytes",
]

_E = TypeVar("_E", bound=Enum)
_V = TypeVar("_V", bound=int)

_MAX_SEATS: Final = 6
"""The largest table of the family (Truc y Flou's): every seat-indexed table spans it."""
_TY_SEATS: Final = 6
_HAND_SIZE: Final = 3
_CAPTAINS: Final = (0, 3)
"""Truc y Flou's captains (§2.1); the other rule sets have none."""


# --- enum tables, built once from the proto names (which must match the engine's) ---


def _to_proto(wrapper: _EnumTypeWrapper[_V], prefix: str, members: Iterable[_E]) -> dict[_E, _V]:
    """engine member -> proto number, by name: ``Call.TRUC`` -> ``CALL_TRUC``."""
    return {m: wrapper.Value(prefix + m.name) for m in members}


def _from_proto(table: Mapping[_E, int]) -> tuple[_E | None, ...]:
    """proto number -> engine member (None for UNSPECIFIED and gaps), as a tuple."""
    result: list[_E | None] = [None] * (max(table.values()) + 1)
    for member, number in table.items():
        result[number] = member
    return tuple(result)


_CALL_TO_PROTO: Final = _to_proto(game_pb2.Call, "CALL_", Call)
_SIGNAL_TO_PROTO: Final = _to_proto(game_pb2.Signal, "SIGNAL_", Signal)
_DIRECTIVE_TO_PROTO: Final = _to_proto(game_pb2.Directive, "DIRECTIVE_", Directive)


def _merged(*tables: Mapping[Any, _V]) -> dict[Any, _V]:
    """One table for the phases (or prompts) of both engines. Their members are
    int enums numbered alike where they mean the same (``Phase.PLAY`` is 2 in
    both, ``Prompt.TURN`` 0), so a member of either finds its proto number in one
    dict look-up; a number meaning two things would be a mistake, refused here."""
    merged: dict[Any, _V] = {}
    for table in tables:
        for member, number in table.items():
            if merged.setdefault(member, number) != number:
                raise AssertionError(f"{member!r} means two proto values")
    return merged


_PHASE_TO_PROTO: Final[dict[Phase | FamilyPhase, game_pb2.Phase.ValueType]] = _merged(
    _to_proto(game_pb2.Phase, "PHASE_", Phase),
    _to_proto(game_pb2.Phase, "PHASE_", FamilyPhase),
)
_PROMPT_TO_PROTO: Final[dict[Prompt | FamilyPrompt, game_pb2.Prompt.ValueType]] = _merged(
    _to_proto(game_pb2.Prompt, "PROMPT_", Prompt),
    _to_proto(game_pb2.Prompt, "PROMPT_", FamilyPrompt),
)
_PERIQUE_TO_PROTO: Final = _to_proto(
    game_pb2.PeriqueTrickRank, "PERIQUE_TRICK_RANK_", PeriqueTrickRank
)
_RESPONDER_TO_PROTO: Final = _to_proto(game_pb2.Responder, "RESPONDER_", Responder)
_CUT_TO_PROTO: Final = _to_proto(game_pb2.CutMode, "CUT_MODE_", CutMode)
_REASON_TO_PROTO: Final = _to_proto(game_pb2.CreditReason, "CREDIT_REASON_", CreditReason)

_CALL_FROM_PROTO: Final = _from_proto(_CALL_TO_PROTO)
_SIGNAL_FROM_PROTO: Final = _from_proto(_SIGNAL_TO_PROTO)
_DIRECTIVE_FROM_PROTO: Final = _from_proto(_DIRECTIVE_TO_PROTO)
_PERIQUE_FROM_PROTO: Final = _from_proto(_PERIQUE_TO_PROTO)
_RESPONDER_FROM_PROTO: Final = _from_proto(_RESPONDER_TO_PROTO)
_CUT_FROM_PROTO: Final = _from_proto(_CUT_TO_PROTO)

_CONTEST_TO_PROTO: Final = {
    "embit": game_pb2.CONTEST_EMBIT,
    "flor": game_pb2.CONTEST_FLOR,
}
_HAND_END_TO_PROTO: Final = {
    "tricks": game_pb2.HAND_END_TRICKS,
    "fold": game_pb2.HAND_END_FOLD,
    "all_pardes": game_pb2.HAND_END_ALL_PARDES,
    "manche_over": game_pb2.HAND_END_MANCHE_OVER,
}

_CALL_UNSPECIFIED: Final = game_pb2.CALL_UNSPECIFIED
_TEAM_A: Final = game_pb2.TEAM_A
_TEAM_B: Final = game_pb2.TEAM_B
_TEAM_UNSPECIFIED: Final = game_pb2.TEAM_UNSPECIFIED
_TEAMS: Final = (_TEAM_A, _TEAM_B)

_LADDER_TO_PROTO: Final[tuple[game_pb2.Call.ValueType, ...]] = (
    _CALL_UNSPECIFIED,
    *(_CALL_TO_PROTO[call] for call in TRUC_LADDER),
)
"""Stake level (0 = no call, 1 = TRUC ... 5 = BALOU_PARTIDO) -> the ladder call."""

# --- cards ---

_SUIT_TO_PROTO: Final = {
    s: cards_pb2.Suit.Value("SUIT_" + ("CLUBS" if s == Suit.FRENCH_CLUBS else s.name)) for s in Suit
}
"""Both packs' clubs are SUIT_CLUBS: a proto card is read in its game's pack."""
_RANK_TO_PROTO: Final = _to_proto(cards_pb2.Rank, "RANK_", Rank)
_SUIT_FROM_PROTO: Final = _from_proto(
    {s: n for s, n in _SUIT_TO_PROTO.items() if s != Suit.FRENCH_CLUBS}
)
_RANK_FROM_PROTO: Final = _from_proto(_RANK_TO_PROTO)
_SUIT_SPAN: Final = len(_SUIT_FROM_PROTO)
_RANK_SPAN: Final = len(_RANK_FROM_PROTO)

_CARDS: Final = tuple(
    cards_pb2.Card(suit=_SUIT_TO_PROTO[c.suit], rank=_RANK_TO_PROTO[c.rank]) for c in Card
)
"""The proto card of every engine card (of both packs), indexed by the card."""


def _card_numbers(own: Deck, other: Deck) -> tuple[Card | None, ...]:
    """Engine card by ``proto suit * _RANK_SPAN + proto rank`` read in ``own``:
    its own cards, else the ``other`` pack's (which the engine refuses as not in
    hand); None where neither pack has a card (and for UNSPECIFIED)."""
    table: list[Card | None] = [None] * (_SUIT_SPAN * _RANK_SPAN)
    for deck in (other, own):  # own last: where both packs name a card, it is own's
        for card in deck.cards:
            table[_SUIT_TO_PROTO[card.suit] * _RANK_SPAN + _RANK_TO_PROTO[card.rank]] = card
    return tuple(table)


_SPANISH_NUMBERS: Final = _card_numbers(SPANISH, PIQUET)
_CARD_FROM_NUMBERS: Final = {
    SPANISH: _SPANISH_NUMBERS,
    PIQUET: _card_numbers(PIQUET, SPANISH),
}
"""Per pack, the engine card of each proto card number."""

Pack = Deck | RuleSet
"""The pack a proto card is read in: a :class:`Deck`, or the rule set playing with it."""


def _numbers(pack: Pack) -> tuple[Card | None, ...]:
    if pack is SPANISH:
        return _SPANISH_NUMBERS
    return _CARD_FROM_NUMBERS[pack if isinstance(pack, Deck) else deck_of(pack)]


def card_to_proto(card: Card) -> cards_pb2.Card:
    """The proto message of an engine card (a new message)."""
    msg = cards_pb2.Card()
    msg.CopyFrom(_CARDS[card])
    return msg


def card_from_proto(
    msg: cards_pb2.Card, field: str, pack: Pack = SPANISH, *, strict: bool = False
) -> Card:
    """The engine card of a proto card read in ``pack``; InvalidArgument naming
    ``field`` if it is none.

    A card only the other pack has is that pack's card (an action's: the engine
    refuses it as not in hand), or, ``strict``, refused too (a card of a deal or
    a draw, which must be of the game's pack). The reason is BAD_ACTION for a
    field of an action (``field`` starts with ``"action"``), BAD_REQUEST otherwise.
    """
    suit = msg.suit
    rank = msg.rank
    if 0 < suit < _SUIT_SPAN and 0 < rank < _RANK_SPAN:
        card = _numbers(pack)[suit * _RANK_SPAN + rank]
        if card is not None:
            if strict:
                deck = pack if isinstance(pack, Deck) else deck_of(pack)
                if card not in deck:
                    reason = "BAD_ACTION" if field.startswith("action") else "BAD_REQUEST"
                    raise InvalidArgument(
                        reason, f"{field}: {card} is not a card of the {deck.name} pack"
                    )
            return card
    raise _bad_card(suit, rank, field)


def _bad_card(suit: int, rank: int, field: str) -> InvalidArgument:
    reason = "BAD_ACTION" if field.startswith("action") else "BAD_REQUEST"
    if suit == 0 or rank == 0:
        missing = "suit" if suit == 0 else "rank"
        return InvalidArgument(reason, f"{field}: the card's {missing} is unspecified")
    if not 0 < suit < _SUIT_SPAN:
        return InvalidArgument(reason, f"{field}: unknown card suit {suit}")
    if not 0 < rank < _RANK_SPAN:
        return InvalidArgument(reason, f"{field}: unknown card rank {rank}")
    return InvalidArgument(
        reason,
        f"{field}: no card of either pack is {cards_pb2.Rank.Name(cards_pb2.Rank.ValueType(rank))}"
        f" of {cards_pb2.Suit.Name(cards_pb2.Suit.ValueType(suit))}",
    )


# --- teams ---


def team_to_proto(team: int | None) -> game_pb2.Team.ValueType:
    """Engine team 0 -> TEAM_A, 1 -> TEAM_B; None (or anything else) -> TEAM_UNSPECIFIED."""
    if team == 0:
        return _TEAM_A
    if team == 1:
        return _TEAM_B
    return _TEAM_UNSPECIFIED


def _score(pair: tuple[int, int]) -> game_pb2.Score:
    return game_pb2.Score(team_a=pair[0], team_b=pair[1])


def _opt_call(call: Call | None) -> game_pb2.Call.ValueType:
    return _CALL_UNSPECIFIED if call is None else _CALL_TO_PROTO[call]


def _opt_seat(seat: int) -> int | None:
    """An engine seat that is -1 for "none" -> an absent optional field."""
    return None if seat < 0 else seat


# --- actions ---


def _action_messages() -> dict[Action, game_pb2.Action]:
    table: dict[Action, game_pb2.Action] = {}
    for card, play in PLAY.items():
        table[play] = game_pb2.Action(play_card=_CARDS[card])
    for call, make in CALL.items():
        table[make] = game_pb2.Action(call=_CALL_TO_PROTO[call])
    for signal, send in SIGNAL.items():
        table[send] = game_pb2.Action(signal=_SIGNAL_TO_PROTO[signal])
    for directive, send_directive in DIRECTIVE.items():
        table[send_directive] = game_pb2.Action(directive=_DIRECTIVE_TO_PROTO[directive])
    for choose in CHOOSE_DEALER:
        table[choose] = game_pb2.Action(choose_dealer=choose.dealer)
    return table


_ACTION_MESSAGES: Final = _action_messages()
"""A shared, never handed out, message for every interned engine action."""


def _action_message(action: Action) -> game_pb2.Action:
    """The proto action, possibly a shared message: copy it before handing it out."""
    cached = _ACTION_MESSAGES.get(action)  # equal values hash alike: PlayCard(c) is found
    if cached is not None:
        return cached
    match action:
        case CutDeck(position=position):
            return game_pb2.Action(cut_deck=position)
        case ChooseDealer(dealer=dealer):
            return game_pb2.Action(choose_dealer=dealer)
        case _:
            raise TypeError(f"not an engine action: {action!r}")


def action_to_proto(action: Action) -> game_pb2.Action:
    """The proto message of an engine action (a new message)."""
    msg = game_pb2.Action()
    msg.CopyFrom(_action_message(action))
    return msg


def _bad_action(message: str) -> InvalidArgument:
    return InvalidArgument("BAD_ACTION", message)


def action_from_proto(msg: game_pb2.Action, pack: Pack = SPANISH) -> Action:
    """The engine action of a proto action (an interned instance where one
    exists), its card read in ``pack``: the game's pack.

    Only the protocol is checked: a kind must be set and its enum number known.
    Seats, cut positions, a call, signal or directive of another rule set, and
    a card of the other pack pass through; the engine refuses them.
    """
    kind = msg.WhichOneof("kind")
    if kind == "play_card":
        return PLAY[card_from_proto(msg.play_card, "action.play_card", pack)]
    if kind == "call":
        call_number = msg.call
        call = _CALL_FROM_PROTO[call_number] if 0 <= call_number < len(_CALL_FROM_PROTO) else None
        if call is None:
            raise _bad_action(f"action.call: {_unknown(call_number, 'call')}")
        return CALL[call]
    if kind == "choose_dealer":
        dealer = msg.choose_dealer
        return CHOOSE_DEALER[dealer] if 0 <= dealer < _MAX_SEATS else ChooseDealer(dealer)
    if kind == "cut_deck":
        return CutDeck(msg.cut_deck)
    if kind == "signal":
        signal_number = msg.signal
        signal = (
            _SIGNAL_FROM_PROTO[signal_number]
            if 0 <= signal_number < len(_SIGNAL_FROM_PROTO)
            else None
        )
        if signal is None:
            raise _bad_action(f"action.signal: {_unknown(signal_number, 'signal')}")
        return SIGNAL[signal]
    if kind == "directive":
        directive_number = msg.directive
        directive = (
            _DIRECTIVE_FROM_PROTO[directive_number]
            if 0 <= directive_number < len(_DIRECTIVE_FROM_PROTO)
            else None
        )
        if directive is None:
            raise _bad_action(f"action.directive: {_unknown(directive_number, 'directive')}")
        return DIRECTIVE[directive]
    raise _bad_action(
        "action: no action set (one of play_card, call, choose_dealer, cut_deck, "
        "signal, directive is required)"
    )


def _unknown(number: int, what: str) -> str:
    return f"the {what} is unspecified" if number == 0 else f"unknown {what} {number}"


_RESPONSE_VIEWS: Final = frozenset(game_service_pb2.ResponseView.values())


def minimal_view_from_proto(number: int, field: str = "response_view") -> bool:
    """Whether a request's ``response_view`` asks for the minimal view
    (UNSPECIFIED means FULL); a number the protocol does not define is
    BAD_REQUEST naming ``field``."""
    if number not in _RESPONSE_VIEWS:
        raise InvalidArgument("BAD_REQUEST", f"{field}: unknown response view {number}")
    return number == game_service_pb2.RESPONSE_VIEW_MINIMAL


# --- rule options and deals ---

_DEFAULT_OPTIONS: Final = RuleOptions()
_OPTION_FIELDS: Final = frozenset(
    ("perique_trick_rank", "ace_value", "responder", "cut", "target_score", "manches_to_win")
)


def _option_enum(table: tuple[_E | None, ...], number: int, default: _E, name: str) -> _E:
    if number == 0:
        return default
    member = table[number] if 0 < number < len(table) else None
    if member is None:
        raise InvalidArgument("BAD_REQUEST", f"options.{name}: unknown value {number}")
    return member


_RULE_SET_TO_PROTO: Final = _to_proto(game_pb2.RuleSet, "RULE_SET_", RuleSet)
_RULE_SET_FROM_PROTO: Final = _from_proto(_RULE_SET_TO_PROTO)
_TRICK_ORDER_TO_PROTO: Final = _to_proto(game_pb2.TrickOrder, "TRICK_ORDER_", TrickOrder)
_TRICK_ORDER_FROM_PROTO: Final = _from_proto(_TRICK_ORDER_TO_PROTO)
_TRUC_Y_FLOU_ONLY: Final = ("perique_trick_rank", "ace_value", "responder", "cut")
"""Fields 1-5 of RuleOptions but play_out_all_tricks: Truc y Flou's own."""


def rule_set_to_proto(rule_set: RuleSet) -> game_pb2.RuleSet.ValueType:
    return _RULE_SET_TO_PROTO[rule_set]


def rule_set_from_proto(number: int, field: str = "options.rule_set") -> RuleSet:
    """RULE_SET_UNSPECIFIED means Truc y Flou; an unknown number is BAD_REQUEST."""
    return _option_enum(
        _RULE_SET_FROM_PROTO, number, RuleSet.TRUC_Y_FLOU, field.removeprefix("options.")
    )


def options_from_proto(msg: game_pb2.RuleOptions) -> AnyOptions:
    """Engine options from proto ones, of the rule set ``msg.rule_set`` names:
    zero and UNSPECIFIED values mean the rule set's defaults; a field the rule
    set does not have, set, is BAD_REQUEST naming it."""
    rule_set = rule_set_from_proto(msg.rule_set)
    if rule_set == RuleSet.TRUC_Y_FLOU:
        if msg.trick_order:
            raise InvalidArgument(
                "BAD_REQUEST", "options.trick_order: truc_y_flou has no such rule option"
            )
        if msg.seats not in (0, 6):
            raise InvalidArgument(
                "BAD_REQUEST", f"options.seats: truc_y_flou is played by 6 seats, not {msg.seats}"
            )
        return _truc_y_flou_options(msg)
    for name in _TRUC_Y_FLOU_ONLY:
        if getattr(msg, name):
            raise InvalidArgument(
                "BAD_REQUEST", f"options.{name}: {rule_set} has no such rule option"
            )
    values: dict[str, object] = {"play_out_all_tricks": msg.play_out_all_tricks}
    if msg.target_score:
        values["target_score"] = msg.target_score
    if msg.manches_to_win:
        values["manches_to_win"] = msg.manches_to_win
    if msg.trick_order:
        order = _option_enum(
            _TRICK_ORDER_FROM_PROTO, msg.trick_order, TrickOrder.SEVEN_EIGHT, "trick_order"
        )
        values["trick_order"] = order.value
    if msg.seats:
        variant = FAMILY[rule_set].variant
        if "seats" in variant.option_names:
            values["seats"] = msg.seats
        elif (msg.seats,) != variant.seat_choices:  # the fixed table size, explicit, is fine
            raise InvalidArgument(
                "BAD_REQUEST",
                f"options.seats: {rule_set} is played by {variant.seat_choices[0]} seats, "
                f"not {msg.seats}",
            )
    try:
        return options_from_mapping(rule_set, values)
    except InvalidSetup as exc:
        text = str(exc)
        raise InvalidArgument("BAD_REQUEST", f"{_option_field(text, values)}: {text}") from exc


def _option_field(text: str, values: Mapping[str, object]) -> str:
    """The field an engine refusal of options is about: the option it names
    first (``"seats must be 4 or 2"``), or quotes (``"has no rule option 'x'"``)."""
    first = text.split(" ", 1)[0]
    if first in values:
        return f"options.{first}"
    quoted = sorted((text.find(repr(n)), n) for n in values if repr(n) in text)
    return f"options.{quoted[0][1]}" if quoted else "options"


def _truc_y_flou_options(msg: game_pb2.RuleOptions) -> RuleOptions:
    default = _DEFAULT_OPTIONS
    perique = _option_enum(
        _PERIQUE_FROM_PROTO,
        msg.perique_trick_rank,
        default.perique_trick_rank,
        "perique_trick_rank",
    )
    responder = _option_enum(_RESPONDER_FROM_PROTO, msg.responder, default.responder, "responder")
    cut = _option_enum(_CUT_FROM_PROTO, msg.cut, default.cut, "cut")
    try:
        return RuleOptions(
            perique_trick_rank=perique,
            play_out_all_tricks=msg.play_out_all_tricks,
            ace_value=msg.ace_value,
            responder=responder,
            cut=cut,
            target_score=msg.target_score or default.target_score,
            manches_to_win=msg.manches_to_win or default.manches_to_win,
        )
    except InvalidSetup as exc:
        text = str(exc)
        name = text.split(" ", 1)[0]
        where = f"options.{name}" if name in _OPTION_FIELDS else "options"
        raise InvalidArgument("BAD_REQUEST", f"{where}: {text}") from exc


@functools.lru_cache(maxsize=64)
def _options_proto(options: AnyOptions) -> game_pb2.RuleOptions:
    """options_to_proto, memoised for views (a table's options never change)."""
    return options_to_proto(options)


def options_to_proto(options: AnyOptions) -> game_pb2.RuleOptions:
    """Proto options with every value of the rule set explicit (never UNSPECIFIED
    or 0 for a default); the fields of other rule sets stay unset."""
    if isinstance(options, FamilyOptions):
        return game_pb2.RuleOptions(
            rule_set=_RULE_SET_TO_PROTO[options.rule_set],
            play_out_all_tricks=options.play_out_all_tricks,
            target_score=options.target_score,
            manches_to_win=options.manches_to_win,
            trick_order=(
                _TRICK_ORDER_TO_PROTO[options.trick_order]
                if options.trick_order
                else game_pb2.TRICK_ORDER_UNSPECIFIED
            ),
            seats=options.seats,
        )
    return game_pb2.RuleOptions(
        perique_trick_rank=_PERIQUE_TO_PROTO[options.perique_trick_rank],
        play_out_all_tricks=options.play_out_all_tricks,
        ace_value=options.ace_value,
        responder=_RESPONDER_TO_PROTO[options.responder],
        cut=_CUT_TO_PROTO[options.cut],
        target_score=options.target_score,
        manches_to_win=options.manches_to_win,
        rule_set=game_pb2.RULE_SET_TRUC_Y_FLOU,
        seats=6,
    )


def deal_from_proto(
    msg: game_pb2.Deal, field: str, seats: int = _TY_SEATS, pack: Pack = SPANISH
) -> tuple[tuple[Card, ...], ...]:
    """One hand of three cards per seat (``seats`` of them), cards of ``pack``;
    InvalidArgument BAD_REQUEST naming ``field`` otherwise (a card of the other
    pack included).

    Duplicate cards are left to the engine, which refuses such a deal.
    """
    hands = msg.hands
    if len(hands) != seats:
        raise InvalidArgument("BAD_REQUEST", f"{field}: a deal has {seats} hands, not {len(hands)}")
    result: list[tuple[Card, ...]] = []
    for i, hand in enumerate(hands):
        cards = hand.cards
        if len(cards) != _HAND_SIZE:
            raise InvalidArgument(
                "BAD_REQUEST",
                f"{field}.hands[{i}]: a hand has {_HAND_SIZE} cards, not {len(cards)}",
            )
        result.append(
            tuple(
                card_from_proto(c, f"{field}.hands[{i}].cards[{j}]", pack, strict=True)
                for j, c in enumerate(cards)
            )
        )
    return tuple(result)


# --- events ---


def _shown(shown: tuple[Shown, ...]) -> list[game_pb2.Shown]:
    cards = _CARDS
    return [
        game_pb2.Shown(
            seat=s.seat,
            value=s.value,
            has_declaration=s.has_declaration,
            cards=[cards[c] for c in s.cards],
        )
        for s in shown
    ]


def event_to_proto(event: Event, version: int) -> game_pb2.Event:
    """The proto message of an engine event; TypeError for an event it does not know."""
    Ev = game_pb2.Event  # noqa: N806 (a local alias of the message class)
    match event:
        case CardPlayed(seat=seat, card=card, trick=trick):
            return Ev(
                version=version,
                card_played=game_pb2.CardPlayed(seat=seat, card=_CARDS[card], trick=trick),
            )
        case Called(seat=seat, call=call):
            return Ev(version=version, called=game_pb2.Called(seat=seat, call=_CALL_TO_PROTO[call]))
        case TrickCompleted():
            return Ev(
                version=version,
                trick_completed=game_pb2.TrickCompleted(
                    trick=event.trick,
                    winner=team_to_proto(event.winner_team),
                    winning_seat=event.winning_seat,
                    next_leader=event.next_leader,
                ),
            )
        case PointsCredited():
            return Ev(
                version=version,
                points_credited=game_pb2.PointsCredited(
                    team=team_to_proto(event.team),
                    points=event.points,
                    reason=_REASON_TO_PROTO[event.reason],
                    scores=_score(event.scores),
                ),
            )
        case SignalSent(seat=seat, signal=signal):
            return Ev(
                version=version,
                signal_sent=game_pb2.SignalSent(seat=seat, signal=_SIGNAL_TO_PROTO[signal]),
            )
        case DirectiveSent(seat=seat, directive=directive):
            return Ev(
                version=version,
                directive_sent=game_pb2.DirectiveSent(
                    seat=seat, directive=_DIRECTIVE_TO_PROTO[directive]
                ),
            )
        case HandStarted():
            return Ev(
                version=version,
                hand_started=game_pb2.HandStarted(
                    hand_number=event.hand_number,
                    dealer=event.dealer,
                    eldest=event.eldest,
                    cutter=event.cutter,
                    manche=event.manche,
                    belle=event.belle,
                ),
            )
        case CardsDealt():
            return Ev(
                version=version,
                cards_dealt=game_pb2.CardsDealt(
                    seat=event.seat,
                    cards=[_CARDS[c] for c in event.cards],
                    embit=event.embit,
                    flor=event.flor,
                ),
            )
        case HandEnded():
            how = _HAND_END_TO_PROTO.get(event.how)
            if how is None:
                raise ValueError(f"HandEnded.how {event.how!r} has no proto value")
            return Ev(
                version=version,
                hand_ended=game_pb2.HandEnded(
                    hand_number=event.hand_number,
                    winner=team_to_proto(event.winner_team),
                    how=how,
                ),
            )
        case DeclarationSettled():
            contest = _CONTEST_TO_PROTO.get(event.contest)
            if contest is None:
                raise ValueError(f"DeclarationSettled.contest {event.contest!r} has no proto value")
            return Ev(
                version=version,
                declaration_settled=game_pb2.DeclarationSettled(
                    contest=contest,
                    team=team_to_proto(event.team),
                    points=event.points,
                    wins_manche=event.wins_manche,
                    shown=_shown(event.shown),
                ),
            )
        case StakeRaised(call=call, stake=stake):
            return Ev(
                version=version,
                stake_raised=game_pb2.StakeRaised(call=_CALL_TO_PROTO[call], stake=stake),
            )
        case FlorShowdown():
            return Ev(
                version=version,
                flor_showdown=game_pb2.FlorShowdown(
                    winner=team_to_proto(event.winner_team), shown=_shown(event.shown)
                ),
            )
        case EmbitVoided(team=team, points=points):
            return Ev(
                version=version,
                embit_voided=game_pb2.EmbitVoided(team=team_to_proto(team), points=points),
            )
        case DeckCut(seat=seat, position=position):
            return Ev(version=version, deck_cut=game_pb2.DeckCut(seat=seat, position=position))
        case MancheEnded():
            return Ev(
                version=version,
                manche_ended=game_pb2.MancheEnded(
                    winner=team_to_proto(event.winner_team),
                    scores=_score(event.scores),
                    manches=_score(event.manches),
                ),
            )
        case MatchEnded():
            return Ev(
                version=version,
                match_ended=game_pb2.MatchEnded(
                    winner=team_to_proto(event.winner_team), manches=_score(event.manches)
                ),
            )
        case DrawCard(seat=seat, card=card):
            return Ev(version=version, draw_card=game_pb2.DrawCard(seat=seat, card=_CARDS[card]))
        case DealerChosen(seat=seat, dealer=dealer):
            return Ev(
                version=version,
                dealer_chosen=game_pb2.DealerChosen(seat=_opt_seat(seat), dealer=dealer),
            )
        case DealsExhausted():
            return Ev(version=version, deals_exhausted=game_pb2.DealsExhausted())
        case TurnTimedOut(seat=seat, action=action):
            return Ev(
                version=version,
                turn_timed_out=game_pb2.TurnTimedOut(seat=seat, action=_action_message(action)),
            )
        case _:
            raise TypeError(f"no proto conversion for event {event!r}")


# --- the game view ---
#
# The view is built in place (scalars in the constructor, sub-messages through
# their fields and ``add()``): about 40% faster than building every sub-message
# on its own and letting the constructor copy it in.


def _fill_embit(target: game_pb2.EmbitContest, embit: EmbitContest) -> None:
    target.call = _CALL_TO_PROTO[embit.call]
    target.opener = embit.opener
    target.rest = embit.rest
    target.polled = embit.polled
    target.challenge = _opt_call(embit.challenge)
    if embit.challenger >= 0:
        target.challenger = embit.challenger
    target.raise_points = embit.raise_points
    target.answer = _opt_call(embit.answer)
    if embit.result is not None:
        _fill_credit(target.result, embit.result)
    target.credited = embit.credited


def _fill_flor(target: game_pb2.FlorExchange, flor: FlorExchange) -> None:
    target.declarer = flor.declarer
    target.polled = flor.polled
    target.challenge = _opt_call(flor.challenge)
    if flor.challenger >= 0:
        target.challenger = flor.challenger
    target.declarer_answer = _opt_call(flor.declarer_answer)
    target.challenger_answer = _opt_call(flor.challenger_answer)
    if flor.result is not None:
        _fill_credit(target.result, flor.result)
    target.credited = flor.credited


def _fill_credit(target: game_pb2.Credit, credit: Credit) -> None:
    target.team = team_to_proto(credit.team)
    target.points = credit.points
    target.wins_manche = credit.wins_manche


def _fill_plays(target: game_pb2.Trick, plays: Iterable[tuple[int, Card]]) -> None:
    add = target.plays.add
    cards = _CARDS
    for seat, card in plays:
        add(seat=seat, card=cards[card])


def _fill_tricks(msg: game_pb2.GameView, view: AnyView, seats: int) -> None:
    """The completed tricks of the hand and the trick in progress."""
    add_trick = msg.tricks.add
    for trick in view.tricks:
        leader = trick.leader
        _fill_plays(
            add_trick(
                leader=leader,
                winner=team_to_proto(trick.winner_team),
                winning_seat=trick.winning_seat,
            ),
            (((leader + i) % seats, c) for i, c in enumerate(trick.cards)),
        )
    current = msg.current_trick
    current.leader = view.leader
    _fill_plays(current, view.trick_cards)


def minimal_view_to_proto(view: AnyView, *, name: str, etag: str) -> game_pb2.GameView:
    """The RESPONSE_VIEW_MINIMAL subset of :func:`view_to_proto` (no events)."""
    msg = game_pb2.GameView(
        name=name,
        seat=view.seat,
        phase=_PHASE_TO_PROTO[view.phase],
        to_act=view.to_act,
        prompt=_PROMPT_TO_PROTO[view.prompt],
        finished=view.finished,
        winner=team_to_proto(view.winner),
        etag=etag,
    )
    score = msg.scores
    score.team_a, score.team_b = view.scores
    score = msg.manches
    score.team_a, score.team_b = view.manches
    return msg


def events_to_proto(events: Sequence[Event], version: int) -> list[game_pb2.Event]:
    return [event_to_proto(e, version) for e in events]


def watch_events_bytes(events: Sequence[Event], version: int) -> bytes:
    """``events`` of ``version`` as the serialized ``events`` field of a
    WatchGameResponse (merge it in with ``MergeFromString``). Each event is
    converted once for all the watchers of its version who may see it."""
    return b"".join([_field_bytes(2, _event_bytes(event, version)) for event in events])


def session_events_bytes(events: Sequence[Event], versions: Sequence[int]) -> bytes:
    """``events`` (the version of each in ``versions``) as the serialized
    ``events`` field of a PlayResponse, each converted once for all the
    sessions that may see it."""
    return b"".join(
        [_field_bytes(3, _event_bytes(e, v)) for e, v in zip(events, versions, strict=True)]
    )


@functools.lru_cache(maxsize=4096)
def _event_bytes(event: Event, version: int) -> bytes:
    # A pure function of equal (frozen) values: the cache can only hand the
    # bytes of an event to a watcher that was given that very event.
    return event_to_proto(event, version).SerializeToString()


def _varint(value: int) -> bytes:
    """A non-negative integer in the protobuf wire format's varint encoding."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field_bytes(number: int, data: bytes) -> bytes:
    """A length-delimited field (a message, bytes or a string) in the wire format."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def play_response_bytes(
    *,
    version: int,
    from_version: int,
    events: bytes,
    game: bytes,
    request_id: str,
) -> bytes:
    """A serialized PlayResponse of a new version, from its parts already
    serialized: ``events`` (:func:`session_events_bytes`) and ``game`` (a
    serialized GameView). Field by field, as the message would be serialized,
    without building it."""
    parts = [_varint(1 << 3) + _varint(version), _varint(2 << 3) + _varint(from_version)]
    parts.append(events)
    parts.append(_field_bytes(4, game))
    if request_id:
        parts.append(_field_bytes(5, request_id.encode()))
    return b"".join(parts)


def seat_view_bytes(public: bytes, view: AnyView) -> bytes:
    """The serialized GameView of :func:`seat_view_from_public`, without its events."""
    return public + _seat_fields(view)


def view_to_proto(
    view: AnyView,
    *,
    name: str,
    players: Sequence[str],
    etag: str,
    deadline_ms: int | None,
    event_versions: Sequence[int] = (),
    absent: Iterable[int] = (),
    display_names: Sequence[str] = (),
) -> game_pb2.GameView:
    """The proto message of a seat's (or a spectator's) view, of any rule set.

    ``players`` names the player of each seat ("" past its end); ``deadline_ms``
    is the turn deadline in milliseconds since the epoch; ``event_versions``
    gives the version of each of ``view.events`` (all 0 when empty); ``absent``
    the seats the house plays for (``SeatInfo.absent``); ``display_names`` what
    each seat's player is called (``SeatInfo.display_name``, "" past its end).
    """
    msg = public_view_to_proto(
        view,
        name=name,
        players=players,
        etag=etag,
        deadline_ms=deadline_ms,
        absent=absent,
        display_names=display_names,
    )
    msg.MergeFromString(_seat_fields(view))
    if view.events:
        msg.events.extend(_events_with_versions(view.events, event_versions))
    return msg


def seat_view_from_public(target: game_pb2.GameView, public: bytes, view: AnyView) -> None:
    """Fill the empty ``target`` with ``view`` as :func:`view_to_proto` would,
    but without its events, from ``public``: the serialized
    :func:`public_view_to_proto` of any view of the same game at the same
    version (the watchers of one version share it)."""
    target.MergeFromString(public + _seat_fields(view))


def public_view_to_proto(
    view: AnyView,
    *,
    name: str,
    players: Sequence[str],
    etag: str,
    deadline_ms: int | None,
    absent: Iterable[int] = (),
    display_names: Sequence[str] = (),
) -> game_pb2.GameView:
    """The part of :func:`view_to_proto` that is the same for every seat: all
    but ``seat``, ``legal_actions``, ``legal_moves``, ``legal_messages``,
    ``hand``, ``dealt``, ``embit_value``, ``flor_value``, ``signals`` (the
    viewer's team's), ``instruction`` (the viewer's) and ``events``."""
    names = _seat_names(tuple(players), tuple(display_names))
    if isinstance(view, FamilyView):
        msg = _family_public_view(view, name=name, names=names, etag=etag)
    else:
        msg = _truc_y_flou_public_view(view, name=name, names=names, etag=etag)
    msg.options.CopyFrom(_options_proto(view.options))
    if deadline_ms is not None:
        seconds, millis = divmod(deadline_ms, 1000)
        deadline = msg.deadline
        deadline.seconds = seconds
        deadline.nanos = millis * 1_000_000
    seats = msg.seats
    for seat in absent:
        seats[seat].absent = True
    return msg


@functools.lru_cache(maxsize=4096)
def _seat_names(
    players: tuple[str, ...], display_names: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """(player, display name) of each seat of the largest table, "" past the
    ends (a game's never change: made once per game while it is played)."""
    n_players, n_names = len(players), len(display_names)
    return tuple(
        (
            players[seat] if seat < n_players else "",
            display_names[seat] if seat < n_names else "",
        )
        for seat in range(_MAX_SEATS)
    )


def _fill_common(msg: game_pb2.GameView, view: AnyView) -> None:
    """The scores, manches and history: the same in every rule set."""
    score = msg.scores
    score.team_a, score.team_b = view.scores
    score = msg.manches
    score.team_a, score.team_b = view.manches
    add_result = msg.history.add
    for winner, score_a, score_b in view.history:
        score = add_result(winner=team_to_proto(winner)).scores
        score.team_a = score_a
        score.team_b = score_b


def _truc_y_flou_public_view(
    view: GameView, *, name: str, names: Sequence[tuple[str, str]], etag: str
) -> game_pb2.GameView:
    cards = _CARDS
    decided = view.decided
    msg = game_pb2.GameView(
        name=name,
        phase=_PHASE_TO_PROTO[view.phase],
        to_act=view.to_act,
        prompt=_PROMPT_TO_PROTO[view.prompt],
        espintou=_ESPINTOU[view.espintou],
        belle=view.belle,
        finished=view.finished,
        winner=team_to_proto(view.winner),
        hand_number=view.hand_number,
        hands_played=view.hands_played,
        dealer=view.dealer,
        eldest=view.eldest,
        stake=view.stake,
        stake_call=_LADDER_TO_PROTO[view.stake_level],
        last_raiser=team_to_proto(view.last_raiser),
        hand_decided=decided != UNDECIDED,
        hand_winner=team_to_proto(decided),
        etag=etag,
        rule_set=_TRUC_Y_FLOU,
        seat_count=_TY_SEATS,
    )
    score = msg.scores  # as _fill_common, inline on Truc y Flou's (the hottest) path
    score.team_a, score.team_b = view.scores
    score = msg.manches
    score.team_a, score.team_b = view.manches
    if view.history:
        add_result = msg.history.add
        for winner, score_a, score_b in view.history:
            score = add_result(winner=team_to_proto(winner)).scores
            score.team_a = score_a
            score.team_b = score_b
    if view.draws:
        msg.draws.extend([cards[c] for pair in view.draws for c in pair])

    add_seat = msg.seats.add
    hand_sizes = view.hand_sizes
    shown = view.shown
    for seat in range(_TY_SEATS):
        player, display_name = names[seat]
        info = add_seat(
            seat=seat,
            team=_TEAMS[seat % 2],
            captain=seat in _CAPTAINS,
            player=player,
            hand_size=hand_sizes[seat],
            display_name=display_name,
        )
        if shown[seat]:
            info.shown.extend([cards[c] for c in shown[seat]])

    _fill_tricks(msg, view, _TY_SEATS)

    truc_call = view.truc_call
    if truc_call is not None:
        call = msg.truc_call
        call.call = _LADDER_TO_PROTO[truc_call.rung]
        call.caller = truc_call.caller
        call.answerer = truc_call.answerer
    if view.embit is not None:
        _fill_embit(msg.embit, view.embit)
    add_flor = msg.flors.add
    for flor in view.flors:
        _fill_flor(add_flor(), flor)
    return msg


def _family_public_view(
    view: FamilyView, *, name: str, names: Sequence[tuple[str, str]], etag: str
) -> game_pb2.GameView:
    decided = view.decided
    seats = view.seat_count
    msg = game_pb2.GameView(
        name=name,
        phase=_PHASE_TO_PROTO[view.phase],
        to_act=view.to_act,
        prompt=_PROMPT_TO_PROTO[view.prompt],
        belle=view.belle,
        finished=view.finished,
        winner=team_to_proto(view.winner),
        hand_number=view.hand_number,
        hands_played=view.hands_played,
        dealer=view.dealer,
        eldest=view.eldest,
        stake=view.stake,
        stake_call=_opt_call(view.stake_call),
        hand_decided=decided != UNDECIDED,
        hand_winner=team_to_proto(decided),
        etag=etag,
        rule_set=_RULE_SET_TO_PROTO[view.rule_set],
        seat_count=seats,
        governors=view.governors,
        mon_reste=view.mon_reste,
        redeal_proposed=view.redeal_proposed,
    )
    _fill_common(msg, view)

    add_seat = msg.seats.add
    hand_sizes = view.hand_sizes
    governors = view.governors
    for seat in range(seats):
        player, display_name = names[seat]
        add_seat(
            seat=seat,
            team=_TEAMS[seat % 2],
            player=player,
            hand_size=hand_sizes[seat],
            governor=seat in governors,
            display_name=display_name,
        )

    _fill_tricks(msg, view, seats)

    pending = view.pending
    if pending is not None:
        call = msg.truc_call
        call.call = _CALL_TO_PROTO[pending.call]
        call.caller = pending.caller
        call.answerer = pending.answerer
    return msg


_TRUC_Y_FLOU: Final = game_pb2.RULE_SET_TRUC_Y_FLOU
_ESPINTOU: Final = {
    (a, b): tuple(team for team, flag in zip(_TEAMS, (a, b), strict=True) if flag)
    for a in (False, True)
    for b in (False, True)
}
"""GameView.espintou of each pair of Truc y Flou's flags (§2.3)."""


# The fields only the viewer's seat sees, serialized one value at a time, once:
# a seat's part of its view is then the concatenation of its values' bytes
# (a message's serialized fields concatenated parse as that message).


def _view_bytes(**fields: object) -> bytes:
    return game_pb2.GameView(**fields).SerializeToString()  # type: ignore[arg-type]


_SEAT_BYTES: Final = tuple(_view_bytes(seat=seat) for seat in range(_MAX_SEATS))
_HAND_BYTES: Final = tuple(_view_bytes(hand=[card]) for card in _CARDS)
_DEALT_BYTES: Final = tuple(_view_bytes(dealt=[card]) for card in _CARDS)


def _legal_bytes(action: Action, msg: game_pb2.Action) -> tuple[bytes, bytes, bool]:
    """``action`` as a ``legal_actions`` entry, as a ``legal_moves`` or
    ``legal_messages`` entry (a signal or directive is a message, anything
    else a move), and whether it is a message."""
    message = isinstance(action, SendSignal | SendDirective)
    split = _view_bytes(legal_messages=[msg]) if message else _view_bytes(legal_moves=[msg])
    return _view_bytes(legal_actions=[msg]), split, message


_LEGAL_ACTION_BYTES: Final = {
    action: _legal_bytes(action, msg) for action, msg in _ACTION_MESSAGES.items()
}
_SIGNAL_BYTES: Final = {
    (seat, signal): _view_bytes(signals=[game_pb2.TeamMessage(seat=seat, signal=number)])
    for seat in range(_MAX_SEATS)
    for signal, number in _SIGNAL_TO_PROTO.items()
}
_DIRECTIVE_BYTES: Final = {
    (seat, directive): _view_bytes(signals=[game_pb2.TeamMessage(seat=seat, directive=number)])
    for seat in range(_MAX_SEATS)
    for directive, number in _DIRECTIVE_TO_PROTO.items()
}
_INSTRUCTION_BYTES: Final = {
    directive: _view_bytes(instruction=number) for directive, number in _DIRECTIVE_TO_PROTO.items()
}


@functools.lru_cache(maxsize=256)
def _value_bytes(field: str, value: int) -> bytes:
    return _view_bytes(**{field: value})


def _seat_fields(view: AnyView) -> bytes:
    """The fields of ``view`` that :func:`public_view_to_proto` leaves out, but
    its events, serialized: ``seat``, ``legal_actions``, ``legal_moves`` (the
    moves, only when the viewer is to act), ``legal_messages`` (the signals and
    directives), ``hand``, ``dealt``, ``signals``, and Truc y Flou's
    ``embit_value`` and ``flor_value`` or the other rule sets' ``instruction``."""
    parts: list[bytes] = []
    seat = view.seat
    if seat is not None:
        parts.append(_SEAT_BYTES[seat])
    to_move = seat is not None and seat == view.to_act
    legal = _LEGAL_ACTION_BYTES
    for action in view.legal_actions:
        found = legal.get(action)  # equal values hash alike: PlayCard(c) is found
        both, split, is_message = (
            found if found is not None else _legal_bytes(action, _action_message(action))
        )
        parts.append(both)
        if to_move or is_message:
            parts.append(split)
    hand = _HAND_BYTES
    parts += [hand[card] for card in view.hand]
    dealt = _DEALT_BYTES
    parts += [dealt[card] for card in view.dealt]
    if isinstance(view, FamilyView):
        if view.instruction is not None:
            parts.append(_INSTRUCTION_BYTES[view.instruction])
    else:
        if view.embit_value is not None:
            parts.append(_value_bytes("embit_value", view.embit_value))
        if view.flor_value is not None:
            parts.append(_value_bytes("flor_value", view.flor_value))
    for seat, message in view.signals:
        # Not one dict keyed by both enums: Directive.TRUC == Call.TRUC == "TRUC".
        if isinstance(message, Signal):
            parts.append(_SIGNAL_BYTES[seat, message])
        else:
            parts.append(_DIRECTIVE_BYTES[seat, message])
    return b"".join(parts)


def _events_with_versions(
    events: Sequence[Event], event_versions: Sequence[int]
) -> list[game_pb2.Event]:
    if event_versions and len(event_versions) != len(events):
        raise ValueError(f"{len(event_versions)} event versions for {len(events)} events")
    versions: Iterable[int] = event_versions or (0,) * len(events)
    return [event_to_proto(e, v) for e, v in zip(events, versions, strict=True)]
