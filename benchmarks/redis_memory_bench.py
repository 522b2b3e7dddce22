"""Redis memory per game, measured from outside (``make bench``; sizing in
deploy/k8s/README.md).

A bundled Redis and one game-service process. Three kinds of games, each
measured two ways: ``MEMORY USAGE`` (exact: ``SAMPLES 0``) of every key of the
game, found by one ``SCAN`` of the keyspace for keys with the game's id as one
of their ``:``-separated parts (so the figure follows whatever keys the game
service writes), and the growth of ``INFO memory`` ``used_memory_dataset``
(which also counts each shard's shared keys: the deadline index, the
ended-games stream). ``used_memory_dataset`` also moves by a few hundred KB
with no key written (the server's own allocations come and go), so it is shown
for the created games only, where it is spread over thousands; the other
figures are the exact ``MEMORY USAGE`` of the games' keys.

1. **Created**: ``--games`` games created through CreateGame, as the lobby does.
2. **In play**: ``--in-play`` scripted games (fixed deals, ``--deals`` of them,
   as ``service_bench.py`` scripts them) played through SubmitAction up to, not
   including, their last action, so they stay in progress: bytes per applied
   action over their size when created.
3. **Finished**: ``--played`` matches played to their end by six heuristic
   bots each, over Play sessions (``truc_bots.BotPlayer``); measured
   ``--settle`` seconds after the last one ended (a finished game may be
   compacted).

Prints each figure beside its target (issue 13): <= 2 KB per created game,
<= 80 B per applied action, <= 10 KB per finished match.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final, cast

import grpc
import uvloop
from redis import Redis
from truc.v1 import game_service_pb2, game_service_pb2_grpc

import service_bench
from service_bench import (
    Metadata,
    Script,
    bench_env,
    bench_tokens,
    script_batches,
    start_game_service,
)
from service_bench import (
    create_games as create_scripted,
)
from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET
from truc_service.tokens import issue_token

KB: Final = 1024
TARGETS: Final = {"created": 2 * KB, "action": 80, "finished": 10 * KB}
"""Bytes, from issue 13."""
_SHARD_TAG = re.compile(r"\{g\d+\}")


def dataset_bytes(redis: Redis) -> int:
    """``used_memory_dataset``: the keys alone, without client buffers and other
    server overhead, which come and go with the benchmark's own connections."""
    info = cast(dict[str, Any], redis.info("memory"))
    return int(info["used_memory_dataset"])


@dataclass(frozen=True, slots=True)
class Footprint:
    """``MEMORY USAGE`` of the keys found, by game and for the rest."""

    games: dict[str, dict[str, int]]
    """game id -> key (shard tag and id replaced by ``{g}`` and ``<id>``) -> bytes."""
    shared: int
    """Bytes of every key that belongs to no game asked about."""

    def of(self, game_id: str) -> int:
        return sum(self.games[game_id].values())

    def mean(self, game_ids: Iterable[str]) -> float:
        ids = list(game_ids)
        return sum(self.of(g) for g in ids) / max(1, len(ids))

    def layout(self, game_ids: Iterable[str]) -> dict[str, float]:
        """Mean bytes per key kind over ``game_ids``."""
        ids = list(game_ids)
        kinds: dict[str, int] = defaultdict(int)
        for game_id in ids:
            for kind, size in self.games[game_id].items():
                kinds[kind] += size
        return {kind: size / max(1, len(ids)) for kind, size in sorted(kinds.items())}


def footprint(redis: Redis, game_ids: Iterable[str]) -> Footprint:
    """Every key's ``MEMORY USAGE``, attributed to the game whose id is one of its parts."""
    wanted = set(game_ids)
    games: dict[str, dict[str, int]] = {g: {} for g in wanted}
    keys = [cast(bytes, k).decode() for k in redis.scan_iter(count=1000)]
    sizes: list[int] = []
    for start in range(0, len(keys), 1000):
        pipe = redis.pipeline(transaction=False)
        for key in keys[start : start + 1000]:
            pipe.memory_usage(key, samples=0)
        sizes.extend(int(size or 0) for size in pipe.execute())
    shared = 0
    for key, size in zip(keys, sizes, strict=True):
        parts = key.split(":")
        owner = next((p for p in parts if p in wanted), None)
        if owner is None:
            shared += size
            continue
        kind = ":".join("<id>" if p == owner else _SHARD_TAG.sub("{g}", p) for p in parts)
        games[owner][kind] = games[owner].get(kind, 0) + size
    return Footprint(games, shared)


def metadata(player: str, role: str = "player") -> tuple[tuple[str, str]]:
    return (("authorization", "Bearer " + issue_token(DEV_SECRET, player, role=role)),)


async def create_games(address: str, count: int, concurrency: int = 32) -> list[list[str]]:
    """``count`` new games, created as the lobby does; the players of each (the
    game id is the part of a player's name before its ``-``)."""
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


def game_of(players: list[str]) -> str:
    return players[0].split("-")[0]


async def play_out(address: str, games: list[list[str]]) -> dict[str, int]:
    """Six heuristic bots per game play every game to the end of its match; the
    last version of each."""
    channel = grpc.aio.insecure_channel(address)
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    bots = {
        game_of(players): [
            BotPlayer(
                stub,
                "games/" + game_of(players),
                issue_token(DEV_SECRET, player),
                HeuristicPolicy(seed=seat),
            )
            for seat, player in enumerate(players)
        ]
        for players in games
    }
    views = await asyncio.gather(*(bot.run() for seats in bots.values() for bot in seats))
    await channel.close(None)
    last: dict[str, int] = {}
    for view in views:
        game_id = view.name.removeprefix("games/")
        last[game_id] = max(last.get(game_id, 0), int(view.etag))
    return last


async def play_scripts(address: str, scripts: list[Script], tokens: dict[int, Metadata]) -> None:
    """Every step of every script through SubmitAction (minimal), 16 games at once."""
    channel = grpc.aio.insecure_channel(address)
    submit = channel.unary_unary(
        "/truc.v1.GameService/SubmitAction", request_serializer=None, response_deserializer=None
    )
    queue = list(scripts)

    async def worker() -> None:
        while queue:
            for seat, _full, lean in queue.pop().steps:
                await submit(lean, metadata=tokens[seat], timeout=10)

    await asyncio.gather(*(worker() for _ in range(16)))
    await channel.close(None)


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    own: float
    """Bytes by MEMORY USAGE of the games' own keys."""
    dataset: float | None
    """Bytes by the growth of used_memory_dataset (for many games only)."""
    detail: str

    def line(self) -> str:
        target = TARGETS[self.name]
        verdict = "ok" if self.own <= target else "OVER"
        dataset = f"(dataset {self.dataset:>6,.0f} B)" if self.dataset is not None else " " * 18
        label = {"created": "per created game", "action": "per applied action"}.get(
            self.name, "per finished match"
        )
        shown = f"{target // KB} KB" if target >= KB else f"{target} B"
        return (
            f"  {label:<20} {self.own:>7,.0f} B {dataset}  "
            f"target <= {shown:<6} {verdict}   {self.detail}"
        )


def _layout(layout: dict[str, float]) -> str:
    return ", ".join(f"{kind} {size:,.0f} B" for kind, size in layout.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games created (default 2000)")
    parser.add_argument("--in-play", type=int, default=40, help="games left in play (default 40)")
    parser.add_argument("--deals", type=int, default=8, help="fixed deals of those (default 8)")
    parser.add_argument("--played", type=int, default=12, help="matches played out (default 12)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before measuring ends")
    args = parser.parse_args()

    # Scripted games in play: longer than service_bench's two deals, so that the
    # growth per action is not the first entries' overhead.
    service_bench.DEALS_PER_GAME = args.deals
    players = [f"mem-p{s}" for s in range(6)]
    scripts = script_batches(
        [("play", args.in_play * 40 * args.deals)], random.Random(13), players
    )["play"][: args.in_play]
    if len(scripts) < args.in_play:
        raise RuntimeError(f"only {len(scripts)} games scripted, not {args.in_play}")
    tokens, lobby = bench_tokens(players)
    # every action but the last: the games stay in progress
    in_play = [replace(s, steps=s.steps[:-1]) for s in scripts]
    in_play_ids = [s.create.game_id for s in scripts]
    actions = {s.create.game_id: len(s.steps) for s in in_play}

    figures: list[Figure] = []
    with RedisServer() as redis_server:
        env = {**bench_env(redis_server.url), "TRUC_RATE_SIGNALS": "0", "TRUC_TURN_SECONDS": "3600"}
        game, port = start_game_service(env)
        address = f"127.0.0.1:{port}"
        redis = Redis.from_url(redis_server.url)
        try:
            # warm up: scripts loaded, shards made
            known = [game_of(p) for p in uvloop.run(create_games(address, 20))]
            before = dataset_bytes(redis)
            created = [game_of(p) for p in uvloop.run(create_games(address, args.games))]
            after_created = dataset_bytes(redis)
            known += created
            found = footprint(redis, created)
            figures.append(
                Figure(
                    "created",
                    found.mean(created),
                    (after_created - before) / args.games,
                    f"[{args.games:,} games: {_layout(found.layout(created))}]",
                )
            )

            uvloop.run(create_scripted(address, scripts, lobby))
            at_start = footprint(redis, in_play_ids)
            uvloop.run(play_scripts(address, in_play, tokens))
            at_end = footprint(redis, in_play_ids)
            applied = sum(actions.values())
            growth = sum(at_end.of(g) - at_start.of(g) for g in in_play_ids)
            figures.append(
                Figure(
                    "action",
                    growth / applied,
                    None,
                    f"[{args.in_play} scripted games in play, {applied / args.in_play:.0f} "
                    f"actions each over SubmitAction; created with {args.deals} fixed deals: "
                    f"{at_start.mean(in_play_ids):,.0f} B]",
                )
            )

            known += in_play_ids
            shared_before = footprint(redis, known).shared
            matches = [game_of(p) for p in uvloop.run(create_games(address, args.played))]
            last = uvloop.run(play_out(address, [[f"{g}-{s}" for s in range(6)] for g in matches]))
            time.sleep(args.settle)
            ended = footprint(redis, matches)
            versions = sum(last.values()) / max(1, len(last))
            figures.append(
                Figure(
                    "finished",
                    ended.mean(matches),
                    None,
                    f"[{args.played} matches by bots over sessions, {versions:.0f} versions "
                    f"each: {_layout(ended.layout(matches))}]",
                )
            )
            shared_after = footprint(redis, known + matches).shared
        finally:
            redis.close()
            game.terminate()
            game.wait(15)

    print(
        "redis memory, measured from outside: MEMORY USAGE of each game's keys (found by a "
        "SCAN for its id), and the growth of INFO used_memory_dataset"
    )
    for figure in figures:
        print(figure.line())
    print(
        f"  beside a finished match's own keys, the shard-wide keys (deadline indexes, "
        f"ended-games streams) grew {(shared_after - shared_before) / args.played:,.0f} B per "
        "match: at this sample size mostly the first node of a new shard stream"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
