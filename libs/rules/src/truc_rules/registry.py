"""Every rule set of the family behind one set of functions.

The service, the clients and the scenario runner hold a state without caring
which game it is; these functions send each call to the state's own rule set
(Truc y Flou, or the variants.md engine of :mod:`truc_rules.family`). A stored
state says its rule set in its first bytes, so :func:`decode_state` needs
nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from truc_rules import catalan_truc, french_truc, partnership_truc, sackson_truc, truc_y_flou
from truc_rules.actions import Action
from truc_rules.cards import SPANISH, Card, Deck
from truc_rules.errors import InvalidSetup
from truc_rules.events import Event
from truc_rules.family import FamilyOptions, FamilyRules, FamilyState, FamilyView
from truc_rules.family import apply_action as _family_apply
from truc_rules.family import default_action as _family_default
from truc_rules.family import encode_state as _family_encode
from truc_rules.family import legal_actions as _family_legal
from truc_rules.family import view_for as _family_view
from truc_rules.family.codec import MAGIC as _FAMILY_MAGIC
from truc_rules.family.codec import RULE_SET_NUMBERS
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou import GameState, GameView, RuleOptions
from truc_rules.truc_y_flou.codec import MAGIC as _TRUC_Y_FLOU_MAGIC
from truc_rules.truc_y_flou.defaults import default_action as _ty_default

__all__ = [
    "FAMILY",
    "RULE_SETS",
    "AnyOptions",
    "AnyState",
    "AnyTransition",
    "AnyView",
    "apply_action",
    "deck_of",
    "decode_state",
    "default_action",
    "default_options",
    "encode_state",
    "legal_actions",
    "new_game",
    "options_from_mapping",
    "options_to_mapping",
    "rule_set_of",
    "seat_count",
    "team_size",
    "view_for",
]

AnyState = GameState | FamilyState
AnyOptions = RuleOptions | FamilyOptions
AnyView = GameView | FamilyView
AnyTransition = truc_y_flou.Transition | french_truc.Transition

FAMILY: Final[Mapping[RuleSet, FamilyRules]] = {
    RuleSet.FRENCH_TRUC: french_truc.RULES,
    RuleSet.SACKSON_TRUC: sackson_truc.RULES,
    RuleSet.PARTNERSHIP_TRUC: partnership_truc.RULES,
    RuleSet.CATALAN_TRUC: catalan_truc.RULES,
}
"""The variants.md rule sets by name."""
RULE_SETS: Final = tuple(RuleSet)
"""Every rule set, Truc y Flou (the default) first."""
_BY_NUMBER: Final = {number: FAMILY[rule_set] for rule_set, number in RULE_SET_NUMBERS.items()}


def rule_set_of(item: AnyState | AnyOptions | AnyView) -> RuleSet:
    """The rule set of a state, a view or options."""
    if isinstance(item, GameState | RuleOptions | GameView):
        return RuleSet.TRUC_Y_FLOU
    if isinstance(item, FamilyView):
        return item.rule_set
    options = item.options if isinstance(item, FamilyState) else item
    return options.rule_set


def seat_count(item: AnyState | AnyOptions) -> int:
    """Seats at the table: 6, 4 or 2."""
    if isinstance(item, GameState | RuleOptions):
        return 6
    options = item.options if isinstance(item, FamilyState) else item
    return options.seats


def team_size(item: AnyState | AnyOptions) -> int:
    """Players per team: 3, 2 or 1."""
    return seat_count(item) // 2


def deck_of(rule_set: RuleSet) -> Deck:
    """The pack the rule set plays with."""
    if rule_set == RuleSet.TRUC_Y_FLOU:
        return SPANISH
    return FAMILY[rule_set].variant.deck


def default_options(rule_set: RuleSet) -> AnyOptions:
    """The rule set's options with every default."""
    if rule_set == RuleSet.TRUC_Y_FLOU:
        return RuleOptions()
    return FAMILY[rule_set].options()


def options_from_mapping(rule_set: RuleSet, values: Mapping[str, object]) -> AnyOptions:
    """Options of ``rule_set`` from JSON-like values; unknown ones are refused."""
    if rule_set == RuleSet.TRUC_Y_FLOU:
        return RuleOptions.from_mapping(values)
    return FAMILY[rule_set].options_from_mapping(values)


def options_to_mapping(options: AnyOptions) -> dict[str, object]:
    """The options as JSON-like values (only those of their rule set)."""
    if isinstance(options, RuleOptions):
        return options.to_mapping()
    return FAMILY[options.rule_set].variant.to_mapping(options)


def new_game(
    options: AnyOptions,
    *,
    seed: int | None = None,
    deals: Sequence[tuple[tuple[Card, ...], ...]] | None = None,
    dealer: int | None = None,
    draws: Sequence[tuple[Card, Card]] | None = None,
    scores: tuple[int, int] = (0, 0),
    manches: tuple[int, int] = (0, 0),
) -> AnyTransition:
    """Start a match of the options' rule set. ``draws`` are Truc y Flou's only."""
    if isinstance(options, RuleOptions):
        return truc_y_flou.new_game(
            options,
            seed=seed,
            deals=deals,
            dealer=dealer,
            draws=draws,
            scores=scores,
            manches=manches,
        )
    if draws is not None:
        raise InvalidSetup(f"{options.rule_set} has no draw for the first deal")
    return FAMILY[options.rule_set].new_game(
        options, seed=seed, deals=deals, dealer=dealer, scores=scores, manches=manches
    )


def legal_actions(state: AnyState, seat: int) -> tuple[Action, ...]:
    if isinstance(state, GameState):
        return truc_y_flou.legal_actions(state, seat)
    return _family_legal(state, seat)


def apply_action(state: AnyState, seat: int, action: Action) -> AnyTransition:
    """Apply ``action``; IllegalAction (nothing changed) when the rules refuse it."""
    if isinstance(state, GameState):
        return truc_y_flou.apply_action(state, seat, action)
    return _family_apply(state, seat, action)


def view_for(state: AnyState, seat: int | None, events: Iterable[Event] = ()) -> AnyView:
    """The one per-seat view function of each rule set."""
    if isinstance(state, GameState):
        return truc_y_flou.view_for(state, seat, events)
    return _family_view(state, seat, events)


def default_action(state: AnyState) -> Action | None:
    """What a late seat does (a turn deadline), or None when nobody acts."""
    if isinstance(state, GameState):
        return _ty_default(state)
    return _family_default(state)


def encode_state(state: AnyState) -> bytes:
    if isinstance(state, GameState):
        return truc_y_flou.encode_state(state)
    return _family_encode(state)


def decode_state(data: bytes) -> AnyState:
    """A stored state of any rule set (its first bytes say which)."""
    if data[:1] == bytes((_TRUC_Y_FLOU_MAGIC,)):
        return truc_y_flou.decode_state(data)
    if data[:1] == bytes((_FAMILY_MAGIC,)) and len(data) > 2 and data[2] in _BY_NUMBER:
        return _BY_NUMBER[data[2]].decode_state(data)
    raise InvalidSetup("not a stored game of any rule set")
