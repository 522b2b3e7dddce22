"""Both ports of the game service in memory, for fast use-case tests.

:class:`MemoryGameStore` keeps what the Redis adapter keeps (version, state,
meta, deadline, request ids, the event log, per-player rate counters, the
deadline index) in dictionaries, with the same outcomes (GameMissing,
VersionConflict, AlreadyApplied, RateLimited) decided in the same order as the
Lua scripts of :mod:`.redis_store`; :class:`MemoryVersionFeed` hands every new
version of a game to its followers. One process only, nothing durable, no
expiry of idle or finished games: never a production store, and never a
stand-in for the integration tests (they run on a real Redis).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from truc_game.ports import (
    KEEP_DEADLINE,
    AlreadyApplied,
    Entry,
    GameMeta,
    GameMissing,
    Loaded,
    RateLimited,
    Snapshot,
    VersionConflict,
)

__all__ = ["MemoryGameStore", "MemoryVersionFeed"]


@dataclass(slots=True)
class _Game:
    version: int
    state: bytes
    meta: GameMeta
    deadline_ms: int | None
    log: list[Entry] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)


class MemoryGameStore:
    """The :class:`~truc_game.ports.GameStore` port in memory."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._games: dict[str, _Game] = {}
        self._deadlines: dict[str, int] = {}
        self._rates: dict[tuple[str, str, str], tuple[int, int]] = {}
        """(game, kind, player) -> (count, window end ms)."""
        self._changed = asyncio.Condition()

    def _game(self, game_id: str) -> _Game:
        game = self._games.get(game_id)
        if game is None:
            raise GameMissing(game_id)
        return game

    def _snapshot(self, game: _Game) -> Snapshot:
        return Snapshot(game.version, game.state, game.meta, game.deadline_ms)

    async def _announce(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_after(self, game_id: str, version: int) -> None:
        """Return once the game has a version after ``version``."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: game_id in self._games and self._games[game_id].version > version
            )

    async def create(
        self, game_id: str, *, state: bytes, events: bytes, meta: GameMeta, deadline_ms: int | None
    ) -> bool:
        if game_id in self._games:
            return False
        game = _Game(1, state, meta, deadline_ms, [Entry(1, state, events, deadline_ms)])
        self._games[game_id] = game
        if deadline_ms is not None:
            self._deadlines[game_id] = deadline_ms
        await self._announce()
        return True

    async def load(
        self, game_id: str, *, request_id: str, player: str, kind: str, limit: int, window_ms: int
    ) -> Loaded:
        game = self._game(game_id)
        if request_id and request_id in game.requests:
            return Loaded(self._snapshot(game), game.requests[request_id])
        if limit > 0:
            now_ms = int(self._clock() * 1000)
            key = (game_id, kind, player)
            count, ends = self._rates.get(key, (0, 0))
            if ends <= now_ms:
                count, ends = 0, now_ms + window_ms
            count += 1
            self._rates[key] = (count, ends)
            if count > limit:
                raise RateLimited(max(ends - now_ms, 1))
        return Loaded(self._snapshot(game), None)

    async def read(self, game_id: str) -> Snapshot:
        return self._snapshot(self._game(game_id))

    async def read_with_log(self, game_id: str) -> tuple[Snapshot, list[Entry]]:
        game = self._game(game_id)
        return self._snapshot(game), list(game.log)

    async def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        events: bytes,
        request_id: str,
        deadline_ms: int | None,
        finished: bool = False,
    ) -> int:
        del finished  # no expiry in memory
        game = self._game(game_id)
        if request_id and request_id in game.requests:
            raise AlreadyApplied(game.requests[request_id])
        if game.version != expected_version:
            raise VersionConflict(game_id)
        game.version += 1
        game.state = state
        deadline = game.deadline_ms if deadline_ms == KEEP_DEADLINE else deadline_ms
        game.log.append(Entry(game.version, state, events, deadline))
        if request_id:
            game.requests[request_id] = game.version
        if deadline_ms != KEEP_DEADLINE:
            game.deadline_ms = deadline_ms
            if deadline_ms is None:
                self._deadlines.pop(game_id, None)
            else:
                self._deadlines[game_id] = deadline_ms
        await self._announce()
        return game.version

    async def entries(
        self, game_id: str, after_version: int, count: int | None = None
    ) -> list[Entry]:
        game = self._games.get(game_id)
        found = [] if game is None else [e for e in game.log if e.version > after_version]
        return found if count is None else found[:count]

    async def entry(self, game_id: str, version: int) -> Entry | None:
        game = self._games.get(game_id)
        if game is None or not 1 <= version <= len(game.log):
            return None
        return game.log[version - 1]

    async def due(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        late = sorted((due, game) for game, due in self._deadlines.items() if due <= now_ms)
        return [(game, due) for due, game in late[:limit]]

    async def forget_deadline(self, game_id: str) -> None:
        self._deadlines.pop(game_id, None)

    async def claim(self, game_id: str, due_ms: int, lease_until_ms: int) -> bool:
        if self._deadlines.get(game_id) != due_ms:
            return False
        self._deadlines[game_id] = lease_until_ms
        return True

    async def count_active(self) -> int:
        return len(self._deadlines)

    def forget_game(self, game_id: str) -> None:
        """Drop a game as if its keys had expired (tests of a vanished game)."""
        self._games.pop(game_id, None)


class MemoryVersionFeed:
    """The :class:`~truc_game.ports.VersionFeed` port over a :class:`MemoryGameStore`."""

    def __init__(self, store: MemoryGameStore) -> None:
        self._store = store

    async def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        last = after_version
        while True:
            for entry in await self._store.entries(game_id, last):
                yield entry
                last = entry.version
            await self._store.wait_after(game_id, last)
