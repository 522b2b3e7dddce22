"""The lobby's Redis store: tickets, the queue, ratings, bot jobs.

Every key shares the hash tag ``{lobby}``, so each Lua script below touches one
slot (Redis Cluster keeps the lobby on one node; its load is small next to the
games'). Every change of a ticket is one atomic script, and is published on the
ticket's channel for watchers on any replica:

* ``CREATE``: refuses a leader who already holds a live ticket; a solo ticket is
  queued at once, a party ticket waits for its members' confirmations.
* ``CONFIRM``: a member confirms (refused if they hold another live ticket);
  the last confirmation queues the ticket.
* ``CLOSE``: cancel or expire a ticket that is not matched yet.
* ``FOLLOW``: a member follows an open ticket (WatchTicket, GetTicket): when is
  recorded for the presence check, and a watcher also keeps it from expiring.
* ``CLAIM``: the matcher takes a table's tickets out of the queue, all or none,
  so no player is ever seated twice, and writes the table down as a
  :class:`Claim` (its seats, options and the game id it will have) under a
  lease; ``SEAT`` then records the game, starts following it for results
  (:mod:`truc_lobby.results`) and queues its bot jobs, all in one step, or
  ``UNCLAIM`` puts the tickets back if the game service refused the game.
  A claim whose lease runs out (its lobby died, or the create's answer was
  lost) is taken up again by the next matching round of any replica, which
  repeats the create with the same game id (``CreateGame`` is idempotent for
  it): a claimed table gets exactly one game, and its tickets end in it or
  back in the queue.

The seat also writes the game's :class:`SeatedTable` (its rule set, options,
seats with the players' display names, when it was seated, whether the table is
private) under :func:`table_key` for the history retention, and, for a public
table, adds the game to the live sets (:data:`LIVE`, :func:`live_key`) that
ListLiveGames pages through (:mod:`truc_lobby.live`); the results follower
takes it out of them when it records the end. Each seat first drops from them
the games seated more than :data:`LIVE_BOUND_MS` ago (a game whose end the
lobby never learned does not stay listed).

Each matching round writes how many players wait in each queue
(:data:`WAITING`, :meth:`LobbyStore.set_waiting`); :meth:`LobbyStore.get` reads a
queued ticket's count with the ticket, in one call (``players_waiting``).

Display names: each member's is stored with the ticket (the leader's at
CreateTicket, a party member's at ConfirmTicket), carried in the queue entry,
the claim and the seated table's record.

Every public method of :class:`LobbyStore` (and of the other Redis adapters the
use cases call: :class:`~truc_lobby.history.GameHistory`,
:meth:`~truc_lobby.results.ResultsFollower.settle`) raises
:class:`~truc_protocol.errors.Unavailable` ``STORE_UNAVAILABLE`` when Redis
fails (:func:`store_call`), never a ``RedisError``: callers see the protocol's
error, the API layer imports no store.

Ratings are kept per rule set (:func:`ratings_key`): a player's French Truc
rating is not their Truc y Flou rating; Truc y Flou's stay in the hash they
always had.

A player's "live ticket" key exists from creation (leader) or confirmation
(member) until the ticket is cancelled or expired; once the ticket is matched
it names the game, until the game ends (:mod:`truc_lobby.results`): a player
is never in two games at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from truc_redis.connection import RedisClient, script
from truc_redis.errors import translate_errors
from truc_rules.rule_set import RuleSet
from truc_telemetry.metrics import timed

from .rule_sets import PRIVATE_SUFFIX, stored_rules

__all__ = [
    "ACTIVE",
    "CLAIMS",
    "DELETE_IF_EQUAL",
    "FOLLOWED",
    "LIVE",
    "LIVE_BOUND_MS",
    "WAITING",
    "Claim",
    "LobbyStore",
    "Queue",
    "SeatedTable",
    "StoredTicket",
    "Tracked",
    "bot_name",
    "live_key",
    "ratings_key",
    "store_call",
    "table_key",
    "tracking_key",
]

P: Final = "truc:{lobby}"
QUEUE: Final = f"{P}:queue"
HEARTBEATS: Final = f"{P}:heartbeats"
"""Queued tickets -> when a watcher last kept them alive (ms; the queue time at
first): a ticket nobody watches for the grace period expires."""
FOLLOWED: Final = f"{P}:followed"
"""Open tickets -> when one of their members last followed them (ms): a
WatchTicket stream's heartbeat or a GetTicket. Only a ticket followed within
the presence window takes part in matching (:mod:`truc_lobby.matcher`)."""
AWAITING: Final = f"{P}:awaiting"
"""Party tickets waiting for confirmations, scored by creation time."""
RATINGS: Final = f"{P}:ratings"
"""Truc y Flou's ratings: player -> rating (:func:`ratings_key`)."""
MATCHER_LOCK: Final = f"{P}:matcher"
BOT_JOBS: Final = f"{P}:bots"
CLAIMS: Final = f"{P}:claims"
"""Claimed tables not yet seated (or put back): claim id -> lease expiry (ms)."""
ACTIVE: Final = f"{P}:active"
"""Games whose result the lobby awaits: game id -> when the results sweep looks at
it next (ms; 0: just seated)."""
CHANNEL_PREFIX: Final = "truc:lobby:ticket:"
LIVE: Final = f"{P}:live"
"""Games being played at public tables: game id -> when seated (ms)."""
WAITING: Final = f"{P}:waiting"
"""Queue key -> players waiting in that queue (followed queued tickets, every
member), as the last matching round counted them."""


store_call = translate_errors("lobby store")
"""Decorates a lobby Redis adapter method: a ``RedisError`` becomes
:class:`~truc_redis.errors.StoreUnavailable` (the Redis error is its ``__cause__``)."""


def ticket_key(ticket: str) -> str:
    return f"{P}:ticket:{ticket}"


def player_key(player: str) -> str:
    return f"{P}:player:{player}"


def channel(ticket: str) -> str:
    return CHANNEL_PREFIX + ticket


def claim_key(claim: str) -> str:
    return f"{P}:claim:{claim}"


def ratings_key(rule_set: RuleSet) -> str:
    """The hash of the players' ratings in ``rule_set`` (player -> rating):
    :data:`RATINGS` for Truc y Flou (as before the other rule sets), else
    ``{P}:ratings:<rule set>``."""
    return RATINGS if rule_set == RuleSet.TRUC_Y_FLOU else f"{RATINGS}:{rule_set}"


def live_key(rule_set: RuleSet) -> str:
    """The live public games of one rule set (game id -> when seated, ms)."""
    return f"{LIVE}:{rule_set}"


def table_key(game: str) -> str:
    """The :class:`SeatedTable` of a game the lobby seated (kept for the history
    retention: live listing, spectator grants, history names)."""
    return f"{P}:table:{game}"


def bot_name(seat: int) -> str:
    """What a bot is called at the table: "Bot" and its seat (0-based, as the
    protocol numbers seats)."""
    return f"Bot {seat}"


def tracking_key(game: str) -> str:
    """The seats (player, bot, rating) of a game the lobby follows until it
    ends, and its rule set and table size (:class:`Tracked`)."""
    return f"{P}:game:{game}"


@dataclass(frozen=True, slots=True)
class Tracked:
    """A game the lobby follows until it ends (:func:`tracking_key`)."""

    rule_set: RuleSet
    seats: tuple[tuple[int, str, bool, float], ...]
    """(seat, player, bot, rating), seat 0 first: six, four or two."""

    def encode(self) -> str:
        """Truc y Flou's as the list of seats older lobbies wrote and read (a
        replica of one still rates the game in a rolling update); any other
        rule set's as ``{"r": rule set, "s": seats}``."""
        seats = [list(s) for s in self.seats]
        if self.rule_set == RuleSet.TRUC_Y_FLOU:
            return json.dumps(seats)
        return json.dumps({"r": str(self.rule_set), "s": seats})

    @staticmethod
    def decode(raw: bytes | str) -> Tracked:
        data = json.loads(raw)
        if isinstance(data, list):  # written by a lobby older than the rule sets
            rule_set, seats = RuleSet.TRUC_Y_FLOU, data
        else:
            rule_set, seats = RuleSet(data["r"]), data["s"]
        return Tracked(rule_set, tuple((int(s), str(p), bool(b), float(r)) for s, p, b, r in seats))

    @property
    def seat_count(self) -> int:
        return len(self.seats)


@dataclass(frozen=True, slots=True)
class SeatedTable:
    """A game as the lobby seated it (:func:`table_key`)."""

    game: str
    rule_set: RuleSet
    options: bytes
    """The serialized truc.v1.RuleOptions (normalized)."""
    seats: tuple[tuple[int, str, bool, str], ...]
    """(seat, player, bot, display name), seat 0 first."""
    start_ms: int
    private: bool

    @property
    def seat_count(self) -> int:
        return len(self.seats)

    def holds(self, player: str) -> bool:
        """``player`` sat at this table (a human seat)."""
        return any(p == player and not bot for _, p, bot, _ in self.seats)

    def encode(self) -> str:
        return json.dumps(
            {
                "r": str(self.rule_set),
                "o": self.options.hex(),
                "s": [list(seat) for seat in self.seats],
                "t": self.start_ms,
                "p": int(self.private),
            },
            separators=(",", ":"),
        )

    @staticmethod
    def decode(game: str, raw: bytes | str) -> SeatedTable:
        data = json.loads(raw)
        return SeatedTable(
            game=game,
            rule_set=RuleSet(data["r"]),
            options=bytes.fromhex(data["o"]),
            seats=tuple((int(s), str(p), bool(b), str(n)) for s, p, b, n in data["s"]),
            start_ms=int(data["t"]),
            private=bool(data["p"]),
        )


@dataclass(frozen=True, slots=True)
class StoredTicket:
    ticket: str
    state: str
    """AWAITING, QUEUED, MATCHING, MATCHED, CANCELLED or EXPIRED."""
    leader: str
    members: tuple[tuple[str, bool, float], ...]
    """(player, confirmed, rating), the leader first."""
    options: bytes
    """The serialized truc.v1.RuleOptions."""
    created_ms: int
    game: str
    table: tuple[tuple[int, str, bool], ...]
    """(seat, player, bot) once matched."""
    queued_ms: int
    """When it entered the queue (0 if it never did)."""
    matched_ms: int
    """When it was seated (0 if not)."""
    claim: str = ""
    """While MATCHING: the claim holding it (the id of the game it will get)."""
    member_names: tuple[str, ...] = ()
    """Each member's display name (as ``members``; "": none, or not confirmed yet)."""
    table_names: tuple[str, ...] = ()
    """Each seat's display name once matched (as ``table``)."""
    private: bool = False
    """A private table's ticket (its queue key says so)."""
    players_waiting: int = 0
    """Queued: the players of its queue the last matching round counted (0: not
    read, or not queued)."""

    @staticmethod
    def decode(ticket: str, raw: dict[bytes, bytes], players_waiting: int = 0) -> StoredTicket:
        """The ticket from its hash as stored (``HGETALL``)."""
        members = json.loads(raw[b"m"])
        table = json.loads(raw.get(b"t", b"[]"))
        return StoredTicket(
            ticket=ticket,
            state=raw[b"s"].decode(),
            leader=raw[b"l"].decode(),
            members=tuple((m[0], bool(m[1]), float(m[2])) for m in members),
            options=raw[b"o"],
            created_ms=int(raw[b"c"]),
            game=raw.get(b"g", b"").decode(),
            table=tuple((int(t[0]), t[1], bool(t[2])) for t in table),
            queued_ms=int(raw.get(b"q", 0)),
            matched_ms=int(raw.get(b"a", 0)),
            claim=raw.get(b"x", b"").decode(),
            member_names=tuple(str(m[3]) if len(m) > 3 else "" for m in members),
            table_names=tuple(str(t[3]) if len(t) > 3 else "" for t in table),
            private=raw.get(b"k", b"").decode().endswith(PRIVATE_SUFFIX),
            players_waiting=players_waiting,
        )


_CREATE = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], 's', ARGV[7], 'l', ARGV[2], 'm', ARGV[3], 'o', ARGV[4],
  'k', ARGV[5], 'c', ARGV[6])
if ARGV[7] == 'AWAITING' then redis.call('ZADD', KEYS[5], ARGV[6], ARGV[1]) end
if ARGV[7] == 'QUEUED' then
  redis.call('HSET', KEYS[1], 'q', ARGV[6])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[8])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[6])
end
redis.call('PUBLISH', ARGV[9], ARGV[7])
return 1
"""

_CONFIRM = """
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 0 end
local members = cjson.decode(redis.call('HGET', KEYS[1], 'm'))
local mine = nil
for i, m in ipairs(members) do if m[1] == ARGV[2] then mine = i end end
if not mine then return 2 end
if s ~= 'AWAITING' then
  if members[mine][2] == 1 and s ~= 'CANCELLED' and s ~= 'EXPIRED' then return 5 end
  return 1
end
if members[mine][2] == 1 then return 5 end
local held = redis.call('GET', KEYS[3])
if held and held ~= ARGV[1] then return 4 end
redis.call('SET', KEYS[3], ARGV[1])
members[mine][2] = 1
for i, m in ipairs(members) do if m[4] == nil then m[4] = '' end end
members[mine][4] = ARGV[5]
redis.call('HSET', KEYS[1], 'm', cjson.encode(members))
for _, m in ipairs(members) do if m[2] ~= 1 then
  redis.call('PUBLISH', ARGV[4], 'AWAITING')
  return 5
end end
redis.call('HSET', KEYS[1], 's', 'QUEUED', 'q', ARGV[3])
redis.call('ZREM', KEYS[5], ARGV[1])
local entry = {m = {}, k = redis.call('HGET', KEYS[1], 'k'), q = tonumber(ARGV[3])}
for _, m in ipairs(members) do table.insert(entry.m, {m[1], m[3], m[4]}) end
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(entry))
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], 'QUEUED')
return 5
"""

_CLOSE = """
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 0 end
if s ~= 'AWAITING' and s ~= 'QUEUED' then return 1 end
redis.call('HSET', KEYS[1], 's', ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
for i = 6, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 2
"""

_CLAIM = """
local entries = {}
for i = 6, #KEYS do
  if redis.call('HGET', KEYS[i], 's') ~= 'QUEUED' then return 0 end
  local entry = redis.call('HGET', KEYS[1], ARGV[i - 2])
  if not entry then return 0 end
  entries[i - 5] = entry
end
for i = 6, #KEYS do
  redis.call('HSET', KEYS[i], 's', 'MATCHING', 'x', ARGV[1])
  redis.call('HDEL', KEYS[1], ARGV[i - 2])
  redis.call('HDEL', KEYS[2], ARGV[i - 2])
  redis.call('HDEL', KEYS[5], ARGV[i - 2])
end
redis.call('HSET', KEYS[4], 'd', ARGV[3], 'e', cjson.encode(entries))
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
return 1
"""

_UNCLAIM = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
local entries = cjson.decode(redis.call('HGET', KEYS[2], 'e'))
for i = 5, #KEYS do
  redis.call('HSET', KEYS[i], 's', 'QUEUED')
  redis.call('HDEL', KEYS[i], 'x')
  redis.call('HSET', KEYS[3], ARGV[i - 2], entries[i - 4])
  redis.call('HSET', KEYS[4], ARGV[i - 2], ARGV[2])
end
redis.call('DEL', KEYS[2])
return 1
"""

_SEAT = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
local n = tonumber(ARGV[2])
for i = 9, 8 + n do
  redis.call('HSET', KEYS[i], 's', 'MATCHED', 'g', ARGV[1], 't', ARGV[3], 'a', ARGV[5])
  redis.call('HDEL', KEYS[i], 'x')
  redis.call('PEXPIRE', KEYS[i], ARGV[4])
end
for i = 9 + n, #KEYS do redis.call('SET', KEYS[i], 'game:' .. ARGV[1], 'PX', ARGV[6]) end
redis.call('SET', KEYS[4], ARGV[7])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
redis.call('SET', KEYS[6], ARGV[9], 'PX', ARGV[10])
for k = 7, 8 do
  if ARGV[11] == '1' then redis.call('ZADD', KEYS[k], ARGV[5], ARGV[1]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', ARGV[12])
end
local bots = tonumber(ARGV[8])
for j = 0, bots - 1 do
  local b = 13 + 3 * j
  redis.call('XADD', KEYS[5], '*', 'game', ARGV[1], 'seat', ARGV[b], 'player', ARGV[b + 1],
    'token', ARGV[b + 2])
end
for i = 13 + 3 * bots, #ARGV do redis.call('PUBLISH', ARGV[i], 'MATCHED') end
return 1
"""

_GET = """
local raw = redis.call('HGETALL', KEYS[1])
local waiting = 0
if redis.call('HGET', KEYS[1], 's') == 'QUEUED' then
  local key = redis.call('HGET', KEYS[1], 'k')
  if key then waiting = tonumber(redis.call('HGET', KEYS[2], key) or '0') end
end
return {raw, waiting}
"""

_SET_WAITING = """
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if #ARGV > 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
"""

_DEFER = """
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease then return 0 end
if ARGV[3] ~= '' and tonumber(lease) > tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""

_QUEUE = """
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
  redis.call('HGETALL', KEYS[3])}
"""

_FOLLOW = """
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'AWAITING' and s ~= 'QUEUED' then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] == '1' and redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
end
return 1
"""

DELETE_IF_EQUAL: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
"""Deletes KEYS[1] if it holds ARGV[1] (a lock's owner, a player's game)."""

CLOSED_TTL_MS: Final = 3600 * 1000
"""Closed (matched, cancelled, expired) tickets stay readable this long."""
PLAYING_TTL_MS: Final = 6 * 3600 * 1000
"""A seated player may not queue again until their game ends (the results
follower releases them), or at the latest after this long."""
LIVE_BOUND_MS: Final = PLAYING_TTL_MS
"""A game stays in the live sets until the lobby records its end, or at the
latest this long after it was seated (longer than any match lasts)."""
DEFAULT_RECORD_MS: Final = 7 * 24 * 3600 * 1000
"""How long a seated table's record is kept unless told (the history retention's default)."""


@dataclass(frozen=True, slots=True)
class Queue:
    """The queue as one matching round reads it (:meth:`LobbyStore.queue`)."""

    tickets: dict[str, dict[str, Any]]
    """Queued ticket -> its entry: members with ratings (``m``), options key
    (``k``), queue time (``q``, ms)."""
    beats: dict[str, int]
    """Queued ticket -> its last heartbeat (ms): the grace expiry's clock."""
    followed: dict[str, int]
    """Open ticket -> when a member last followed it (ms): the presence check's clock."""


def _times(flat: Sequence[bytes]) -> dict[str, int]:
    """A flat ``HGETALL`` reply of ticket -> milliseconds."""
    return {k.decode(): int(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}


@dataclass(frozen=True, slots=True)
class Claim:
    """A table the matcher has taken out of the queue, until it is seated or put
    back. Its id is the id of the game it gets (so a repeated create of it is
    recognised by the game service)."""

    game: str
    tickets: tuple[str, ...]
    """The humans' tickets (bots have none)."""
    seats: tuple[tuple[int, str, bool, float], ...]
    """(seat, player, bot, rating), seat 0 first (six, four or two seats)."""
    options: bytes
    """The serialized truc.v1.RuleOptions (normalized: :mod:`truc_lobby.rule_sets`)."""
    turn_seconds: int
    names: tuple[str, ...] = ()
    """Each seat's display name, seat 0 first (a bot's: :func:`bot_name`; "":
    a player whose token had none, or a claim written before display names)."""
    private: bool = False
    """A private table: not listed, no spectator grant."""

    def encode(self) -> str:
        return json.dumps(
            {
                "t": list(self.tickets),
                "s": [list(s) for s in self.seats],
                "o": self.options.hex(),
                "u": self.turn_seconds,
                "n": list(self.names),
                "p": int(self.private),
            }
        )

    @staticmethod
    def decode(game: str, raw: bytes) -> Claim:
        data = json.loads(raw)
        return Claim(
            game=game,
            tickets=tuple(data["t"]),
            seats=tuple((int(s), p, bool(b), float(r)) for s, p, b, r in data["s"]),
            options=bytes.fromhex(data["o"]),
            turn_seconds=int(data["u"]),
            names=tuple(str(n) for n in data.get("n", ())),
            private=bool(data.get("p", 0)),
        )

    @property
    def players(self) -> list[str]:
        """The players, seat 0 first (CreateGame's ``players``)."""
        return [player for _, player, _, _ in self.seats]

    def seat_names(self) -> list[str]:
        """Each seat's display name, seat 0 first ("" where none is known)."""
        return [self.names[i] if i < len(self.names) else "" for i in range(len(self.seats))]

    def seated(self, start_ms: int) -> SeatedTable:
        """The record of this claim's game, seated at ``start_ms``."""
        names = self.seat_names()
        return SeatedTable(
            game=self.game,
            rule_set=self.rule_set,
            options=self.options,
            seats=tuple(
                (seat, player, bot, names[i]) for i, (seat, player, bot, _) in enumerate(self.seats)
            ),
            start_ms=start_ms,
            private=self.private,
        )

    @property
    def rule_set(self) -> RuleSet:
        return stored_rules(self.options).rule_set


class LobbyStore:
    def __init__(self, redis: RedisClient, *, record_ms: int = DEFAULT_RECORD_MS) -> None:
        """``record_ms``: how long a seated table's record is kept (the history
        retention, ``TRUC_HISTORY_SECONDS``)."""
        self.redis = redis
        self._record_ms = record_ms
        self._get = script(redis, _GET)
        self._set_waiting = script(redis, _SET_WAITING)
        self._queue = script(redis, _QUEUE)
        self._create = script(redis, _CREATE)
        self._confirm = script(redis, _CONFIRM)
        self._close = script(redis, _CLOSE)
        self._claim = script(redis, _CLAIM)
        self._unclaim = script(redis, _UNCLAIM)
        self._seat = script(redis, _SEAT)
        self._release = script(redis, DELETE_IF_EQUAL)
        self._defer = script(redis, _DEFER)
        self._follow = script(redis, _FOLLOW)

    @store_call
    @timed("live")
    async def live(self, player: str) -> str | None:
        """What the player holds: ``"game:<id>"``, a ticket id, or None."""
        raw = await self.redis.get(player_key(player))
        return None if raw is None else raw.decode()

    @store_call
    @timed("ratings")
    async def ratings(
        self, players: Sequence[str], default: float, rule_set: RuleSet = RuleSet.TRUC_Y_FLOU
    ) -> list[float]:
        """The players' ratings in ``rule_set`` (``default`` for an unrated one)."""
        values = await self.redis.hmget(ratings_key(rule_set), list(players))  # type: ignore[misc]
        return [float(v) if v is not None else default for v in values]

    @store_call
    @timed("create")
    async def create(
        self,
        ticket: str,
        *,
        leader: str,
        members: Sequence[tuple[str, bool, float]],
        options: bytes,
        options_key: str,
        now_ms: int,
        names: Sequence[str] = (),
    ) -> bool:
        """False if the leader already holds a live ticket. ``options_key``: the
        queue key (:meth:`~truc_lobby.rule_sets.TableRules.queue_key`); ``names``:
        the members' display names, as ``members`` (none: all "")."""
        queued = all(confirmed for _, confirmed, _ in members)
        named = [names[i] if i < len(names) else "" for i in range(len(members))]
        entry = json.dumps(
            {
                "m": [[p, r, n] for (p, _, r), n in zip(members, named, strict=True)],
                "k": options_key,
                "q": now_ms,
            }
        )
        created = await self._create(
            keys=[ticket_key(ticket), QUEUE, player_key(leader), HEARTBEATS, AWAITING],
            args=[
                ticket,
                leader,
                json.dumps(
                    [[p, int(c), r, n] for (p, c, r), n in zip(members, named, strict=True)]
                ),
                options,
                options_key,
                now_ms,
                "QUEUED" if queued else "AWAITING",
                entry,
                channel(ticket),
            ],
        )
        return bool(created)

    @store_call
    @timed("get")
    async def get(self, ticket: str) -> StoredTicket | None:
        """The ticket, and if queued the players waiting in its queue (one call)."""
        flat, waiting = await self._get(keys=[ticket_key(ticket), WAITING])
        if not flat:
            return None
        raw = dict(zip(flat[::2], flat[1::2], strict=True))
        return StoredTicket.decode(ticket, raw, int(waiting))

    @store_call
    @timed("confirm")
    async def confirm(self, ticket: str, player: str, now_ms: int, name: str = "") -> int:
        """0 no ticket, 1 closed, 2 not a member, 4 member holds another ticket, 5
        done. ``name``: the confirming member's display name."""
        return int(
            await self._confirm(
                keys=[ticket_key(ticket), QUEUE, player_key(player), HEARTBEATS, AWAITING],
                args=[ticket, player, now_ms, channel(ticket), name],
            )
        )

    @store_call
    @timed("close")
    async def close(self, ticket: StoredTicket, state: str) -> int:
        """0 no ticket, 1 already matched or closed, 2 closed now."""
        return int(
            await self._close(
                keys=[
                    ticket_key(ticket.ticket),
                    QUEUE,
                    HEARTBEATS,
                    AWAITING,
                    FOLLOWED,
                    *(player_key(p) for p, _, _ in ticket.members),
                ],
                args=[ticket.ticket, state, channel(ticket.ticket), CLOSED_TTL_MS],
            )
        )

    @store_call
    @timed("follow")
    async def follow(self, ticket: str, now_ms: int, *, watching: bool) -> bool:
        """A member follows the ticket now (one script): recorded while it is open
        (awaiting confirmations or queued) for the presence check, and, when
        ``watching`` (a WatchTicket stream), it also keeps a queued ticket alive.
        False if the ticket is not open (nothing recorded)."""
        return bool(
            await self._follow(
                keys=[ticket_key(ticket), FOLLOWED, HEARTBEATS],
                args=[ticket, now_ms, int(watching)],
            )
        )

    @store_call
    @timed("queue")
    async def queue(self) -> Queue:
        """The queued tickets, their last heartbeats and when they were last
        followed, read at one instant (one script: no MULTI on a cluster)."""
        queued, beats, followed = await self._queue(keys=[QUEUE, HEARTBEATS, FOLLOWED])
        return Queue(
            {k.decode(): json.loads(v) for k, v in zip(queued[::2], queued[1::2], strict=True)},
            _times(beats),
            _times(followed),
        )

    @store_call
    @timed("unconfirmed_since")
    async def unconfirmed_since(self, before_ms: int) -> list[str]:
        """Party tickets created before ``before_ms`` still waiting for a member."""
        found = await self.redis.zrangebyscore(AWAITING, "-inf", before_ms, start=0, num=100)
        return [t.decode() for t in found]

    @store_call
    @timed("claim")
    async def claim(self, claim: Claim, *, lease_until_ms: int) -> bool:
        """Take the claim's tickets out of the queue (all still queued, or none
        is taken: False) and record the claim, leased until ``lease_until_ms``."""
        keys = [QUEUE, HEARTBEATS, CLAIMS, claim_key(claim.game), FOLLOWED]
        keys += [ticket_key(t) for t in claim.tickets]
        args: list[str | int] = [claim.game, lease_until_ms, claim.encode(), *claim.tickets]
        return bool(await self._claim(keys=keys, args=args))

    @store_call
    @timed("claims_due")
    async def claims_due(self, now_ms: int, limit: int = 20) -> list[Claim]:
        """Claims whose lease has run out: their lobby died, or it has not
        learned yet whether their game was created."""
        due = await self.redis.zrangebyscore(CLAIMS, "-inf", now_ms, start=0, num=limit)
        claims = []
        for raw in due:
            game = raw.decode()
            record = await self.redis.hget(claim_key(game), "d")  # type: ignore[misc]
            if record is not None:
                claims.append(Claim.decode(game, record))
        return claims

    @store_call
    @timed("lease_claim")
    async def lease_claim(self, game: str, *, until_ms: int, if_due_at_ms: int | None) -> bool:
        """Move a claim's lease to ``until_ms``; with ``if_due_at_ms``, only if it
        had run out by then (one replica takes a due claim up: the others see
        the new lease). False if the claim is resolved or someone else took it."""
        due = "" if if_due_at_ms is None else if_due_at_ms
        return bool(await self._defer(keys=[CLAIMS], args=[game, until_ms, due]))

    @store_call
    @timed("unclaim")
    async def unclaim(self, claim: Claim, now_ms: int) -> bool:
        """Put the claim's tickets back in the queue as they were; False if the
        claim was already resolved (seated or put back by another replica)."""
        keys = [CLAIMS, claim_key(claim.game), QUEUE, HEARTBEATS]
        keys += [ticket_key(t) for t in claim.tickets]
        return bool(await self._unclaim(keys=keys, args=[claim.game, now_ms, *claim.tickets]))

    @store_call
    @timed("seat")
    async def seat(self, claim: Claim, *, bot_tokens: dict[str, str]) -> bool:
        """The claim's game exists: mark its tickets matched, hold its human
        players, follow the game for results and queue a job for each bot seat
        (``bot_tokens``: bot player -> its game token), in one step. False if
        the claim was already resolved."""
        humans = [player for _, player, bot, _ in claim.seats if not bot]
        keys = [CLAIMS, claim_key(claim.game), ACTIVE, tracking_key(claim.game), BOT_JOBS]
        keys += [table_key(claim.game), LIVE, live_key(claim.rule_set)]
        keys += [ticket_key(t) for t in claim.tickets]
        keys += [player_key(p) for p in humans]
        bots: list[str | int] = []
        for seat, player, bot, _ in claim.seats:
            if bot:
                bots += [seat, player, bot_tokens[player]]
        now_ms = int(time.time() * 1000)
        names = claim.seat_names()
        args: list[str | int] = [
            claim.game,
            len(claim.tickets),
            json.dumps([[s, p, b, names[i]] for i, (s, p, b, _) in enumerate(claim.seats)]),
            CLOSED_TTL_MS,
            now_ms,
            PLAYING_TTL_MS,
            Tracked(claim.rule_set, claim.seats).encode(),
            len(bots) // 3,
            claim.seated(now_ms).encode(),
            self._record_ms,
            0 if claim.private else 1,
            now_ms - LIVE_BOUND_MS,
            *bots,
            *(channel(t) for t in claim.tickets),
        ]
        return bool(await self._seat(keys=keys, args=args))

    @store_call
    @timed("lock_matcher")
    async def lock_matcher(self, owner: str, ttl_ms: int) -> bool:
        return bool(await self.redis.set(MATCHER_LOCK, owner, nx=True, px=ttl_ms))

    @store_call
    @timed("unlock_matcher")
    async def unlock_matcher(self, owner: str) -> None:
        await self._release(keys=[MATCHER_LOCK], args=[owner])

    @store_call
    @timed("queue_length")
    async def queue_length(self) -> int:
        """How many tickets are queued."""
        return int(await self.redis.hlen(QUEUE))  # type: ignore[misc]

    @store_call
    @timed("set_waiting")
    async def set_waiting(self, counts: dict[str, int], ttl_ms: int) -> None:
        """Replace the players waiting per queue key (:data:`WAITING`) with
        ``counts``, kept ``ttl_ms`` (a round rewrites them; stale once none runs)."""
        args: list[str | int] = [ttl_ms]
        for key, players in counts.items():
            args += [key, players]
        await self._set_waiting(keys=[WAITING], args=args)

    @store_call
    @timed("seated_table")
    async def seated_table(self, game: str) -> SeatedTable | None:
        """The record of a game the lobby seated (None: none, or it expired)."""
        raw = await self.redis.get(table_key(game))
        return None if raw is None else SeatedTable.decode(game, raw)
