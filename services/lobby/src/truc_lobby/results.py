"""Learning that the lobby's games ended, to update ratings and free the players.

Team Elo: each human player's rating moves by ``K * (S - E)``, where ``S`` is 1
for the winning team and 0 for the other, and ``E`` the expected score from
the two teams' mean ratings, ``1 / (1 + 10 ** ((R_them - R_us) / 400))`` (teams
of three, two or one: at two seats it is plain Elo). Bots count at the rating
they were seated with and are never rated themselves. Ratings are per rule
set: a game moves its players' ratings in its own rule set only
(:func:`~truc_lobby.store.ratings_key`).

The lobby follows game ENDS, not versions: a move costs it nothing. The game
service's commit script appends one entry to its shard's ended-games stream
(:mod:`truc_redis.game_ends`) in the same atomic step that writes the version
finishing a game. Every lobby replica is one consumer (a name of its own) of
the consumer group :data:`~truc_redis.game_ends.GROUP` on the 64 shard streams:

* It reads new entries (``XREADGROUP ... >``): on one Redis, one blocking read
  over all 64 streams; on a Redis Cluster, whose commands cannot span slots, a
  pipeline of one non-blocking read per shard every ``poll_ms``. Each entry goes
  to one replica, which records the result (one atomic script, below) and
  acknowledges it (``XACK``). An entry that is not one of ours is logged and
  acknowledged, never read again.
* An entry read by a replica that died before acknowledging it stays pending;
  after ``claim_idle_ms`` any replica takes it over (``XAUTOCLAIM``) and
  records it. Recording is idempotent, so a game recorded twice (a slow
  replica, a lost ``XACK``) counts once.

The safety net, for a game whose end never reaches a stream (Redis lost the
write, the entry was trimmed while no lobby read, the game expired): every game
to follow sits in the sorted set :data:`~truc_lobby.store.ACTIVE`, written by
the very script that seats the table (:meth:`~truc_lobby.store.LobbyStore.seat`,
score 0) and scored by when to look at it next. A periodic sweep takes the
games whose time has come, pushes each one ``recheck_ms`` forward in one atomic
step (so one replica takes it), and asks the game service once (GetGame): over,
or gone (NOT_FOUND), it is recorded; else it waits for its end on the stream,
or the next sweep. A game just seated (score 0) is only scheduled, not asked:
its end is coming on the stream.

The result is applied in one script that first removes the game from
:data:`~truc_lobby.store.ACTIVE`: a result counts once whoever applies it (the
stream's consumer, the sweep, or :meth:`ResultsFollower.settle` when a player
queues again right after the end). The same script takes the game out of the
live public games (:mod:`truc_lobby.live`); the history record carries the
seats' display names and the table's privacy from the seated table's record
(:class:`~truc_lobby.store.SeatedTable`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import grpc
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_redis.connection import RedisClient, script
from truc_redis.game_ends import GROUP, SHARDS, GameEnd, ended_stream

from .history import HISTORY_LIMIT, GameRecord, history_key, summary_key
from .store import (
    ACTIVE,
    DELETE_IF_EQUAL,
    LIVE,
    SeatedTable,
    Tracked,
    live_key,
    player_key,
    ratings_key,
    store_call,
    table_key,
    tracking_key,
)
from .tokens import TokenIssuer

__all__ = ["ResultsFollower", "elo_changes"]

log = logging.getLogger("truc.lobby.results")

K: Final = 32.0
READ_COUNT: Final = 100
"""Entries read (or claimed) per stream at a time."""
SWEEP_BATCH: Final = 100
"""Games the sweep takes at a time (it takes more at once when a batch was full)."""
RETRY_MS: Final = 10_000
"""A sweep whose GetGame failed (not NOT_FOUND) looks at the game again this soon."""
FORGET_CONSUMER_MS: Final = 3_600_000
"""A consumer (a replica gone without leaving) with nothing pending, idle this
long, is removed from the group."""
_FORGET_EVERY_S: Final = 600.0

_CLAIM = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""
"""The sweep takes a game: its time to be looked at came (ARGV[2] now), push it to ARGV[3]."""

_LEAVE = """
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return -1 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
"""
"""Remove consumer ARGV[2] from group ARGV[1] of stream KEYS[1] if it holds nothing pending."""

_RESULT = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3], 'PX', ARGV[5])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
for i = 7, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == 'game:' .. ARGV[1] then redis.call('DEL', KEYS[i]) end
  redis.call('ZADD', KEYS[i + 1], ARGV[4], ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[i + 1], 0, -1 - tonumber(ARGV[6]))
  redis.call('PEXPIRE', KEYS[i + 1], ARGV[5])
end
for i = 7, #ARGV, 2 do
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[2])
  redis.call('HINCRBYFLOAT', KEYS[2], ARGV[i], ARGV[i + 1])
end
return 1
"""

Entry = tuple[bytes, dict[bytes, bytes]]
"""A stream entry as redis-py reads it: (id, fields)."""


def elo_changes(seats: Sequence[tuple[int, str, bool, float]], winner: int) -> dict[str, float]:
    """Rating changes of the human players for a match won by team ``winner``."""
    means = []
    for team in (0, 1):
        ratings = [r for seat, _, _, r in seats if seat % 2 == team]
        means.append(sum(ratings) / len(ratings))
    changes = {}
    for seat, player, bot, _ in seats:
        if bot:
            continue
        team = seat % 2
        expected = 1 / (1 + 10 ** ((means[1 - team] - means[team]) / 400))
        changes[player] = K * ((1.0 if team == winner else 0.0) - expected)
    return changes


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def consumer_name() -> str:
    """A name no other replica (nor this one's predecessor) has: host, pid, random."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


class ResultsFollower:
    """Records the lobby's games as they end (module docstring).

    ``redis``: the lobby's Redis (ratings, histories, players, ACTIVE);
    ``ends``: the Redis holding the ended-games streams (the game service's;
    ``redis`` unless told otherwise). ``claim_idle_ms``: an entry pending that
    long on a consumer is taken over; ``recheck_ms``: how long the sweep leaves a
    game it asked about; ``sweep_ms``: how often it sweeps; ``block_ms``: the
    longest blocking read (one Redis); ``poll_ms``: the interval of the reads on
    a Redis Cluster."""

    def __init__(
        self,
        redis: RedisClient,
        game: game_service_pb2_grpc.GameServiceAsyncStub,
        tokens: TokenIssuer,
        *,
        default_rating: float,
        history_seconds: int,
        ends: RedisClient | None = None,
        consumer: str | None = None,
        claim_idle_ms: int = 30_000,
        recheck_ms: int = 300_000,
        sweep_ms: int = 5_000,
        block_ms: int = 2_000,
        poll_ms: int = 250,
    ) -> None:
        self._default_rating = default_rating
        self._history_ms = history_seconds * 1000
        self._redis = redis
        self.ends: RedisClient = redis if ends is None else ends
        self.consumer = consumer or consumer_name()
        self._game = game
        self._tokens = tokens
        self._claim_idle_ms = claim_idle_ms
        self._recheck_ms = recheck_ms
        self._sweep_s = sweep_ms / 1000
        self._block_ms = block_ms
        self._poll_s = poll_ms / 1000
        self._claim = script(redis, _CLAIM)
        self._result = script(redis, _RESULT)
        self._free = script(redis, DELETE_IF_EQUAL)
        self._leave = script(self.ends, _LEAVE)
        self._streams = [ended_stream(shard) for shard in range(SHARDS)]
        self._cursors = dict.fromkeys(self._streams, b"0-0")
        """Where each stream's XAUTOCLAIM scan of the pending entries goes on."""
        self._loops: list[asyncio.Task[None]] = []
        self._joined = False

    # ----------------------------------------------------------------- running

    async def run(self) -> None:
        """Join the group on every stream, then read, claim and sweep until stopped."""
        while not self._joined:
            try:
                await self.join()
            except RedisError as exc:
                log.warning("results: cannot join the ended-games streams: %s", exc)
                await asyncio.sleep(1.0)
        self._loops = [
            asyncio.create_task(self._forever(self.read, 0.0), name="results-read"),
            asyncio.create_task(
                self._forever(self.claim_stale, max(0.05, min(5.0, self._claim_idle_ms / 3000))),
                name="results-claim",
            ),
            asyncio.create_task(self._forever(self.sweep, self._sweep_s), name="results-sweep"),
            asyncio.create_task(
                self._forever(self.forget_dead_consumers, _FORGET_EVERY_S), name="results-forget"
            ),
        ]
        await asyncio.gather(*self._loops)

    async def _forever(self, step: Callable[[], Any], every: float) -> None:
        while True:
            try:
                await step()
            except ResponseError as exc:
                if "NOGROUP" in str(exc):  # the streams were lost (Redis restarted empty)
                    log.warning("results: the group is gone; joining again")
                    with contextlib.suppress(RedisError):
                        await self.join()
                else:
                    log.warning("results: %s", exc)
                await asyncio.sleep(1.0)
            except RedisError as exc:
                log.warning("results: %s", exc)
                await asyncio.sleep(1.0)
            except Exception:  # a bug must not stop the results for good
                log.exception("results: %s failed", getattr(step, "__name__", step))
                await asyncio.sleep(1.0)
            if every:
                await asyncio.sleep(every)

    async def stop(self) -> None:
        """Stop reading, then leave the group if nothing is pending on this
        consumer (what is pending stays for another replica to claim)."""
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loops = []
        if not self._joined:
            return
        try:
            async with asyncio.timeout(2.0):
                for stream in self._streams:
                    await self._leave(keys=[stream], args=[GROUP, self.consumer])
        except (RedisError, TimeoutError) as exc:
            log.info("results: left the group partly (%s); forgotten later", exc)

    # ----------------------------------------------------------- the streams

    async def join(self) -> None:
        """Create the group on every shard's stream (and the stream), reading it
        from its first entry; a group that exists already stays as it is."""
        if isinstance(self.ends, RedisCluster):
            await self.ends.initialize()  # the slot map, for the pipelines' target nodes
        replies = await self._each_stream(
            lambda stream: ("XGROUP", "CREATE", stream, GROUP, "0", "MKSTREAM")
        )
        for reply in replies:
            if isinstance(reply, Exception) and "BUSYGROUP" not in str(reply):
                raise reply
        self._joined = True

    async def _each_stream(
        self, command: Callable[[str], tuple[str | int | bytes, ...]]
    ) -> list[Any]:
        """``command(stream)`` for each shard's stream in one pipeline: the replies,
        an error as an exception in its place. On a cluster each command goes
        straight to the node of its stream's slot."""
        cluster = self.ends if isinstance(self.ends, RedisCluster) else None
        pipe: Any = self.ends.pipeline() if cluster else self.ends.pipeline(transaction=False)
        for stream in self._streams:
            if cluster is not None:
                node = cluster.get_node_from_key(stream)
                pipe.execute_command(*command(stream), target_nodes=node)
            else:
                pipe.execute_command(*command(stream))
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        return replies

    async def read(self) -> int:
        """Read and record the new entries of every stream (waiting up to
        ``block_ms`` for one on a single Redis; on a cluster, ``poll_ms`` when
        none); how many entries were handled."""
        batches: list[tuple[str, list[Entry]]] = []
        if isinstance(self.ends, RedisCluster):
            replies = await self._each_stream(
                lambda stream: (
                    "XREADGROUP",
                    "GROUP",
                    GROUP,
                    self.consumer,
                    "COUNT",
                    READ_COUNT,
                    "STREAMS",
                    stream,
                    ">",
                )
            )
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
                batches += [(_text(stream), entries) for stream, entries in reply or ()]
            if not batches:
                await asyncio.sleep(self._poll_s)
        else:
            reply = await self.ends.xreadgroup(
                GROUP,
                self.consumer,
                dict.fromkeys(self._streams, ">"),
                count=READ_COUNT,
                block=self._block_ms,
            )
            batches = [(_text(stream), entries) for stream, entries in reply or ()]
        await self._handle_all(batches)
        return sum(len(entries) for _, entries in batches)

    async def claim_stale(self) -> int:
        """Take over the entries pending longer than ``claim_idle_ms`` on any
        consumer (one that died before acknowledging) and record them; how many."""
        replies = await self._each_stream(
            lambda stream: (
                "XAUTOCLAIM",
                stream,
                GROUP,
                self.consumer,
                self._claim_idle_ms,
                self._cursors[stream],
                "COUNT",
                READ_COUNT,
            )
        )
        batches: list[tuple[str, list[Entry]]] = []
        for stream, reply in zip(self._streams, replies, strict=True):
            if isinstance(reply, Exception):
                raise reply
            self._cursors[stream] = reply[0]
            if reply[1]:
                batches.append((stream, reply[1]))
        for stream, entries in batches:
            log.info(
                "results: took over %d ended games pending on a lost consumer",
                len(entries),
                extra={"stream": stream},
            )
        await self._handle_all(batches)
        return sum(len(entries) for _, entries in batches)

    async def _handle_all(self, batches: list[tuple[str, list[Entry]]]) -> None:
        """:meth:`_handle` each stream's entries at once; then the first failure."""
        failed = await asyncio.gather(
            *(self._handle(stream, entries) for stream, entries in batches),
            return_exceptions=True,
        )
        for failure in failed:
            if isinstance(failure, BaseException):
                raise failure

    async def _handle(self, stream: str, entries: list[Entry]) -> None:
        """Record each entry's game, then acknowledge what was recorded or is not
        one of ours. An entry whose recording failed on Redis stays pending (it is
        claimed again after ``claim_idle_ms``)."""
        done: list[bytes] = []
        try:
            for entry_id, fields in entries:
                try:
                    if not isinstance(fields, dict):  # trimmed away while pending (Redis 6.2)
                        raise ValueError("the entry is gone")
                    end = GameEnd.from_fields(fields)
                except ValueError as exc:
                    log.warning("results: skipped %s %s: %s", stream, _text(entry_id), exc)
                    done.append(entry_id)
                    continue
                try:
                    await self._record(end.game_id, end.winner)
                except RedisError:
                    raise
                except Exception:  # the lobby's own record of the game is broken
                    log.exception("results: cannot record %s; skipped", end.game_id)
                done.append(entry_id)
        finally:
            if done:
                await self.ends.xack(stream, GROUP, *done)

    async def forget_dead_consumers(self) -> int:
        """Remove from the group the consumers (replicas gone without leaving)
        idle for :data:`FORGET_CONSUMER_MS` with nothing pending; how many."""
        forgotten = 0
        for stream in self._streams:
            for consumer in await self.ends.xinfo_consumers(stream, GROUP):
                name = _text(consumer["name"])
                if name == self.consumer or int(consumer["pending"]) > 0:
                    continue
                if int(consumer["idle"]) < FORGET_CONSUMER_MS:
                    continue
                if await self._leave(keys=[stream], args=[GROUP, name]) != -1:
                    forgotten += 1
        return forgotten

    # ------------------------------------------------------------- the sweep

    async def sweep(self) -> int:
        """Look at the followed games whose time has come (the safety net for an
        end that never reached a stream); how many were recorded."""
        recorded = 0
        while True:
            now = _now_ms()
            due: list[tuple[bytes, float]] = await self._redis.zrangebyscore(
                ACTIVE, "-inf", now, start=0, num=SWEEP_BATCH, withscores=True
            )
            for raw, score in due:
                game = _text(raw)
                if not await self._claim(keys=[ACTIVE], args=[game, now, now + self._recheck_ms]):
                    continue  # another replica took it, or it was recorded meanwhile
                if score == 0:
                    continue  # just seated: its end is coming on the stream
                recorded += await self._check(game)
            if len(due) < SWEEP_BATCH:
                return recorded

    async def _check(self, game: str) -> int:
        """Ask the game service about ``game`` once; record it if it is over or gone."""
        metadata = (("authorization", "Bearer " + self._tokens.lobby_token()),)
        try:
            reply = await self._game.GetGame(
                game_service_pb2.GetGameRequest(name="games/" + game), metadata=metadata, timeout=5
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:  # expired on the game service
                await self._record(game, None)
                return 1
            log.warning("results: cannot look at %s: %s", game, exc.code())
            await self._redis.zadd(ACTIVE, {game: _now_ms() + RETRY_MS}, xx=True)
            return 0
        return int(await self._record_if_over(game, reply.game))

    # ------------------------------------------------------------- recording

    @store_call
    async def settle(self, game: str, player: str) -> bool:
        """Record ``game`` now if it is over (``player``, held by it, wants to
        queue again before its end was read from the stream); True if it is over,
        and ``player`` is free then even if the game was never followed.
        ``Unavailable`` (``STORE_UNAVAILABLE``) when Redis fails."""
        metadata = (("authorization", "Bearer " + self._tokens.lobby_token()),)
        try:
            reply = await self._game.GetGame(
                game_service_pb2.GetGameRequest(name="games/" + game), metadata=metadata, timeout=5
            )
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.NOT_FOUND:
                return False
            await self._record(game, None, player)  # expired on the game service
            return True
        return await self._record_if_over(game, reply.game, player)

    async def _record_if_over(
        self, game: str, view: game_pb2.GameView, player: str | None = None
    ) -> bool:
        if view.finished:
            await self._record(game, 0 if view.winner == game_pb2.TEAM_A else 1, player)
            return True
        if view.phase == game_pb2.PHASE_NO_DEAL:
            await self._record(game, None, player)
            return True
        return False

    async def _record(self, game: str, winner: int | None, asking: str | None = None) -> None:
        """Rate the match (unless ``winner`` is None), free its players and add it
        to their histories, once. A game nobody tracks (recorded already, not the
        lobby's, or seated by a lobby older than the one-step seat) frees the
        ``asking`` player if it still holds them."""
        raw = await self._redis.get(tracking_key(game))
        if raw is None:
            await self._redis.zrem(ACTIVE, game)
            if asking is not None:
                await self._free(keys=[player_key(asking)], args=["game:" + game])
            return
        tracked = Tracked.decode(raw)
        seats = tracked.seats
        changes = elo_changes(seats, winner) if winner is not None else {}
        end_ms = _now_ms()
        seated_raw = await self._redis.get(table_key(game))
        seated = None if seated_raw is None else SeatedTable.decode(game, seated_raw)
        names = {s: n for s, _, _, n in seated.seats} if seated is not None else {}
        ordered = sorted((s, p, b) for s, p, b, _ in seats)
        record = GameRecord(
            game,
            tuple(ordered),
            winner,
            end_ms,
            changes,
            tracked.rule_set,
            names=tuple(names.get(s, "") for s, _, _ in ordered) if names else (),
            private=seated is not None and seated.private,
        )
        args: list[str | float] = [
            game,
            self._default_rating,
            record.encode(),
            end_ms,
            self._history_ms,
            HISTORY_LIMIT,
        ]
        for player, delta in changes.items():
            args += [player, delta]
        humans: list[str] = []
        for _, player, bot, _ in seats:
            if not bot:
                humans += [player_key(player), history_key(player)]
        keys = [ACTIVE, ratings_key(tracked.rule_set), tracking_key(game), summary_key(game)]
        keys += [LIVE, live_key(tracked.rule_set)]
        keys += humans
        if await self._result(keys=keys, args=args):
            log.info("game over: players released", extra={"game": game, "changes": changes})
