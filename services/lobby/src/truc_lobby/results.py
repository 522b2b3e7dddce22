"""Following the games the lobby created, to update ratings when they end.

Team Elo: each human player's rating moves by ``K * (S - E)``, where ``S`` is 1
for the winning team and 0 for the other, and ``E`` the expected score from
the two teams' mean ratings, ``1 / (1 + 10 ** ((R_them - R_us) / 400))`` (teams
of three, two or one: at two seats it is plain Elo). Bots count at the rating
they were seated with and are never rated themselves. Ratings are per rule
set: a game moves its players' ratings in its own rule set only
(:func:`~truc_lobby.store.ratings_key`).

Any replica may follow any game: games to follow sit in a sorted set scored by
lease expiry, written by the very script that seats the table
(:meth:`~truc_lobby.store.LobbyStore.seat`), so no game is created without
being followed. A replica claims one by pushing its lease forward, renews it
while it watches the game (WatchGame, as the lobby, with minimal views: it
needs only whether and how the match ended), and applies the result in
one atomic script that first removes the game from the set, so a result is
counted once even if two replicas race. A replica that dies loses its leases,
and another one takes the games over; a watch that breaks (its game replica
died, Redis failed) gives its lease back at once, to be taken up again within
a second or two.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Final

import grpc
from redis.exceptions import RedisError
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_redis.connection import RedisClient, script

from .history import HISTORY_LIMIT, GameRecord, history_key, summary_key
from .store import (
    ACTIVE,
    DELETE_IF_EQUAL,
    Tracked,
    player_key,
    ratings_key,
    store_call,
    tracking_key,
)
from .tokens import TokenIssuer

__all__ = ["ResultsFollower", "elo_changes"]

log = logging.getLogger("truc.lobby.results")

K: Final = 32.0
_LEASE_MS: Final = 30_000
_RETRY_MS: Final = 1000
"""A watch that broke: how soon any replica may follow the game again."""

_CLAIM = """
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

_RESULT = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3], 'PX', ARGV[5])
for i = 5, #KEYS, 2 do
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


class ResultsFollower:
    def __init__(
        self,
        redis: RedisClient,
        game: game_service_pb2_grpc.GameServiceAsyncStub,
        tokens: TokenIssuer,
        *,
        default_rating: float,
        history_seconds: int,
    ) -> None:
        self._default_rating = default_rating
        self._history_ms = history_seconds * 1000
        self._redis = redis
        self._game = game
        self._tokens = tokens
        self._claim = script(redis, _CLAIM)
        self._result = script(redis, _RESULT)
        self._free = script(redis, DELETE_IF_EQUAL)
        self._following: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                now = int(time.time() * 1000)
                due = await self._redis.zrangebyscore(ACTIVE, "-inf", now, start=0, num=50)
                for raw in due:
                    game = raw.decode()
                    if game in self._following:
                        continue
                    if await self._claim(keys=[ACTIVE], args=[game, now, now + _LEASE_MS]):
                        task = asyncio.create_task(self._follow(game))
                        self._following[game] = task
                        task.add_done_callback(self._forget)
            except RedisError as exc:
                log.warning("results: %s", exc)

    def _forget(self, task: asyncio.Task[None]) -> None:
        for game, running in list(self._following.items()):
            if running is task:
                del self._following[game]

    async def stop(self) -> None:
        for task in list(self._following.values()):
            task.cancel()

    async def _follow(self, game: str) -> None:
        metadata = (("authorization", "Bearer " + self._tokens.lobby_token()),)
        renewed = time.monotonic()
        try:
            # Only the outcome matters here (finished, winner, phase): minimal views.
            request = game_service_pb2.WatchGameRequest(
                name="games/" + game, response_view=game_service_pb2.RESPONSE_VIEW_MINIMAL
            )
            stream = self._game.WatchGame(request, metadata=metadata)
            async for change in stream:
                if time.monotonic() - renewed > _LEASE_MS / 3000:
                    lease = int(time.time() * 1000) + _LEASE_MS
                    await self._redis.zadd(ACTIVE, {game: lease}, xx=True)
                    renewed = time.monotonic()
                if await self._record_if_over(game, change.game):
                    return
            log.warning("results: the watch of %s ended before its end", game)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:  # expired on the game service
                await self._record(game, None)
                return
            log.warning("results: lost %s: %s", game, exc)
        except RedisError as exc:
            log.warning("results: %s: %s", game, exc)
        await self._give_back(game)

    async def _give_back(self, game: str) -> None:
        """Let any replica follow ``game`` again shortly (it is not over)."""
        try:
            await self._redis.zadd(ACTIVE, {game: int(time.time() * 1000) + _RETRY_MS}, xx=True)
        except RedisError as exc:  # the lease runs out by itself
            log.warning("results: %s: %s", game, exc)

    @store_call
    async def settle(self, game: str, player: str) -> bool:
        """Record ``game`` now if it is over (``player``, held by it, wants to
        queue again before its follower has seen the end); True if it is over,
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
        to their histories, once. A game nobody tracks (recorded already, or
        seated by a lobby older than the one-step seat) frees the ``asking``
        player if it still holds them."""
        raw = await self._redis.get(tracking_key(game))
        if raw is None:
            await self._redis.zrem(ACTIVE, game)
            if asking is not None:
                await self._free(keys=[player_key(asking)], args=["game:" + game])
            return
        tracked = Tracked.decode(raw)
        seats = tracked.seats
        changes = elo_changes(seats, winner) if winner is not None else {}
        end_ms = int(time.time() * 1000)
        record = GameRecord(
            game,
            tuple(sorted((s, p, b) for s, p, b, _ in seats)),
            winner,
            end_ms,
            changes,
            tracked.rule_set,
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
        keys += humans
        if await self._result(keys=keys, args=args):
            log.info("game over: players released", extra={"game": game, "changes": changes})
