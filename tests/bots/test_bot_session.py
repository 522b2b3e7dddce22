"""How a :class:`BotPlayer` plays over a ``Play`` session, message by message,
against a scripted session (no server): the answers to its actions (applied,
repeated, refused for each reason), coalesced versions, a broken stream with an
action in flight, a silent one, and a game that went back under it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2

from truc_bots import BotError, BotPlayer, RandomPolicy

pytestmark = pytest.mark.unit

SEAT = 2
NAME = "games/scripted"
TIMEOUT = 5.0


def view(version: int, to_act: int | None = SEAT, *, over: bool = False) -> game_pb2.GameView:
    """Seat 2's view at ``version``; one legal action when it is to act."""
    game = game_pb2.GameView(
        name=NAME,
        seat=SEAT,
        etag=str(version),
        phase=game_pb2.PHASE_MATCH_OVER if over else game_pb2.PHASE_PLAY,
        finished=over,
    )
    if to_act is not None and not over:
        game.to_act = to_act
        if to_act == SEAT:
            game.legal_actions.add(call=game_pb2.CALL_PASS)
    return game


def version(
    number: int, to_act: int | None = None, *, since: int | None = None, request_id: str = ""
) -> game_service_pb2.PlayResponse:
    """The session's message of a new version (``since``: coalesced from there)."""
    return game_service_pb2.PlayResponse(
        version=number,
        from_version=number if since is None else since,
        game=view(number, to_act, over=to_act is None),
        request_id=request_id,
    )


def refused(
    at: int, request_id: str, code: grpc.StatusCode, reason: str, **metadata: str
) -> game_service_pb2.PlayResponse:
    return game_service_pb2.PlayResponse(
        version=at,
        request_id=request_id,
        refused=game_service_pb2.ActionRefused(
            code=code.value[0], reason=reason, message="scripted", metadata=metadata
        ),
    )


def unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "cut", None
    )


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)


class ScriptedCall:
    """One Play call: records what the bot writes, answers what the test sends."""

    def __init__(self) -> None:
        self.written: list[game_service_pb2.PlayRequest] = []
        self.cancelled = False
        self.half_closed = False
        self._incoming: asyncio.Queue[game_service_pb2.PlayResponse | BaseException | None] = (
            asyncio.Queue()
        )

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        if self.cancelled:
            raise asyncio.InvalidStateError("the call is over")
        self.written.append(request)

    async def read(self) -> object:
        item = await self._incoming.get()
        if item is None:
            return grpc.aio.EOF  # type: ignore[attr-defined]
        if isinstance(item, BaseException):
            raise item
        return item

    async def done_writing(self) -> None:
        self.half_closed = True

    def cancel(self) -> bool:
        self.cancelled = True
        return True

    # ---- the test's side

    def send(self, message: game_service_pb2.PlayResponse | BaseException | None) -> None:
        self._incoming.put_nowait(message)

    async def action(self, index: int) -> game_service_pb2.SessionAction:
        """The ``index``-th action written on this call (0: the first), once written."""

        def actions() -> list[game_service_pb2.SessionAction]:
            return [r.action for r in self.written if r.HasField("action")]

        await until(lambda: len(actions()) > index, f"action {index}")
        return actions()[index]

    def actions(self) -> list[game_service_pb2.SessionAction]:
        return [r.action for r in self.written if r.HasField("action")]

    @property
    def opened_after(self) -> int:
        assert self.written and self.written[0].HasField("open"), self.written
        assert self.written[0].open.name == NAME
        return self.written[0].open.after_version


class ScriptedGame:
    """A GameCalls whose GetGame answers ``current`` and whose Play calls are scripted."""

    def __init__(self, current: game_pb2.GameView) -> None:
        self.current = current
        self.calls: list[ScriptedCall] = []
        self.gets = 0

    async def GetGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.GetGameRequest, **kwargs: Any
    ) -> game_service_pb2.GetGameResponse:
        assert request.name == NAME
        self.gets += 1
        return game_service_pb2.GetGameResponse(game=self.current)

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        raise AssertionError("a session bot made a unary SubmitAction call")

    def WatchGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.WatchGameRequest, **kwargs: Any
    ) -> ScriptedCall:
        raise AssertionError("a session bot opened a WatchGame stream")

    def Play(self, **kwargs: Any) -> ScriptedCall:  # noqa: N802 - the stub's method name
        assert set(kwargs) == {"metadata"}
        assert dict(kwargs["metadata"])["authorization"] == "Bearer token"
        self.calls.append(ScriptedCall())
        return self.calls[-1]

    async def call(self, index: int) -> ScriptedCall:
        await until(lambda: len(self.calls) > index, f"Play call {index}")
        return self.calls[index]


def play(
    game: ScriptedGame,
    script: Callable[[ScriptedGame], Awaitable[None]],
    **options: Any,
) -> tuple[BotPlayer, game_pb2.GameView]:
    """Run a session bot on ``game`` beside the test's ``script``; the bot and its result."""
    bot = BotPlayer(game, NAME, "token", RandomPolicy(0), backoff=0.001, **options)

    async def both() -> game_pb2.GameView:
        final, _ = await asyncio.wait_for(asyncio.gather(bot.run(), script(game)), TIMEOUT)
        return final

    return bot, asyncio.run(both())


def test_the_bot_acts_on_its_session_and_follows_coalesced_versions() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        assert call.opened_after == 5 and first.etag == "5" and first.request_id
        call.send(version(6, 3, request_id=first.request_id))
        call.send(version(9, SEAT, since=7))  # 7, 8 and 9 in one message
        second = await call.action(1)
        assert second.etag == "9" and second.request_id != first.request_id
        call.send(version(10, None, request_id=second.request_id))  # the match is over

    game = ScriptedGame(view(5))
    bot, final = play(game, script)
    assert final.finished and final.etag == "10"
    assert bot.actions == 2 and bot.reconnects == 0
    assert game.gets == 1 and len(game.calls) == 1
    assert game.calls[0].half_closed and game.calls[0].cancelled


def test_a_rate_limited_action_is_resent_with_its_request_id_after_the_wait_asked() -> None:
    waited: list[float] = []

    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        refused_at = time.monotonic()
        call.send(
            refused(
                5,
                first.request_id,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "RATE_LIMITED",
                retry_after_ms="150",
            )
        )
        again = await call.action(1)
        waited.append(time.monotonic() - refused_at)
        assert again == first  # the same action, etag and request id
        call.send(version(6, None, request_id=first.request_id))

    bot, final = play(ScriptedGame(view(5)), script)
    assert final.finished and bot.actions == 1
    assert 0.15 <= waited[0] < 1.0, waited


def test_a_stale_etag_with_a_newer_version_on_the_session_waits_for_it() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        call.send(refused(6, first.request_id, grpc.StatusCode.ABORTED, "STALE_ETAG"))
        await asyncio.sleep(0.05)
        assert len(call.actions()) == 1 and game.gets == 1  # no new decision, no GetGame
        call.send(version(6, SEAT))
        second = await call.action(1)
        assert second.etag == "6" and second.request_id != first.request_id
        call.send(version(7, None, request_id=second.request_id))

    bot, final = play(ScriptedGame(view(5)), script)
    assert final.finished and bot.actions == 1


def test_not_your_turn_waits_for_the_next_version() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        call.send(
            refused(5, first.request_id, grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
        )
        await asyncio.sleep(0.05)
        assert len(call.actions()) == 1 and game.gets == 1
        call.send(version(6, SEAT))
        second = await call.action(1)
        assert second.etag == "6"
        call.send(version(7, None, request_id=second.request_id))

    bot, final = play(ScriptedGame(view(5)), script)
    assert final.finished and bot.actions == 1


def test_a_conflict_the_session_cannot_explain_refreshes_and_decides_on_the_server_view() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        game.current = view(7)  # the store is ahead of the replica's session
        call.send(refused(5, first.request_id, grpc.StatusCode.ABORTED, "CONFLICT"))
        second = await call.action(1)
        assert second.etag == "7" and game.gets == 2 and len(game.calls) == 1
        call.send(version(6, 3))  # the session catches up: older than the view held
        call.send(version(7, SEAT))
        call.send(version(8, None, request_id=second.request_id))

    bot, final = play(ScriptedGame(view(5)), script)
    assert final.finished and bot.actions == 1


def test_a_game_that_went_back_is_followed_on_a_session_reopened_from_there() -> None:
    """STALE_ETAG for a version the store lost: the bot adopts the server's older
    view and reopens its session after the server's version."""

    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        game.current = view(3)  # Redis lost versions 4 and 5
        call.send(refused(5, first.request_id, grpc.StatusCode.ABORTED, "STALE_ETAG"))
        again = await game.call(1)
        assert call.cancelled and again.opened_after == 3
        second = await again.action(0)
        assert second.etag == "3"
        again.send(version(4, None, request_id=second.request_id))

    bot, final = play(ScriptedGame(view(5)), script)
    assert final.finished and bot.actions == 1 and bot.reconnects == 1


def test_a_cut_session_resumes_after_the_last_version_and_resends_the_action_in_flight() -> None:
    """The resent action answers ``repeated``; the bot then decides on no view
    older than the version its action produced."""

    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        call.send(unavailable())  # the stream breaks before the answer
        again = await game.call(1)
        assert again.opened_after == 5 and again.actions()[0] == first  # same request id
        again.send(
            game_service_pb2.PlayResponse(version=6, request_id=first.request_id, repeated=True)
        )
        await asyncio.sleep(0.05)
        assert len(again.actions()) == 1, "decided again on the view its action made stale"
        again.send(version(6, 3))
        again.send(version(7, SEAT))
        second = await again.action(1)
        assert second.etag == "7"
        again.send(version(8, None, request_id=second.request_id))

    game = ScriptedGame(view(5))
    bot, final = play(game, script)
    assert final.finished and bot.actions == 2 and bot.reconnects == 1
    assert game.gets == 1  # a cut resumes from the last version: no GetGame


def test_a_silent_session_is_refreshed_and_reopened() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        game.current = view(9, SEAT)
        again = await game.call(1)
        assert call.cancelled and again.opened_after == 9 and game.gets == 2
        action = await again.action(0)
        again.send(version(10, None, request_id=action.request_id))

    game = ScriptedGame(view(5, 0))
    bot, final = play(game, script, idle_timeout=0.05)
    assert final.finished and bot.actions == 1


def test_a_refusal_the_bot_cannot_explain_stops_it() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        first = await call.action(0)
        call.send(refused(5, first.request_id, grpc.StatusCode.INVALID_ARGUMENT, "BAD_ACTION"))

    with pytest.raises(BotError, match="INVALID_ARGUMENT BAD_ACTION"):
        play(ScriptedGame(view(5)), script)


def test_an_error_opening_the_session_is_not_retried() -> None:
    async def script(game: ScriptedGame) -> None:
        call = await game.call(0)
        call.send(
            grpc.aio.AioRpcError(
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                "NOT_SEATED",
                None,
            )
        )

    game = ScriptedGame(view(5, 0))
    with pytest.raises(grpc.aio.AioRpcError):
        play(game, script)
    assert len(game.calls) == 1
