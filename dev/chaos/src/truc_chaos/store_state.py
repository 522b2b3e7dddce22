"""What Redis holds at the end of a run, read directly (not through the proxy) into
plain data the checks (:mod:`truc_chaos.checks`) can compare with the journal.

The keys are the services' own (``truc_game.adapters.redis_keys``,
``truc_redis.game_ends``, ``truc_lobby.store``, ``results``, ``history``):

* a game ``truc:{gN}:game:<id>`` (hash ``v`` version, ``s`` state, ``m`` meta,
  ``d`` the current deadline, ``f`` ``e`` ``g`` version 1's state, events and
  deadline) and its log ``...:log`` (a string, one
  :data:`~truc_game.ports.RECORD_BYTES` record per version after the first: the
  action, the deadline it set, its request id's digest;
  :func:`truc_game.ports.log_record`), read at one instant (MULTI/EXEC) with its
  score in the deadline index ``truc:{gN}:deadlines`` and its time to live. No
  other version's state is stored: the checks rebuild every version by replaying
  the log from version 1;
* each shard's ended-games stream ``truc:{gN}:ended`` (one entry per finished
  game), read before and after the games, so that a game read unfinished cannot
  have ended before the first read and one read finished has ended by the second;
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

from truc_game.adapters.redis_keys import SHARDS, Keys, deadlines
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
from truc_redis.game_ends import GameEnd, ended_stream
from truc_rules import decode_state
from truc_rules.truc_y_flou.state import Phase

__all__ = ["Ended", "GameState", "StoreState", "TicketState", "read_store"]

_GAME_KEY: Final = re.compile(r"^truc:\{g(\d+)\}:game:([A-Za-z0-9_-]+)$")


@dataclass(slots=True)
class GameState:
    game: str
    """The game id (``games/<id>`` in the API)."""
    version: int
    players: tuple[str, ...]
    turn_seconds: int
    deadline_ms: int | None
    """The current version's deadline (``d``)."""
    finished: bool
    phase: str
    winner: int | None = None
    """The match's winning team once finished (None: no winner, or unfinished)."""
    state: bytes = b""
    """The current state as stored (``s``)."""
    first_state: bytes = b""
    """Version 1's state (``f``)."""
    first_events: bytes = b""
    """Version 1's events (``e``)."""
    first_deadline_ms: int | None = None
    """Version 1's deadline (``g``)."""
    log: bytes = b""
    compacted: bool = False
    """The log was compacted when the game ended (FINISHED_RECORD_BYTES records,
    no deadlines)."""
    """The game's log (``...:log``): one record per version after the first."""
    unreadable: list[str] = field(default_factory=list)
    """What could not be read as the service writes it (a finding in itself)."""
    indexed_deadline: float | None = None
    """The game's score in its shard's deadline index (None: not there)."""
    last_commit_ms: float | None = None
    """When its last version was written: the ended-games entry of a finished game
    (Redis's clock), else told by its time to live (every commit sets it; the
    finished TTL for the version that ends it)."""

    @property
    def created_ms(self) -> float | None:
        """When version 1 was written (its deadline minus the turn time)."""
        if self.first_deadline_ms is None:
            return None
        return self.first_deadline_ms - self.turn_seconds * 1000.0

    @property
    def humans(self) -> list[str]:
        return [p for p in self.players if not p.startswith("bot:")]

    def seat_of(self, player: str) -> int | None:
        try:
            return self.players.index(player)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Ended:
    """One entry of a shard's ended-games stream."""

    at_ms: int
    """When the commit finishing the game wrote it (the entry id's time)."""
    winner: str
    """``A``, ``B`` or empty (no winner)."""


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
    ended: dict[str, list[Ended]] = field(default_factory=dict)
    """Game id -> its entries in its shard's ended-games stream, read after the games."""
    ended_before: set[str] = field(default_factory=set)
    """The games with an ended-games entry already when the streams were read
    before the games."""


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
    pipe = client.pipeline(transaction=True)  # one game at one instant: MULTI/EXEC
    pipe.hmget(keys.game, ["v", "s", "m", "d", "f", "e", "g", "c"])
    pipe.get(keys.log)
    pipe.zscore(deadlines(keys.shard), game)
    pipe.pttl(keys.game)
    values, log, score, left = cast(
        tuple[list[bytes | None], bytes | None, float | None, int], pipe.execute()
    )
    if values[0] is None:
        return None
    unreadable: list[str] = []
    try:
        meta = GameMeta.decode(values[2] or b"")
    except (ValueError, KeyError, TypeError) as error:
        unreadable.append(f"meta {values[2]!r}: {error}")
        meta = GameMeta((), 0)
    winner: int | None = None
    try:
        state = decode_state(bytes(values[1] or b""))
        finished = is_over(state)
        phase_name = Phase(state.phase).name
        winner = state.winner if finished else None
    except Exception as error:  # a state the engine cannot read is itself a finding
        finished, phase_name = False, f"undecodable: {error}"
        unreadable.append(f"current state: {error}")
    found = GameState(
        game=game,
        version=int(values[0]),
        players=meta.players,
        turn_seconds=meta.turn_seconds,
        deadline_ms=int(values[3]) if values[3] else None,
        finished=finished,
        phase=phase_name,
        winner=winner,
        state=bytes(values[1] or b""),
        first_state=bytes(values[4] or b""),
        first_events=bytes(values[5] or b""),
        first_deadline_ms=int(values[6]) if values[6] else None,
        log=bytes(log or b""),
        compacted=bool(values[7]),
        unreadable=unreadable,
        indexed_deadline=None if score is None else float(score),
    )
    if left > 0:
        ttl_ms = (ttls[1] if finished else ttls[0]) * 1000
        found.last_commit_ms = time.time() * 1000 - (ttl_ms - left)
    return found


def _ended(client: redis.Redis) -> dict[str, list[Ended]]:
    """Every shard's ended-games entries, by game."""
    pipe = client.pipeline(transaction=False)
    for shard in range(SHARDS):
        pipe.xrange(ended_stream(shard))
    found: dict[str, list[Ended]] = {}
    for entries in cast(list[list[tuple[bytes, dict[bytes, bytes]]]], pipe.execute()):
        for entry_id, fields in entries:
            try:
                end = GameEnd.from_fields(fields)
            except ValueError:
                continue  # not the game service's: the lobby skips it too
            at_ms = int(_text(entry_id).split("-", 1)[0])
            winner = "" if end.winner is None else "AB"[end.winner]
            found.setdefault(end.game_id, []).append(Ended(at_ms, winner))
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
    state.ended_before = set(_ended(client))
    for key in _scan(client, "truc:{g*}:game:*"):
        matched = _GAME_KEY.match(key)
        if matched is None:
            continue
        game = _game(client, matched.group(2), ttls)
        if game is not None:
            state.games[game.game] = game
    state.ended = _ended(client)
    for game in state.games.values():
        ends = state.ended.get(game.game, [])
        if game.finished and len(ends) == 1:
            game.last_commit_ms = float(ends[0].at_ms)  # Redis's clock, not a TTL's
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
