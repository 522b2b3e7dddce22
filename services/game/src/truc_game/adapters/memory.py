"""Both ports of the game service in memory, for fast use-case tests.

:class:`MemoryGameStore` keeps what the Redis adapter keeps (version, state,
meta, deadline, first state, events and deadline, the log of records,
per-player rate counters, each seat's missed turns, the deadline index) in
dictionaries, with the same outcomes (GameMissing, VersionConflict,
AlreadyApplied, RateLimited) decided in the same order as the Lua scripts of
:mod:`.redis_store`; :class:`MemoryVersionFeed` hands every new version of a
game to its followers. One process only, nothing durable, no
expiry of idle or finished games: never a production store, and never a
stand-in for the integration tests (they run on a real Redis).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from truc_game.absence import missed_after
from truc_game.ports import (
    FINISHED_RECORD_BYTES,
    KEEP_DEADLINE,
    RECORD_BYTES,
    Absence,
    AlreadyApplied,
    Entry,
    GameLog,
    GameMeta,
    GameMissing,
    Loaded,
    NotSeated,
    RateLimited,
    Reader,
    Snapshot,
    VersionConflict,
    digest_version,
    finished_records,
    request_digest,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from truc_game.ports import Listener

__all__ = ["MemoryGameStore", "MemoryStreamLeases", "MemoryVersionFeed"]


@dataclass(slots=True)
class _Game:
    version: int
    state: bytes
    meta: GameMeta
    deadline_ms: int | None
    first_state: bytes
    first_events: bytes
    first_deadline_ms: int | None
    records: bytes = b""
    finished: bool = False
    missed: tuple[int, ...] = ()
    """Each seat's turns in a row played at its deadline (the hash's t0 .. t5)."""

    def prior(self, request: str) -> tuple[int, bytes] | None:
        """The version ``request`` made and its record's action entry, found by
        its digest in the log (as the Redis scripts find it)."""
        if not request:
            return None
        size = FINISHED_RECORD_BYTES if self.finished else RECORD_BYTES
        return digest_version(self.records, request_digest(request), size)


class MemoryGameStore:
    """The :class:`~truc_game.ports.GameStore` port in memory."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._games: dict[str, _Game] = {}
        self._deadlines: dict[str, int] = {}
        self._rates: dict[tuple[str, str, str], tuple[int, int]] = {}
        """(game, kind, player) -> (count, window end ms)."""
        self._changed = asyncio.Condition()
        self._commits: list[Callable[[str, Entry], None]] = []

    def on_commit(self, callback: Callable[[str, Entry], None]) -> None:
        """Call ``callback(game_id, entry)`` for every version written (the
        publication of the Redis adapter)."""
        self._commits.append(callback)

    def _game(self, game_id: str) -> _Game:
        game = self._games.get(game_id)
        if game is None:
            raise GameMissing(game_id)
        return game

    def _snapshot(self, game: _Game) -> Snapshot:
        return Snapshot(game.version, game.state, game.meta, game.deadline_ms)

    async def _announce(self, game_id: str, entry: Entry) -> None:
        for callback in self._commits:
            callback(game_id, entry)
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
        first = Entry(1, state, events, deadline_ms)
        game = _Game(1, state, meta, deadline_ms, state, events, deadline_ms)
        self._games[game_id] = game
        if deadline_ms is not None:
            self._deadlines[game_id] = deadline_ms
        await self._announce(game_id, first)
        return True

    async def load(
        self, game_id: str, *, request_id: str, player: str, kind: str, limit: int, window_ms: int
    ) -> Loaded:
        game = self._game(game_id)
        self._count(game_id, player, kind, limit, window_ms)
        prior = game.prior(request_id)
        if prior is not None:
            return Loaded(self._snapshot(game), *prior)
        return Loaded(self._snapshot(game), None)

    def _count(self, game_id: str, player: str, kind: str, limit: int, window_ms: int) -> None:
        if limit <= 0:
            return
        now_ms = int(self._clock() * 1000)
        key = (game_id, kind, player)
        count, ends = self._rates.get(key, (0, 0))
        if ends <= now_ms:
            count, ends = 0, now_ms + window_ms
        count += 1
        self._rates[key] = (count, ends)
        if count > limit:
            raise RateLimited(max(ends - now_ms, 1))

    async def read(self, game_id: str) -> Snapshot:
        return self._snapshot(self._game(game_id))

    async def read_log(self, game_id: str, reader: Reader | None = None) -> GameLog:
        game = self._game(game_id)
        if reader is not None:
            self._count(game_id, reader.player, "r", reader.limit, reader.window_ms)
            if reader.seated and game.meta.seat_of(reader.player) is None:
                raise NotSeated(game_id)
        return GameLog(
            self._snapshot(game),
            game.first_state,
            game.first_events,
            game.first_deadline_ms,
            game.records,
            game.finished,
        )

    async def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        events: bytes,
        record: bytes,
        request_id: str,
        deadline_ms: int | None,
        finished: bool = False,
        winner: int | None = None,
        rate: tuple[str, str, int, int] | None = None,
        absence: Absence | None = None,
    ) -> Entry:
        del winner  # no lobby in memory
        game = self._game(game_id)
        if rate is not None:
            self._count(game_id, *rate)
        prior = game.prior(request_id)
        if prior is not None:
            raise AlreadyApplied(*prior)
        if game.version != expected_version:
            raise VersionConflict(game_id)
        if absence is not None:
            deadline_ms, record = self._absence(game, absence, deadline_ms, record)
        game.version += 1
        game.state = state
        deadline = game.deadline_ms if deadline_ms == KEEP_DEADLINE else deadline_ms
        entry = Entry(game.version, state, events, deadline, request_id, game.missed)
        game.records += record
        if finished and not game.finished:
            game.records = finished_records(game.records)
            game.finished = True
        if deadline_ms != KEEP_DEADLINE:
            game.deadline_ms = deadline_ms
            if deadline_ms is None:
                self._deadlines.pop(game_id, None)
            else:
                self._deadlines[game_id] = deadline_ms
        await self._announce(game_id, entry)
        return entry

    @staticmethod
    def _absence(
        game: _Game, absence: Absence, deadline_ms: int | None, record: bytes
    ) -> tuple[int | None, bytes]:
        """The commit script's ``absence``: move the acting seat's count; the
        short deadline and record if the seat to act next is absent."""
        game.missed = missed_after(game.missed, absence.seat, absence.timed_out)
        seat = absence.next_seat
        if seat is not None and seat < len(game.missed) and game.missed[seat] >= absence.turns:
            return absence.deadline_ms, absence.record
        return deadline_ms, record

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

    def __init__(
        self,
        store: MemoryGameStore,
        read_log: Callable[[str, int], Awaitable[list[Entry]]],
    ) -> None:
        """``read_log``: the versions of a game after a version
        (:func:`truc_game.history.entries_after` over ``store``)."""
        self._store = store
        self._read_log = read_log
        self._listeners: dict[str, set[Listener]] = {}
        self._latest: dict[str, Entry] = {}
        store.on_commit(self.announce)

    async def listen(self, game_id: str, listener: Listener) -> None:
        self._listeners.setdefault(game_id, set()).add(listener)

    async def unlisten(self, game_id: str, listener: Listener) -> None:
        listeners = self._listeners.get(game_id, set())
        listeners.discard(listener)
        if not listeners:
            self._listeners.pop(game_id, None)
            self._latest.pop(game_id, None)

    def latest(self, game_id: str) -> Entry | None:
        return self._latest.get(game_id)

    def rewound(self, game_id: str, entry: Entry) -> None:
        known = self._latest.get(game_id)
        if known is not None and known.version > entry.version:
            self._latest[game_id] = entry

    def announce(self, game_id: str, entry: Entry) -> None:
        listeners = self._listeners.get(game_id)
        if not listeners:
            return
        known = self._latest.get(game_id)
        if known is None or known.version < entry.version:
            self._latest[game_id] = entry
        for listener in listeners:
            listener.deliver(entry)

    async def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        last = after_version
        while True:
            for entry in await self._read_log(game_id, last):
                yield entry
                last = entry.version
            await self._store.wait_after(game_id, last)


class MemoryStreamLeases:
    """The :class:`~truc_game.ports.StreamLeases` port in memory."""

    def __init__(self) -> None:
        self._leases: dict[str, dict[str, int]] = {}
        """Player -> stream id -> the lease's end (ms)."""

    async def take(
        self, player: str, stream: str, *, limit: int, now_ms: int, until_ms: int
    ) -> bool:
        held = {s: until for s, until in self._leases.get(player, {}).items() if until > now_ms}
        if limit and len(held) >= limit:
            self._leases[player] = held
            return False
        held[stream] = until_ms
        self._leases[player] = held
        return True

    async def drop(self, player: str, stream: str) -> None:
        self._leases.get(player, {}).pop(stream, None)

    async def renew(self, held: Mapping[str, Collection[str]], until_ms: int) -> None:
        for player, streams in held.items():
            leases = self._leases.get(player, {})
            for stream in streams:
                if stream in leases:
                    leases[stream] = until_ms
