"""Server-side bots: each lobby replica plays the bot seats it takes from the bot jobs.

The matcher appends one job per bot seat (game, seat, player, token) to a Redis
stream; replicas read it in one consumer group, so each job is played once.
A bot plays through the public game API with its own token, exactly like a
player (:class:`truc_bots.BotPlayer`): one ``Play`` session per bot seat, its
actions sent on it. A job is acknowledged and deleted from the stream when its
match is over (the stream holds the jobs in play, not every bot seat ever
played); jobs of a replica that died are claimed by another after ``idle_ms``
and the bot resumes from the game's current view (``GetGame``, then a session
after that version). A bot that gives up (:class:`truc_bots.BotError`: a
refusal it cannot explain, or retries exhausted) leaves its job pending, to be
claimed and played again after ``idle_ms``; one stopped by an error status of
the game service (the game gone, the token refused, the service unreachable
through every retry) is acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

import grpc
from redis.exceptions import RedisError, ResponseError
from truc.v1 import game_service_pb2_grpc

from truc_bots import BotError, BotPlayer, HeuristicPolicy
from truc_protocol.identifiers import game_name
from truc_redis.connection import RedisClient, script

from .store import BOT_JOBS

__all__ = ["BotRunner"]

log = logging.getLogger("truc.lobby.bots")
GROUP = "bots"

_DONE = """
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return redis.call('XDEL', KEYS[1], ARGV[2])
"""


class BotRunner:
    def __init__(
        self,
        redis: RedisClient,
        game: game_service_pb2_grpc.GameServiceAsyncStub,
        *,
        idle_ms: int = 60_000,
    ) -> None:
        self._redis = redis
        self._game = game
        self._idle_ms = idle_ms
        self._consumer = f"lobby-{secrets.token_hex(6)}"
        self._playing: set[asyncio.Task[None]] = set()
        self._done = script(redis, _DONE)

    async def run(self) -> None:
        with contextlib.suppress(ResponseError):  # the group exists already
            await self._redis.xgroup_create(BOT_JOBS, GROUP, id="0", mkstream=True)
        while True:
            try:
                claimed = await self._redis.xautoclaim(
                    BOT_JOBS, GROUP, self._consumer, self._idle_ms, count=10
                )
                jobs = list(claimed[1]) if claimed else []
                read = await self._redis.xreadgroup(
                    GROUP, self._consumer, {BOT_JOBS: ">"}, count=10, block=1000
                )
                for _, entries in read or ():
                    jobs.extend(entries)
                for job_id, fields in jobs:
                    task = asyncio.create_task(self._play(job_id, fields))
                    self._playing.add(task)
                    task.add_done_callback(self._playing.discard)
            except RedisError as exc:
                log.warning("bot jobs unavailable: %s", exc)
                await asyncio.sleep(1.0)

    async def stop(self) -> None:
        for task in list(self._playing):
            task.cancel()

    async def _play(self, job_id: bytes, fields: dict[bytes, bytes]) -> None:
        game = fields[b"game"].decode()
        token = fields[b"token"].decode()
        seat = int(fields[b"seat"])
        try:
            player = BotPlayer(
                self._game, game_name(game), token, HeuristicPolicy(seed=seat), session=True
            )
            await player.run()
        except grpc.RpcError as exc:
            log.warning("bot for %s seat %d stopped: %s", game, seat, exc)
        except BotError as exc:
            log.warning("bot for %s seat %d gave up (played again later): %s", game, seat, exc)
            return
        await self._done(keys=[BOT_JOBS], args=[GROUP, job_id])
