"""The ports of the game service: what its use cases need from the outside world.

* :class:`GameStore`: games, their event logs and their turn deadlines, with one
  atomic compare-and-set per action. Adapters:
  :class:`~truc_game.adapters.redis_store.RedisGameStore`
  (production) and :class:`~truc_game.adapters.memory.MemoryGameStore` (fast
  use-case tests).
* :class:`VersionFeed`: every new version of a game, in order, for watchers.
  Adapters: :class:`~truc_game.adapters.redis_feed.WatchHub` (one pub/sub
  connection per replica) and :class:`~truc_game.adapters.memory.MemoryVersionFeed`.

The data that crosses them (:class:`GameMeta`, :class:`Snapshot`,
:class:`Loaded`, :class:`Entry`) and the outcomes other than success
(:class:`GameMissing`, :class:`VersionConflict`, :class:`AlreadyApplied`,
:class:`RateLimited`) are defined here, once. A store that cannot be reached
raises :class:`truc_protocol.errors.Unavailable` (reason ``STORE_UNAVAILABLE``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "KEEP_DEADLINE",
    "AlreadyApplied",
    "Entry",
    "GameMeta",
    "GameMissing",
    "GameStore",
    "Loaded",
    "RateLimited",
    "Snapshot",
    "StoreError",
    "VersionConflict",
    "VersionFeed",
]

KEEP_DEADLINE: Final = -1
"""Pass as ``deadline_ms`` to leave the game's deadline as it is (signals)."""


class StoreError(Exception):
    """Base of the store's outcomes other than success."""


class GameMissing(StoreError):
    pass


class VersionConflict(StoreError):
    """The game is no longer at the version the change was computed from."""


class AlreadyApplied(StoreError):
    """The request id was applied before, producing ``version``."""

    def __init__(self, version: int) -> None:
        super().__init__(f"request already applied at version {version}")
        self.version = version


class RateLimited(StoreError):
    def __init__(self, retry_after_ms: int) -> None:
        super().__init__(f"rate limited for {retry_after_ms} ms")
        self.retry_after_ms = retry_after_ms


@dataclass(frozen=True, slots=True)
class GameMeta:
    """What a game keeps besides its state: who sits where, how long a turn is."""

    players: tuple[str, ...]
    turn_seconds: int

    def encode(self) -> bytes:
        return json.dumps({"p": list(self.players), "t": self.turn_seconds}).encode()

    @staticmethod
    def decode(data: bytes) -> GameMeta:
        return _decode_meta(bytes(data))

    def seat_of(self, player: str) -> int | None:
        try:
            return self.players.index(player)
        except ValueError:
            return None


@functools.lru_cache(maxsize=4096)
def _decode_meta(data: bytes) -> GameMeta:
    """Meta never changes once a game exists, so decoding it is memoised (a pure
    function of the stored bytes; nothing about the game is kept beyond that)."""
    raw = json.loads(data)
    return GameMeta(tuple(raw["p"]), int(raw["t"]))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A game as stored now."""

    version: int
    state: bytes
    meta: GameMeta
    deadline_ms: int | None


@dataclass(frozen=True, slots=True)
class Loaded:
    """What LOAD returns for an action: the snapshot, or the version a retried
    request already produced."""

    snapshot: Snapshot
    prior_version: int | None


@dataclass(frozen=True, slots=True)
class Entry:
    """One version of the event log."""

    version: int
    state: bytes
    """The state after this version's action."""
    events: bytes
    deadline_ms: int | None
    """The deadline of the seat to act after it (None: nobody acts)."""


class GameStore(Protocol):
    """Where games live. Every write is atomic."""

    async def create(
        self, game_id: str, *, state: bytes, events: bytes, meta: GameMeta, deadline_ms: int | None
    ) -> bool:
        """Write version 1; False if the game already exists."""

    async def load(
        self, game_id: str, *, request_id: str, player: str, kind: str, limit: int, window_ms: int
    ) -> Loaded:
        """Read for an action (and count the player's rate of ``kind``, at most
        ``limit`` per ``window_ms``; 0: no limit). Raises GameMissing or RateLimited."""

    async def read(self, game_id: str) -> Snapshot:
        """The game as it is now. Raises GameMissing."""

    async def read_with_log(self, game_id: str) -> tuple[Snapshot, list[Entry]]:
        """The game now and its whole event log, read at one instant."""

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
        """Compare-and-set: write the next version and return it.

        ``deadline_ms``: the new deadline, None for none, KEEP_DEADLINE to keep it.
        ``finished``: this version ends the game (its log is kept the finished TTL).
        Raises GameMissing, VersionConflict, or AlreadyApplied when the request id
        was applied meanwhile (a retry racing its original).
        """

    async def entries(
        self, game_id: str, after_version: int, count: int | None = None
    ) -> list[Entry]:
        """The event log's versions after ``after_version``, oldest first."""

    async def entry(self, game_id: str, version: int) -> Entry | None:
        """One version of the event log, if it is still there."""

    async def due(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """(game id, deadline) of deadlines that have passed."""

    async def forget_deadline(self, game_id: str) -> None:
        """Drop a deadline whose game is gone (expired)."""

    async def claim(self, game_id: str, due_ms: int, lease_until_ms: int) -> bool:
        """Take an expired deadline for this replica: True if it was still ``due_ms``
        (it then moves to ``lease_until_ms``, so another replica retries if we die)."""

    async def count_active(self) -> int:
        """Games in progress in the whole store: those with a deadline (a seat to act)."""


class VersionFeed(Protocol):
    """Every version of a game, as it is committed, on any replica."""

    def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        """Every version of the game after ``after_version``, in order, each once, forever."""
        ...
