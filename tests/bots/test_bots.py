"""The bots: their policies on engine views (in-process, no network) and
:class:`BotPlayer` seats playing whole matches through the real service."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.rules.play import play, seq, start
from tests.service.conftest import SECRET, Replica, create_game, new_players
from truc_bots import BotPlayer, HeuristicPolicy, Policy, RandomPolicy, card_class
from truc_protocol.convert import action_from_proto
from truc_rules import GameState, Prompt, apply_action
from truc_service.tokens import issue_token

from .conftest import CountingStub, FlakyStub, engine_view, play_match, random_states

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

GAME_KINDS = ("play_card", "call", "choose_dealer", "cut_deck")


@pytest.fixture(scope="module")
def states() -> list[GameState]:
    """200 states of random matches, each with a seat to act."""
    return random_states(200, seed=20_240_601)


def _acting_view(state: GameState) -> game_pb2.GameView:
    assert state.to_act is not None
    return engine_view(state, state.to_act)


# --------------------------------------------------------------------------- legality


@pytest.mark.parametrize("make", [RandomPolicy, HeuristicPolicy], ids=["random", "heuristic"])
def test_a_policy_always_chooses_one_of_the_views_legal_actions(
    states: list[GameState], make: Callable[[int], Policy]
) -> None:
    for index, state in enumerate(states):
        view = _acting_view(state)
        action = make(index).choose(view)
        assert action in view.legal_actions, (index, action, view.prompt)
        seat = state.to_act
        assert seat is not None
        apply_action(state, seat, action_from_proto(action))  # the engine agrees
        if make is RandomPolicy:
            assert action.WhichOneof("kind") in GAME_KINDS


def test_the_policies_cover_every_prompt(states: list[GameState]) -> None:
    """The sampled states are varied enough to mean something."""
    prompts = {s.prompt for s in states}
    assert {Prompt.TURN, Prompt.TRUC_ANSWER, Prompt.EMBIT_POLL} <= prompts


@pytest.mark.parametrize("make", [RandomPolicy, HeuristicPolicy], ids=["random", "heuristic"])
def test_a_seeded_policy_is_deterministic(make: Callable[[int], Policy]) -> None:
    first = play_match([make(seat) for seat in range(6)], seed=77)
    again = play_match([make(seat) for seat in range(6)], seed=77)
    assert first.log == again.log
    assert first.state.winner == again.state.winner


def test_random_policies_with_other_seeds_play_otherwise(states: list[GameState]) -> None:
    views = [_acting_view(s) for s in states[:50]]
    one, two = RandomPolicy(1), RandomPolicy(2)
    assert [one.choose(v) for v in views] != [two.choose(v) for v in views]


# --------------------------------------------------------------------------- the heuristic

# Seat 3 (team B's captain, who answers team A's truc calls) holds the Espasa
# and the Basto. With dealer 5, seat 0 leads; its 7Sw wins the first trick.
BOTH_TOPS = (
    ("7Sw", "5Sw", "KCu"),
    ("4Co", "6Cu", "5Co"),
    ("2Co", "4Sw", "6Sw"),
    ("1Sw", "1Cl", "4Cu"),
    ("6Co", "KSw", "5Cl"),
    ("2Sw", "5Cu", "KCo"),
)
TRICK_ONE_LOST = "0:7Sw 1:4Co 2:4Sw 3:4Cu 4:6Co 5:5Cu"


@pytest.mark.parametrize(
    "steps",
    [
        "0:TRUC",
        "0:TRUC 3:RETRUC 0:BALOU_QUATRO",
        "0:TRUC 3:RETRUC 0:BALOU_QUATRO 3:BALOU_SEIZ 0:BALOU_PARTIDO",
        f"{TRICK_ONE_LOST} 0:TRUC",
        f"0:TRUC 3:RETRUC 0:ACCEPT {TRICK_ONE_LOST} 0:BALOU_QUATRO",
        f"0:TRUC 3:RETRUC 0:ACCEPT {TRICK_ONE_LOST} 0:BALOU_QUATRO 3:BALOU_SEIZ 0:BALOU_PARTIDO",
    ],
)
def test_the_heuristic_never_folds_a_truc_holding_the_espasa_and_the_basto(steps: str) -> None:
    state = play(start(BOTH_TOPS), *seq(steps))
    assert state.prompt == Prompt.TRUC_ANSWER and state.to_act == 3
    view = engine_view(state, 3)
    for seed in range(20):
        action = HeuristicPolicy(seed).choose(view)
        assert action in view.legal_actions
        assert action.call != game_pb2.CALL_FOLD, steps


# Seat 0 leads with a flor (7Co 6Co KCo = 33); seat 1 has one too (2Cu 4Cu 5Cu).
FLORS = (
    ("7Co", "6Co", "KCo"),
    ("2Cu", "4Cu", "5Cu"),
    ("2Co", "4Sw", "6Sw"),
    ("1Sw", "1Cl", "3Cl"),
    ("5Co", "KSw", "5Cl"),
    ("2Sw", "NCo", "KCl"),
)


def test_the_heuristic_declares_flor_and_answers_it_with_flor_tambien() -> None:
    state = start(FLORS)
    flor = HeuristicPolicy(0).choose(engine_view(state, 0))
    assert flor.call == game_pb2.CALL_FLOR
    state = apply_action(state, 0, action_from_proto(flor)).state
    answer = HeuristicPolicy(1).choose(engine_view(state, 1))
    assert answer.call == game_pb2.CALL_FLOR_TAMBIEN


class Watching:
    """A heuristic seat that checks its own rules at every decision."""

    def __init__(self, seed: int) -> None:
        self.policy = HeuristicPolicy(seed)
        self.flor_chances = 0
        self.truc_answers_with_both_tops = 0
        self.signals: set[tuple[int, int]] = set()

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        action = self.policy.choose(view)
        assert action in view.legal_actions
        calls = {a.call for a in view.legal_actions if a.WhichOneof("kind") == "call"}
        if game_pb2.CALL_FLOR in calls:
            self.flor_chances += 1
            assert action.call == game_pb2.CALL_FLOR, "a flor holder must declare it"
        held = {card_class(c, view.options.perique_trick_rank) for c in view.hand}
        if view.prompt == game_pb2.PROMPT_TRUC_ANSWER and {1, 2} <= held:
            self.truc_answers_with_both_tops += 1
            assert action.call != game_pb2.CALL_FOLD
        if action.WhichOneof("kind") == "signal":
            key = (view.hand_number, action.signal)
            assert key not in self.signals, "one signal per card kind per hand"
            self.signals.add(key)
        return action


def test_the_heuristic_keeps_its_rules_over_whole_matches() -> None:
    flor_chances = signals = 0
    for match in range(12):
        seats = [Watching(10 * match + seat) for seat in range(6)]
        play_match(seats, seed=900 + match)
        flor_chances += sum(s.flor_chances for s in seats)
        signals += sum(len(s.signals) for s in seats)
    # Truc answers holding both tops are rare in real deals: the fixed deals above cover them.
    assert flor_chances > 0 and signals > 0


# --------------------------------------------------------------------------- strength

STRENGTH_MATCHES = 60
STRENGTH_SEED = 31_000


def test_the_heuristic_team_beats_the_random_team() -> None:
    wins = 0
    for match in range(STRENGTH_MATCHES):
        heuristic_team = match % 2  # alternate: team A, then team B
        policies: list[Policy] = [
            HeuristicPolicy(STRENGTH_SEED + 10 * match + seat)
            if seat % 2 == heuristic_team
            else RandomPolicy(STRENGTH_SEED + 10 * match + seat)
            for seat in range(6)
        ]
        result = play_match(policies, seed=STRENGTH_SEED + match)
        assert result.state.winner is not None
        wins += result.state.winner == heuristic_team
    rate = wins / STRENGTH_MATCHES
    print(f"heuristic vs random: {wins}/{STRENGTH_MATCHES} = {rate:.0%}")
    assert rate >= 0.6


# --------------------------------------------------------------------------- the service

MATCH_TIMEOUT = 60.0
SPECTATOR = (("authorization", "Bearer " + issue_token(SECRET, "bot-referee", role="spectator")),)


async def _play_bots(
    replicas: Sequence[Replica],
    name: str,
    tokens: Sequence[str],
    policies: Sequence[Policy],
    flaky: list[FlakyStub] | None,
    *,
    session: bool,
) -> tuple[list[game_pb2.GameView], list[BotPlayer], game_pb2.GameView, Counter[str]]:
    """Six bots, seat i on replica i % 2; their final views, the bots, the
    referee's view, and the calls the bots made (by method).

    With ``flaky`` (a list to fill), each bot's network misbehaves (a FlakyStub).
    """
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    try:
        stubs = [game_service_pb2_grpc.GameServiceStub(c) for c in channels]
        counting: list[CountingStub] = []
        seat_stubs: list[GameServiceAsyncStub] = []
        for seat in range(6):
            counting.append(CountingStub(stubs[seat % len(stubs)]))
            stub = counting[-1].as_stub()
            if flaky is not None:
                flaky.append(FlakyStub(stub))
                stub = flaky[-1].as_stub()
            seat_stubs.append(stub)
        bots = [
            BotPlayer(
                seat_stubs[seat], name, tokens[seat], policies[seat], session=session, backoff=0.01
            )
            for seat in range(6)
        ]
        finals = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        referee = await stubs[0].GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR, timeout=10
        )
        return list(finals), bots, referee.game, sum((c.calls for c in counting), Counter())
    finally:
        for channel in channels:
            await channel.close(None)


def _bot_match(
    replicas: Sequence[Replica],
    policies: Sequence[Policy],
    flaky: list[FlakyStub] | None = None,
    *,
    session: bool = True,
) -> tuple[float, list[BotPlayer]]:
    """Six bots play a match on the service; every check of the result; the seconds taken."""
    players = new_players()
    with grpc.insecure_channel(replicas[0].address) as channel:
        created = create_game(game_service_pb2_grpc.GameServiceStub(channel), players)
    name = created.name
    first_version = int(created.game.etag)
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]
    began = time.monotonic()
    finals, bots, referee, calls = asyncio.run(
        _play_bots(replicas, name, tokens, policies, flaky, session=session)
    )
    took = time.monotonic() - began

    assert referee.finished and referee.phase == game_pb2.PHASE_MATCH_OVER
    assert referee.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)
    for seat, final in enumerate(finals):
        assert final.seat == seat
        assert final.finished and final.phase == game_pb2.PHASE_MATCH_OVER
        assert final.winner == referee.winner
        assert final.manches == referee.manches
        assert final.scores == referee.scores
        assert list(final.history) == list(referee.history)
        assert final.etag == referee.etag
    # Every bot action was applied once, and the service never had to act for a bot.
    assert sum(b.actions for b in bots) == int(referee.etag) - first_version
    assert not [e for e in referee.events if e.HasField("turn_timed_out")]
    ended = [e.match_ended for e in referee.events if e.HasField("match_ended")]
    assert [m.winner for m in ended] == [referee.winner]
    # A session bot acts on its session (never a unary SubmitAction) and follows
    # the game on it (never a WatchGame); a unary bot opens no session.
    if session:
        assert calls["SubmitAction"] == 0 and calls["WatchGame"] == 0, calls
        assert calls["Play"] >= 6, calls
    else:
        assert calls["Play"] == 0 and calls["SubmitAction"] >= sum(b.actions for b in bots)
    assert calls["GetGame"] >= 6, calls  # each bot reads where the game is, first
    return took, bots


def test_six_heuristic_bots_play_a_match_over_sessions(replicas: list[Replica]) -> None:
    took, bots = _bot_match(replicas, [HeuristicPolicy(seat) for seat in range(6)])
    print(f"heuristic bots, sessions: {sum(b.actions for b in bots)} actions in {took:.1f} s")


def test_six_heuristic_bots_play_a_match_with_unary_calls(replicas: list[Replica]) -> None:
    took, bots = _bot_match(replicas, [HeuristicPolicy(seat) for seat in range(6)], session=False)
    print(f"heuristic bots, unary: {sum(b.actions for b in bots)} actions in {took:.1f} s")


def test_six_random_bots_play_a_match_through_the_service(replicas: list[Replica]) -> None:
    took, bots = _bot_match(replicas, [RandomPolicy(seat) for seat in range(6)])
    print(f"random bots: {sum(b.actions for b in bots)} actions in {took:.1f} s")


@pytest.mark.parametrize("session", [True, False], ids=["session", "unary"])
def test_bots_finish_a_match_over_a_flaky_network(replicas: list[Replica], session: bool) -> None:
    """Dropped streams resume after the last version, lost answers are retried with
    the same request id (applied once: the action count matches the versions), and
    stale etags are refreshed (with GetGame, or on the session)."""
    flaky: list[FlakyStub] = []
    took, bots = _bot_match(
        replicas, [HeuristicPolicy(10 + seat) for seat in range(6)], flaky, session=session
    )
    assert sum(s.watches for s in flaky) > 6 and sum(b.reconnects for b in bots) > 0
    assert sum(s.submits for s in flaky) > sum(b.actions for b in bots)
    print(f"flaky network: {sum(b.actions for b in bots)} actions in {took:.1f} s")
