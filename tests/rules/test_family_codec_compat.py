"""Truc y Flou games stored before the variants.md rule sets were added still
decode and play on.

``data/truc_y_flou_v2_states.json`` was written by the code of commit 971f32d
(state format 2; ``data/make_truc_y_flou_v2_states.py`` says how): seeded games
with their actions and the encoded state after some of the steps. Today's code
must decode each (through Truc y Flou's codec and through the registry, which
tells the rule set by the first byte) to exactly the state today's engine
reaches by the same actions, encode that state to the same bytes, and play the
game on from it to the end of the match.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

import truc_rules
from truc_rules import (
    Action,
    Call,
    Card,
    ChooseDealer,
    CutDeck,
    Directive,
    GameState,
    MakeCall,
    Phase,
    PlayCard,
    RuleOptions,
    SendDirective,
    SendSignal,
    Signal,
    registry,
)
from truc_rules.truc_y_flou.codec import FORMAT_VERSION, MAGIC

DATA: Final = Path(__file__).with_name("data") / "truc_y_flou_v2_states.json"
DOCUMENT: Final[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))
GAMES: Final[list[dict[str, Any]]] = DOCUMENT["games"]


def parsed(entry: list[Any]) -> tuple[int, Action]:
    seat, kind, value = entry
    action: Action
    if kind == "play":
        action = PlayCard(Card.parse(value))
    elif kind == "call":
        action = MakeCall(Call(value))
    elif kind == "choose_dealer":
        action = ChooseDealer(value)
    elif kind == "cut":
        action = CutDeck(value)
    elif kind == "signal":
        action = SendSignal(Signal(value))
    else:
        assert kind == "directive", kind
        action = SendDirective(Directive(value))
    return seat, action


def fresh(game: dict[str, Any]) -> GameState:
    return truc_rules.new_game(
        RuleOptions.from_mapping(game["options"]),
        seed=game["seed"],
        dealer=game.get("dealer"),
        scores=tuple(game.get("scores", (0, 0))),
        manches=tuple(game.get("manches", (0, 0))),
    ).state


def decoded(text: str) -> GameState:
    data = bytes.fromhex(text)
    state = truc_rules.decode_state(data)
    assert registry.decode_state(data) == state
    return state


def test_the_data_was_written_by_the_code_before_the_rule_sets() -> None:
    """The file is what it says (a regenerated file from today's code would prove nothing)."""
    assert DOCUMENT["commit"].startswith("971f32d")
    kinds = {entry[1] for game in GAMES for entry in game["actions"]}
    assert kinds == {"play", "call", "choose_dealer", "cut", "signal", "directive"}
    assert sum(len(game["states"]) for game in GAMES) >= 100
    for game in GAMES:
        for stored in game["states"]:
            assert bytes.fromhex(stored["hex"])[:2] == bytes((MAGIC, FORMAT_VERSION)) == b"T\x02"


@pytest.mark.parametrize("game", GAMES, ids=[f"seed-{g['seed']}" for g in GAMES])
def test_stored_states_decode_to_the_states_todays_engine_reaches(game: dict[str, Any]) -> None:
    stored = {s["step"]: s["hex"] for s in game["states"]}
    state = fresh(game)
    for step, entry in enumerate([*game["actions"], None]):
        if step in stored:
            data = bytes.fromhex(stored[step])
            assert decoded(stored[step]) == state, f"step {step}"
            assert truc_rules.encode_state(state) == data, f"step {step}: today writes other bytes"
        if entry is None:
            break
        seat, action = parsed(entry)
        after = truc_rules.apply_action(state, seat, action).state
        state = after
    assert max(stored) == len(game["actions"])
    assert (state.phase == Phase.MATCH_OVER) == game["finished"]


@pytest.mark.parametrize("game", GAMES, ids=[f"seed-{g['seed']}" for g in GAMES])
def test_a_stored_state_plays_on_to_the_end_of_the_match(game: dict[str, Any]) -> None:
    """From a stored state early, midway and late in the game: the recorded
    actions are legal and lead to the recorded end; a game stored mid-match is
    played on to its end by today's engine (each seat's default action)."""
    steps = sorted(s["step"] for s in game["states"])
    stored = {s["step"]: s["hex"] for s in game["states"]}
    actions = [parsed(entry) for entry in game["actions"]]
    for start in (steps[1], steps[len(steps) // 2], steps[-2]):
        state = decoded(stored[start])
        for seat, action in actions[start:]:
            assert action in truc_rules.legal_actions(state, seat)
            state = truc_rules.apply_action(state, seat, action).state
        if game["finished"]:
            assert state.phase == Phase.MATCH_OVER
            assert truc_rules.encode_state(state) == bytes.fromhex(stored[steps[-1]])
            continue
        for _ in range(5000):
            who = state.to_act
            if who is None:
                break
            move = registry.default_action(state)
            assert move is not None and move in truc_rules.legal_actions(state, who)
            state = truc_rules.apply_action(state, who, move).state
        assert state.phase == Phase.MATCH_OVER and state.winner is not None
