"""The session use case on the in-memory ports: what a session does with
versions that do not follow each other (pure use-case tests)."""

from __future__ import annotations

import asyncio
import functools

import pytest

from truc_game.adapters.memory import MemoryGameStore, MemoryVersionFeed
from truc_game.history import entries_after
from truc_game.ports import Entry, GameLog, Reader
from truc_game.sessions import Update, open_session

from .memory_games import LOBBY, game_service, new_game, player

pytestmark = pytest.mark.unit


class CountingStore(MemoryGameStore):
    def __init__(self) -> None:
        super().__init__()
        self.log_reads = 0

    async def read_log(self, game_id: str, reader: Reader | None = None) -> GameLog:
        self.log_reads += 1
        await asyncio.sleep(0)  # a real store's read yields to the loop
        return await super().read_log(game_id, reader)


def test_a_version_heard_of_but_not_stored_does_not_make_the_session_spin() -> None:
    """A publication the store then lost (Redis went back) leaves a gap no log
    read can fill: the session waits for what comes next instead of reading
    the log in a loop."""

    async def scenario() -> tuple[Update, int]:
        store = CountingStore()
        feed = MemoryVersionFeed(store, functools.partial(entries_after, store))
        game = game_service(store, feed=feed)
        await game.create_game(LOBBY, new_game())
        session = await open_session(
            game,
            store=store,
            feed=feed,
            identity=player("ana"),
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
