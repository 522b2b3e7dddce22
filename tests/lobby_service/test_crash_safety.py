"""A matching round survives the death of its lobby and a lost CreateGame answer.

Real processes on a Redis of their own: a game service, lobby replicas, gRPC
clients. Each test reproduces one fault of the chaos runs at a chosen point
and checks what the lobby guarantees: a claimed table gets exactly one game,
its tickets end in it (or back in the queue), and the game is followed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import cast

import grpc
import pytest
import redis
from truc.v1 import lobby_pb2, lobby_service_pb2

from tests.service.conftest import Metadata, Replica
from truc_dev_redis import RedisServer
from truc_lobby.matcher import CREATE_TIMEOUT_S
from truc_lobby.store import ACTIVE, CLAIMS, QUEUE, player_key, ticket_key

from .conftest import Stack, sign_in


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis for one test: the games counted are this test's only."""
    with RedisServer() as server:
        yield server


class Peek:
    """Typed reads of the lobby's and the game service's Redis keys."""

    def __init__(self, url: str) -> None:
        self.redis = redis.Redis.from_url(url, decode_responses=True)

    def field(self, key: str, name: str) -> str:
        return cast(str | None, self.redis.hget(key, name)) or ""

    def value(self, key: str) -> str | None:
        return cast(str | None, self.redis.get(key))

    def score(self, key: str, member: str) -> float:
        return cast(float | None, self.redis.zscore(key, member)) or 0.0

    def count(self, key: str) -> int:
        return int(cast(int, self.redis.zcard(key)))

    def close(self) -> None:
        self.redis.close()


def wait_for(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def queue_six(stack: Stack) -> tuple[list[str], list[str], list[Metadata]]:
    """Six guests, each with a solo ticket it reads once (GetTicket: it follows
    the ticket, which may then be matched): (players, ticket ids, their metadata)."""
    lobby = stack.lobby(0)
    players, tickets, metadatas = [], [], []
    for i in range(6):
        player, metadata = sign_in(lobby, f"crash{i}")
        reply = lobby.CreateTicket(lobby_service_pb2.CreateTicketRequest(), metadata=metadata)
        lobby.GetTicket(
            lobby_service_pb2.GetTicketRequest(name=reply.ticket.name), metadata=metadata
        )
        players.append(player)
        tickets.append(reply.ticket.name.removeprefix("tickets/"))
        metadatas.append(metadata)
    return players, tickets, metadatas


def states(client: Peek, tickets: list[str]) -> list[str]:
    return [client.field(ticket_key(t), "s") for t in tickets]


def games_of(client: Peek, players: list[str]) -> set[str]:
    """Every game stored in Redis that seats any of ``players``."""
    found = set()
    for key in client.redis.scan_iter(match="truc:{g*}:game:*", count=1000):
        game = str(key).split(":game:", 1)[1]
        if ":" in game:
            continue  # the game's requests, events, rate counters
        meta = json.loads(client.field(str(key), "m") or "{}")
        if set(meta.get("p", ())) & set(players):
            found.add(game)
    return found


def test_a_lobby_killed_inside_create_game_leaves_no_player_locked(
    own_redis: RedisServer,
) -> None:
    """The game replica is stopped, six guests queue, the matching round claims
    them and hangs in CreateGame; both lobbies are SIGKILLed there. Once the
    replica resumes and a new lobby starts, the table is seated in one game."""
    stack = Stack(own_redis.url, TRUC_BOT_WAIT_SECONDS="0")
    client = Peek(own_redis.url)
    try:
        os.kill(stack.game.process.pid, signal.SIGSTOP)
        try:
            players, tickets, metadatas = queue_six(stack)
            wait_for(
                "the round claims the table",
                lambda: states(client, tickets) == ["MATCHING"] * 6,
            )
            for lobby in stack.lobbies:
                lobby.kill()
                lobby.stop()
        finally:
            os.kill(stack.game.process.pid, signal.SIGCONT)
        assert states(client, tickets) == ["MATCHING"] * 6
        stack.lobbies = [
            Replica(
                own_redis.url,
                module="truc_lobby",
                TRUC_LOBBY_PORT="0",
                TRUC_GAME_ADDRESS=stack.game.address,
                TRUC_MATCH_INTERVAL_MS="100",
                TRUC_BOT_WAIT_SECONDS="0",
            )
        ]
        wait_for("the table is seated", lambda: states(client, tickets) == ["MATCHED"] * 6)
        games = {client.field(ticket_key(t), "g") for t in tickets}
        assert len(games) == 1
        game = games.pop()
        assert games_of(client, players) == {game}
        assert all(client.value(player_key(p)) == f"game:{game}" for p in players)
        assert client.redis.zscore(ACTIVE, game) is not None, "the game is not followed"
        assert client.count(CLAIMS) == 0
        api = stack.lobby(0)
        for ticket, metadata in zip(tickets, metadatas, strict=True):
            seen = api.GetTicket(
                lobby_service_pb2.GetTicketRequest(name=f"tickets/{ticket}"), metadata=metadata
            ).ticket
            assert seen.state == lobby_pb2.TICKET_STATE_MATCHED
            assert seen.game == f"games/{game}"
    finally:
        stack.stop()
        client.close()


class SlowLink:
    """The project's TCP proxy (``python -m truc_chaos.proxy``) as a process
    between the lobbies and the game service, to slow the link down at will."""

    def __init__(self, target: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "truc_chaos.proxy", "--target", target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "proxy listening on" in line, line
        self.address = line.split()[3]

    def command(self, line: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().startswith("ok"), line

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


def test_a_create_game_slower_than_the_deadline_seats_the_table_in_one_game(
    own_redis: RedisServer,
) -> None:
    """Every byte between the lobbies and the game service takes 12 s, more than
    the lobby's CreateGame deadline: the game is written, its answer comes too
    late, the create is repeated. The table still gets exactly one game."""
    game = Replica(own_redis.url)
    link = SlowLink(game.address)
    stack = Stack.__new__(Stack)
    stack.game = game
    stack.lobbies = []
    client = Peek(own_redis.url)
    try:
        stack.lobbies = [
            Replica(
                own_redis.url,
                module="truc_lobby",
                TRUC_LOBBY_PORT="0",
                TRUC_GAME_ADDRESS=link.address,
                TRUC_MATCH_INTERVAL_MS="100",
                TRUC_BOT_WAIT_SECONDS="0",
            )
        ]
        # A first table while the link is fast: the lobby's channel is connected.
        _, first, _ = queue_six(stack)
        wait_for("the first table is seated", lambda: states(client, first) == ["MATCHED"] * 6)
        link.command("latency 12000")
        players, tickets, _ = queue_six(stack)
        wait_for("the round claims the table", lambda: states(client, tickets) == ["MATCHING"] * 6)
        time.sleep(CREATE_TIMEOUT_S * 2 + 2)  # two creates have timed out by now
        link.command("pass")
        wait_for(
            "the table is seated",
            lambda: states(client, tickets) == ["MATCHED"] * 6,
            timeout=60,
        )
        time.sleep(15)  # creates still in the link's queue arrive and are answered
        seated = {client.field(ticket_key(t), "g") for t in tickets}
        assert len(seated) == 1
        assert games_of(client, players) == seated
        assert client.count(CLAIMS) == 0
    finally:
        link.stop()
        stack.stop()
        client.close()


def test_a_refused_create_puts_the_tickets_back_in_the_queue(own_redis: RedisServer) -> None:
    """A table the game service refuses (here: the lobbies sign with a key the
    game service does not know) goes back to the queue as it was; no claim is
    left behind."""
    stack = Stack(
        own_redis.url,
        TRUC_BOT_WAIT_SECONDS="0",
        TRUC_JWT_SECRET="not-the-game-service-key-0123456789abcdef",
    )
    client = Peek(own_redis.url)
    try:
        _, tickets, _ = queue_six(stack)
        wait_for("a create was refused", lambda: b"UNAUTHENTICATED" in _logs(stack))
        wait_for("the tickets are queued", lambda: states(client, tickets) == ["QUEUED"] * 6)
        assert cast(int, client.redis.hlen(QUEUE)) == 6
        assert not any(client.field(ticket_key(t), "x") for t in tickets)
        assert client.count(CLAIMS) == 0
    finally:
        stack.stop()
        client.close()


def _logs(stack: Stack) -> bytes:
    return b"".join(lobby.log().encode() for lobby in stack.lobbies)


def test_a_player_held_by_an_ended_game_nobody_follows_can_queue_again(
    own_redis: RedisServer,
) -> None:
    """A lobby of an older release could die between seating a table and
    following its game: the player key names a game with no tracking record.
    Once that game is gone, the player's next ticket frees them at once."""
    stack = Stack(own_redis.url, TRUC_BOT_WAIT_SECONDS="0")
    client = Peek(own_redis.url)
    try:
        lobby = stack.lobby(0)
        player, metadata = sign_in(lobby, "held")
        client.redis.set(player_key(player), "game:gone-long-ago", px=3_600_000)
        reply = lobby.CreateTicket(lobby_service_pb2.CreateTicketRequest(), metadata=metadata)
        assert reply.ticket.state == lobby_pb2.TICKET_STATE_QUEUED
    except grpc.RpcError as exc:
        raise AssertionError(f"the player is still held: {exc.details()}") from None
    finally:
        stack.stop()
        client.close()
