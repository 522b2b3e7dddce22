"""The session use case on the in-memory ports: what a session does with
versions that do not follow each other (pure use-case tests)."""

from __future__ import annotations

import asyncio
import functools

import pytest

from truc_game.adapters.memory import MemoryGameStore, MemoryVersionFeed
from truc_game.history import entries_after
from truc_game.ports import Entry, GameLog
from truc_game.service import GameService, NewGame
from truc_game.sessions import Update, open_session
from truc_rules.truc_y_flou import RuleOptions
from truc_service.tokens import Identity

pytestmark = pytest.mark.unit

LOBBY = Identity("truc-lobby", "lobby", 1e12)
PLAYERS = ("ana", "bruno", "carla", "dani", "eva", "fede")


class CountingStore(MemoryGameStore):
    def __init__(self) -> None:
        super().__init__()
        self.log_reads = 0

    async def read_log(self, game_id: str) -> GameLog:
        self.log_reads += 1
        await asyncio.sleep(0)  # a real store's read yields to the loop
        return await super().read_log(game_id)


def test_a_version_heard_of_but_not_stored_does_not_make_the_session_spin() -> None:
    """A publication the store then lost (Redis went back) leaves a gap no log
    read can fill: the session waits for what comes next instead of reading
    the log in a loop."""

    async def scenario() -> tuple[Update, int]:
        store = CountingStore()
        feed = MemoryVersionFeed(store, functools.partial(entries_after, store))
        game = GameService(
            store,
            turn_seconds=30,
            allow_fixed_deals=False,
            rate_actions=0,
            rate_signals=0,
            rate_window_ms=1000,
            feed=feed,
        )
        await game.create_game(
            LOBBY,
            NewGame(
                game_id="g1",
                players=PLAYERS,
                options=RuleOptions(),
                turn_seconds=0,
                dealer=None,
                fixed_deals=(),
                start_scores=(0, 0),
                start_manches=(0, 0),
            ),
        )
        session = await open_session(
            game,
            store=store,
            feed=feed,
            identity=Identity("ana", "player", 1e12),
            game_id="g1",
            after_version=0,
        )
        assert session is not None
        first = await session.next()
        assert isinstance(first, Update) and first.seat_view.version == 1
        lost = Entry(3, b"", b"[]", None)  # version 3 heard of; version 2 never was
        session.deliver(lost)
        reads = store.log_reads
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(session.next(), 0.3)
        await session.close()
        return first, store.log_reads - reads

    _, reads = asyncio.run(scenario())
    assert reads <= 1, f"the session read the log {reads} times in 0.3 s"
