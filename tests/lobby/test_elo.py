"""Team Elo rating changes (pure)."""

from __future__ import annotations

import pytest

from truc_lobby.results import K, elo_changes

EVEN = [(s, f"p{s}", False, 1500.0) for s in range(6)]


def test_even_teams_move_by_half_k() -> None:
    changes = elo_changes(EVEN, winner=0)
    assert changes["p0"] == pytest.approx(K / 2)
    assert changes["p1"] == pytest.approx(-K / 2)
    assert sum(changes.values()) == pytest.approx(0)


def test_an_upset_moves_more_than_an_expected_win() -> None:
    seats = [(s, f"p{s}", False, 1700.0 if s % 2 == 0 else 1300.0) for s in range(6)]
    expected_win = elo_changes(seats, winner=0)["p0"]
    upset = elo_changes(seats, winner=1)["p1"]
    assert 0 < expected_win < K / 2 < upset < K


def test_bots_are_never_rated() -> None:
    seats = [(s, f"bot-{s}" if s else "human", s != 0, 1500.0) for s in range(6)]
    assert set(elo_changes(seats, winner=1)) == {"human"}
