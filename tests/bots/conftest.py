"""Fixtures and helpers of the bot tests: in-process matches on the engine (the
views a seat would get, as proto messages), games of every rule set from fixed
deals, and the real service's replicas."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import grpc
from truc.v1 import game_pb2, game_service_pb2

from tests.service.conftest import redis_server, replicas  # noqa: F401
from truc_bots import Policy
from truc_bots.arena import proto_view
from truc_protocol.convert import action_from_proto, view_to_proto
from truc_rules import (
    GameState,
    PeriqueTrickRank,
    Responder,
    RuleOptions,
    SendDirective,
    SendSignal,
    apply_action,
    legal_actions,
    new_game,
    registry,
    view_for,
)
from truc_rules.actions import CALL, DIRECTIVE, PLAY, SIGNAL, Action, Call, Directive, Signal
from truc_rules.family import FamilyState
from truc_rules.rule_set import RuleSet

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

PLAYERS = tuple(f"p{seat}" for seat in range(6))
MAX_ACTIONS = 20_000
"""More actions than any match takes: a guard against a bot that never ends one."""


def engine_view(state: GameState, seat: int, etag: str = "1") -> game_pb2.GameView:
    """The proto view of ``seat``, exactly as the service would build it."""
    return view_to_proto(
        view_for(state, seat), name="games/bots", players=PLAYERS, etag=etag, deadline_ms=None
    )


@dataclass
class Match:
    """An in-process match: the final state and every action as (seat, action)."""

    state: GameState
    log: list[tuple[int, game_pb2.Action]] = field(default_factory=list)


def play_match(policies: Sequence[Policy], seed: int, options: RuleOptions | None = None) -> Match:
    """Play a whole match on the engine, seat ``i`` choosing with ``policies[i]``."""
    state = new_game(options or RuleOptions(), seed=seed).state
    match = Match(state)
    while state.to_act is not None:
        if len(match.log) >= MAX_ACTIONS:
            raise AssertionError(f"match {seed} did not end in {MAX_ACTIONS} actions")
        seat = state.to_act
        action = policies[seat].choose(engine_view(state, seat, str(len(match.log))))
        state = apply_action(state, seat, action_from_proto(action)).state
        match.log.append((seat, action))
    match.state = state
    return match


OPTION_SETS = (
    RuleOptions(),
    RuleOptions(perique_trick_rank=PeriqueTrickRank.NATURAL, responder=Responder.CALLER),
    RuleOptions(perique_trick_rank=PeriqueTrickRank.TOP, ace_value=1),
)
"""Rule options the random states cycle through (the policies read them from the view)."""


def random_states(count: int, seed: int = 0) -> list[GameState]:
    """``count`` states from random matches (random legal actions, a few signals
    and directives among them), each with a seat to act."""
    rng = random.Random(seed)
    found: list[GameState] = []
    while len(found) < count:
        options = OPTION_SETS[len(found) % len(OPTION_SETS)]
        state = new_game(options, seed=rng.randrange(2**32)).state
        steps = rng.randrange(1, 120)
        for _ in range(steps):
            seat = state.to_act
            if seat is None:
                break
            actions = legal_actions(state, seat)
            games = [a for a in actions if not isinstance(a, SendSignal | SendDirective)]
            messages = [a for a in actions if isinstance(a, SendSignal | SendDirective)]
            pool = messages if messages and rng.random() < 0.15 else games
            next_state = apply_action(state, seat, rng.choice(pool)).state
            if next_state.to_act is None:
                break
            state = next_state
        if state.to_act is not None:
            found.append(state)
    return found


# --------------------------------------------------------------------------- the other rule sets

FAMILY_TABLES: tuple[tuple[RuleSet, dict[str, object]], ...] = (
    (RuleSet.FRENCH_TRUC, {}),
    (RuleSet.FRENCH_TRUC, {"trick_order": "seven_ace"}),
    (RuleSet.SACKSON_TRUC, {}),
    (RuleSet.PARTNERSHIP_TRUC, {}),
    (RuleSet.CATALAN_TRUC, {}),
    (RuleSet.CATALAN_TRUC, {"seats": 2}),
)
"""Every variants.md rule set, with the option values that change the table or the order."""
FAMILY_IDS = tuple(
    rule_set.value + "".join(f"-{v}" for v in values.values()) for rule_set, values in FAMILY_TABLES
)


def family_options(rule_set: RuleSet, **values: object) -> registry.AnyOptions:
    return registry.options_from_mapping(rule_set, values)


def family_start(
    rule_set: RuleSet,
    *hands: Sequence[str],
    more: Sequence[Sequence[Sequence[str]]] = (),
    dealer: int = 0,
    scores: tuple[int, int] = (0, 0),
    **values: object,
) -> FamilyState:
    """A game of ``rule_set`` from fixed deals (one hand per seat, cards in the
    rule set's notation: ``7He``, ``3Sw``); ``more`` are the next deals."""
    deck = registry.deck_of(rule_set)
    deals = [tuple(tuple(deck.parse(c) for c in hand) for hand in deal) for deal in (hands, *more)]
    state = registry.new_game(
        family_options(rule_set, **values), deals=deals, dealer=dealer, scores=scores
    ).state
    assert isinstance(state, FamilyState)
    return state


def family_action(rule_set: RuleSet, what: str) -> Action:
    """``RAISE`` (a call), ``~SEVEN`` (a signal), ``!PLAY_SEVEN`` (a directive), else a card."""
    if what.startswith("~"):
        return SIGNAL[Signal(what[1:])]
    if what.startswith("!"):
        return DIRECTIVE[Directive(what[1:])]
    if what in Call.__members__:
        return CALL[Call(what)]
    return PLAY[registry.deck_of(rule_set).parse(what)]


def family_play(state: FamilyState, steps: str) -> FamilyState:
    """Apply ``"0:RAISE 1:ACCEPT 0:9He 2:~SEVEN"`` (each step must be legal)."""
    for token in steps.split():
        seat, what = token.split(":")
        after = registry.apply_action(
            state, int(seat), family_action(state.variant.rule_set, what)
        ).state
        assert isinstance(after, FamilyState)
        state = after
    return state


def family_view(state: FamilyState, seat: int) -> game_pb2.GameView:
    """The proto view of ``seat``, as the service builds it."""
    return proto_view(state, seat)


def random_family_states(
    rule_set: RuleSet, values: dict[str, object], count: int, seed: int = 0
) -> list[FamilyState]:
    """``count`` states of random matches of the rule set (random legal actions,
    signals and directives among them), each with a seat to act."""
    rng = random.Random(seed)
    options = family_options(rule_set, **values)
    found: list[FamilyState] = []
    while len(found) < count:
        state = registry.new_game(options, seed=rng.randrange(2**32)).state
        assert isinstance(state, FamilyState)
        for _ in range(rng.randrange(1, 60)):
            seat = state.to_act
            if seat is None:
                break
            actions = registry.legal_actions(state, seat)
            games = [a for a in actions if not isinstance(a, SendSignal | SendDirective)]
            messages = [a for a in actions if isinstance(a, SendSignal | SendDirective)]
            pool = messages if messages and rng.random() < 0.2 else games
            after = registry.apply_action(state, seat, rng.choice(pool)).state
            assert isinstance(after, FamilyState)
            if after.to_act is None:
                break
            state = after
        if state.to_act is not None:
            found.append(state)
    return found


# --------------------------------------------------------------------------- a flaky network


def _unavailable(what: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), what, None
    )


class _DroppingCall:
    """A WatchGame call that fails with UNAVAILABLE after ``drop_after`` messages."""

    def __init__(
        self,
        call: grpc.aio.UnaryStreamCall[
            game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
        ],
        drop_after: int,
    ) -> None:
        self._call = call
        self._left = drop_after

    async def read(self) -> object:
        if self._left == 0:
            self._call.cancel()
            raise _unavailable("the test dropped the stream")
        self._left -= 1
        return await self._call.read()

    def cancel(self) -> bool:
        return self._call.cancel()


class _FlakySession:
    """A Play call whose network misbehaves (see :class:`FlakyStub`)."""

    def __init__(
        self,
        owner: FlakyStub,
        call: grpc.aio.StreamStreamCall[
            game_service_pb2.PlayRequest, game_service_pb2.PlayResponse
        ],
    ) -> None:
        self._owner = owner
        self._call = call
        self._left = owner.drop_every
        self._broken = False

    def _break(self, what: str) -> grpc.aio.AioRpcError:
        self._broken = True
        self._call.cancel()
        return _unavailable(what)

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        if self._broken:
            raise _unavailable("the test broke the stream")
        if not request.HasField("action"):
            await self._call.write(request)
            return
        owner = self._owner
        owner.submits += 1
        n = owner.submits
        if n % owner.fail_every == 0:
            raise self._break("the test failed the action before it left")
        if n % owner.stale_every == 0:
            stale = game_service_pb2.PlayRequest()
            stale.CopyFrom(request)
            stale.action.etag = "1"
            request = stale
        await self._call.write(request)
        if n % owner.lose_every == 0:
            self._break("the test lost the answer")  # the next read fails

    async def read(self) -> object:
        if self._broken:
            raise _unavailable("the test broke the stream")
        if self._left == 0:
            raise self._break("the test dropped the stream")
        self._left -= 1
        return await self._call.read()

    async def done_writing(self) -> None:
        await self._call.done_writing()

    def cancel(self) -> bool:
        return self._call.cancel()


class FlakyStub:
    """A game-service stub whose network misbehaves on purpose, over a real stub.

    Every ``drop_every``-th message of a WatchGame or Play stream the stream
    breaks; of the actions (SubmitAction calls, or actions sent on a session),
    every ``fail_every``-th fails before reaching the service (a session
    breaks), every ``lose_every``-th is applied but its answer is lost (a
    session breaks right after sending it), and every ``stale_every``-th
    carries a stale etag (the service answers ABORTED, or refuses it).
    """

    def __init__(
        self,
        stub: GameServiceAsyncStub,
        *,
        drop_every: int = 40,
        fail_every: int = 11,
        lose_every: int = 7,
        stale_every: int = 9,
    ) -> None:
        self._stub = stub
        self.GetGame = stub.GetGame
        self.drop_every = drop_every
        self.fail_every = fail_every
        self.lose_every = lose_every
        self.stale_every = stale_every
        self.submits = 0
        """Actions sent (SubmitAction calls, or actions written on sessions)."""
        self.watches = 0
        """Streams opened (WatchGame, or Play)."""

    def WatchGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.WatchGameRequest, **kwargs: Any
    ) -> _DroppingCall:
        self.watches += 1
        return _DroppingCall(self._stub.WatchGame(request, **kwargs), self.drop_every)

    def Play(self, **kwargs: Any) -> _FlakySession:  # noqa: N802 - the stub's method name
        self.watches += 1
        return _FlakySession(self, self._stub.Play(**kwargs))

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        self.submits += 1
        n = self.submits
        if n % self.fail_every == 0:
            raise _unavailable("the test failed the call")
        if n % self.stale_every == 0:
            stale = game_service_pb2.SubmitActionRequest()
            stale.CopyFrom(request)
            stale.etag = "1"
            request = stale
        reply: game_service_pb2.SubmitActionResponse = await self._stub.SubmitAction(
            request, **kwargs
        )
        if n % self.lose_every == 0:
            raise _unavailable("the test lost the answer")
        return reply

    def as_stub(self) -> GameServiceAsyncStub:
        return cast("GameServiceAsyncStub", self)


class CountingStub:
    """A real game-service stub that counts the calls made through it, by method."""

    def __init__(self, stub: GameServiceAsyncStub) -> None:
        self._stub = stub
        self.calls: Counter[str] = Counter()

    async def GetGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.GetGameRequest, **kwargs: Any
    ) -> game_service_pb2.GetGameResponse:
        self.calls["GetGame"] += 1
        reply: game_service_pb2.GetGameResponse = await self._stub.GetGame(request, **kwargs)
        return reply

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        self.calls["SubmitAction"] += 1
        reply: game_service_pb2.SubmitActionResponse = await self._stub.SubmitAction(
            request, **kwargs
        )
        return reply

    def WatchGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.WatchGameRequest, **kwargs: Any
    ) -> grpc.aio.UnaryStreamCall[
        game_service_pb2.WatchGameRequest, game_service_pb2.WatchGameResponse
    ]:
        self.calls["WatchGame"] += 1
        return self._stub.WatchGame(request, **kwargs)

    def Play(  # noqa: N802 - the stub's method name
        self, **kwargs: Any
    ) -> grpc.aio.StreamStreamCall[game_service_pb2.PlayRequest, game_service_pb2.PlayResponse]:
        self.calls["Play"] += 1
        return self._stub.Play(**kwargs)

    def as_stub(self) -> GameServiceAsyncStub:
        return cast("GameServiceAsyncStub", self)
