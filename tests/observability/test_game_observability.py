"""The game service observed from outside: a real replica plays whole games, then
its /metrics endpoint and its JSON log are read.

* Metrics: actions counted by kind equal the actions submitted; games created
  and finished; RPC histograms by method and code; Redis round trips; CAS
  conflicts equal the CONFLICT answers clients got; default actions from
  deadlines; open watch streams; active games (from Redis).
* Logs: every line is a JSON object with time, level, logger and message; the
  lines of a game's RPCs carry the game, the player, the seat and the request
  id; no line names a card that was ever in a hand.
"""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import grpc
import pytest
from redis.asyncio import Redis as AsyncRedis
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from tests.observability.scrape import Samples, cards_named, json_lines
from tests.service.conftest import (
    LOBBY_AUTH,
    TRUC_REFUSED_DEAL,
    Replica,
    auth,
    create_fixed_game,
    new_players,
    proto_deal,
    reason_of,
    redis_server,  # noqa: F401
    wait_until,
)
from truc_dev_redis import RedisServer
from truc_game.adapters.redis_store import RedisGameStore
from truc_game.history import replayed
from truc_game.metrics import action_kind
from truc_protocol.convert import action_to_proto
from truc_rules import (
    Action,
    Card,
    GameState,
    SendDirective,
    SendSignal,
    apply_action,
    decode_state,
    legal_actions,
    new_game,
)
from truc_rules.registry import AnyState
from truc_rules.truc_y_flou.state import Phase


@dataclass
class Played:
    replica: Replica
    redis_url: str
    games: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)
    submitted: Counter[str] = field(default_factory=Counter)
    """Actions accepted (SubmitAction OK), by kind."""
    refused: Counter[str] = field(default_factory=Counter)
    """SubmitAction answers other than OK, by ErrorInfo reason."""
    finished: int = 0
    watch_open: float = -1.0


def _play_one_hand_match(client: game_service_pb2_grpc.GameServiceStub, played: Played) -> str:
    """A match decided by one hand (1-1 in manches, 24-24): every seat plays from
    its own token, choosing with a seeded policy from a local copy of the engine."""
    players = new_players()
    played.players += players
    created = create_fixed_game(client, players, start_scores=(24, 24), start_manches=(1, 1))
    name = created.name
    state: GameState = new_game(deals=[_deal()], dealer=5, scores=(24, 24), manches=(1, 1)).state
    tokens = [auth(p) for p in players]
    rng = random.Random(7)
    for _ in range(300):
        if state.phase in (Phase.MATCH_OVER, Phase.NO_DEAL) or state.to_act is None:
            break
        seat, action = _choose(state, rng)
        reply = client.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                name=name, action=action_to_proto(action), request_id=uuid.uuid4().hex
            ),
            metadata=tokens[seat],
        )
        state = apply_action(state, seat, action).state
        assert reply.game.etag
        played.submitted[action_kind(action)] += 1
    assert state.phase in (Phase.MATCH_OVER, Phase.NO_DEAL)
    played.finished += 1
    return name.removeprefix("games/")


def _deal() -> tuple[tuple[Card, ...], ...]:
    return tuple(tuple(Card.parse(c) for c in hand) for hand in TRUC_REFUSED_DEAL)


def _choose(state: GameState, rng: random.Random) -> tuple[int, Action]:
    """Mostly the seat to act's move; now and then a signal from any seat."""
    if rng.random() < 0.2:
        sender = rng.randrange(6)
        messages = [
            a for a in legal_actions(state, sender) if isinstance(a, SendSignal | SendDirective)
        ]
        if messages:
            return sender, rng.choice(messages)
    seat = state.to_act
    assert seat is not None
    moves = [a for a in legal_actions(state, seat) if not isinstance(a, SendSignal | SendDirective)]
    return seat, rng.choice(moves)


async def _race_signals(address: str, played: Played) -> None:
    """Signals and directives at once on one game, without etags: some lose the compare-and-set."""
    players = new_players()
    played.players += players
    async with grpc.aio.insecure_channel(address) as channel:
        client = game_service_pb2_grpc.GameServiceStub(channel)
        request = game_service_pb2.CreateGameRequest(
            players=players, dealer=5, fixed_deals=[proto_deal(TRUC_REFUSED_DEAL)]
        )
        created = await client.CreateGame(request, metadata=LOBBY_AUTH)
        played.games.append(created.name.removeprefix("games/"))
        state = new_game(deals=[_deal()], dealer=5).state
        calls = [
            (seat, action)
            for seat in range(6)
            for action in legal_actions(state, seat)[-3:]
            if isinstance(action, SendSignal | SendDirective)
        ]
        assert len(calls) >= 6

        async def send(seat: int, action: Action) -> None:
            try:
                await client.SubmitAction(
                    game_service_pb2.SubmitActionRequest(
                        name=created.name,
                        action=action_to_proto(action),
                        request_id=uuid.uuid4().hex,
                    ),
                    metadata=auth(players[seat]),
                )
                played.submitted[action_kind(action)] += 1
            except grpc.aio.AioRpcError as error:
                played.refused[reason_of(error) or "?"] += 1

        await asyncio.gather(*(send(seat, action) for seat, action in calls))


def _scrape(played: Played) -> Samples:
    assert played.replica.metrics_url is not None, played.replica.log()
    return Samples(played.replica.metrics_url)


@pytest.fixture(scope="module")
def played(redis_server: RedisServer) -> Iterator[Played]:  # noqa: F811
    replica = Replica(
        redis_server.url, TRUC_LOG_LEVEL="DEBUG", TRUC_DEADLINE_POLL_MS="50", TRUC_LOG_FORMAT=""
    )
    try:
        result = Played(replica, redis_server.url)
        client = game_service_pb2_grpc.GameServiceStub(grpc.insecure_channel(replica.address))
        result.games.append(_play_one_hand_match(client, result))
        asyncio.run(_race_signals(replica.address, result))
        # A game nobody plays: the deadline acts for its seat (turn of 1 s).
        players = new_players()
        result.players += players
        slow = create_fixed_game(client, players, turn_seconds=1)
        result.games.append(slow.name.removeprefix("games/"))
        watcher = auth(players[0])
        stream = client.WatchGame(
            game_service_pb2.WatchGameRequest(name=slow.name), metadata=watcher
        )
        first = threading.Event()

        def follow() -> None:
            try:
                for _ in stream:
                    first.set()
            except grpc.RpcError:
                pass

        thread = threading.Thread(target=follow)
        thread.start()
        try:
            first.wait(10)
            wait_until(
                lambda: _scrape(result).value("truc_actions_total", origin="deadline") >= 1,
                timeout=10,
                what="a default action from a deadline",
            )
            result.watch_open = _scrape(result).value("truc_watch_streams", method="WatchGame")
        finally:
            stream.cancel()  # type: ignore[no-untyped-call]
            thread.join(10)
        yield result
    finally:
        replica.stop()


def test_actions_counted_by_kind_equal_actions_submitted(played: Played) -> None:
    samples = _scrape(played)
    assert sum(played.submitted.values()) > 10
    for kind in ("play", "call", "signal", "directive", "choose_dealer", "cut"):
        counted = samples.value("truc_actions_total", kind=kind, origin="player")
        assert counted == played.submitted[kind], kind
    assert samples.value("truc_actions_total", origin="deadline") >= 1


def test_games_created_finished_and_active(played: Played) -> None:
    samples = _scrape(played)
    assert samples.value("truc_games_created_total") == len(played.games)
    assert samples.value("truc_games_finished_total") == played.finished >= 1
    # From Redis: this replica's games in progress, and maybe other tests' (one Redis).
    wait_until(
        lambda: _scrape(played).value("truc_games_active") >= 2,
        timeout=10,
        what="the games in progress counted",
    )


def test_rpc_histograms_by_method_and_code(played: Played) -> None:
    samples = _scrape(played)
    service = "truc.v1.GameService"
    ok = samples.value(
        "truc_rpc_duration_seconds_count", service=service, method="SubmitAction", code="OK"
    )
    assert ok == sum(played.submitted.values())
    aborted = samples.value(
        "truc_rpc_duration_seconds_count", service=service, method="SubmitAction", code="ABORTED"
    )
    assert aborted == played.refused["CONFLICT"]
    assert samples.value("truc_rpc_duration_seconds_count", method="CreateGame", code="OK") == len(
        played.games
    )
    buckets = samples.value(
        "truc_rpc_duration_seconds_bucket", method="SubmitAction", code="OK", le="+Inf"
    )
    assert buckets == ok
    assert samples.value("truc_rpc_duration_seconds_sum", method="SubmitAction") > 0
    # The watch stayed open until cancelled, then was counted once.
    assert played.watch_open == 1
    assert samples.value("truc_watch_streams", method="WatchGame") == 0
    assert samples.value("truc_rpc_duration_seconds_count", method="WatchGame") == 1


def test_redis_round_trips_and_cas_conflicts(played: Played) -> None:
    samples = _scrape(played)
    submits = sum(played.submitted.values()) + sum(played.refused.values())
    assert samples.value("truc_redis_duration_seconds_count", op="load") == submits
    assert samples.value("truc_redis_duration_seconds_count", op="commit") >= submits
    assert samples.value("truc_redis_duration_seconds_count", op="create") == len(played.games)
    assert samples.value("truc_redis_duration_seconds_count", op="count_active") >= 1
    assert set(played.refused) <= {"CONFLICT"}
    assert samples.value("truc_cas_conflicts_total", origin="player") == played.refused["CONFLICT"]


def test_logs_are_json_lines_with_the_request_context(played: Played) -> None:
    lines = json_lines(played.replica.log())
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    game = played.games[0]
    submits = [
        line for line in lines if line.get("method") == "SubmitAction" and line.get("game") == game
    ]
    assert submits
    for line in submits:
        assert line["player"] in played.players
        assert line["seat"] == played.players.index(line["player"]) % 6
        assert len(line["request_id"]) == 32
    rpcs = [line for line in submits if line["message"] == "rpc"]
    assert rpcs and all(line["code"] == "OK" for line in rpcs)
    applied = [line for line in submits if line["message"] == "action applied"]
    assert len(applied) == len(rpcs)
    assert {line["kind"] for line in applied} <= {"play", "call", "signal", "directive"}
    messages = {(line["message"], line.get("game")) for line in lines}
    assert ("game created", game) in messages
    assert ("game finished", game) in messages
    timed_out = [line for line in lines if line["message"] == "turn timed out"]
    assert timed_out and all("game" in line and "seat" in line for line in timed_out)


async def _every_state(redis_url: str, games: Sequence[str]) -> list[AnyState]:
    """Every version's state of ``games``, rebuilt from their logs in Redis."""
    client = AsyncRedis.from_url(redis_url)
    store = RedisGameStore(client, ttl_seconds=60, finished_ttl_seconds=60)
    states: list[AnyState] = []
    for game in games:
        found = replayed(await store.read_log(game), game)
        states += [decode_state(entry.state) for entry in found.entries_after(0)]
    await client.aclose()
    return states


def test_logs_name_no_card_that_was_in_a_hand(played: Played) -> None:
    dealt: set[str] = set()
    for state in asyncio.run(_every_state(played.redis_url, played.games)):
        dealt.update(str(card) for hand in state.dealt for card in hand)
    assert len(dealt) >= 18
    ids = [*played.games, *played.players]
    for number, line in enumerate(played.replica.log().splitlines(), 1):
        named = cards_named(line, ids)
        assert not named & (dealt | {"(a Card object)"}), f"line {number}: {line}"
