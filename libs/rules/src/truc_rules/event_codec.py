"""How every rule set's events are stored: compact JSON.

Events are stored (in the game's event log) as a list with one entry per
event, each ``[type index, field values...]``; cards are their numbers (0-71:
both packs), enums their names, nested records the same way. Type indexes are
positions in _EVENT_TYPES: append new types at the end, never reorder. The
format is the one Truc y Flou's games have always been stored with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from enum import StrEnum
from types import UnionType
from typing import Any, Final, Union, get_args, get_origin, get_type_hints

from truc_rules import actions, events
from truc_rules.cards import Card
from truc_rules.errors import InvalidSetup
from truc_rules.events import Event

__all__ = ["decode_events", "encode_events"]

_CARDS: Final = tuple(Card)


def _card(value: Any) -> Card:
    if type(value) is not int or not 0 <= value < len(_CARDS):
        raise ValueError(f"not a card number: {value!r}")
    return _CARDS[value]


_EVENT_TYPES: Final[tuple[type, ...]] = (
    events.DrawCard,
    events.DealerChosen,
    events.HandStarted,
    events.DeckCut,
    events.CardsDealt,
    events.DealsExhausted,
    events.Called,
    events.Shown,
    events.DeclarationSettled,
    events.FlorShowdown,
    events.EmbitVoided,
    events.StakeRaised,
    events.CardPlayed,
    events.TrickCompleted,
    events.PointsCredited,
    events.HandEnded,
    events.MancheEnded,
    events.MatchEnded,
    events.SignalSent,
    events.DirectiveSent,
    events.TurnTimedOut,
    actions.PlayCard,
    actions.MakeCall,
    actions.ChooseDealer,
    actions.CutDeck,
    actions.SendSignal,
    actions.SendDirective,
)
_TYPE_INDEX: Final = {t: i for i, t in enumerate(_EVENT_TYPES)}

_Decoder = Callable[[Any], Any]


def _decoder_for(hint: Any) -> _Decoder:
    """A function turning the JSON form of a value of type ``hint`` back into it."""
    origin = get_origin(hint)
    args = get_args(hint)
    if hint is Card:
        return _card
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return hint
    if hint in (int, str, bool):
        return lambda v: v
    if origin in (UnionType, Union):
        if type(None) in args:
            (inner,) = [a for a in args if a is not type(None)]
            decode = _decoder_for(inner)
            return lambda v: None if v is None else decode(v)
        return _decode_record  # a union of records (Action): the type index says which
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder_for(args[0])
            return lambda v: tuple(item(x) for x in v)
        items = [_decoder_for(a) for a in args]
        return lambda v: tuple(d(x) for d, x in zip(items, v, strict=True))
    if is_dataclass(hint):
        return _decode_record
    raise TypeError(f"no decoder for {hint!r}")


def _decode_record(value: Any) -> Any:
    kind = _EVENT_TYPES[value[0]]
    decoders = _FIELD_DECODERS[kind]
    if len(value) != len(decoders) + 1:
        raise ValueError(f"{kind.__name__} needs {len(decoders)} fields")
    return kind(*(d(v) for d, v in zip(decoders, value[1:], strict=True)))


_FIELD_DECODERS: Final[dict[type, tuple[_Decoder, ...]]] = {}
for _kind in _EVENT_TYPES:
    _hints = get_type_hints(_kind)
    _FIELD_DECODERS[_kind] = tuple(_decoder_for(_hints[f.name]) for f in fields(_kind))
_FIELD_NAMES: Final = {kind: tuple(f.name for f in fields(kind)) for kind in _EVENT_TYPES}


def _plain(value: Any) -> Any:
    """``value`` with every record turned into ``[type index, fields...]``.

    Cards (int enums), enum names (str enums), ints, strings, None and tuples are
    left as they are: ``json`` writes them as numbers, strings and lists.
    """
    kind = type(value)
    names = _FIELD_NAMES.get(kind)
    if names is not None:
        return [_TYPE_INDEX[kind], *[_plain(getattr(value, n)) for n in names]]
    if kind is tuple and value and type(value[0]) in _FIELD_NAMES:
        return [_plain(v) for v in value]
    return value


def encode_events(items: Sequence[Event]) -> bytes:
    """Events as compact JSON bytes (see the comment above)."""
    return json.dumps([_plain(e) for e in items], separators=(",", ":")).encode()


def decode_events(data: bytes) -> tuple[Event, ...]:
    """The events encoded by :func:`encode_events`; InvalidSetup if ``data`` is not that."""
    try:
        raw = json.loads(data)
        return tuple(_decode_record(item) for item in raw)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise InvalidSetup(f"corrupt event log entry: {exc}") from None
