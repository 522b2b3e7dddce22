"""Callers spread their calls over every replica a target resolves to.

Two game-service replicas share one Redis; the lobby, the REST gateway and the
typed client are each given one target naming both (``ipv4:a,b``, as a
Kubernetes headless Service's DNS name would resolve to every pod). With round
robin each replica serves a share of their calls; with gRPC's default
(pick_first) one replica would get them all. Each replica's Prometheus
metrics count the calls it served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import aiohttp
import pytest
from truc.v1 import lobby_pb2

from tests.gateway.conftest import Gateway, call
from tests.observability.scrape import Samples
from truc_client.client import TrucClient
from truc_dev_redis import RedisServer

from .conftest import Replica

RPC = "truc_rpc_duration_seconds_count"


@dataclass
class Pair:
    replicas: list[Replica]
    target: str
    lobby: Replica
    gateway: Gateway

    def served(self, method: str) -> list[float]:
        """How many ``method`` calls each game replica served."""
        counts = []
        for replica in self.replicas:
            assert replica.metrics_url is not None, replica.log()
            counts.append(Samples(replica.metrics_url).value(RPC, method=method))
        return counts


@pytest.fixture(scope="module")
def pair(redis_server: RedisServer) -> Iterator[Pair]:
    replicas = [Replica(redis_server.url), Replica(redis_server.url)]
    target = "ipv4:" + ",".join(r.address for r in replicas)
    lobby = Replica(
        redis_server.url,
        module="truc_lobby",
        TRUC_LOBBY_PORT="0",
        TRUC_GAME_ADDRESS=target,
        TRUC_MATCH_INTERVAL_MS="50",
        TRUC_BOT_WAIT_SECONDS="0",
    )
    gateway = Gateway(target, lobby.address)
    yield Pair(replicas, target, lobby, gateway)
    for process in (gateway, lobby, *replicas):
        process.stop()


def test_the_lobby_client_and_gateway_spread_calls_over_both_replicas(pair: Pair) -> None:
    async def seat(clients: list[TrucClient]) -> list[lobby_pb2.Ticket]:
        for client in clients:
            await client.sign_in_guest("spread")
        tickets = [await client.queue() for client in clients]
        return await asyncio.gather(
            *(c.wait_until_seated(t.name, 20) for c, t in zip(clients, tickets, strict=True))
        )

    async def main() -> tuple[list[float], list[float]]:
        clients = [TrucClient(pair.lobby.address, pair.target) for _ in range(18)]
        try:
            # A first table connects the lobby's channel to both replicas (round robin
            # takes the replicas that are ready); the next two tables' games are then
            # created one on each.
            await seat(clients[:6])
            await asyncio.sleep(0.5)
            seated = await seat(clients[6:])
            assert len({t.game for t in seated}) == 2
            # The typed client: eight reads of one game through the two-address target.
            await clients[6].get_game(seated[0].game)
            await asyncio.sleep(0.5)
            before = pair.served("GetGame")
            for _ in range(8):
                await clients[6].get_game(seated[0].game)
            after = pair.served("GetGame")
            by_client = [a - b for a, b in zip(after, before, strict=True)]
            # The gateway: the same, once its channel is connected to both.
            async with aiohttp.ClientSession() as session:
                url = f"{pair.gateway.url}/v1/{seated[0].game}"
                for step in range(9):
                    reply = await call(session, "GET", url, token=seated[0].game_token)
                    assert reply.status == 200, reply.body
                    if step == 0:
                        await asyncio.sleep(0.5)
                        after = pair.served("GetGame")
            by_gateway = [a - b for a, b in zip(pair.served("GetGame"), after, strict=True)]
            return by_client, by_gateway
        finally:
            for client in clients:
                await client.close()

    by_client, by_gateway = asyncio.run(main())
    created = pair.served("CreateGame")
    assert sum(created) == 3 and all(c >= 1 for c in created), created  # the lobby
    assert by_client == [4, 4], by_client  # the typed client
    assert by_gateway == [4, 4], by_gateway  # the gateway
