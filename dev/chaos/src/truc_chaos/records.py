"""What the run records as it goes: the journal the checks compare with Redis.

The scripted players write into one :class:`Journal`:

* every acknowledged ``SubmitAction`` (:class:`Ack`: game, seat, request id, the
  version it produced, when the answer came);
* every version each watcher received (:class:`WatchLog`: per game and player,
  across reconnects, with its deadline and the digest of its public part; a new
  *epoch* starts when the player found the game's version had gone backward and
  watched it again from the start: :class:`Rewind`);
* every ticket and what became of it (:class:`TicketLog`);
* when each player saw a game finished (:class:`Finish`), games that vanished
  (:class:`LostGame`) and what a player ran into (:class:`Note`).

The fault injector adds the faults (:class:`FaultRecord`) and the simulated
crashes (:class:`~truc_chaos.aof.Truncation`). Times are ``time.time()`` seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from .aof import Truncation

__all__ = [
    "Ack",
    "FaultRecord",
    "Finish",
    "Journal",
    "LostGame",
    "Note",
    "Rewind",
    "Seen",
    "TicketLog",
    "WatchLog",
]


@dataclass(frozen=True, slots=True)
class Ack:
    game: str
    player: str
    seat: int
    request_id: str
    version: int
    at: float
    via: str


@dataclass(frozen=True, slots=True)
class Seen:
    """One version a watcher received."""

    version: int
    deadline_ms: int | None
    """The version's turn deadline as the view carried it (None: nobody to act, or
    a version delivered from the game log, which keeps the current deadline only)."""
    at: float
    digest: bytes = b""
    """The view's public part (:func:`truc_chaos.views.public_digest`): tells two
    histories of one version number apart."""


@dataclass(frozen=True, slots=True)
class Rewind:
    at: float
    from_version: int
    """The last version the watcher had received."""
    to_version: int
    """The game's version when the player found it lower."""


@dataclass(slots=True)
class WatchLog:
    game: str
    player: str
    seat: int
    via: str
    epochs: list[list[Seen]] = field(default_factory=lambda: [[]])
    rewinds: list[Rewind] = field(default_factory=list)
    reconnects: int = 0

    def seen(
        self, version: int, deadline_ms: int | None, at: float | None = None, digest: bytes = b""
    ) -> None:
        self.epochs[-1].append(
            Seen(version, deadline_ms, time.time() if at is None else at, digest)
        )

    def rewind(self, from_version: int, to_version: int, at: float | None = None) -> None:
        self.rewinds.append(Rewind(time.time() if at is None else at, from_version, to_version))
        self.epochs.append([])


@dataclass(slots=True)
class TicketLog:
    ticket: str
    player: str
    via: str
    created_at: float
    states: list[tuple[float, str]] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    """The games the ticket was seen matched to (normally exactly one)."""
    final: bool = False
    """A settle-time ticket (queued only to have the last result recorded, then cancelled)."""

    def state(self, state: str, game: str = "", at: float | None = None) -> None:
        self.states.append((time.time() if at is None else at, state))
        if game and game not in self.games:
            self.games.append(game)


@dataclass(frozen=True, slots=True)
class Finish:
    game: str
    player: str
    at: float


@dataclass(frozen=True, slots=True)
class LostGame:
    game: str
    player: str
    at: float
    detail: str


@dataclass(frozen=True, slots=True)
class Note:
    at: float
    player: str
    kind: str
    detail: str


@dataclass(slots=True)
class FaultRecord:
    kind: str
    started: float
    ended: float = 0.0
    detail: str = ""


@dataclass(slots=True)
class Journal:
    acks: list[Ack] = field(default_factory=list)
    watches: dict[tuple[str, str], WatchLog] = field(default_factory=dict)
    tickets: dict[str, TicketLog] = field(default_factory=dict)
    finishes: list[Finish] = field(default_factory=list)
    lost_games: list[LostGame] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    faults: list[FaultRecord] = field(default_factory=list)
    truncations: list[Truncation] = field(default_factory=list)
    redis_restarts: list[float] = field(default_factory=list)
    """When Redis came back after each kill (plain kills and crashes)."""
    players: dict[str, str] = field(default_factory=dict)
    """Player id -> its token (the checks list each player's games with it)."""
    vias: dict[str, str] = field(default_factory=dict)
    """Player id -> ``grpc`` or ``rest``."""
    names: dict[str, str] = field(default_factory=dict)
    """Player id -> the scripted player's name (``grpc3``, ``rest1``, ``extra7``...)."""
    drops: Counter[str] = field(default_factory=Counter)
    """Client-side drops the players caused, by kind."""
    started: float = field(default_factory=time.time)

    def watch(self, game: str, player: str, seat: int, via: str) -> WatchLog:
        found = self.watches.get((game, player))
        if found is None:
            found = self.watches[(game, player)] = WatchLog(game, player, seat, via)
        return found

    def note(self, player: str, kind: str, detail: str) -> None:
        self.notes.append(Note(time.time(), player, kind, detail))

    def fault(self, kind: str, detail: str = "") -> FaultRecord:
        record = FaultRecord(kind, time.time(), detail=detail)
        self.faults.append(record)
        return record

    @property
    def games_completed(self) -> set[str]:
        return {f.game for f in self.finishes}
