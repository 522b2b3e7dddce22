"""The states' clone copies every field (each is written out by hand for speed)."""

from __future__ import annotations

from dataclasses import fields

import pytest

from truc_rules import GameState, french_truc, new_game, partnership_truc
from truc_rules.family import FamilyState


def test_clone_copies_every_field() -> None:
    state = new_game(seed=11).state
    copy = state.clone()
    assert copy is not state
    for field in fields(GameState):
        assert getattr(copy, field.name) is getattr(state, field.name), field.name
    assert copy == state


@pytest.mark.parametrize("module", [french_truc, partnership_truc])
def test_the_family_clone_copies_every_field(module: object) -> None:
    state = module.new_game(seed=11).state  # type: ignore[attr-defined]
    assert isinstance(state, FamilyState)
    copy = state.clone()
    assert copy is not state
    for field in fields(FamilyState):
        assert getattr(copy, field.name) is getattr(state, field.name), field.name
    assert copy == state
