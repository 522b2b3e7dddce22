"""The scenario runner core (shared/spec/scenarios.md): typed scenarios, played
against the engine.

A :class:`Scenario` fixes the options, the start position and the deals of one
or more hands (:class:`ScenarioSetup`), lists the actions to play
(:class:`ScenarioAction`, each possibly marked as one that must be refused) and
says what must follow (``expect``: result fields and their JSON values).
:func:`run_scenario` plays it and returns the :class:`ScenarioResult` with the
problems: where the run differs from ``expect`` and from the refusals marked.

This module only knows typed values: reading a scenario file (JSON, with
errors that name the field) is the job of the ``truc`` command
(``truc_client.scenarios``), which builds these dataclasses. Like the rest of
the package it imports only the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .actions import Action
from .cards import Card
from .errors import IllegalAction, InvalidSetup, Reason
from .registry import AnyOptions, AnyState, apply_action, new_game
from .truc_y_flou.constants import TEAM_NAMES
from .truc_y_flou.options import RuleOptions

Deal = tuple[tuple[Card, ...], ...]

__all__ = [
    "RESULT_FIELDS",
    "MancheRecord",
    "Rejection",
    "Scenario",
    "ScenarioAction",
    "ScenarioError",
    "ScenarioResult",
    "ScenarioRun",
    "ScenarioSetup",
    "check_expectations",
    "initial_state",
    "result_of",
    "run_scenario",
]


class ScenarioError(ValueError):
    """The scenario itself is malformed (not a rule violation in its actions).

    ``field`` names the part of the scenario at fault, in the notation of the
    file (``start.scores``, ``deals[1]``, ``actions[3].seat``; "" for the whole).
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


# --------------------------------------------------------------------------- the scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioSetup:
    """Everything before the first action: ``options`` (which name the rule set,
    ``ruleset`` in a file), ``start`` and ``deals``."""

    options: AnyOptions = field(default_factory=RuleOptions)
    deals: tuple[Deal, ...]
    """The hands of each successive hand, one per seat, seat 0 first."""
    dealer: int | None = None
    """The dealer of the first hand; None when ``draws`` decide it."""
    draws: tuple[tuple[Card, Card], ...] | None = None
    """The captains' draws for the first deal (team A's card first), or None."""
    scores: tuple[int, int] = (0, 0)
    """The scores of the current manche (team A, team B)."""
    manches: tuple[int, int] = (0, 0)
    """The manches already won."""


@dataclass(frozen=True, slots=True)
class ScenarioAction:
    """One entry of ``actions``: ``seat`` plays ``action``; ``rejected`` if it must be refused."""

    seat: int
    action: Action
    rejected: Reason | None = None


RESULT_FIELDS: Final = (
    "name",
    "scores",
    "manches",
    "history",
    "hands_played",
    "to_act",
    "finished",
    "winner",
    "rejected",
)
"""The fields of a scenario result, in the order they are written."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A whole scenario."""

    name: str
    setup: ScenarioSetup
    actions: tuple[ScenarioAction, ...] = ()
    expect: tuple[tuple[str, Any], ...] = ()
    """``(result field, expected JSON value)`` pairs, in the order of the file."""

    def __post_init__(self) -> None:
        for key, _ in self.expect:
            if key not in RESULT_FIELDS:
                raise ScenarioError(
                    f"expect.{key}", f"not a result field ({sorted(RESULT_FIELDS)})"
                )


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class MancheRecord:
    """A finished manche of ``history``: its winner ("A" or "B") and final scores."""

    winner: str
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused action of ``rejected``: its index in ``actions`` and the reason."""

    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """The result object of scenarios.md; :meth:`to_json` is what is printed."""

    name: str
    scores: tuple[int, int]
    manches: tuple[int, int]
    history: tuple[MancheRecord, ...]
    hands_played: int
    to_act: int | None
    finished: bool
    winner: str | None
    rejected: tuple[Rejection, ...]

    def to_json(self) -> dict[str, Any]:
        """The result as JSON values, its fields in :data:`RESULT_FIELDS` order."""
        return {
            "name": self.name,
            "scores": list(self.scores),
            "manches": list(self.manches),
            "history": [{"winner": h.winner, "scores": list(h.scores)} for h in self.history],
            "hands_played": self.hands_played,
            "to_act": self.to_act,
            "finished": self.finished,
            "winner": self.winner,
            "rejected": [{"index": r.index, "reason": r.reason} for r in self.rejected],
        }


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    result: ScenarioResult
    problems: tuple[str, ...]
    """Where the run differs from the scenario's expectations (empty: it holds)."""


# --------------------------------------------------------------------------- running


def initial_state(setup: ScenarioSetup) -> AnyState:
    """The state before the first action; ScenarioError naming the field at fault."""
    try:
        return new_game(
            setup.options,
            deals=setup.deals,
            dealer=setup.dealer,
            draws=setup.draws,
            scores=setup.scores,
            manches=setup.manches,
        ).state
    except InvalidSetup as exc:
        raise ScenarioError(_culprit(setup), str(exc)) from None


def _culprit(setup: ScenarioSetup) -> str:
    """The field of a setup the engine refused, found by trying each piece on its own.

    Only run once the whole setup was refused: the engine stays the one judge
    of what a valid setup is, this only says where the fault lies.
    """
    if setup.draws is not None and not isinstance(setup.options, RuleOptions):
        return "start.draw"  # only Truc y Flou has a draw for the first deal
    if setup.dealer is not None and setup.draws is not None:
        return "start"
    probes: list[tuple[str, dict[str, Any]]] = [
        (f"deals[{i}]", {"deals": [deal], "dealer": 0}) for i, deal in enumerate(setup.deals)
    ]
    probes.append(("start.scores", {"deals": [], "dealer": 0, "scores": setup.scores}))
    probes.append(("start.manches", {"deals": [], "dealer": 0, "manches": setup.manches}))
    if setup.dealer is not None:
        probes.append(("start.dealer", {"deals": [], "dealer": setup.dealer}))
    if setup.draws is not None:
        probes.append(("start.draw", {"deals": setup.deals, "draws": setup.draws}))
    for where, kwargs in probes:
        try:
            new_game(setup.options, **kwargs)
        except InvalidSetup:
            return where
    return "start"


def result_of(name: str, state: AnyState, rejected: Iterable[Rejection]) -> ScenarioResult:
    """The scenario result for ``state``."""
    winner = state.winner
    return ScenarioResult(
        name=name,
        scores=(state.scores[0], state.scores[1]),
        manches=(state.manches[0], state.manches[1]),
        history=tuple(MancheRecord(TEAM_NAMES[w], (a, b)) for w, a, b in state.history),
        hands_played=state.hands_played,
        to_act=state.to_act,
        finished=winner is not None,
        winner=None if winner is None else TEAM_NAMES[winner],
        rejected=tuple(rejected),
    )


def run_scenario(scenario: Scenario) -> ScenarioRun:
    """Play a scenario against the engine."""
    state = initial_state(scenario.setup)
    rejected: list[Rejection] = []
    problems: list[str] = []
    for index, step in enumerate(scenario.actions):
        try:
            state = apply_action(state, step.seat, step.action).state
        except IllegalAction as exc:
            rejected.append(Rejection(index, exc.reason.value))
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
    result = result_of(scenario.name, state, rejected)
    problems.extend(check_expectations(result, scenario.expect))
    return ScenarioRun(result, tuple(problems))


def check_expectations(
    result: ScenarioResult, expect: Iterable[tuple[str, Any]] | Mapping[str, Any]
) -> list[str]:
    """One line per expected field that the result does not match."""
    pairs = expect.items() if isinstance(expect, Mapping) else expect
    actual = result.to_json()
    problems = []
    for key, wanted in pairs:
        if key not in actual:
            raise ScenarioError(f"expect.{key}", f"not a result field ({sorted(actual)})")
        if actual[key] != wanted:
            problems.append(f"{key}: expected {_short(wanted)}, got {_short(actual[key])}")
    return problems


def _short(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "))
