"""GameState.clone copies every field (it is written out by hand for speed)."""

from __future__ import annotations

from dataclasses import fields

from truc_rules import GameState, new_game


def test_clone_copies_every_field() -> None:
    state = new_game(seed=11).state
    copy = state.clone()
    assert copy is not state
    for field in fields(GameState):
        assert getattr(copy, field.name) is getattr(state, field.name), field.name
    assert copy == state
