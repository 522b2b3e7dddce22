"""Writes ``truc_y_flou_v2_states.json`` beside this file: Truc y Flou states
stored by the code *before* the rule sets of variants.md were added (commit
971f32d, state format 2), which ``tests/rules/test_family_codec_compat.py``
decodes and plays on with today's code.

Run it against the old code only (it uses nothing but the API both share)::

    git -C /work/main worktree add /tmp/truc-old 971f32d
    PYTHONPATH=/tmp/truc-old/libs/rules/src .venv/bin/python \\
        tests/rules/data/make_truc_y_flou_v2_states.py
    git -C /work/main worktree remove /tmp/truc-old

Each game: its seed, options and start, every action taken (``[seat, kind,
value]``), and the encoded state (hex) after some of the steps (step 0 is the
new game) and after the last one.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import truc_rules
from truc_rules import (
    Action,
    Call,
    ChooseDealer,
    CutDeck,
    GameState,
    MakeCall,
    PlayCard,
    RuleOptions,
    SendDirective,
    SendSignal,
    apply_action,
    encode_state,
    legal_actions,
    new_game,
)

OUT = Path(__file__).with_name("truc_y_flou_v2_states.json")
EVERY = 9
"""A state is stored after every EVERY-th step, and after the last."""

GAMES: list[dict[str, Any]] = [
    {"seed": 1, "play_seed": 11, "options": {}},
    {"seed": 2**62 + 17, "play_seed": 12, "options": {"target_score": 12, "cut": "cutter"}},
    {
        "seed": 987654321,
        "play_seed": 13,
        "options": {
            "perique_trick_rank": "top",
            "play_out_all_tricks": True,
            "ace_value": 1,
            "responder": "caller",
            "target_score": 7,
            "manches_to_win": 3,
        },
    },
    {
        "seed": 5,
        "play_seed": 14,
        "options": {"perique_trick_rank": "natural"},
        "dealer": 4,
        "scores": [18, 22],
        "manches": [1, 0],
    },
    # Stopped mid-match: the test plays it on to the end with today's engine.
    {"seed": 424242, "play_seed": 15, "options": {"target_score": 12}, "steps": 140},
]

_RARE = {Call.MI_FALTA, Call.RESTOU_Y_TROUCOU, Call.RESTOU, Call.ALIBARESTOU_CON_FLOR}


def weight(action: Action) -> float:
    if isinstance(action, PlayCard):
        return 6.0
    if isinstance(action, MakeCall):
        if action.call in _RARE:
            return 0.15
        if action.call in (Call.PASS, Call.ACCEPT):
            return 3.0
    return 1.0


def written(seat: int, action: Action) -> list[object]:
    """``[seat, kind, value]``: play a card, call, choose_dealer, cut, signal, directive."""
    if isinstance(action, PlayCard):
        return [seat, "play", str(action.card)]
    if isinstance(action, MakeCall):
        return [seat, "call", action.call.value]
    if isinstance(action, ChooseDealer):
        return [seat, "choose_dealer", action.dealer]
    if isinstance(action, CutDeck):
        return [seat, "cut", action.position]
    if isinstance(action, SendSignal):
        return [seat, "signal", action.signal.value]
    return [seat, "directive", action.directive.value]


def play(game: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(game["play_seed"])
    state: GameState = new_game(
        RuleOptions.from_mapping(game["options"]),
        seed=game["seed"],
        dealer=game.get("dealer"),
        scores=tuple(game.get("scores", (0, 0))),
        manches=tuple(game.get("manches", (0, 0))),
    ).state
    actions: list[list[object]] = []
    states = [{"step": 0, "hex": encode_state(state).hex()}]
    limit = game.get("steps", 20_000)
    while state.to_act is not None and len(actions) < limit:
        seat = state.to_act
        action: Action
        sender = rng.randrange(6)
        chatter = [
            a for a in legal_actions(state, sender) if isinstance(a, SendSignal | SendDirective)
        ]
        if chatter and rng.random() < 0.05:
            seat, action = sender, rng.choice(chatter)
        else:
            moves = [
                a
                for a in legal_actions(state, seat)
                if not isinstance(a, SendSignal | SendDirective)
            ]
            action = rng.choices(moves, [weight(a) for a in moves])[0]
        state = apply_action(state, seat, action).state
        actions.append(written(seat, action))
        if len(actions) % EVERY == 0 or state.to_act is None or len(actions) == limit:
            states.append({"step": len(actions), "hex": encode_state(state).hex()})
    return {**game, "finished": state.to_act is None, "actions": actions, "states": states}


def main() -> None:
    source = Path(truc_rules.__file__).resolve()
    commit = subprocess.run(
        ["git", "-C", str(source.parent), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    about = (
        "Truc y Flou states (format 2) written by truc_rules at the commit below, "
        "before the variants.md rule sets; made by make_truc_y_flou_v2_states.py"
    )
    games = [play(game) for game in GAMES]
    # One game a line: small diffs, and the file stays readable.
    text = "\n".join(
        [
            "{",
            f' "about": {json.dumps(about)},',
            f' "commit": {json.dumps(commit)},',
            ' "games": [',
            ",\n".join("  " + json.dumps(game) for game in games),
            " ]",
            "}",
        ]
    )
    OUT.write_text(text + "\n", encoding="utf-8")
    total = sum(len(g["states"]) for g in games)
    print(f"{OUT}: {len(GAMES)} games, {total} states, written by {source} at {commit}")


if __name__ == "__main__":
    main()
