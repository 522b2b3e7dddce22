"""Lobby benchmark (``make bench``): 10,000 players queue through the real lobby.

A bundled Redis, one game service and one lobby (bots off). 10,000 players
(solos, pairs and trios) create their tickets as fast as 64 concurrent clients
can; the lobby's matcher seats them into games created on the game service.
Prints tickets matched per second over the run and, for each game, the time
from the arrival of the last ticket that completed its table to the game's
creation (p50/p99).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import grpc
import jwt
import uvloop
from redis import Redis
from truc.v1 import lobby_service_pb2, lobby_service_pb2_grpc

from service_bench import start_process
from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET


def token(player: str) -> str:
    now = int(time.time())
    claims = {
        "sub": player,
        "iss": "truc-lobby",
        "aud": ["truc-lobby", "truc-game"],
        "iat": now,
        "exp": now + 3600,
    }
    return jwt.encode(claims, DEV_SECRET, algorithm="HS256")


def parties(players: int, rng: random.Random) -> list[list[str]]:
    groups: list[list[str]] = []
    made = 0
    while made < players:
        size = min(rng.choice((1, 1, 1, 2, 3)), players - made)
        groups.append([f"bench-{made + i}" for i in range(size)])
        made += size
    return groups


async def enqueue(address: str, groups: list[list[str]], concurrency: int) -> dict[str, float]:
    """Create (and confirm) every ticket; the time each became queued."""
    channel = grpc.aio.insecure_channel(address)
    lobby = lobby_service_pb2_grpc.LobbyServiceStub(channel)
    queued_at: dict[str, float] = {}
    pending = list(reversed(groups))

    async def worker() -> None:
        while pending:
            group = pending.pop()
            leader = (("authorization", "Bearer " + token(group[0])),)
            ticket = (
                await lobby.CreateTicket(
                    lobby_service_pb2.CreateTicketRequest(party=group[1:]), metadata=leader
                )
            ).ticket
            for member in group[1:]:
                await lobby.ConfirmTicket(
                    lobby_service_pb2.ConfirmTicketRequest(name=ticket.name),
                    metadata=(("authorization", "Bearer " + token(member)),),
                )
            queued_at[ticket.name.removeprefix("tickets/")] = time.time()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await channel.close(None)
    return queued_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    groups = parties(args.players, random.Random(7))
    with RedisServer() as redis_server:
        env = {
            **os.environ,
            "REDIS_URL": redis_server.url,
            "TRUC_DEV_MODE": "1",
            "TRUC_GAME_PORT": "0",
            "TRUC_LOBBY_PORT": "0",
            "TRUC_RATE_ACTIONS": "0",
            "TRUC_BOT_WAIT_SECONDS": "0",
            "TRUC_MATCH_INTERVAL_MS": "50",
            "TRUC_TICKET_GRACE_SECONDS": "600",
            # 10,000 scripted players do not follow their tickets (no WatchTicket
            # stream each): the lobby's presence check off, for this benchmark only.
            "TRUC_TICKET_PRESENCE_SECONDS": "0",
            "TRUC_LOG_LEVEL": "INFO",
        }
        env.pop("TRUC_JWT_SECRET", None)
        game, game_port = start_process([sys.executable, "-m", "truc_game"], env)
        lobby, lobby_port = start_process(
            [sys.executable, "-m", "truc_lobby"],
            {**env, "TRUC_GAME_ADDRESS": f"127.0.0.1:{game_port}"},
        )
        try:
            began = time.time()
            queued_at = uvloop.run(enqueue(f"127.0.0.1:{lobby_port}", groups, 64))
            enqueued = time.time()
            redis = Redis.from_url(redis_server.url)
            players = sum(len(g) for g in groups)
            deadline = time.time() + 120
            while time.time() < deadline:
                queue_left = int(redis.hlen("truc:{lobby}:queue"))  # type: ignore[arg-type]
                if queue_left == 0 or (time.time() - enqueued > 5 and queue_left < 6):
                    break
                time.sleep(0.2)
            finished = time.time()
            games: dict[str, list[str]] = {}
            matched_at: dict[str, float] = {}
            for ticket in queued_at:
                fields: dict[bytes, bytes] = redis.hgetall(f"truc:{{lobby}}:ticket:{ticket}")  # type: ignore[assignment]
                if fields.get(b"s") == b"MATCHED":
                    games.setdefault(fields[b"g"].decode(), []).append(ticket)
                    matched_at[ticket] = int(fields[b"a"]) / 1000
        finally:
            lobby.terminate()
            game.terminate()
            lobby.wait(10)
            game.wait(10)
    latencies = [
        matched_at[tickets[0]] - max(queued_at[t] for t in tickets) for tickets in games.values()
    ]
    matched_tickets = sum(len(t) for t in games.values())
    figures = {
        "players": players,
        "tickets": len(groups),
        "games": len(games),
        "tickets_matched": matched_tickets,
        "enqueue_seconds": round(enqueued - began, 2),
        "tickets_matched_per_second": round(matched_tickets / (finished - began)),
        "sixth_ticket_to_game_p50_ms": round(statistics.median(latencies) * 1000, 1),
        "sixth_ticket_to_game_p99_ms": round(
            sorted(latencies)[int(0.99 * (len(latencies) - 1))] * 1000, 1
        ),
    }
    print(f"lobby: {players:,} players in {len(groups):,} tickets through the real lobby")
    print(f"  tickets matched/s          {figures['tickets_matched_per_second']:>8,}")
    print(f"  games created              {len(games):>8,}")
    print(
        f"  sixth ticket -> game, p50  {figures['sixth_ticket_to_game_p50_ms']:>8} ms   "
        f"p99 {figures['sixth_ticket_to_game_p99_ms']} ms"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
