"""GameSession against an in-memory stand-in of ``Play`` (``fake_play``): the
protocol's cases one by one, deterministic and fast. The same behaviours
against the real game service are in ``test_session.py``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import grpc
import pytest
from truc.v1 import game_pb2

from tests.client.fake_play import FakeCall, FakeGame, metadata
from truc_client.session import GameSession, SessionCalls, StaleView, TrucError, Update

pytestmark = pytest.mark.unit

T = TypeVar("T")
ACTION = game_pb2.Action(call=game_pb2.CALL_TRUC)


def session(game: FakeGame, seat: int, after: int = 0, **options: Any) -> GameSession:
    calls = cast(SessionCalls, game)
    return GameSession(calls, "games/g1", metadata(seat), after_version=after, **options)


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), 10)

    return asyncio.run(bounded())


def covered(updates: list[Update]) -> list[int]:
    """The versions of the updates' events, in the order they came."""
    return [event.version for update in updates for event in update.events]


async def play_seat(game: FakeGame, seat: int) -> tuple[list[Update], list[Update]]:
    """Play one seat to the end: (the updates iterated, the updates act returned)."""
    seen: list[Update] = []
    acted: list[Update] = []
    async with session(game, seat) as playing:
        async for update in playing:
            seen.append(update)
            view = update.view
            if not update.over and view.to_act == seat and not playing.queued:
                acted.append(await playing.act(ACTION, etag=view.etag))
    return seen, acted


def test_two_seats_play_to_the_end_and_see_every_version_once() -> None:
    game = FakeGame(seats=2, last=10)

    async def main() -> list[tuple[list[Update], list[Update]]]:
        return list(await asyncio.gather(play_seat(game, 0), play_seat(game, 1)))

    results = run(main)
    assert game.version == 10 and len(game.applied) == 9  # nine actions, each applied once
    for seen, acted in results:
        assert [u.version for u in seen] == list(range(1, 11))
        assert covered(seen) == list(range(1, 11))
        assert seen[-1].over and seen[-1].view.finished
        # Each act returned the version its action produced, with its request id.
        assert all(u.request_id and game.applied[u.request_id] == u.version for u in acted)
    assert sorted(u.version for _, acted in results for u in acted) == list(range(2, 11))


def test_a_refusal_raises_what_submit_raises_and_the_stream_stays_open() -> None:
    game = FakeGame(seats=2, last=10)

    async def main() -> tuple[TrucError, StaleView, Update, int]:
        async with session(game, 1) as waiting, session(game, 0) as playing:
            first = await anext(playing)
            with pytest.raises(TrucError) as not_yours:
                await waiting.act(ACTION, etag=first.view.etag)
            with pytest.raises(StaleView) as stale:
                await playing.act(ACTION, etag="0")
            applied = await playing.act(ACTION, etag=first.view.etag)  # the same stream
            return not_yours.value, stale.value, applied, playing.streams

    not_yours, stale, applied, streams = run(main)
    assert not_yours.code == grpc.StatusCode.FAILED_PRECONDITION
    assert not_yours.reason == "NOT_YOUR_TURN"
    assert stale.code == grpc.StatusCode.ABORTED and stale.reason == "STALE_ETAG"
    assert stale.view.etag == "1"  # the current view, nothing applied
    assert applied.version == 2 and streams == 1


def test_an_answer_lost_with_its_stream_is_resent_with_its_id_and_applied_once() -> None:
    game = FakeGame(seats=2, last=10)

    async def main() -> tuple[Update, list[Update]]:
        async with session(game, 0) as playing:
            first = await anext(playing)
            game.lose_next_answer = True  # applied, then the stream breaks
            answer = await playing.act(ACTION, etag=first.view.etag)
            game.advance()
            rest = [await anext(playing), await anext(playing)]
            return answer, rest

    answer, rest = run(main)
    assert game.version == 3 and len(game.applied) == 1  # applied once
    rid = next(iter(game.applied))
    resent = [
        r.action.request_id for call in game.calls for r in call.written if r.HasField("action")
    ]
    assert resent == [rid, rid]  # the same request id on the new stream
    assert [c.opened_after for c in game.calls] == [0, 1]  # resumed after the last version
    assert answer.version == 2
    assert [u.version for u in rest] == [2, 3]  # every version once, in order


def test_a_cancelled_call_resumes_after_the_last_version() -> None:
    game = FakeGame(seats=2, last=10)

    async def main() -> list[int]:
        async with session(game, 1) as watching:
            versions = [(await anext(watching)).version]
            game.advance()
            versions.append((await anext(watching)).version)
            assert watching.current_call is not None
            watching.current_call.cancel()  # as if the transport dropped it
            game.advance()
            game.advance()
            versions += [(await anext(watching)).version, (await anext(watching)).version]
            return versions

    assert run(main) == [1, 2, 3, 4]
    assert [c.opened_after for c in game.calls] == [0, 2]


def test_coalesced_messages_carry_every_event() -> None:
    game = FakeGame(seats=2, last=10, version=6, coalesce=True)

    async def main() -> Update:
        async with session(game, 0) as watching:
            return await anext(watching)

    update = run(main)
    assert (update.from_version, update.version) == (1, 6)
    assert covered([update]) == [1, 2, 3, 4, 5, 6]


def test_a_caller_that_does_not_read_gets_coalesced_updates_not_a_long_queue() -> None:
    game = FakeGame(seats=2, last=40)

    async def main() -> tuple[int, list[Update]]:
        async with session(game, 1, max_queued=3) as watching:
            first = await anext(watching)
            for _ in range(20):
                game.advance()
            await asyncio.sleep(0.05)
            queued = watching.queued
            rest = [await anext(watching) for _ in range(watching.queued)]
            return queued, [first, *rest]

    queued, updates = run(main)
    assert queued == 3
    assert covered(updates) == list(range(1, 22))
    assert updates[-1].version == 21


def test_a_game_behind_the_session_is_adopted_on_resuming() -> None:
    game = FakeGame(seats=2, last=20)

    async def main() -> list[Update]:
        async with session(game, 1) as watching:
            got = [await anext(watching)]
            for _ in range(4):
                game.advance()
                got.append(await anext(watching))
            game.rewind(3)  # versions 4 and 5 are lost...
            game.break_streams()  # ...and the stream breaks
            got.append(await anext(watching))
            game.advance()
            got.append(await anext(watching))
            return got

    got = run(main)
    assert [u.version for u in got] == [1, 2, 3, 4, 5, 3, 4]
    rewound = got[5]
    assert rewound.rewound and not rewound.events and rewound.view.etag == "3"
    assert not got[6].rewound and covered([got[6]]) == [4]


def test_a_quiet_session_notices_a_rewind_within_its_idle_timeout() -> None:
    game = FakeGame(seats=2, last=20)

    async def main() -> list[Update]:
        async with session(game, 1, idle_timeout=0.2) as watching:
            got = [await anext(watching)]
            game.advance()
            got.append(await anext(watching))
            game.rewind(1)  # the stream stays open and silent
            got.append(await anext(watching))
            return got

    got = run(main)
    assert [u.version for u in got] == [1, 2, 1]
    assert got[2].rewound


def test_unavailable_and_rate_limited_refusals_are_retried() -> None:
    game = FakeGame(seats=2, last=10)

    async def main() -> tuple[Update, list[str]]:
        async with session(game, 0, backoff=0.01) as playing:
            first = await anext(playing)
            game.refuse_next = (grpc.StatusCode.UNAVAILABLE.value[0], "STORE_UNAVAILABLE")
            answer = await playing.act(ACTION, etag=first.view.etag)
            ids = [r.action.request_id for r in game.calls[0].written if r.HasField("action")]
            return answer, ids

    answer, ids = run(main)
    assert answer.version == 2 and len(ids) == 2 and ids[0] == ids[1]


def test_an_error_opening_the_session_ends_it_with_that_error() -> None:
    game = FakeGame()

    def refuse(call: FakeCall) -> None:
        call.end(
            grpc.aio.AioRpcError(
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                "not seated",
                None,
            )
        )

    game.on_open = refuse

    async def main() -> tuple[TrucError, TrucError]:
        async with session(game, 0) as playing:
            with pytest.raises(TrucError) as iterating:
                await anext(playing)
            with pytest.raises(TrucError) as acting:
                await playing.act(ACTION)
            return iterating.value, acting.value

    iterating, acting = run(main)
    assert iterating.code == acting.code == grpc.StatusCode.PERMISSION_DENIED
    assert len(game.calls) == 1  # not retried


def test_after_the_match_acting_is_game_over_and_a_late_session_ends_at_once() -> None:
    game = FakeGame(seats=2, last=3)

    async def main() -> tuple[list[int], TrucError, list[int]]:
        async with session(game, 0) as playing:
            versions = [u.version for u in [await anext(playing)]]
            game.advance()
            game.advance()
            versions += [u.version async for u in playing]
            with pytest.raises(TrucError) as late:
                await playing.act(ACTION)
        async with session(game, 0, after=3) as after_the_end:
            nothing = [u.version async for u in after_the_end]
        return versions, late.value, nothing

    versions, late, nothing = run(main)
    assert versions == [1, 2, 3]
    assert late.code == grpc.StatusCode.FAILED_PRECONDITION and late.reason == "GAME_OVER"
    assert nothing == []


def test_the_action_that_ends_the_match_cut_off_with_its_answer_still_succeeds() -> None:
    """The action is applied (it ends the match), its stream breaks before the
    answer; the resumed stream brings the last version (without the request
    id, as the server does for versions read back from the log) and ends
    before answering the resend. The session asks the unary SubmitAction under
    the same request id, which says it was applied."""
    game = FakeGame(seats=2, last=3, version=2)

    async def main() -> tuple[Update, list[int]]:
        async with session(game, 1, after=1) as playing:
            first = await anext(playing)
            game.lose_next_answer = True
            answer = await playing.act(ACTION, etag=first.view.etag)
            return answer, [u.version async for u in playing]

    answer, rest = run(main)
    assert answer.version == 3 and answer.over
    assert rest == [3]
    assert game.submits == list(game.applied)  # asked once, with the action's request id


def test_an_action_unanswered_when_the_match_ends_was_not_applied() -> None:
    game = FakeGame(seats=2, last=3, version=2)

    async def main() -> TrucError:
        async with session(game, 0) as waiting:
            await anext(waiting)
            game.calls[0].cancel()  # the stream breaks; the action waits for the next one
            acting = asyncio.create_task(waiting.act(ACTION, etag="2"))
            await asyncio.sleep(0)
            game.advance()  # another seat ends the match meanwhile
            with pytest.raises(TrucError) as raised:
                await acting
            return raised.value

    error = run(main)
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION and error.reason == "GAME_OVER"
    assert len(game.submits) <= 1 and not game.applied
