"""Scenario files (shared/spec/scenarios.md): the JSON format, read with pydantic.

:func:`parse_scenario` validates a scenario document and builds the typed
:class:`~truc_rules.scenario.Scenario` that the runner core of the rules library
plays (:func:`run_scenario` here does both). Every error names the field at
fault in the notation of the file (``start.scores``, ``deals[0][2][1]``,
``actions[3].seat``) and is raised as a :class:`~truc_rules.scenario.ScenarioError`.

What the format checks, and what it leaves to the engine:

* ``ruleset`` (variants.md V7; absent: ``truc_y_flou``), the shape and the JSON
  types of every field (a deal is one hand per seat of the rule set's table, a
  hand three cards), card notation read in the rule set's pack
  (:meth:`truc_rules.cards.Deck.read`: another pack's card is valid text, which
  the engine refuses as not in hand), the names of calls, signals, directives
  and refusal reasons (the engine's enums), rule options (each checked by the
  rule set's own options, :func:`truc_rules.registry.options_from_mapping`,
  the one home of their names and bounds), and the result fields ``expect``
  may name;
* whether the game can be set up (no card twice, scores below the target,
  the draws) is the engine's judgement (:func:`truc_rules.new_game`); the
  runner core (:func:`truc_rules.scenario.initial_state`) names the field the
  engine refused.

Keys the format does not know are ignored at the top level, in ``start`` and
in actions (a ``"comment"``, or a field of a later version); in ``options``
and ``expect``, and inside expected values, they are errors (an unknown rule
option, or an expectation that could never hold).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Annotated, Any, Final, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from truc_rules import (
    Action,
    Call,
    Card,
    ChooseDealer,
    Directive,
    InvalidSetup,
    MakeCall,
    PlayCard,
    Reason,
    SendDirective,
    SendSignal,
    Signal,
)
from truc_rules.cards import Deck
from truc_rules.registry import (
    deck_of,
    default_options,
    options_from_mapping,
    options_to_mapping,
    seat_count,
)
from truc_rules.rule_set import RuleSet
from truc_rules.scenario import (
    RESULT_FIELDS,
    Scenario,
    ScenarioAction,
    ScenarioError,
    ScenarioRun,
    ScenarioSetup,
)
from truc_rules.scenario import run_scenario as run_parsed
from truc_rules.truc_y_flou.constants import HAND_SIZE, TEAM_NAMES

from .validation import describe, json_text

__all__ = [
    "ScenarioError",
    "ScenarioFile",
    "parse_action",
    "parse_scenario",
    "run_scenario",
]

_E = TypeVar("_E", bound=StrEnum)

# --------------------------------------------------------------------------- values


def _card(value: object, info: ValidationInfo) -> Card:
    """A card in the notation of the scenario's pack (the context's ``deck``)."""
    deck: Deck = (info.context or {}).get("deck", deck_of(RuleSet.TRUC_Y_FLOU))
    example = str(deck.cards[6])
    if not isinstance(value, str):
        raise ValueError(f'a card is written like "{example}", not {json_text(value)}')
    card = deck.read(value)
    if card is None:
        raise ValueError(
            f"not a card: {value!r} (expected rank {deck.rank_text} then the suit, "
            f"like {example!r})"
        )
    return card


def _deal_size(value: object, info: ValidationInfo) -> object:
    """A deal is one hand per seat of the scenario's table (the context's ``seats``)."""
    seats: int = (info.context or {}).get("seats", 6)
    if isinstance(value, list) and len(value) != seats:
        raise ValueError(f"a deal is {seats} hands (seat 0 to {seats - 1}), not {len(value)}")
    return value


def _member(enum: type[_E], what: str, among: str = "") -> Callable[[object], _E]:
    """A value of one of the engine's enums, by its name in the file."""
    among = among or "one of " + ", ".join(m.value for m in enum)

    def check(value: object) -> _E:
        if isinstance(value, str) and value in enum.__members__.values():
            return enum(value)
        raise ValueError(f"{json_text(value)} is not a {what} ({among})")

    return check


def _seat_number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a seat number, not {json_text(value)}")
    return value


def _team(value: object) -> str:
    if value not in TEAM_NAMES:
        raise ValueError(
            f"a team is {' or '.join(map(json_text, TEAM_NAMES))}, not {json_text(value)}"
        )
    assert isinstance(value, str)
    return value


def _length(count: int, what: str) -> Callable[[object], object]:
    """A list of ``count`` items, checked before its items (a wrong shape says most)."""

    def check(value: object) -> object:
        if isinstance(value, list) and len(value) != count:
            raise ValueError(f"{what}, not {len(value)}")
        return value

    return check


def _object_or_null(value: object) -> object:
    """``options``, ``start`` and ``expect`` may be ``null``: the same as ``{}``."""
    return {} if value is None else value


CardField = Annotated[Card, PlainValidator(_card)]
Hand = Annotated[
    list[CardField], BeforeValidator(_length(HAND_SIZE, f"a hand is {HAND_SIZE} cards"))
]
Deal = Annotated[list[Hand], BeforeValidator(_deal_size)]
ReasonField = Annotated[Reason, PlainValidator(_member(Reason, "refusal reason"))]
Pair = tuple[StrictInt, StrictInt]

# --------------------------------------------------------------------------- options


def _rule_set(value: object) -> RuleSet:
    names = ", ".join(r.value for r in RuleSet)
    if isinstance(value, str) and value in RuleSet.__members__.values():
        return RuleSet(value)
    raise ValueError(f"{json_text(value)} is not a rule set (one of {names})")


def _context(doc: Mapping[str, Any]) -> dict[str, object]:
    """The pack and the table size the rest of the file is read with."""
    try:
        rule_set = _rule_set(doc.get("ruleset", RuleSet.TRUC_Y_FLOU.value))
    except ValueError:
        rule_set = RuleSet.TRUC_Y_FLOU
    seats = seat_count(default_options(rule_set))
    options = doc.get("options")
    if isinstance(options, Mapping):
        with contextlib.suppress(KeyError, InvalidSetup):
            seats = seat_count(options_from_mapping(rule_set, {"seats": options["seats"]}))
    return {"rule_set": rule_set, "deck": deck_of(rule_set), "seats": seats}


def _options(rule_set: RuleSet, values: Mapping[str, Any]) -> Any:
    """The rule set's options; ScenarioError naming the option at fault."""
    known = options_to_mapping(default_options(rule_set))
    for name, value in values.items():
        if name not in known:
            raise ScenarioError(
                f"options.{name}",
                f"unknown rule option of {rule_set} (known: {', '.join(known)})",
            )
        try:
            options_from_mapping(rule_set, {name: value})
        except InvalidSetup as exc:
            raise ScenarioError(f"options.{name}", str(exc)) from None
    try:
        return options_from_mapping(rule_set, values)
    except InvalidSetup as exc:
        raise ScenarioError("options", str(exc)) from None


# --------------------------------------------------------------------------- start, actions


class StartFile(BaseModel):
    """``start``: the dealer of the first hand (or the captains' draws), the start scores."""

    model_config = ConfigDict(extra="ignore")

    dealer: StrictInt | None = None
    draw: list[tuple[CardField, CardField]] = Field(default_factory=list)
    """One (team A's card, team B's card) pair per draw (§2.4); absent: no draw."""
    scores: Pair = (0, 0)
    manches: Pair = (0, 0)

    @model_validator(mode="after")
    def _dealer_or_draw(self, info: ValidationInfo) -> StartFile:
        family = (info.context or {}).get("rule_set", RuleSet.TRUC_Y_FLOU) != RuleSet.TRUC_Y_FLOU
        if family and self.dealer is None:
            self.dealer = 0  # variants.md V6: seat 0 when start.dealer is absent
        if self.dealer is None and "draw" not in self.model_fields_set:
            raise ValueError("give the first dealer (start.dealer) or the draw (start.draw)")
        return self

    def draws(self) -> tuple[tuple[Card, Card], ...] | None:
        return tuple(self.draw) if "draw" in self.model_fields_set else None


_CALLS: Final = "the upper-case names of rules.md and variants.md, EMBIDE to REFUSE"
_KINDS: Final = ("play", "call", "choose_dealer", "signal", "directive")


class ActionFile(BaseModel):
    """One entry of ``actions``: ``{"seat": s, KIND: value, "rejected"?: REASON}``."""

    model_config = ConfigDict(extra="ignore")

    seat: StrictInt
    play: Annotated[Card | None, PlainValidator(_card)] = None
    call: Annotated[Call | None, PlainValidator(_member(Call, "call", _CALLS))] = None
    choose_dealer: Annotated[int | None, PlainValidator(_seat_number)] = None
    signal: Annotated[Signal | None, PlainValidator(_member(Signal, "signal"))] = None
    directive: Annotated[Directive | None, PlainValidator(_member(Directive, "directive"))] = None
    rejected: ReasonField | None = None
    """The reason the action must be refused with; absent or null: it must be accepted."""

    @model_validator(mode="after")
    def _one_kind(self) -> ActionFile:
        if sum(kind in self.model_fields_set for kind in _KINDS) != 1:
            raise ValueError(f"give exactly one of {', '.join(_KINDS)}")
        return self

    def to_action(self) -> ScenarioAction:
        action: Action
        if self.play is not None:
            action = PlayCard(self.play)
        elif self.call is not None:
            action = MakeCall(self.call)
        elif self.choose_dealer is not None:
            action = ChooseDealer(self.choose_dealer)
        elif self.signal is not None:
            action = SendSignal(self.signal)
        else:
            assert self.directive is not None
            action = SendDirective(self.directive)
        return ScenarioAction(self.seat, action, self.rejected)


# --------------------------------------------------------------------------- expect


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpectedManche(_Strict):
    winner: Annotated[str, PlainValidator(_team)]
    scores: Pair


class ExpectedRejection(_Strict):
    index: StrictInt
    reason: ReasonField


class ExpectFile(_Strict):
    """``expect``: any subset of the result fields (scenarios.md), each of its type."""

    name: StrictStr = ""
    scores: Pair = (0, 0)
    manches: Pair = (0, 0)
    history: list[ExpectedManche] = Field(default_factory=list)
    hands_played: StrictInt = 0
    to_act: StrictInt | None = None
    finished: StrictBool = False
    winner: Annotated[str | None, PlainValidator(lambda v: None if v is None else _team(v))] = None
    rejected: list[ExpectedRejection] = Field(default_factory=list)


assert tuple(ExpectFile.model_fields) == RESULT_FIELDS, "expect must name the result fields"

# --------------------------------------------------------------------------- the file


class ScenarioFile(BaseModel):
    """A scenario file."""

    model_config = ConfigDict(extra="ignore")

    name: StrictStr = ""
    ruleset: Annotated[RuleSet, PlainValidator(_rule_set)] = RuleSet.TRUC_Y_FLOU
    options: Annotated[dict[StrictStr, Any], BeforeValidator(_object_or_null)] = Field(
        default_factory=dict, validate_default=True
    )
    start: Annotated[StartFile, BeforeValidator(_object_or_null)] = Field(
        default_factory=dict, validate_default=True
    )
    deals: list[Deal]
    """The hands of each successive hand, one per seat, seat 0 first."""
    actions: list[ActionFile] = Field(default_factory=list)
    expect: Annotated[ExpectFile, BeforeValidator(_object_or_null)] = Field(
        default_factory=dict, validate_default=True
    )

    def to_scenario(self, expect: Mapping[str, Any]) -> Scenario:
        """The typed scenario; ``expect`` is the file's raw ``expect`` (compared as written)."""
        setup = ScenarioSetup(
            options=_options(self.ruleset, self.options),
            deals=tuple(tuple(tuple(hand) for hand in deal) for deal in self.deals),
            dealer=self.start.dealer,
            draws=self.start.draws(),
            scores=self.start.scores,
            manches=self.start.manches,
        )
        return Scenario(
            name=self.name,
            setup=setup,
            actions=tuple(a.to_action() for a in self.actions),
            expect=tuple(expect.items()),
        )


# --------------------------------------------------------------------------- errors


_UNKNOWN: Final = {
    "expect": f"not a result field (one of {', '.join(RESULT_FIELDS)})",
}
"""What an unknown key means, where unknown keys are errors."""


def scenario_error(exc: ValidationError, prefix: tuple[int | str, ...] = ()) -> ScenarioError:
    """A pydantic validation error as a ScenarioError naming each field at fault."""
    return ScenarioError(*describe(exc, prefix, unknown=_UNKNOWN))


# --------------------------------------------------------------------------- entry points


def parse_scenario(doc: object) -> Scenario:
    """Validate a scenario document (parsed JSON); ScenarioError naming the field."""
    if not isinstance(doc, Mapping):
        raise ScenarioError("", "a scenario is a JSON object")
    try:
        context = _context(doc)
        options = doc.get("options")
        known_rule_set = doc.get("ruleset", RuleSet.TRUC_Y_FLOU.value) in set(RuleSet)
        if (
            known_rule_set
            and isinstance(options, Mapping)
            and all(isinstance(k, str) for k in options)
        ):
            # The options first: they say how many hands a deal has.
            _options(context["rule_set"], options)  # type: ignore[arg-type]
        parsed = ScenarioFile.model_validate(doc, context=context)
    except ValidationError as exc:
        raise scenario_error(exc) from None
    return parsed.to_scenario(doc.get("expect") or {})


def parse_action(
    raw: object, index: int, rule_set: RuleSet = RuleSet.TRUC_Y_FLOU
) -> ScenarioAction:
    """Entry ``index`` of a scenario's ``actions`` (cards read in ``rule_set``'s
    pack); ScenarioError naming the field."""
    try:
        context = {"deck": deck_of(rule_set)}
        return ActionFile.model_validate(raw, context=context).to_action()
    except ValidationError as exc:
        raise scenario_error(exc, ("actions", index)) from None


def run_scenario(doc: object) -> ScenarioRun:
    """Validate a scenario document and play it against the engine."""
    return run_parsed(parse_scenario(doc))
