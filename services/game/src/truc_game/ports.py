"""The ports of the game service: what its use cases need from the outside world.

* :class:`GameStore`: games, their event logs and their turn deadlines, with one
  atomic compare-and-set per action. Adapters:
  :class:`~truc_game.adapters.redis_store.RedisGameStore`
  (production) and :class:`~truc_game.adapters.memory.MemoryGameStore` (fast
  use-case tests).
* :class:`VersionFeed`: every new version of a game, in order, for watchers and
  sessions, and the newest version this replica knows of each game it follows
  (what a session's action is validated against). Adapters:
  :class:`~truc_game.adapters.redis_feed.WatchHub` (one pub/sub connection per
  replica; each publication carries the version itself) and
  :class:`~truc_game.adapters.memory.MemoryVersionFeed`.
* :class:`StreamLeases`: the streams each player holds open on every replica
  (leases, so a dead replica's stop counting). Adapters:
  :class:`~truc_game.adapters.redis_streams.RedisStreamLeases` and
  :class:`~truc_game.adapters.memory.MemoryStreamLeases`.

The data that crosses them (:class:`GameMeta`, :class:`Snapshot`,
:class:`Loaded`, :class:`Reader`, :class:`Entry`, :class:`Absence`,
:class:`GameLog`) and the outcomes other than success (:class:`GameMissing`,
:class:`VersionConflict`, :class:`AlreadyApplied`, :class:`RateLimited`,
:class:`NotSeated`) are defined here, once. A store
that cannot be reached raises :class:`truc_protocol.errors.Unavailable`
(reason ``STORE_UNAVAILABLE``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "FINISHED_RECORD_BYTES",
    "KEEP_DEADLINE",
    "RECORD_BYTES",
    "Absence",
    "AlreadyApplied",
    "Entry",
    "GameLog",
    "GameMeta",
    "GameMissing",
    "GameStore",
    "Listener",
    "Loaded",
    "NotSeated",
    "RateLimited",
    "Reader",
    "Snapshot",
    "StoreError",
    "StreamLeases",
    "VersionConflict",
    "VersionFeed",
    "digest_version",
    "finished_records",
    "log_record",
    "parse_record",
    "request_digest",
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
    """The request id was applied before, producing ``version`` with ``action``
    (the 2-byte action entry of its log record: a retry of the same request
    has the same one, :func:`truc_rules.action_codec.encode_action`)."""

    def __init__(self, version: int, action: bytes = b"") -> None:
        super().__init__(f"request already applied at version {version}")
        self.version = version
        self.action = action


class NotSeated(StoreError):
    """The reader holds no seat in the game (refused before its log was read)."""


class RateLimited(StoreError):
    def __init__(self, retry_after_ms: int) -> None:
        super().__init__(f"rate limited for {retry_after_ms} ms")
        self.retry_after_ms = retry_after_ms


@dataclass(frozen=True, slots=True)
class GameMeta:
    """What a game keeps besides its state: who sits where, how long a turn is,
    and what each seat's player is called (empty: the game was created without
    display names)."""

    players: tuple[str, ...]
    turn_seconds: int
    display_names: tuple[str, ...] = ()
    """One per seat, seat 0 first (:mod:`truc_protocol.display_names`), or none."""

    def encode(self) -> bytes:
        raw: dict[str, object] = {"p": list(self.players), "t": self.turn_seconds}
        if self.display_names:
            raw["n"] = list(self.display_names)
        return json.dumps(raw).encode()

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
    return GameMeta(tuple(raw["p"]), int(raw["t"]), tuple(raw.get("n", ())))


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
    prior_action: bytes = b""
    """The action entry (2 bytes) of the record ``prior_version`` wrote."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Who reads a game's whole log (GetGame), checked in the read's own step
    before the log is read: ``player`` is counted (at most ``limit`` reads per
    ``window_ms``, 0: no limit; RateLimited past it) and, if ``seated``, must
    hold a seat (NotSeated otherwise)."""

    player: str
    seated: bool
    limit: int
    window_ms: int


@dataclass(frozen=True, slots=True)
class Entry:
    """One version of the event log."""

    version: int
    state: bytes
    """The state after this version's action."""
    events: bytes
    deadline_ms: int | None
    """The deadline of the seat to act after it (None: nobody acts)."""
    request: str = ""
    """The request key (player NUL request id) of the action that made this
    version, "" if it had none (a timer's action, version 1)."""
    missed: tuple[int, ...] = ()
    """Each seat's turns in a row that the deadline sweeper played, after this
    version, seat 0 first, without trailing zeros (:mod:`truc_game.absence`)."""


@dataclass(frozen=True, slots=True)
class Absence:
    """What a commit needs to keep the game's missed turns in a row and give an
    absent seat its short deadline (:mod:`truc_game.absence`)."""

    seat: int
    """The seat whose action is committed."""
    timed_out: bool
    """Taken for it at its deadline (one more missed turn), or its player's own
    (its count goes back to zero)."""
    next_seat: int | None
    """The seat to act after it, when the commit sets a new deadline for it."""
    turns: int
    """Missed turns in a row that make a seat absent (0: never)."""
    deadline_ms: int
    """``next_seat``'s deadline if it is absent (instead of the commit's)."""
    record: bytes
    """The action's log record with that deadline."""


@dataclass(frozen=True, slots=True)
class GameLog:
    """What a game keeps to rebuild any version (:mod:`truc_game.history`): no
    version's state is stored but the first and the current one. The engine is
    deterministic, so the first state and the actions applied since give back
    every version, its state and its events."""

    snapshot: Snapshot
    """The game as it is now."""
    first_state: bytes
    """Version 1's state."""
    first_events: bytes
    """Version 1's events (the new game's)."""
    first_deadline_ms: int | None
    """Version 1's deadline."""
    records: bytes
    """The action log: one :data:`RECORD_BYTES` record per version after the
    first, in order (:func:`log_record`); :data:`FINISHED_RECORD_BYTES` once
    the game is over (:func:`finished_records`)."""
    finished: bool = False
    """The log was compacted when the game ended."""

    @property
    def record_bytes(self) -> int:
        return FINISHED_RECORD_BYTES if self.finished else RECORD_BYTES


RECORD_BYTES: Final = 16
"""One applied action in a game's log: its :mod:`truc_rules.action_codec` entry
(2 bytes: seat, action, taken at a deadline or not), the deadline it set (6
bytes, ms since the epoch, big-endian; 0: none) and the :func:`request_digest`
of its request id (8 bytes; zeros: none)."""
FINISHED_RECORD_BYTES: Final = 10
"""A record once its game is over: the deadline is dropped (no seat will act
again; a finished game's views show none), the action and the request id's
digest stay (a finished match is its replay, and a retry of its last actions
is still recognised)."""
_NO_REQUEST: Final = bytes(8)


def request_digest(request: str) -> bytes:
    """The 8 bytes a game's log keeps of a request key (player NUL request id):
    a BLAKE2b digest, so a retry is recognised however long ago its original
    was applied, at 8 bytes per action (a collision: about 2^-64 per pair)."""
    if not request:
        return _NO_REQUEST
    return hashlib.blake2b(request.encode(), digest_size=8).digest()


def log_record(action: bytes, deadline_ms: int | None, request: str) -> bytes:
    """An applied action's record in the game's log (:data:`RECORD_BYTES`)."""
    return action + (deadline_ms or 0).to_bytes(6, "big") + request_digest(request)


def parse_record(record: bytes) -> tuple[bytes, int | None]:
    """The action entry and deadline of a log record (of either size)."""
    if len(record) == FINISHED_RECORD_BYTES:
        return record[:2], None
    deadline = int.from_bytes(record[2:8], "big")
    return record[:2], deadline or None


def finished_records(records: bytes) -> bytes:
    """A game's log compacted when it ends (what the commit script does)."""
    return b"".join(
        records[at : at + 2] + records[at + 8 : at + RECORD_BYTES]
        for at in range(0, len(records), RECORD_BYTES)
    )


def digest_version(records: bytes, digest: bytes, record_bytes: int) -> tuple[int, bytes] | None:
    """The version whose record in ``records`` holds ``digest``, and that
    record's action entry (its first 2 bytes)."""
    for start in range(record_bytes - 8, len(records), record_bytes):
        if records[start : start + 8] == digest:
            begin = start - (record_bytes - 8)
            return start // record_bytes + 2, records[begin : begin + 2]
    return None


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
        ``limit`` per ``window_ms``; 0: no limit), and say whether ``request_id``
        was applied before. The rate is counted first: a retry of an applied
        request id counts too. Raises GameMissing or RateLimited."""

    async def read(self, game_id: str) -> Snapshot:
        """The game as it is now. Raises GameMissing."""

    async def read_log(self, game_id: str, reader: Reader | None = None) -> GameLog:
        """The game now and what rebuilds its every version, read at one
        instant. Raises GameMissing; with a ``reader``, RateLimited or
        NotSeated before the log is read."""

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
        """Compare-and-set: write the next version and return its entry (also
        published, with the version itself, to every replica's feed). ``record``
        (:func:`log_record`, with the request id's digest) is appended to the
        game's log; ``state`` replaces the current state; ``events`` are
        published, not stored.

        ``deadline_ms``: the new deadline, None for none, KEEP_DEADLINE to keep it.
        ``finished``: this version ends the game (its log is kept the finished TTL,
        and the game's end, won by ``winner``, goes to the ended-games stream).
        ``rate``: (player, kind, limit, window ms) counted in the same step (a
        session's action costs one round trip). ``absence``: the missed-turn
        count to move, and the short deadline that replaces ``deadline_ms`` (and
        ``record``) when the seat to act next is absent. Raises GameMissing,
        VersionConflict, RateLimited, or AlreadyApplied when the request id was
        applied before (a retry, or one racing its original).
        """

    async def due(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """(game id, deadline) of deadlines that have passed."""

    async def forget_deadline(self, game_id: str) -> None:
        """Drop a deadline whose game is gone (expired)."""

    async def claim(self, game_id: str, due_ms: int, lease_until_ms: int) -> bool:
        """Take an expired deadline for this replica: True if it was still ``due_ms``
        (it then moves to ``lease_until_ms``, so another replica retries if we die)."""

    async def count_active(self) -> int:
        """Games in progress in the whole store: those with a deadline (a seat to act)."""


class StreamLeases(Protocol):
    """The streams (WatchGame, Play) each player holds open, on every replica:
    a lease per stream, renewed by the replica holding it, so the streams of a
    replica that died stop counting once their leases run out."""

    async def take(
        self, player: str, stream: str, *, limit: int, now_ms: int, until_ms: int
    ) -> bool:
        """Lease ``stream`` for ``player`` until ``until_ms``, unless the player
        holds ``limit`` leases unexpired at ``now_ms`` already (False; 0: no limit)."""

    async def drop(self, player: str, stream: str) -> None:
        """End ``stream``'s lease (the stream closed)."""

    async def renew(self, held: Mapping[str, Collection[str]], until_ms: int) -> None:
        """Move the leases of the streams in ``held`` (player -> stream ids) to
        ``until_ms``, in one round trip."""


class Listener(Protocol):
    """What a feed hands the versions of a game to (a session)."""

    def deliver(self, entry: Entry | None) -> None:
        """A version just heard of (maybe out of order, maybe seen already), or
        None: nothing was heard of the game for a while, re-read its log (a
        publication may have been lost). Must not block."""

    def fail(self, error: Exception) -> None:
        """End the listener with ``error`` (its replica is stopping)."""


class VersionFeed(Protocol):
    """Every version of a game, as it is committed, on any replica."""

    def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        """Every version of the game after ``after_version``, in order, each once, forever."""
        ...

    async def listen(self, game_id: str, listener: Listener) -> None:
        """Hand ``listener`` every version of the game heard from now on."""

    async def unlisten(self, game_id: str, listener: Listener) -> None:
        """Stop handing ``listener`` the game's versions."""

    def latest(self, game_id: str) -> Entry | None:
        """The newest version of a followed game this replica has heard of (it
        may be behind the store: a commit against it then conflicts)."""

    def announce(self, game_id: str, entry: Entry) -> None:
        """A version this replica just committed: hand it to the local listeners
        and watchers now (its publication, heard later, is then a repeat)."""

    def rewound(self, game_id: str, entry: Entry) -> None:
        """The store holds the game at ``entry``, older than the newest version
        this replica heard of (Redis lost writes): take ``entry`` as the newest,
        so the versions written again, with the same numbers, are handed out."""
