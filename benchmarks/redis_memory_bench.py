"""Redis memory per game, for sizing (deploy/k8s/README.md).

A bundled Redis and one game service process. First ``--games`` games are
created through CreateGame (as the lobby does); then ``--played`` more are
played to the end of the match by six heuristic bots each, through the public
API. Redis ``INFO memory`` (``used_memory_dataset``) is read before and after
each phase. Prints bytes per created game, per finished game and per applied action
(every version keeps its state and events in the game's stream until the
game's keys expire, TRUC_GAME_TTL_SECONDS after its last action).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from typing import Any, cast

import grpc
import uvloop
from redis import Redis
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from service_bench import start_process
from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer
from truc_game.adapters.redis_keys import Keys
from truc_game.config import DEV_SECRET
from truc_service.tokens import issue_token


def dataset_bytes(redis: Redis) -> int:
    """``used_memory_dataset``: the keys alone, without client buffers and other
    server overhead, which come and go with the benchmark's own connections."""
    info = cast(dict[str, Any], redis.info("memory"))
    return int(info["used_memory_dataset"])


def metadata(player: str, role: str = "player") -> tuple[tuple[str, str]]:
    return (("authorization", "Bearer " + issue_token(DEV_SECRET, player, role=role)),)


async def create_games(address: str, count: int, concurrency: int = 32) -> list[list[str]]:
    """``count`` new games; the players of each."""
    channel = grpc.aio.insecure_channel(address)
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    lobby = metadata("bench-lobby", role="lobby")
    made: list[list[str]] = []
    semaphore = asyncio.Semaphore(concurrency)

    async def one() -> None:
        tag = uuid.uuid4().hex[:12]
        players = [f"{tag}-{seat}" for seat in range(6)]
        request = game_service_pb2.CreateGameRequest(game_id=tag, players=players)
        async with semaphore:
            await stub.CreateGame(request, metadata=lobby, timeout=10)
        made.append(players)

    await asyncio.gather(*(one() for _ in range(count)))
    await channel.close(None)
    return made


async def play_out(address: str, games: list[list[str]]) -> None:
    """Six heuristic bots per game play every game to the end of its match."""
    channel = grpc.aio.insecure_channel(address)
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    bots = [
        BotPlayer(
            stub,
            "games/" + players[0].split("-")[0],
            issue_token(DEV_SECRET, player),
            HeuristicPolicy(seed=seat),
        )
        for players in games
        for seat, player in enumerate(players)
    ]
    await asyncio.gather(*(bot.run() for bot in bots))
    await channel.close(None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games created (default 2000)")
    parser.add_argument("--played", type=int, default=12, help="games played out (default 12)")
    args = parser.parse_args()
    with RedisServer() as redis_server:
        env = {
            **os.environ,
            "REDIS_URL": redis_server.url,
            "TRUC_DEV_MODE": "1",
            "TRUC_GAME_PORT": "0",
            "TRUC_RATE_ACTIONS": "0",
            "TRUC_RATE_SIGNALS": "0",
            "TRUC_TURN_SECONDS": "3600",  # no turn times out while the bench runs
        }
        env.pop("TRUC_JWT_SECRET", None)
        game, port = start_process([sys.executable, "-m", "truc_game"], env)
        address = f"127.0.0.1:{port}"
        redis = Redis.from_url(redis_server.url)
        try:
            uvloop.run(create_games(address, 20))  # warm up: scripts loaded, shards made
            before = dataset_bytes(redis)
            uvloop.run(create_games(address, args.games))
            created = dataset_bytes(redis)
            per_game = (created - before) / args.games
            played = uvloop.run(create_games(address, args.played))
            uvloop.run(play_out(address, played))
            finished = dataset_bytes(redis)
            versions = 0
            for players in played:
                versions += cast(int, redis.xlen(Keys(players[0].split("-")[0]).events))
            per_finished = (finished - created) / args.played
            per_action = (per_finished - per_game) * args.played / max(1, versions - args.played)
            print(
                f"redis memory: {per_game:,.0f} B per created game ({args.games} games);"
                f" {per_finished:,.0f} B per finished match ({args.played} matches, "
                f"{versions / args.played:.0f} versions each); {per_action:,.0f} B per action"
            )
        finally:
            redis.close()
            game.terminate()
            game.wait(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
