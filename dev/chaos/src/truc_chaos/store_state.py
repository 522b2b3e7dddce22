"""What Redis holds at the end of a run, read directly (not through the proxy) into
plain data the checks (:mod:`truc_chaos.checks`) can compare with the journal.

The keys are the services' own (``truc_game.adapters.redis_keys``,
``truc_lobby.store``, ``results``, ``history``):

* a game ``truc:{gN}:game:<id>`` (hash ``v`` ``s`` ``m`` ``d``), its event log
  ``...:events`` (a stream, one entry ``<version>-0`` per version, field ``d`` the
  deadline it set) and its request ids ``...:requests`` (player NUL request id ->
  version); the deadline index ``truc:{gN}:deadlines``;
* tickets ``truc:{lobby}:ticket:<id>`` (``s`` state, ``m`` members, ``g`` game,
  ``t`` table), the queue, each player's live key, the ratings hash, each
  player's history (a sorted set of game ids), each game's summary, the games
  the results follower still follows (``truc:{lobby}:active`` and
  ``truc:{lobby}:game:<id>``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Final, cast

import redis

from truc_game.adapters.redis_keys import Keys, deadlines
from truc_game.ports import GameMeta
from truc_game.service import is_over
from truc_lobby.history import GameRecord, history_key, summary_key
from truc_lobby.store import (
    ACTIVE,
    CLAIMS,
    QUEUE,
    RATINGS,
    StoredTicket,
    player_key,
    ticket_key,
    tracking_key,
)
from truc_rules import decode_state
from truc_rules.truc_y_flou.state import Phase

__all__ = ["GameState", "LogEntry", "StoreState", "TicketState", "read_store"]

_GAME_KEY: Final = re.compile(r"^truc:\{g(\d+)\}:game:([A-Za-z0-9_-]+)$")


@dataclass(frozen=True, slots=True)
class LogEntry:
    entry_id: str
    """The stream entry id as stored (``<version>-0``)."""
    deadline_ms: int | None


@dataclass(slots=True)
class GameState:
    game: str
    """The game id (``games/<id>`` in the API)."""
    version: int
    players: tuple[str, ...]
    turn_seconds: int
    deadline_ms: int | None
    finished: bool
    phase: str
    log: list[LogEntry] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    """``player NUL request id`` -> the version it produced."""
    indexed_deadline: float | None = None
    """The game's score in its shard's deadline index (None: not there)."""
    last_commit_ms: float | None = None
    """When its last version was written: every commit sets the game's time to live
    (the finished TTL for the version that ends it), so the time left tells."""

    @property
    def humans(self) -> list[str]:
        return [p for p in self.players if not p.startswith("bot:")]

    def entry(self, version: int) -> LogEntry | None:
        if 1 <= version <= len(self.log) and self.log[version - 1].entry_id == f"{version}-0":
            return self.log[version - 1]
        for found in self.log:
            if found.entry_id == f"{version}-0":
                return found
        return None

    @property
    def created_ms(self) -> float | None:
        """When version 1 was written (its deadline minus the turn time)."""
        first = self.entry(1)
        if first is None or first.deadline_ms is None:
            return None
        return first.deadline_ms - self.turn_seconds * 1000.0


@dataclass(frozen=True, slots=True)
class TicketState:
    ticket: str
    state: str
    members: tuple[str, ...]
    game: str
    table: tuple[tuple[int, str, bool], ...]
    created_ms: int
    claim: str = ""
    """While MATCHING (lobbies that keep claims): the claim holding the ticket."""


@dataclass(slots=True)
class StoreState:
    read_at: float = field(default_factory=time.time)
    games: dict[str, GameState] = field(default_factory=dict)
    tickets: dict[str, TicketState] = field(default_factory=dict)
    queue: set[str] = field(default_factory=set)
    live: dict[str, str] = field(default_factory=dict)
    ratings: dict[str, float] = field(default_factory=dict)
    history: dict[str, list[str]] = field(default_factory=dict)
    summaries: dict[str, GameRecord] = field(default_factory=dict)
    active: dict[str, float] = field(default_factory=dict)
    tracked: set[str] = field(default_factory=set)
    claims: dict[str, float] = field(default_factory=dict)
    """Claimed tables not seated yet: claim (the game id it will get) -> lease expiry ms."""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _scan(client: redis.Redis, pattern: str) -> list[str]:
    return [_text(k) for k in client.scan_iter(match=pattern, count=1000)]


def _hash(client: redis.Redis, key: str) -> dict[bytes, bytes]:
    return cast(dict[bytes, bytes], client.hgetall(key))


def _members(client: redis.Redis, key: str) -> list[bytes]:
    return cast(list[bytes], client.zrange(key, 0, -1))


_WEEK: Final = 7 * 24 * 3600


def _game(client: redis.Redis, game: str, ttls: tuple[int, int]) -> GameState | None:
    keys = Keys(game)
    values = cast(list[bytes | None], client.hmget(keys.game, ["v", "s", "m", "d"]))
    if values[0] is None:
        return None
    meta = GameMeta.decode(values[2]) if values[2] else GameMeta((), 0)
    try:
        state = decode_state(bytes(values[1] or b""))
        finished = is_over(state)
        phase_name = Phase(state.phase).name
    except Exception as error:  # a state the engine cannot read is itself a finding
        finished, phase_name = False, f"undecodable: {error}"
    found = GameState(
        game=game,
        version=int(values[0]),
        players=meta.players,
        turn_seconds=meta.turn_seconds,
        deadline_ms=int(values[3]) if values[3] else None,
        finished=finished,
        phase=phase_name,
    )
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrange(keys.events))
    for entry_id, fields in entries:
        deadline = fields.get(b"d")
        found.log.append(LogEntry(_text(entry_id), int(deadline) if deadline else None))
    found.requests = {_text(k): int(v) for k, v in _hash(client, keys.requests).items()}
    score = cast(float | None, client.zscore(deadlines(keys.shard), game))
    found.indexed_deadline = None if score is None else float(score)
    left = cast(int, client.pttl(keys.game))
    if left > 0:
        ttl_ms = (ttls[1] if finished else ttls[0]) * 1000
        found.last_commit_ms = time.time() * 1000 - (ttl_ms - left)
    return found


def read_store(
    url: str, *, game_ttl_seconds: int = _WEEK, finished_ttl_seconds: int = _WEEK
) -> StoreState:
    """Everything the checks need, read from the Redis at ``url``; the TTLs are the
    game service's (``TRUC_GAME_TTL_SECONDS``, ``TRUC_FINISHED_GAME_TTL_SECONDS``)."""
    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        return _read(client, (game_ttl_seconds, finished_ttl_seconds))
    finally:
        client.close()


def _read(client: redis.Redis, ttls: tuple[int, int]) -> StoreState:
    state = StoreState()
    for key in _scan(client, "truc:{g*}:game:*"):
        matched = _GAME_KEY.match(key)
        if matched is None:
            continue
        game = _game(client, matched.group(2), ttls)
        if game is not None:
            state.games[game.game] = game
    prefix = ticket_key("")
    for key in _scan(client, prefix + "*"):
        raw = _hash(client, key)
        if not raw:
            continue
        stored = StoredTicket.decode(key.removeprefix(prefix), raw)
        state.tickets[stored.ticket] = TicketState(
            ticket=stored.ticket,
            state=stored.state,
            members=tuple(player for player, _, _ in stored.members),
            game=stored.game,
            table=stored.table,
            created_ms=stored.created_ms,
            claim=stored.claim,
        )
    state.queue = {_text(k) for k in _hash(client, QUEUE)}
    prefix = player_key("")
    for key in _scan(client, prefix + "*"):
        held = client.get(key)
        if held is not None:
            state.live[key.removeprefix(prefix)] = _text(held)
    state.ratings = {_text(k): float(v) for k, v in _hash(client, RATINGS).items()}
    prefix = history_key("")
    for key in _scan(client, prefix + "*"):
        state.history[key.removeprefix(prefix)] = [_text(g) for g in _members(client, key)]
    prefix = summary_key("")
    for key in _scan(client, prefix + "*"):
        raw_summary = cast(bytes | None, client.get(key))
        if raw_summary is not None:
            state.summaries[key.removeprefix(prefix)] = GameRecord.decode(raw_summary)
    state.active = {
        _text(member): float(score)
        for member, score in cast(
            list[tuple[bytes, float]], client.zrange(ACTIVE, 0, -1, withscores=True)
        )
    }
    state.claims = {
        _text(member): float(score)
        for member, score in cast(
            list[tuple[bytes, float]], client.zrange(CLAIMS, 0, -1, withscores=True)
        )
    }
    prefix = tracking_key("")
    state.tracked = {key.removeprefix(prefix) for key in _scan(client, prefix + "*")}
    state.read_at = time.time()
    return state
