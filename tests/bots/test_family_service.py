"""BotPlayer seats play whole matches of the rule sets of variants.md through the
real game service (two replicas on one Redis, gRPC over sockets): two seats
(French, Sackson and two-seat Catalan Truc) and four (partnership and Catalan
Truc), heuristic and random bots, one match over a flaky network."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import SECRET, Replica, create_game, new_players
from truc_bots import BotPlayer, HeuristicPolicy, Policy, RandomPolicy
from truc_service.tokens import issue_token

from .conftest import FlakyStub

pytestmark = pytest.mark.integration

MATCH_TIMEOUT = 60.0
SPECTATOR = (("authorization", "Bearer " + issue_token(SECRET, "bot-referee", role="spectator")),)
TABLES = (
    ("french", game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_FRENCH_TRUC), 2),
    ("sackson", game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_SACKSON_TRUC), 2),
    ("partnership", game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_PARTNERSHIP_TRUC), 4),
    ("catalan", game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_CATALAN_TRUC), 4),
    ("catalan-2", game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_CATALAN_TRUC, seats=2), 2),
)


async def _play(
    replicas: Sequence[Replica],
    name: str,
    tokens: Sequence[str],
    policies: Sequence[Policy],
    flaky: list[FlakyStub] | None,
) -> tuple[list[game_pb2.GameView], list[BotPlayer], game_pb2.GameView]:
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    try:
        stubs = [game_service_pb2_grpc.GameServiceStub(c) for c in channels]
        bots = []
        for seat, policy in enumerate(policies):
            stub = stubs[seat % len(stubs)]
            if flaky is not None:
                # Short matches (a few dozen actions): drop the stream often.
                flaky.append(FlakyStub(stub, drop_every=6, fail_every=5, lose_every=4))
                stub = flaky[-1].as_stub()
            bots.append(BotPlayer(stub, name, tokens[seat], policy, backoff=0.01))
        finals = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        referee = await stubs[0].GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR, timeout=10
        )
        return list(finals), bots, referee.game
    finally:
        for channel in channels:
            await channel.close(None)


def _match(
    replicas: Sequence[Replica],
    options: game_pb2.RuleOptions,
    policies: Sequence[Policy],
    flaky: list[FlakyStub] | None = None,
) -> tuple[game_pb2.GameView, list[BotPlayer]]:
    players = new_players()[: len(policies)]
    with grpc.insecure_channel(replicas[0].address) as channel:
        created = create_game(
            game_service_pb2_grpc.GameServiceStub(channel), players, options=options
        )
    assert created.game.seat_count == len(policies)
    first_version = int(created.game.etag)
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]
    began = time.monotonic()
    finals, bots, referee = asyncio.run(_play(replicas, created.name, tokens, policies, flaky))
    took = time.monotonic() - began
    print(f"{len(policies)} bots: {sum(b.actions for b in bots)} actions in {took:.1f} s")
    assert referee.finished and referee.rule_set == options.rule_set
    assert referee.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)
    for seat, final in enumerate(finals):
        assert final.seat == seat and final.finished
        assert final.winner == referee.winner and final.manches == referee.manches
        assert final.etag == referee.etag
    # Every bot action was applied once; the service never had to act for a bot.
    assert sum(b.actions for b in bots) == int(referee.etag) - first_version
    assert not [e for e in referee.events if e.HasField("turn_timed_out")]
    return referee, bots


@pytest.mark.parametrize(
    ("options", "seats"), [(o, s) for _, o, s in TABLES], ids=[n for n, _, _ in TABLES]
)
def test_heuristic_bots_play_a_match_of_each_rule_set_through_the_service(
    replicas: list[Replica], options: game_pb2.RuleOptions, seats: int
) -> None:
    referee, _ = _match(replicas, options, [HeuristicPolicy(seat) for seat in range(seats)])
    calls = {e.called.call for e in referee.events if e.HasField("called")}
    assert calls & {game_pb2.CALL_RAISE, game_pb2.CALL_TRUC, game_pb2.CALL_MON_RESTE}


def test_random_bots_play_a_partnership_match_through_the_service(
    replicas: list[Replica],
) -> None:
    options = game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_PARTNERSHIP_TRUC)
    _match(replicas, options, [RandomPolicy(seat) for seat in range(4)])


def test_two_french_bots_finish_over_a_flaky_network(replicas: list[Replica]) -> None:
    flaky: list[FlakyStub] = []
    options = game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_FRENCH_TRUC)
    _, bots = _match(replicas, options, [HeuristicPolicy(20 + s) for s in range(2)], flaky)
    assert sum(s.watches for s in flaky) > 2 and sum(b.reconnects for b in bots) > 0
    assert sum(s.submits for s in flaky) > sum(b.actions for b in bots)
