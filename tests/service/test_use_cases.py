"""The game service's use cases on the in-memory adapters: no Redis, no gRPC, no
process. What each use case decides (who may act, what is refused with which
reason, what a retry or a late seat does) is checked here in milliseconds; the
same behaviour over real Redis and gRPC is checked by the integration tests of
this folder."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from truc.v1 import game_pb2

from truc_game.adapters.memory import MemoryGameStore, MemoryVersionFeed
from truc_game.deadlines import DeadlineSweeper
from truc_game.history import entries_after, read_history
from truc_game.service import GameService, SeatView, stream_changes
from truc_protocol.convert import action_from_proto, card_to_proto
from truc_protocol.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
)
from truc_rules.actions import CALL, PLAY, Call, PlayCard
from truc_rules.cards import Card
from truc_rules.events import CardPlayed, TurnTimedOut
from truc_rules.family import FamilyState, FamilyView
from truc_rules.registry import (
    decode_state,
    default_options,
    legal_actions,
    options_from_mapping,
    rule_set_of,
)
from truc_rules.rule_set import RuleSet
from truc_service.tokens import Identity

from .memory_games import LOBBY, PLAYERS, game_service, new_game, player

pytestmark = pytest.mark.unit

_T = TypeVar("_T")


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coroutine)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def service(
    clock: Clock, *, rate_actions: int = 0, rate_signals: int = 0
) -> tuple[GameService, MemoryGameStore]:
    store = MemoryGameStore(clock=clock)
    game = game_service(store, clock=clock, rate_actions=rate_actions, rate_signals=rate_signals)
    return game, store


async def seat_to_act(store: MemoryGameStore) -> tuple[int, Any]:
    """The seat to act in g1 and its first legal game action."""
    state = decode_state((await store.read("g1")).state)
    seat = state.to_act
    assert seat is not None
    return seat, legal_actions(state, seat)[0]


def refused(error: pytest.ExceptionInfo[ServiceError], kind: type, reason: str) -> None:
    assert isinstance(error.value, kind), error.value
    assert error.value.reason == reason, error.value


def test_only_the_lobby_creates_games_and_the_request_is_validated_there() -> None:
    game, _ = service(Clock())
    with pytest.raises(ServiceError) as error:
        run(game.create_game(player("ana"), new_game()))
    refused(error, PermissionDenied, "LOBBY_ONLY")
    for bad in (
        {"players": PLAYERS[:5]},
        {"players": (*PLAYERS[:5], "ana")},
        {"players": (*PLAYERS[:5], "")},
        {"game_id": "no spaces"},
        {"turn_seconds": 4000},
        {"dealer": 6},
    ):
        with pytest.raises(ServiceError) as error:
            run(game.create_game(LOBBY, new_game(**bad)))
        refused(error, InvalidArgument, "BAD_REQUEST")
    with pytest.raises(ServiceError) as error:
        run(game.create_game(LOBBY, new_game(fixed_deals=[((),) * 6])))
    refused(error, InvalidArgument, "FIXED_DEALS_DISABLED")
    created = run(game.create_game(LOBBY, new_game()))
    assert (created.version, created.seat) == (1, None)


def test_a_repeated_create_answers_with_the_game_as_it_is_and_creates_nothing() -> None:
    """The lobby retries a create whose answer it lost with the id it chose for
    the table: the same players and turn make a repeat; other players do not."""
    game, store = service(Clock())
    run(game.create_game(LOBBY, new_game()))

    async def act_once() -> None:
        seat, action = await seat_to_act(store)
        await game.submit_action(player(PLAYERS[seat]), "g1", action, etag="", request_id="r1")

    run(act_once())
    before = run(store.read("g1"))
    repeat = run(game.create_game(LOBBY, new_game()))
    assert (repeat.game_id, repeat.version, repeat.seat) == ("g1", 2, None)
    assert run(store.read("g1")) == before
    for other in ({"players": (*PLAYERS[:5], "zoe")}, {"turn_seconds": 7}):
        with pytest.raises(ServiceError) as error:
            run(game.create_game(LOBBY, new_game(**other)))
        refused(error, AlreadyExists, "GAME_EXISTS")
    assert run(store.read("g1")) == before


def test_a_seat_sees_its_own_view_and_a_stranger_is_refused() -> None:
    async def scenario() -> tuple[SeatView, SeatView]:
        game, _ = service(Clock())
        await game.create_game(LOBBY, new_game())
        with pytest.raises(PermissionDenied) as error:
            await game.get_game(player("mallory"), "g1")
        assert error.value.reason == "NOT_SEATED"
        with pytest.raises(NotFound):
            await game.get_game(player("ana"), "nope")
        spectator = await game.get_game(Identity("sam", "spectator", 1e12), "g1")
        return await game.get_game(player("carla"), "g1"), spectator

    seat_view, spectator = run(scenario())
    assert seat_view.seat == 2 and seat_view.version == 1
    assert spectator.seat is None and spectator.view.hand == ()


def test_an_action_is_applied_once_and_refusals_change_nothing() -> None:
    async def scenario() -> None:
        game, store = service(Clock())
        await game.create_game(LOBBY, new_game())
        seat, action = await seat_to_act(store)
        other = PLAYERS[(seat + 1) % 6]
        with pytest.raises(FailedPrecondition) as refusal:
            await game.submit_action(player(other), "g1", action, etag="", request_id="")
        assert refusal.value.reason == "NOT_YOUR_TURN"
        with pytest.raises(Aborted) as stale:
            await game.submit_action(player(PLAYERS[seat]), "g1", action, etag="7", request_id="")
        assert stale.value.reason == "STALE_ETAG"
        assert (await store.read("g1")).version == 1, "a refusal changed the game"
        first = await game.submit_action(
            player(PLAYERS[seat]), "g1", action, etag="1", request_id="r-1"
        )
        again = await game.submit_action(
            player(PLAYERS[seat]), "g1", action, etag="1", request_id="r-1"
        )
        assert first.version == again.version == 2
        assert (await store.read("g1")).version == 2, "a retried request id applied twice"
        with pytest.raises(InvalidArgument):
            await game.submit_action(
                player(PLAYERS[seat]), "g1", action, etag="", request_id="x" * 65
            )

    run(scenario())


def test_actions_beyond_the_rate_are_refused_with_the_wait() -> None:
    async def scenario() -> None:
        game, store = service(Clock(), rate_actions=1)
        await game.create_game(LOBBY, new_game())
        seat, action = await seat_to_act(store)
        other = player(PLAYERS[(seat + 1) % 6])
        with pytest.raises(FailedPrecondition):
            await game.submit_action(other, "g1", action, etag="", request_id="")
        with pytest.raises(ResourceExhausted) as limited:
            await game.submit_action(other, "g1", action, etag="", request_id="")
        assert limited.value.reason == "RATE_LIMITED"
        assert 0 < int(limited.value.metadata["retry_after_ms"]) <= 1000

    run(scenario())


def test_a_late_seat_is_acted_for_once_its_deadline_passes() -> None:
    async def scenario() -> None:
        clock = Clock()
        game, store = service(clock)
        sweeper = DeadlineSweeper(game, store, poll_ms=500)
        await game.create_game(LOBBY, new_game(turn_seconds=5))
        clock.now += 4
        assert await sweeper.sweep() == 0
        clock.now += 2
        assert await sweeper.sweep() == 1
        found = await read_history(store, "g1")
        assert found.snapshot.version == 2
        assert isinstance(found.events[-1][0], TurnTimedOut)
        assert await sweeper.sweep() == 0, "the deadline moved on with the turn"

    run(scenario())


def test_a_watcher_gets_every_version_after_the_one_it_saw_in_order() -> None:
    async def scenario() -> list[int]:
        game, store = service(Clock())
        await game.create_game(LOBBY, new_game())
        feed = MemoryVersionFeed(store, functools.partial(entries_after, store))
        watch = await game.open_watch(player("ana"), "g1", 0)
        changes = stream_changes(game, "g1", watch.seat, feed.follow("g1", 0), watch.meta)
        seen = [(await anext(changes)).version]
        for _ in range(3):
            seat, action = await seat_to_act(store)
            await game.submit_action(player(PLAYERS[seat]), "g1", action, etag="", request_id="")
            seen.append((await anext(changes)).version)
        return seen

    assert run(scenario()) == [1, 2, 3, 4]


# --- the rule sets of variants.md ---

FRENCH = default_options(RuleSet.FRENCH_TRUC)
FRENCH_DEAL = ((Card.FC_7, Card.HE_9, Card.SP_T), (Card.HE_8, Card.SP_A, Card.DI_J))


def fixed_service(clock: Clock) -> tuple[GameService, MemoryGameStore]:
    store = MemoryGameStore(clock=clock)
    game = GameService(
        store,
        turn_seconds=30,
        allow_fixed_deals=True,
        rate_actions=0,
        rate_signals=0,
        rate_window_ms=1000,
        clock=clock,
    )
    return game, store


def test_a_family_game_has_as_many_players_as_its_rule_set_has_seats() -> None:
    game, store = service(Clock())
    for options, count in (
        (FRENCH, 2),
        (default_options(RuleSet.PARTNERSHIP_TRUC), 4),
        (default_options(RuleSet.CATALAN_TRUC), 4),
        (options_from_mapping(RuleSet.CATALAN_TRUC, {"seats": 2}), 2),
    ):
        for wrong in (count - 1, count + 1, 6 if count != 6 else 4):
            with pytest.raises(InvalidArgument) as error:
                run(game.create_game(LOBBY, new_game(options=options, players=PLAYERS[:wrong])))
            assert error.value.message == (
                f"players: {rule_set_of(options)} needs {count}, got {wrong}"
            )
        with pytest.raises(InvalidArgument) as error:
            run(
                game.create_game(
                    LOBBY, new_game(options=options, players=PLAYERS[:count], dealer=count)
                )
            )
        assert error.value.message == f"dealer: a seat 0-{count - 1}"
        game_id = f"g-{rule_set_of(options)}-{count}"
        created = run(
            game.create_game(
                LOBBY, new_game(game_id=game_id, options=options, players=PLAYERS[:count])
            )
        )
        assert isinstance(created.view, FamilyView)
        assert (created.view.rule_set, created.view.seat_count) == (rule_set_of(options), count)
        state = decode_state(run(store.read(game_id)).state)
        assert isinstance(state, FamilyState) and state.options == options
    with pytest.raises(InvalidArgument) as error:
        run(
            game.create_game(
                LOBBY,
                new_game(options=FRENCH, players=PLAYERS[:2], fixed_draws=[Card.HE_7, Card.HE_8]),
            )
        )
    assert error.value.message.startswith("fixed_draws: french_truc has no draw")


def test_a_card_is_read_again_in_the_games_pack_once_the_game_is_loaded() -> None:
    async def scenario() -> None:
        game, store = fixed_service(Clock())
        await game.create_game(
            LOBBY,
            new_game(options=FRENCH, players=PLAYERS[:2], fixed_deals=[FRENCH_DEAL], dealer=1),
        )
        clubs_seven = game_pb2.Action(play_card=card_to_proto(Card.CL_7))
        spanish = action_from_proto(clubs_seven)
        assert spanish == PlayCard(Card.CL_7)  # what the protocol reads before the game is known
        with pytest.raises(FailedPrecondition) as refusal:
            await game.submit_action(player(PLAYERS[0]), "g1", spanish, etag="", request_id="")
        assert refusal.value.reason == "CARD_NOT_IN_HAND"
        played = await game.submit_action(
            player(PLAYERS[0]),
            "g1",
            spanish,
            etag="",
            request_id="",
            read_in=functools.partial(action_from_proto, clubs_seven),
        )
        assert CardPlayed(0, Card.FC_7, 1) in played.view.events
        assert (await store.read("g1")).version == 2

    run(scenario())


def test_a_late_seat_of_a_family_game_refuses_a_redeal_then_plays_its_lowest_card() -> None:
    async def scenario() -> list[TurnTimedOut]:
        clock = Clock()
        game, store = fixed_service(clock)
        sweeper = DeadlineSweeper(game, store, poll_ms=500)
        await game.create_game(
            LOBBY,
            new_game(
                options=FRENCH,
                players=PLAYERS[:2],
                fixed_deals=[FRENCH_DEAL],
                dealer=1,
                turn_seconds=5,
            ),
        )
        await game.submit_action(
            player(PLAYERS[0]), "g1", CALL[Call.PROPOSE_REDEAL], etag="", request_id=""
        )
        timed_out = []
        for _ in range(2):
            clock.now += 6
            assert await sweeper.sweep() == 1
            first = (await read_history(store, "g1")).events[-1][0]
            assert isinstance(first, TurnTimedOut)
            timed_out.append(first)
        view = await game.get_game(player(PLAYERS[1]), "g1")
        assert view.view.to_act == 1 and view.version == 4
        return timed_out

    refused_redeal, played = run(scenario())
    assert refused_redeal == TurnTimedOut(1, CALL[Call.REFUSE])
    assert played == TurnTimedOut(0, PLAY[Card.HE_9])  # its lowest: 7 8 A K Q J T 9
