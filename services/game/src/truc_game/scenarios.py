"""Scenario files (shared/spec/scenarios.md): parse, play against the engine, check.

A scenario fixes the deals and the actions of one or more hands and says what
must follow. :func:`run_scenario` plays one and returns its result object;
:func:`check_expectations` lists where the result differs from ``expect`` and
from the actions marked ``"rejected"``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .rules import (
    Action,
    Call,
    Card,
    ChooseDealer,
    Directive,
    GameState,
    IllegalAction,
    InvalidSetup,
    MakeCall,
    PlayCard,
    RuleOptions,
    SendDirective,
    SendSignal,
    Signal,
    apply_action,
    new_game,
)
from .rules.constants import TEAM_NAMES

__all__ = ["ScenarioError", "check_expectations", "parse_action", "run_scenario"]


class ScenarioError(ValueError):
    """The scenario file itself is malformed (not a rule violation in its actions)."""


@dataclass(frozen=True, slots=True)
class ScenarioAction:
    seat: int
    action: Action
    rejected: str | None


def parse_action(raw: Mapping[str, Any], index: int) -> ScenarioAction:
    """One entry of ``actions``: ``{"seat": s, "play"|"call"|...: value, "rejected"?: REASON}``."""
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"actions[{index}] is not an object")
    seat = raw.get("seat")
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise ScenarioError(f"actions[{index}]: 'seat' must be an integer")
    kinds = [k for k in ("play", "call", "choose_dealer", "signal", "directive") if k in raw]
    if len(kinds) != 1:
        raise ScenarioError(
            f"actions[{index}]: give exactly one of play, call, choose_dealer, signal, directive"
        )
    kind = kinds[0]
    value = raw[kind]
    action: Action
    try:
        if kind == "play":
            action = PlayCard(Card.parse(value))
        elif kind == "call":
            action = MakeCall(Call(value))
        elif kind == "choose_dealer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"choose_dealer must be a seat number, not {value!r}")
            action = ChooseDealer(value)
        elif kind == "signal":
            action = SendSignal(Signal(value))
        else:
            action = SendDirective(Directive(value))
    except ValueError as exc:
        raise ScenarioError(f"actions[{index}]: {exc}") from None
    rejected = raw.get("rejected")
    if rejected is not None and not isinstance(rejected, str):
        raise ScenarioError(f"actions[{index}]: 'rejected' must be a reason name")
    return ScenarioAction(seat, action, rejected)


def _cards(raw: Any, what: str) -> tuple[Card, ...]:
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise ScenarioError(f"{what} must be a list of cards")
    try:
        return tuple(Card.parse(c) for c in raw)
    except ValueError as exc:
        raise ScenarioError(f"{what}: {exc}") from None


def _pair(raw: Any, what: str) -> tuple[int, int]:
    if (
        not isinstance(raw, list)
        or len(raw) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw)
    ):
        raise ScenarioError(f"{what} must be two integers")
    return (raw[0], raw[1])


def start_game(doc: Mapping[str, Any]) -> GameState:
    """The initial state of a scenario (options, start position, deals)."""
    try:
        options = RuleOptions.from_mapping(doc.get("options") or {})
    except InvalidSetup as exc:
        raise ScenarioError(f"options: {exc}") from None
    start = doc.get("start") or {}
    if not isinstance(start, Mapping):
        raise ScenarioError("start must be an object")
    deals_raw = doc.get("deals")
    if not isinstance(deals_raw, list):
        raise ScenarioError("deals must be a list of deals")
    deals = []
    for i, deal in enumerate(deals_raw):
        if not isinstance(deal, list) or len(deal) != 6:
            raise ScenarioError(f"deals[{i}] must list six hands")
        deals.append(tuple(_cards(hand, f"deals[{i}][{s}]") for s, hand in enumerate(deal)))
    draws = None
    if "draw" in start:
        raw_draws = start["draw"]
        if not isinstance(raw_draws, list):
            raise ScenarioError("start.draw must be a list of card pairs")
        draws = []
        for i, pair in enumerate(raw_draws):
            cards = _cards(pair, f"start.draw[{i}]")
            if len(cards) != 2:
                raise ScenarioError(f"start.draw[{i}] must hold two cards")
            draws.append((cards[0], cards[1]))
    dealer = start.get("dealer")
    if dealer is not None and (isinstance(dealer, bool) or not isinstance(dealer, int)):
        raise ScenarioError("start.dealer must be a seat number")
    if dealer is None and draws is None:
        raise ScenarioError("start needs a dealer or a draw")
    try:
        return new_game(
            options,
            deals=deals,
            dealer=dealer,
            draws=draws,
            scores=_pair(start.get("scores", [0, 0]), "start.scores"),
            manches=_pair(start.get("manches", [0, 0]), "start.manches"),
        ).state
    except InvalidSetup as exc:
        raise ScenarioError(str(exc)) from None


def result_of(name: str, state: GameState, rejected: list[dict[str, Any]]) -> dict[str, Any]:
    """The scenario result object of scenarios.md for ``state``."""
    winner = state.winner
    return {
        "name": name,
        "scores": list(state.scores),
        "manches": list(state.manches),
        "history": [{"winner": TEAM_NAMES[w], "scores": [a, b]} for w, a, b in state.history],
        "hands_played": state.hands_played,
        "to_act": state.to_act,
        "finished": winner is not None,
        "winner": None if winner is None else TEAM_NAMES[winner],
        "rejected": rejected,
    }


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    result: dict[str, Any]
    problems: tuple[str, ...]
    """Where the run differs from the scenario's expectations (empty: it holds)."""


def run_scenario(doc: Mapping[str, Any]) -> ScenarioRun:
    """Play a scenario against the engine."""
    if not isinstance(doc, Mapping):
        raise ScenarioError("a scenario is a JSON object")
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise ScenarioError("name must be a string")
    state = start_game(doc)
    actions_raw = doc.get("actions", [])
    if not isinstance(actions_raw, list):
        raise ScenarioError("actions must be a list")
    actions = [parse_action(raw, i) for i, raw in enumerate(actions_raw)]
    rejected: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, step in enumerate(actions):
        try:
            state = apply_action(state, step.seat, step.action).state
        except IllegalAction as exc:
            rejected.append({"index": index, "reason": exc.reason.value})
            if step.rejected is None:
                problems.append(
                    f"actions[{index}] (seat {step.seat} {step.action}) was refused "
                    f"{exc.reason}: {exc.detail}"
                )
            elif step.rejected != exc.reason:
                problems.append(
                    f"actions[{index}] (seat {step.seat} {step.action}) was refused "
                    f"{exc.reason}, expected {step.rejected}: {exc.detail}"
                )
        else:
            if step.rejected is not None:
                problems.append(
                    f"actions[{index}] (seat {step.seat} {step.action}) was accepted, "
                    f"expected refusal {step.rejected}"
                )
    result = result_of(name, state, rejected)
    problems.extend(check_expectations(result, doc.get("expect") or {}))
    return ScenarioRun(result, tuple(problems))


def check_expectations(result: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    """One line per field of ``expect`` that the result does not match."""
    if not isinstance(expect, Mapping):
        raise ScenarioError("expect must be an object")
    problems = []
    for key, wanted in expect.items():
        if key not in result:
            raise ScenarioError(f"expect.{key}: not a result field ({sorted(result)})")
        if result[key] != wanted:
            problems.append(f"{key}: expected {_short(wanted)}, got {_short(result[key])}")
    return problems


def _short(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "))
