"""Absent seats on the in-memory store (the use-case tests' store): the same
counts and deadlines as the commit script (tests/service/test_absent_seats.py
runs that on a real Redis), and the log rebuilds every version's counts."""

from __future__ import annotations

import pytest

from truc_game.absence import AbsencePolicy, absent_seats, missed_after
from truc_game.adapters.memory import MemoryGameStore
from truc_game.deadlines import DeadlineSweeper
from truc_game.history import read_history
from truc_game.ports import Entry
from truc_game.service import GameService
from truc_rules.registry import decode_state, default_options, legal_actions
from truc_rules.rule_set import RuleSet

from .memory_games import LOBBY, PLAYERS, new_game, player
from .test_use_cases import Clock, run

pytestmark = pytest.mark.unit

POLICY = AbsencePolicy(turns=2, turn_ms=500)
TURN_MS = 30_000


def test_the_counts_of_a_seat_move_with_its_actions() -> None:
    assert missed_after((), 1, True) == (0, 1)
    assert missed_after((0, 1), 1, True) == (0, 2)
    assert missed_after((0, 2), 1, False) == ()
    assert missed_after((3, 2), 1, False) == (3,)
    assert absent_seats((3, 1, 2), 2) == {0, 2}
    assert absent_seats((3, 1, 2), 0) == frozenset()


def test_an_absent_seat_gets_the_short_deadline_until_its_player_acts() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryGameStore(clock=clock)
        entries: list[Entry] = []
        store.on_commit(lambda game_id, entry: entries.append(entry))
        game = GameService(
            store,
            turn_seconds=TURN_MS // 1000,
            allow_fixed_deals=False,
            rate_actions=0,
            rate_signals=0,
            rate_window_ms=1000,
            clock=clock,
            absence=POLICY,
        )
        sweeper = DeadlineSweeper(game, store, poll_ms=500)
        players = PLAYERS[:2]
        await game.create_game(
            LOBBY, new_game(players=players, options=default_options(RuleSet.FRENCH_TRUC))
        )
        away = 1

        async def act(seat: int) -> None:
            state = decode_state((await store.read("g1")).state)
            action = legal_actions(state, seat)[0]
            await game.submit_action(player(players[seat]), "g1", action, etag="", request_id="")

        async def to_the_away_seat() -> int:
            """Play the other seat until the away seat is to act: the ms it is given."""
            while True:
                snapshot = await store.read("g1")
                seat = decode_state(snapshot.state).to_act
                assert seat is not None and snapshot.deadline_ms is not None
                if seat == away:
                    return snapshot.deadline_ms - game.now_ms()
                await act(seat)

        async def the_house_plays() -> None:
            deadline_ms = (await store.read("g1")).deadline_ms
            assert deadline_ms is not None
            clock.now = deadline_ms / 1000 + 0.001
            assert await sweeper.sweep() == 1

        given = []
        for _ in range(4):
            given.append(await to_the_away_seat())
            await the_house_plays()
        given.append(await to_the_away_seat())
        await act(away)  # the player is back
        given.append(await to_the_away_seat())
        assert given == [TURN_MS, TURN_MS, 500, 500, 500, TURN_MS]

        # The log gives back every version's counts, as the store kept them.
        history = await read_history(store, "g1")
        assert history.missed == tuple(e.missed for e in entries)
        assert max(e.missed[away] if len(e.missed) > away else 0 for e in entries) == 4
        assert (await game.get_game(LOBBY, "g1")).absent == frozenset()

    run(scenario())
