"""Matches between policies in this process, on the engine of any rule set.

Each seat's policy gets the very message the game service would send it: the
engine's per-seat view (:func:`truc_rules.registry.view_for`) turned into a
``truc.v1.GameView`` by the protocol's converter
(:func:`truc_protocol.convert.view_to_proto`); the action it returns goes back
through :func:`truc_protocol.convert.action_from_proto`, its card read in the
game's pack, and the engine applies it. No network, no store: a match is a few
milliseconds (tens at four seats), which is what the strength tests and
``benchmarks/bots_bench.py`` need.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from truc.v1 import game_pb2

from truc_protocol.convert import action_from_proto, view_to_proto
from truc_rules.registry import (
    AnyOptions,
    AnyState,
    apply_action,
    new_game,
    rule_set_of,
    seat_count,
    view_for,
)

__all__ = ["Duel", "Match", "duel", "play_match", "proto_view"]

MAX_ACTIONS: Final = 20_000
"""More actions than any match takes: a guard against policies that never end one."""


class _Policy(Protocol):
    def choose(self, view: game_pb2.GameView) -> game_pb2.Action: ...


def proto_view(state: AnyState, seat: int, etag: str = "1") -> game_pb2.GameView:
    """The proto view of ``seat``, as the service builds it (no events, no deadline)."""
    players = tuple(f"p{s}" for s in range(seat_count(state)))
    return view_to_proto(
        view_for(state, seat), name="games/arena", players=players, etag=etag, deadline_ms=None
    )


@dataclass
class Match:
    """A finished match: its final state and what it took."""

    state: AnyState
    actions: int = 0
    log: list[tuple[int, game_pb2.Action]] = field(default_factory=list)
    """Every action as (seat, action), when the match was recorded."""

    @property
    def winner(self) -> int | None:
        """The winning team (0: A, 1: B), None if the match did not end."""
        return self.state.winner


def play_match(
    policies: Sequence[_Policy],
    options: AnyOptions,
    seed: int,
    *,
    record: bool = False,
) -> Match:
    """Play a whole match of ``options``' rule set, seat ``i`` choosing with
    ``policies[i]``. Every action must be one of the view's legal actions."""
    state = new_game(options, seed=seed).state
    seats = seat_count(state)
    if len(policies) != seats:
        raise ValueError(f"{rule_set_of(options)} needs {seats} policies, not {len(policies)}")
    pack = rule_set_of(options)
    match = Match(state)
    while state.to_act is not None:
        if match.actions >= MAX_ACTIONS:
            raise AssertionError(f"match {seed} did not end in {MAX_ACTIONS} actions")
        seat = state.to_act
        view = proto_view(state, seat, str(match.actions + 1))
        action = policies[seat].choose(view)
        if action not in view.legal_actions:
            raise AssertionError(f"seat {seat} chose {action} outside its legal actions")
        state = apply_action(state, seat, action_from_proto(action, pack)).state
        match.actions += 1
        if record:
            match.log.append((seat, action))
    match.state = state
    return match


@dataclass
class Duel:
    """Policy A against policy B over many matches, A's side alternating."""

    matches: int = 0
    wins: int = 0
    """Matches A's side won."""
    actions: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def per_second(self) -> float:
        return self.matches / self.seconds if self.seconds > 0 else 0.0


def duel(
    make_a: Callable[[int], _Policy],
    make_b: Callable[[int], _Policy],
    options: AnyOptions,
    matches: int,
    *,
    seed: int = 0,
) -> Duel:
    """``matches`` matches: policy A holds team A's seats in even matches and
    team B's in odd ones, B the others; every seat and match has its own seed."""
    seats = seat_count(options)
    result = Duel()
    began = time.perf_counter()
    for number in range(matches):
        side = number % 2
        base = seed + 1_000 * number
        policies = [make_a(base + s) if s % 2 == side else make_b(base + s) for s in range(seats)]
        match = play_match(policies, options, seed + number)
        result.matches += 1
        result.wins += match.winner == side
        result.actions += match.actions
    result.seconds = time.perf_counter() - began
    return result
