"""The lobby learns that its games ended from the ended-games streams
(:mod:`truc_redis.game_ends`), read by one consumer group, and from a sweep of
the games it still follows; never from a watch of every version.

Real Redis servers (one, and a three-node Redis Cluster), a real game service,
:class:`~truc_lobby.results.ResultsFollower` instances in this process (two of
them: two lobby replicas) and, end to end, real lobby processes. The entries are
written here as the game service's commit script writes them (``XADD`` of
:meth:`GameEnd.fields`), so the follower is tested whatever writes them.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import grpc
import pytest
import redis
from redis.asyncio import Redis
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, lobby_pb2, lobby_service_pb2

from tests.cluster.conftest import RedisClusterNodes
from tests.lobby_service.conftest import Stack, sign_in
from tests.service.conftest import (
    SECRET,
    SPECTATOR,
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    next_request,
    stub,
    view_of,
)
from truc_dev_redis import RedisServer
from truc_lobby.history import history_key, summary_key
from truc_lobby.results import ResultsFollower
from truc_lobby.store import ACTIVE, RATINGS, Tracked, player_key, tracking_key
from truc_lobby.tokens import TokenIssuer
from truc_redis.connection import RedisClient, connect
from truc_redis.game_ends import ENDED_MAXLEN, GROUP, SHARDS, GameEnd, ended_stream, shard_of
from truc_rules.rule_set import RuleSet

pytestmark = pytest.mark.integration

TOKENS = TokenIssuer(SECRET, ttl_seconds=3600)
NO_GAME_SERVICE: Any = None
"""The follower's game stub where the test must not reach a game service."""


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer() as started:
        yield started


@pytest.fixture
def url(server: RedisServer) -> str:
    """The module's Redis, emptied for each test (groups, pending entries too)."""
    with redis.Redis.from_url(server.url) as client:
        client.flushall()
    return server.url


@pytest.fixture(scope="module")
def game_service(server: RedisServer) -> Iterator[Replica]:
    replica = Replica(server.url)
    yield replica
    replica.stop()


def players_of(tag: str, count: int = 6) -> list[str]:
    return [f"{tag}-{uuid.uuid4().hex[:6]}-p{seat}" for seat in range(count)]


async def track(redis_client: RedisClient, game: str, players: Sequence[str], score: int) -> None:
    """What seating a table writes for the results (``LobbyStore.seat``): the
    seats, the game in ACTIVE with ``score`` (0 when just seated) and each
    human held by the game. Every player at 1500: a win is +16, a loss -16."""
    seats = tuple((seat, player, False, 1500.0) for seat, player in enumerate(players))
    await redis_client.set(tracking_key(game), Tracked(RuleSet.TRUC_Y_FLOU, seats).encode())
    await redis_client.zadd(ACTIVE, {game: score})
    for player in players:
        await redis_client.set(player_key(player), "game:" + game, px=3_600_000)


async def announce(redis_client: RedisClient, end: GameEnd) -> bytes:
    """The game service's entry: XADD to the game's shard stream (MAXLEN ~)."""
    entry_id: bytes = await redis_client.xadd(
        ended_stream(shard_of(end.game_id)),
        end.fields(),  # type: ignore[arg-type]
        maxlen=ENDED_MAXLEN,
        approximate=True,
    )
    return entry_id


class Seen:
    """What the lobby recorded of a game, read from Redis."""

    def __init__(self, redis_client: RedisClient, game: str, players: Sequence[str]) -> None:
        self.redis = redis_client
        self.game = game
        self.players = players

    async def recorded(self) -> bool:
        return bool(await self.redis.exists(summary_key(self.game)))

    async def ratings(self) -> list[float | None]:
        raw = [await self.redis.hget(RATINGS, p) for p in self.players]  # type: ignore[misc]
        return [None if r is None else float(r) for r in raw]

    async def histories(self) -> list[list[str]]:
        return [
            [m.decode() for m in await self.redis.zrange(history_key(p), 0, -1)]
            for p in self.players
        ]

    async def held(self) -> list[bool]:
        return [bool(await self.redis.exists(player_key(p))) for p in self.players]

    async def check_recorded_once(self, winner: int | None) -> None:
        assert await self.recorded(), "the game was not recorded"
        expected = [
            None if winner is None else 1500.0 + (16.0 if seat % 2 == winner else -16.0)
            for seat in range(len(self.players))
        ]
        assert await self.ratings() == pytest.approx(expected)
        assert await self.histories() == [[self.game]] * len(self.players)
        assert await self.held() == [False] * len(self.players)
        assert await self.redis.zscore(ACTIVE, self.game) is None
        assert not await self.redis.exists(tracking_key(self.game))


async def pending(redis_client: RedisClient, game: str) -> int:
    summary = await redis_client.xpending(ended_stream(shard_of(game)), GROUP)
    return int(summary["pending"])


def follower(
    redis_client: RedisClient,
    game: Any = NO_GAME_SERVICE,
    *,
    claim_idle_ms: int = 30_000,
    recheck_ms: int = 300_000,
) -> ResultsFollower:
    return ResultsFollower(
        redis_client,
        game,
        TOKENS,
        default_rating=1500.0,
        history_seconds=3600,
        claim_idle_ms=claim_idle_ms,
        recheck_ms=recheck_ms,
        block_ms=100,
        poll_ms=20,
    )


class Counting(ResultsFollower):
    """A follower counting the entries it read and handled (its ``read`` loop's)."""

    def __init__(self, redis_client: RedisClient) -> None:
        super().__init__(
            redis_client,
            NO_GAME_SERVICE,
            TOKENS,
            default_rating=1500.0,
            history_seconds=3600,
            block_ms=100,
        )
        self.handled = 0

    async def read(self) -> int:
        handled = await super().read()
        self.handled += handled
        return handled


@asynccontextmanager
async def running(*followers: ResultsFollower) -> AsyncIterator[None]:
    """The followers' ``run`` loops (a lobby replica each), stopped on exit."""
    tasks = [asyncio.create_task(f.run()) for f in followers]
    try:
        yield
    finally:
        for f in followers:
            await f.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def eventually(what: str, check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.02)


# ------------------------------------------------------ the consumer group


def test_joining_creates_the_group_on_every_shard_stream(url: str) -> None:
    async def main() -> None:
        client = Redis.from_url(url)
        try:
            first, second = follower(client), follower(client)
            await first.join()
            await second.join()  # BUSYGROUP: the group stays as it is
            assert first.consumer != second.consumer
            for shard in range(SHARDS):
                groups = await client.xinfo_groups(ended_stream(shard))
                assert [g["name"] for g in groups] == [GROUP.encode()]
        finally:
            await client.aclose()

    asyncio.run(main())


def test_an_end_read_by_two_replicas_is_recorded_once(url: str) -> None:
    """Two followers (two lobby replicas) read the streams: each entry is handled
    by one of them, and a game whose end reaches both (announced twice, a
    redelivery) counts once."""

    async def main() -> None:
        client = Redis.from_url(url)
        try:
            games = [f"twice-{i}-{uuid.uuid4().hex[:8]}" for i in range(8)]
            tables = {game: players_of(game) for game in games}
            for game in games:
                await track(client, game, tables[game], score=0)
            first, second = Counting(client), Counting(client)
            await first.join()
            await second.join()
            await announce(client, GameEnd(games[0], 0))
            assert await first.read() == 1
            await announce(client, GameEnd(games[0], 0))  # the same end again
            assert await second.read() == 1
            await Seen(client, games[0], tables[games[0]]).check_recorded_once(0)
            async with running(first, second):
                for i, game in enumerate(games[1:], 1):
                    await announce(client, GameEnd(game, i % 2))
                    await asyncio.sleep(0.01)
                for game in games:
                    await eventually(f"{game} recorded", Seen(client, game, tables[game]).recorded)
                await eventually("all acknowledged", lambda: _none_pending(client, games))
            for i, game in enumerate(games):
                await Seen(client, game, tables[game]).check_recorded_once(i % 2)
            assert first.handled + second.handled == len(games) + 1
        finally:
            await client.aclose()

    asyncio.run(main())


def test_an_end_pending_on_a_dead_consumer_is_taken_over(url: str) -> None:
    """A replica reads an end and dies before acknowledging it: after the idle
    time, another replica claims it (XAUTOCLAIM) and records it, once."""

    async def main() -> None:
        client = Redis.from_url(url)
        try:
            game, players = "orphan-" + uuid.uuid4().hex[:8], players_of("orphan")
            await track(client, game, players, score=0)
            survivor = follower(client, claim_idle_ms=800)
            await survivor.join()
            await announce(client, GameEnd(game, 1))
            stream = ended_stream(shard_of(game))
            read = await client.xreadgroup(GROUP, "dead-replica", {stream: ">"}, count=10)
            assert len(read[0][1]) == 1  # the dead replica took it, and never acknowledges
            assert await survivor.read() == 0  # delivered already: not read again
            assert await survivor.claim_stale() == 0  # not idle long enough yet
            assert not await Seen(client, game, players).recorded()
            await asyncio.sleep(0.9)
            assert await survivor.claim_stale() == 1
            await Seen(client, game, players).check_recorded_once(1)
            assert await pending(client, game) == 0
            await asyncio.sleep(0.9)
            assert await survivor.claim_stale() == 0  # acknowledged: never again
        finally:
            await client.aclose()

    asyncio.run(main())


def test_a_malformed_entry_is_acknowledged_and_skipped(url: str) -> None:
    async def main() -> None:
        client = Redis.from_url(url)
        try:
            game, players = "good-" + uuid.uuid4().hex[:8], players_of("good")
            await track(client, game, players, score=0)
            reader = follower(client, claim_idle_ms=100)
            await reader.join()
            stream = ended_stream(shard_of(game))
            await client.xadd(stream, {"x": "not ours"})
            await client.xadd(stream, {"g": "some-game", "w": "Z"})  # no such team
            await client.xadd(stream, {"g": b"\xff\xfe", "w": "A"})  # not UTF-8
            await announce(client, GameEnd(game, None))  # no winner: fixed deals ran out
            assert await reader.read() == 4
            await Seen(client, game, players).check_recorded_once(None)
            assert await pending(client, game) == 0
            assert await reader.read() == 0
            await asyncio.sleep(0.2)
            assert await reader.claim_stale() == 0  # nothing left pending to loop on
            assert await client.hlen(RATINGS) == 0
        finally:
            await client.aclose()

    asyncio.run(main())


def test_the_group_is_joined_again_when_redis_lost_the_streams(url: str) -> None:
    """Redis restarted empty (or the streams were deleted): the next read fails
    NOGROUP, the follower creates the group again and goes on."""

    async def main() -> None:
        client = Redis.from_url(url)
        try:
            reader = follower(client)
            async with running(reader):
                await eventually("joined", lambda: _joined(client, 1))
                await client.flushall()
                game, players = "lost-" + uuid.uuid4().hex[:8], players_of("lost")
                await asyncio.sleep(0.3)
                await track(client, game, players, score=0)
                await eventually("the group again", lambda: _has_group(client, game))
                await announce(client, GameEnd(game, 0))
                await eventually("recorded", Seen(client, game, players).recorded)
            await Seen(client, game, players).check_recorded_once(0)
        finally:
            await client.aclose()

    asyncio.run(main())


def test_a_replica_leaves_the_group_on_stop_unless_it_holds_pending_ends(url: str) -> None:
    async def main() -> None:
        client = Redis.from_url(url)
        try:
            tidy, holding = follower(client), follower(client)
            await tidy.join()
            await holding.join()
            await client.xadd(ended_stream(0), GameEnd("held", 0).fields())
            await client.xreadgroup(GROUP, holding.consumer, {ended_stream(0): ">"})
            await tidy.read()
            await tidy.stop()
            await holding.stop()
            names = {
                c["name"].decode() for c in await client.xinfo_consumers(ended_stream(0), GROUP)
            }
            assert names == {holding.consumer}  # its pending end waits for a claim
        finally:
            await client.aclose()

    asyncio.run(main())


def test_a_lobby_reads_the_ends_from_the_game_services_own_redis(url: str) -> None:
    """A lobby process whose Redis is not the game service's
    (``TRUC_GAME_REDIS_URL``): it reads the ended-games streams there and
    records the results in its own Redis."""
    with RedisServer() as game_redis:
        lobby = Replica(
            url,
            module="truc_lobby",
            TRUC_LOBBY_PORT="0",
            TRUC_GAME_REDIS_URL=game_redis.url,
            TRUC_BOT_WAIT_SECONDS="0",
        )

        async def main() -> None:
            own, games = Redis.from_url(url), Redis.from_url(game_redis.url)
            try:
                game, players = "elsewhere-" + uuid.uuid4().hex[:8], players_of("elsewhere")
                await track(own, game, players, score=0)
                await eventually("the lobby joined", lambda: _joined(games, 1, game))
                await announce(games, GameEnd(game, 0))
                await eventually("recorded", Seen(own, game, players).recorded)
                await Seen(own, game, players).check_recorded_once(0)
                assert await pending(games, game) == 0
                assert not await own.exists(ended_stream(shard_of(game)))
            finally:
                await own.aclose()
                await games.aclose()

        try:
            asyncio.run(main())
        finally:
            lobby.stop()


# --------------------------------------------------------------- the sweep


def test_the_sweep_records_a_game_that_ended_without_a_stream_entry(
    url: str, game_service: Replica
) -> None:
    """Games still followed whose time came: one that finished (its end never
    reached a stream), one that expired on the game service (NOT_FOUND), one
    still being played, one just seated. Only the first two are recorded; the
    others are asked about again ``recheck_ms`` later, the seated one without
    asking the game service now."""
    game_stub = stub(game_service.address)
    finished_players, playing_players = players_of("done"), players_of("playing")
    finished = create_fixed_game(
        game_stub, finished_players, start_scores=(24, 24), start_manches=(1, 1)
    ).game.name
    playing = create_fixed_game(game_stub, playing_players).game.name
    tokens = [auth(p) for p in finished_players]
    while not _over(view := view_of(game_stub, finished, SPECTATOR)):
        request, metadata = next_request(game_stub, finished, tokens)
        game_stub.SubmitAction(request, metadata=metadata)
    winner = (0 if view.winner == game_pb2.TEAM_A else 1) if view.finished else None
    finished_id, playing_id = finished.removeprefix("games/"), playing.removeprefix("games/")
    expired_id, seated_id = "expired-" + uuid.uuid4().hex[:8], "seated-" + uuid.uuid4().hex[:8]
    expired_players, seated_players = players_of("expired"), players_of("seated")

    async def main() -> None:
        client = Redis.from_url(url)
        channel = grpc.aio.insecure_channel(game_service.address)
        try:
            await client.delete(*(ended_stream(s) for s in range(SHARDS)))  # no entry, whoever
            await track(client, finished_id, finished_players, score=1)
            await track(client, expired_id, expired_players, score=1)
            await track(client, playing_id, playing_players, score=1)
            await track(client, seated_id, seated_players, score=0)
            sweeper = follower(
                client, game_service_pb2_grpc.GameServiceStub(channel), recheck_ms=60_000
            )
            before = time.time() * 1000
            assert await sweeper.sweep() == 2
            await Seen(client, finished_id, finished_players).check_recorded_once(winner)
            await Seen(client, expired_id, expired_players).check_recorded_once(None)
            for game, players in ((playing_id, playing_players), (seated_id, seated_players)):
                assert not await Seen(client, game, players).recorded()
                assert await Seen(client, game, players).held() == [True] * 6
                score = await client.zscore(ACTIVE, game)
                assert score is not None
                assert before + 59_000 <= score <= time.time() * 1000 + 60_000
            assert await sweeper.sweep() == 0  # nothing due any more
        finally:
            await channel.close(None)
            await client.aclose()

    asyncio.run(main())


# -------------------------------------------------------- a Redis Cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterNodes]:
    nodes = RedisClusterNodes()
    yield nodes
    nodes.stop()


def test_on_a_redis_cluster_ends_on_every_node_are_recorded_and_taken_over(
    cluster: RedisClusterNodes,
) -> None:
    """On a Redis Cluster the streams live on every node: ends of games of many
    shards are read by the per-shard pipeline, and one pending on a dead
    consumer is claimed by XAUTOCLAIM there too."""

    async def main() -> None:
        client = connect(cluster.url, max_connections=16)
        try:
            games: list[str] = []
            shards: set[int] = set()
            while len(shards) < 12:  # games of twelve shards (spread over the nodes)
                game = f"clustered-{uuid.uuid4().hex[:8]}"
                if shard_of(game) not in shards:
                    shards.add(shard_of(game))
                    games.append(game)
            tables = {game: players_of(game, 2) for game in games}
            for game in games:
                await track(client, game, tables[game], score=0)
            first, second = (follower(client, claim_idle_ms=500) for _ in range(2))
            async with running(first, second):
                await eventually("both joined", lambda: _joined(client, 2, games[0]))
                for i, game in enumerate(games):
                    await announce(client, GameEnd(game, i % 2))
                for game in games:
                    await eventually(f"{game} recorded", Seen(client, game, tables[game]).recorded)
                orphan, players = games[0] + "-orphan", players_of("orphan", 2)
                await track(client, orphan, players, score=0)
                await first.stop()
                await second.stop()
                await announce(client, GameEnd(orphan, 1))
                stream = ended_stream(shard_of(orphan))
                assert await client.xreadgroup(GROUP, "dead-replica", {stream: ">"})
                third = follower(client, claim_idle_ms=500)
                async with running(third):
                    await eventually(
                        "the orphan taken over", Seen(client, orphan, players).recorded
                    )
                await Seen(client, orphan, players).check_recorded_once(1)
            for i, game in enumerate(games):
                await Seen(client, game, tables[game]).check_recorded_once(i % 2)
                assert await pending(client, game) == 0
        finally:
            await client.aclose()

    asyncio.run(main())


# ------------------------------------------------------------- end to end


def _watch_calls(metrics_url: str) -> tuple[float, float]:
    """(WatchGame streams open now, WatchGame calls ever) on a game replica."""
    with urllib.request.urlopen(metrics_url, timeout=5) as reply:  # loopback
        text = reply.read().decode()
    open_now = calls = 0.0
    for line in text.splitlines():
        if 'method="WatchGame"' not in line:
            continue
        value = float(line.rsplit(" ", 1)[1])
        if line.startswith("truc_watch_streams{"):
            open_now += value
        elif re.match(r"truc_rpc_duration_seconds_count\{", line):
            calls += value
    return open_now, calls


def test_a_match_through_the_lobby_costs_it_no_watch_and_its_end_is_recorded(
    server: RedisServer,
) -> None:
    """Six guests queue, are seated by the lobby and play a short match with
    unary calls only: the game service counts no WatchGame at any time (the
    lobby follows ends, not versions), and the lobby records the result from the
    ended-games stream (the sweep would not look before five minutes)."""
    with redis.Redis.from_url(server.url) as plain:
        plain.flushall()
    stack = Stack(server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_RESULTS_RECHECK_SECONDS="300")
    try:
        metrics_url = stack.game.metrics_url
        assert metrics_url is not None
        name, tokens, players = _seat_six(stack, "ends")
        time.sleep(2.0)  # long enough for any follower to have opened a watch
        assert _watch_calls(metrics_url) == (0.0, 0.0)
        view = _play_out(stack.game.address, name, tokens)
        assert _watch_calls(metrics_url) == (0.0, 0.0)
        _check_recorded(server.url, name, players, view)
        assert _watch_calls(metrics_url) == (0.0, 0.0)
    finally:
        stack.stop()


def test_an_end_while_no_lobby_runs_is_recorded_by_the_next_one(server: RedisServer) -> None:
    """Every lobby replica is SIGKILLed while the match is played; its end waits
    in the stream, and the replica started afterwards records it at once."""
    with redis.Redis.from_url(server.url) as plain:
        plain.flushall()
    stack = Stack(server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_RESULTS_RECHECK_SECONDS="300")
    try:
        name, tokens, players = _seat_six(stack, "restart")
        for lobby in stack.lobbies:
            lobby.kill()
            lobby.stop()
        view = _play_out(stack.game.address, name, tokens)
        stack.lobbies = [
            Replica(
                server.url,
                module="truc_lobby",
                TRUC_LOBBY_PORT="0",
                TRUC_GAME_ADDRESS=stack.game.address,
                TRUC_BOT_WAIT_SECONDS="0",
            )
        ]
        _check_recorded(server.url, name, players, view)
    finally:
        stack.stop()


def _seat_six(
    stack: Stack, tag: str, target_score: int = 1, manches_to_win: int = 1
) -> tuple[str, list[Metadata], list[str]]:
    """Six guests queue for a match (by default of one hand): (the game's name,
    each seat's game token as metadata, the players in seat order)."""
    lobby = stack.lobby(0)
    options = game_pb2.RuleOptions(target_score=target_score, manches_to_win=manches_to_win)
    guests = [sign_in(lobby, f"{tag}{i}") for i in range(6)]
    tickets = [
        lobby.CreateTicket(
            lobby_service_pb2.CreateTicketRequest(options=options), metadata=m
        ).ticket
        for _, m in guests
    ]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        tickets = [
            lobby.GetTicket(lobby_service_pb2.GetTicketRequest(name=t.name), metadata=m).ticket
            for t, (_, m) in zip(tickets, guests, strict=True)
        ]
        if all(t.state == lobby_pb2.TICKET_STATE_MATCHED for t in tickets):
            break
        time.sleep(0.1)
    assert all(t.state == lobby_pb2.TICKET_STATE_MATCHED for t in tickets)
    seats: dict[int, tuple[str, Metadata]] = {}
    for ticket in tickets:
        (seat,) = (s.seat for s in ticket.table if s.player == ticket.members[0].player)
        seats[seat] = (
            ticket.members[0].player,
            (("authorization", "Bearer " + ticket.game_token),),
        )
    return (
        tickets[0].game,
        [seats[seat][1] for seat in range(6)],
        [seats[seat][0] for seat in range(6)],
    )


def _play_out(address: str, name: str, tokens: Sequence[Metadata]) -> game_pb2.GameView:
    """Play the match to its end with unary calls (each seat's first card, else
    its first legal action); the final view."""
    game_stub = stub(address)
    while not _over(view := view_of(game_stub, name, SPECTATOR)):
        mine = view_of(game_stub, name, tokens[view.to_act])
        cards = [a for a in mine.legal_actions if a.WhichOneof("kind") == "play_card"]
        request = game_service_pb2.SubmitActionRequest(
            name=name,
            action=(cards or list(mine.legal_actions))[0],
            etag=mine.etag,
            request_id=uuid.uuid4().hex,
        )
        game_stub.SubmitAction(request, metadata=tokens[view.to_act])
    return view


def _check_recorded(
    url: str, name: str, players: Sequence[str], view: game_pb2.GameView, timeout: float = 10.0
) -> None:
    """The lobby records the game within ``timeout``: summary, players freed,
    ratings moved by +-16 (even teams), each player's history."""
    game = name.removeprefix("games/")
    with redis.Redis.from_url(url) as plain:
        deadline = time.monotonic() + timeout
        while not plain.exists(summary_key(game)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert plain.exists(summary_key(game)), "the lobby did not record the end"
        assert not any(plain.exists(player_key(p)) for p in players)  # freed
        assert all(plain.zscore(history_key(p), game) is not None for p in players)
        if view.finished:
            winner = 0 if view.winner == game_pb2.TEAM_A else 1
            ratings = [float(cast(bytes, plain.hget(RATINGS, p))) for p in players]
            expected = [1516.0 if seat % 2 == winner else 1484.0 for seat in range(6)]
            assert ratings == pytest.approx(expected)


# ------------------------------------------------------------------ helpers


def _over(view: game_pb2.GameView) -> bool:
    return bool(view.finished) or view.phase == game_pb2.PHASE_NO_DEAL


async def _joined(client: RedisClient, consumers: int, game: str = "") -> bool:
    """Whether ``consumers`` consumers are in the group of the game's (or shard
    0's) stream (a consumer appears on its first read)."""
    stream = ended_stream(shard_of(game)) if game else ended_stream(0)
    try:
        return len(await client.xinfo_consumers(stream, GROUP)) >= consumers
    except redis.exceptions.ResponseError:
        return False


async def _has_group(client: RedisClient, game: str) -> bool:
    try:
        return bool(await client.xinfo_groups(ended_stream(shard_of(game))))
    except redis.exceptions.ResponseError:
        return False


async def _none_pending(client: RedisClient, games: Sequence[str]) -> bool:
    return all([await pending(client, game) == 0 for game in games])
