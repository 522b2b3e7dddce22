"""The game service and the lobby on a real Redis Cluster (``redis+cluster://``):
six clients queue through the lobby, are seated and play a whole short match
with a spectator watching; the lobby records the result (ListGames). A lone
player gets five server-side bots (the lobby's bot-job stream). Games
created on every node are played and watched too: each commit's PUBLISH on one
node reaches the watch hub subscribed on another."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
from redis.asyncio.cluster import RedisCluster
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, lobby_pb2

from tests.client.test_client import play_seat
from tests.lobby_service.conftest import Stack
from tests.service.conftest import LOBBY, SECRET
from truc_client.client import TrucClient
from truc_game.adapters.redis_keys import Keys
from truc_redis.connection import connect, script
from truc_service.tokens import issue_token

from .conftest import RedisClusterNodes

SHORT = game_pb2.RuleOptions(target_score=1, manches_to_win=1)


@pytest.fixture(scope="module")
def cluster_stack(redis_cluster: RedisClusterNodes) -> Iterator[Stack]:
    # Bots fill a table after 2 s: the six humans below queue well within that.
    started = Stack(redis_cluster.url, TRUC_BOT_WAIT_SECONDS="2", TRUC_MATCH_INTERVAL_MS="50")
    yield started
    started.stop()


def node_of(cluster: RedisClusterNodes, key: str) -> int:
    """The index of the node serving ``key``'s slot (CLUSTER NODES of node 0)."""
    with cluster.client(0) as node:
        slot = int(node.execute_command("CLUSTER", "KEYSLOT", key))
        for line in node.execute_command("CLUSTER", "NODES").decode().splitlines():
            fields = line.split()
            port = int(fields[1].split("@")[0].rsplit(":", 1)[1])
            for span in fields[8:]:
                low, _, high = span.partition("-")
                if int(low) <= slot <= int(high or low):
                    return [n.port for n in cluster.nodes].index(port)
    raise AssertionError(f"slot {slot} is served by no node")


async def spectate(stack: Stack, game: str) -> list[game_service_pb2.WatchGameResponse]:
    """Every version of ``game`` from the start to its end, as a spectator sees it."""
    async with TrucClient(stack.lobbies[0].address, stack.game.address) as watcher:
        watcher.use_token(issue_token(SECRET, "spectator", role="spectator", ttl_seconds=600))
        return [change async for change in watcher.watch_game(game)]


@dataclass
class LobbyMatch:
    game: str
    finals: list[game_pb2.GameView]
    watched: list[game_service_pb2.WatchGameResponse]
    listed: list[list[str]]
    """Each player's ListGames: the games' names."""


@pytest.fixture(scope="module")
def lobby_match(cluster_stack: Stack) -> LobbyMatch:
    async def main() -> LobbyMatch:
        stack = cluster_stack
        clients = [TrucClient(stack.lobbies[i % 2].address, stack.game.address) for i in range(6)]
        try:
            for i, client in enumerate(clients):
                await client.sign_in_guest(f"clustered{i}")
            queued = [await client.queue(options=SHORT) for client in clients]
            tickets = await asyncio.gather(
                *(
                    c.wait_until_seated(t.name, timeout=30)
                    for c, t in zip(clients, queued, strict=True)
                )
            )
            game = tickets[0].game
            assert {t.game for t in tickets} == {game}
            watching = asyncio.create_task(spectate(stack, game))
            played = await asyncio.wait_for(
                asyncio.gather(
                    *(play_seat(c, game, 7 + t.seat) for c, t in zip(clients, tickets, strict=True))
                ),
                60,
            )
            watched = await asyncio.wait_for(watching, 30)
            listed: list[list[str]] = []
            for client in clients:
                for _ in range(200):  # the lobby records a game shortly after it ends
                    names = [g.name for g in (await client.list_games()).games]
                    if names:
                        break
                    await asyncio.sleep(0.1)
                listed.append(names)
            return LobbyMatch(game, [final for final, _, _ in played], watched, listed)
        finally:
            for client in clients:
                await client.close()

    return asyncio.run(main())


def test_six_clients_queue_play_a_whole_match_and_a_spectator_watches_it(
    lobby_match: LobbyMatch,
) -> None:
    assert all(final.finished for final in lobby_match.finals)
    assert len({final.winner for final in lobby_match.finals}) == 1
    versions = [change.version for change in lobby_match.watched]
    assert versions == list(range(1, versions[-1] + 1))  # every version once, in order
    assert lobby_match.watched[-1].game.finished
    assert lobby_match.watched[-1].game.winner == lobby_match.finals[0].winner


def test_the_lobby_records_the_result_for_every_player(lobby_match: LobbyMatch) -> None:
    assert lobby_match.listed == [[lobby_match.game]] * 6


def test_the_game_and_the_lobby_keys_live_on_the_nodes_of_their_slots(
    redis_cluster: RedisClusterNodes, lobby_match: LobbyMatch
) -> None:
    game_id = lobby_match.game.removeprefix("games/")
    game_key = Keys(game_id).game
    owner = node_of(redis_cluster, game_key)
    with redis_cluster.client(owner) as node:
        assert node.exists(game_key, Keys(game_id).log, Keys(game_id).ended) == 3
    lobby_owner = node_of(redis_cluster, "truc:{lobby}:ratings")
    with redis_cluster.client(lobby_owner) as node:
        assert node.exists("truc:{lobby}:ratings") == 1


def game_ids_one_per_node(cluster: RedisClusterNodes) -> dict[int, str]:
    """A game id whose keys land on each node."""
    found: dict[int, str] = {}
    for n in itertools.count():
        game_id = f"spread-{n}"
        found.setdefault(node_of(cluster, Keys(game_id).game), game_id)
        if len(found) == len(cluster.nodes):
            return found
    raise AssertionError("unreachable")


def test_games_on_every_node_are_played_and_watched(
    redis_cluster: RedisClusterNodes, cluster_stack: Stack
) -> None:
    by_node = game_ids_one_per_node(redis_cluster)
    players = [f"spread-player-{seat}" for seat in range(6)]

    async def play(game_id: str) -> tuple[list[game_pb2.GameView], list[int]]:
        address = cluster_stack.game.address
        async with grpc.aio.insecure_channel(address) as channel:
            created = await game_service_pb2_grpc.GameServiceStub(channel).CreateGame(
                game_service_pb2.CreateGameRequest(game_id=game_id, players=players, options=SHORT),
                metadata=LOBBY,
            )
        seats = [TrucClient(cluster_stack.lobbies[0].address, address) for _ in players]
        try:
            for seat, player in zip(seats, players, strict=True):
                seat.use_token(issue_token(SECRET, player, ttl_seconds=600))
            watching = asyncio.create_task(spectate(cluster_stack, created.name))
            played = await asyncio.wait_for(
                asyncio.gather(*(play_seat(c, created.name, s) for s, c in enumerate(seats))), 60
            )
            watched = await asyncio.wait_for(watching, 30)
        finally:
            for seat in seats:
                await seat.close()
        return [final for final, _, _ in played], [change.version for change in watched]

    async def main() -> list[tuple[list[game_pb2.GameView], list[int]]]:
        return list(await asyncio.gather(*(play(g) for g in by_node.values())))

    results = asyncio.run(main())
    for finals, versions in results:
        assert all(final.finished for final in finals)
        assert versions == list(range(1, versions[-1] + 1))
    for index, game_id in by_node.items():
        with redis_cluster.client(index) as node:
            assert node.exists(Keys(game_id).game) == 1, f"game {game_id} not on node {index}"


def test_calls_beyond_the_connection_cap_wait_for_their_turn(
    redis_cluster: RedisClusterNodes,
) -> None:
    """redis-py's cluster client fails a call at once when a node's pool is
    exhausted; the game service's client makes it wait for a turn instead."""

    async def main() -> tuple[list[int], list[int]]:
        client = connect(redis_cluster.url, max_connections=2)
        assert isinstance(client, RedisCluster)
        try:
            keys = [Keys(f"cap-{n}").game for n in range(60)]  # on every node
            bump = script(client, "return redis.call('INCR', KEYS[1])")
            counted = [int(n) for n in await asyncio.gather(*(bump(keys=[key]) for key in keys))]

            async def pipelined() -> int:
                pipe = client.pipeline()
                for key in keys:
                    pipe.get(key)
                return sum(int(v) for v in await pipe.execute())

            sums = await asyncio.gather(*(pipelined() for _ in range(10)))
            return counted, sums
        finally:
            await client.aclose()

    counted, sums = asyncio.run(main())
    assert counted == [1] * 60
    assert sums == [60] * 10


def test_a_lone_player_gets_five_bots_who_play_the_match_out(cluster_stack: Stack) -> None:
    async def main() -> tuple[lobby_pb2.Ticket, game_pb2.GameView]:
        lobby, game = cluster_stack.lobbies[1].address, cluster_stack.game.address
        async with TrucClient(lobby, game) as client:
            await client.sign_in_guest("alone-on-a-cluster")
            queued = await client.queue(options=SHORT)
            ticket = await client.wait_until_seated(queued.name, timeout=30)
            final, _, _ = await asyncio.wait_for(play_seat(client, ticket.game, 3), 60)
            return ticket, final

    ticket, final = asyncio.run(main())
    assert sum(assignment.bot for assignment in ticket.table) == 5
    assert final.finished
