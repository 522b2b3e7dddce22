"""TrucClient's Play sessions against a real stack (a game service and two
lobbies on Redis): six seats queue through the lobby and play whole matches
over sessions, with a spectator; refusals on a session raise what the unary
SubmitAction raises; streams cut under the client resume with every version
exactly once, in order, and each action applied once."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, lobby_pb2

from tests.lobby_service.conftest import Stack, stack  # noqa: F401
from tests.service.conftest import SECRET, redis_server  # noqa: F401
from truc_bots import HeuristicPolicy
from truc_client.client import StaleView, TrucClient, TrucError
from truc_client.session import GameSession, Update
from truc_service.tokens import issue_token

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

SHORT = game_pb2.RuleOptions(target_score=6, manches_to_win=1)
"""A short match: a few hands."""


@contextlib.asynccontextmanager
async def seated(
    services: Stack, prefix: str
) -> AsyncIterator[list[tuple[TrucClient, lobby_pb2.Ticket]]]:
    """Six clients queued alone for a short match and seated in one game (seat order)."""
    async with contextlib.AsyncExitStack() as exits:
        clients = [
            await exits.enter_async_context(
                TrucClient(services.lobbies[i % 2].address, services.game.address)
            )
            for i in range(6)
        ]
        for i, client in enumerate(clients):
            await client.sign_in_guest(f"{prefix}{i}")
        queued = [await client.queue(options=SHORT) for client in clients]
        tickets = await asyncio.gather(
            *(c.wait_until_seated(t.name, timeout=20) for c, t in zip(clients, queued, strict=True))
        )
        assert len({t.game for t in tickets}) == 1
        yield sorted(zip(clients, tickets, strict=True), key=lambda ct: ct[1].seat)


def _my_turn(view: game_pb2.GameView) -> bool:
    return view.HasField("to_act") and view.to_act == view.seat and not view.finished


@dataclass
class Seat:
    """What one seat saw and did over its session."""

    updates: list[Update] = field(default_factory=list)
    answers: list[tuple[str, Update]] = field(default_factory=list)
    """(request id sent, the update act returned) for every applied action."""
    streams: int = 0


async def play_seat(session: GameSession, seed: int) -> Seat:
    """Play the session's seat to the end with a heuristic policy."""
    policy = HeuristicPolicy(seed)
    seat = Seat()
    async for update in session:
        seat.updates.append(update)
        view = update.view
        while _my_turn(view) and not session.queued:
            request_id = uuid.uuid4().hex
            try:
                answer = await session.act(
                    policy.choose(view), etag=view.etag, request_id=request_id
                )
            except StaleView as stale:  # decided on an old view: decide again
                view = stale.view
                continue
            except TrucError as error:
                if error.reason == "NOT_YOUR_TURN":
                    break  # the next update is on its way
                raise
            seat.answers.append((request_id, answer))
            break
    seat.streams = session.streams
    return seat


def assert_every_version_once(updates: list[Update], last: int) -> None:
    """The updates cover versions 1..last exactly once, in order, and each
    event lies in its update's versions."""
    expected = 1
    for update in updates:
        assert update.from_version == expected, (update.from_version, expected)
        assert update.version >= update.from_version
        assert all(update.from_version <= e.version <= update.version for e in update.events)
        expected = update.version + 1
    assert expected == last + 1
    versions = [e.version for u in updates for e in u.events]
    assert versions == sorted(versions)


def spectator(services: Stack) -> TrucClient:
    client = TrucClient(services.lobbies[0].address, services.game.address)
    client.use_token(issue_token(SECRET, f"spectator-{uuid.uuid4().hex[:6]}", role="spectator"))
    return client


# --------------------------------------------------------------------------- whole matches


@dataclass
class Match:
    game: str
    seats: list[Seat]
    watched: list[Update]
    final: game_pb2.GameView
    spectator_refusal: TrucError
    logs: list[list[game_pb2.Event]]


@pytest.fixture(scope="module")
def match(stack: Stack) -> Match:  # noqa: F811
    async def main() -> Match:
        async with seated(stack, "session") as table:
            game = table[0][1].game
            async with contextlib.AsyncExitStack() as exits:
                sessions = [
                    await exits.enter_async_context(client.session(game)) for client, _ in table
                ]
                watcher = await exits.enter_async_context(spectator(stack))
                watching = await exits.enter_async_context(watcher.session(game))
                first = await anext(watching)
                with pytest.raises(TrucError) as refused:
                    await watching.act(game_pb2.Action(call=game_pb2.CALL_TRUC))
                watched = [first]
                seats, rest = await asyncio.wait_for(
                    asyncio.gather(
                        asyncio.gather(
                            *(
                                play_seat(s, 50 + t.seat)
                                for s, (_, t) in zip(sessions, table, strict=True)
                            )
                        ),
                        _collect(watching),
                    ),
                    30,
                )
                watched += rest
            final = await table[0][0].get_game(game)
            logs = [list((await client.get_game(game)).events) for client, _ in table]
            return Match(game, list(seats), watched, final, refused.value, logs)

    return asyncio.run(main())


async def _collect(session: GameSession) -> list[Update]:
    return [update async for update in session]


def test_six_seats_play_a_whole_match_over_sessions(match: Match) -> None:
    last = int(match.final.etag)
    assert match.final.finished
    for seat, seen in enumerate(match.seats):
        assert_every_version_once(seen.updates, last)
        final = seen.updates[-1]
        assert final.over and final.view.etag == match.final.etag and final.view.seat == seat
        assert seen.streams == 1  # nothing broke: one stream for the whole match
        # Each action was answered by the update of the version it produced.
        for request_id, answer in seen.answers:
            assert answer.request_id == request_id
            assert answer in seen.updates
    # Every version but the first came from one of the seats' actions, once.
    first = match.seats[0].updates[0].from_version
    acted = sorted(a.version for s in match.seats for _, a in s.answers)
    assert acted == list(range(first + 1, last + 1))


def test_a_session_brings_the_events_of_the_seats_own_log(match: Match) -> None:
    """What a seat's session delivered, event by event, is its game log."""
    for seen, log in zip(match.seats, match.logs, strict=True):
        assert [e for u in seen.updates for e in u.events] == log


def test_a_spectator_follows_the_whole_match_read_only(match: Match) -> None:
    assert_every_version_once(match.watched, int(match.final.etag))
    assert match.watched[-1].over and not match.watched[-1].view.HasField("seat")
    refused = match.spectator_refusal
    assert refused.code == grpc.StatusCode.PERMISSION_DENIED and refused.reason == "NOT_SEATED"


# --------------------------------------------------------------------------- refusals


@dataclass
class Table:
    game: str
    tokens: list[str]


@pytest.fixture(scope="module")
def table(stack: Stack, match: Match) -> Table:  # noqa: F811
    async def main() -> Table:
        async with seated(stack, "refusals") as seats:
            return Table(seats[0][1].game, [t.game_token for _, t in seats])

    return asyncio.run(main())


def client_of(services: Stack, token: str) -> TrucClient:
    client = TrucClient(services.lobbies[0].address, services.game.address)
    client.use_token(token)
    return client


def test_a_refusal_on_a_session_is_the_unary_error(stack: Stack, table: Table) -> None:  # noqa: F811
    async def main() -> None:
        async with client_of(stack, table.tokens[0]) as probe:
            view = await probe.get_game(table.game)
        other = (view.to_act + 1) % 6
        async with (
            client_of(stack, table.tokens[other]) as waiting,
            client_of(stack, table.tokens[view.to_act]) as acting,
        ):
            mine = await waiting.get_game(table.game)
            turn = await acting.get_game(table.game)
            # A game move of the seat to act (a signal may be sent out of turn).
            move = next(
                a for a in turn.legal_actions if a.WhichOneof("kind") not in ("signal", "directive")
            )
            with pytest.raises(TrucError) as unary:
                await waiting.submit(table.game, move, etag=mine.etag)
            async with waiting.session(table.game, after_version=int(mine.etag)) as session:
                with pytest.raises(TrucError) as over_session:
                    await session.act(move, etag=mine.etag)
                assert type(over_session.value) is type(unary.value) is TrucError
                assert over_session.value.code == unary.value.code
                assert over_session.value.code == grpc.StatusCode.FAILED_PRECONDITION
                assert over_session.value.reason == unary.value.reason == "NOT_YOUR_TURN"

            current = await acting.get_game(table.game)
            action = HeuristicPolicy(7).choose(current)
            stale = str(int(current.etag) - 1)
            with pytest.raises(StaleView) as unary_stale:
                await acting.submit(table.game, action, etag=stale)
            async with acting.session(table.game, after_version=int(current.etag)) as session:
                with pytest.raises(StaleView) as session_stale:
                    await session.act(action, etag=stale)
                for raised in (unary_stale.value, session_stale.value):
                    assert raised.code == grpc.StatusCode.ABORTED
                    assert raised.reason == "STALE_ETAG"
                    assert raised.view.etag == current.etag  # nothing was applied
                # The stream stays open: the same session acts, and is answered.
                answer = await session.act(action, etag=current.etag)
                assert answer.version == int(current.etag) + 1
                assert session.streams == 1

    asyncio.run(main())


# --------------------------------------------------------------------------- cut streams


class CutCall:
    """A Play call that is cancelled right after some of its actions are written
    (the server may apply the action; its answer never comes on this stream)."""

    def __init__(self, owner: Cutting, call: Any) -> None:
        self._owner = owner
        self._call = call

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        await self._call.write(request)
        if request.HasField("action"):
            owner = self._owner
            owner.written.append(request.action.request_id)
            if len(owner.written) % owner.cut_every == 0 and owner.cuts < owner.limit:
                owner.cuts += 1
                self._call.cancel()  # the stream breaks under the client

    async def read(self) -> object:
        return await self._call.read()

    def cancel(self) -> bool:
        result: bool = self._call.cancel()
        return result


class Cutting:
    """A client's game stub whose Play streams are cut after every
    ``cut_every``-th action written (``limit`` times at most)."""

    def __init__(self, stub: GameServiceAsyncStub, cut_every: int, limit: int) -> None:
        self._stub = stub
        self.GetGame = stub.GetGame
        self.SubmitAction = stub.SubmitAction
        self.WatchGame = stub.WatchGame
        self.cut_every = cut_every
        self.limit = limit
        self.written: list[str] = []
        self.cuts = 0

    def Play(self, **kwargs: Any) -> CutCall:  # noqa: N802
        return CutCall(self, self._stub.Play(**kwargs))


def cutting(client: TrucClient, every: int, limit: int = 1_000) -> Cutting:
    stub = Cutting(client._game, every, limit)
    client._game = cast("GameServiceAsyncStub", stub)
    return stub


def test_an_action_cut_off_with_its_stream_is_resent_and_applied_once(
    stack: Stack,  # noqa: F811
    table: Table,
) -> None:
    async def main() -> tuple[int, Update, int, Cutting, list[int]]:
        async with client_of(stack, table.tokens[0]) as probe:
            view = await probe.get_game(table.game)
        async with client_of(stack, table.tokens[view.to_act]) as acting:
            current = await acting.get_game(table.game)
            cut = cutting(acting, every=1, limit=1)  # the first action's stream is cut
            async with acting.session(table.game, after_version=int(current.etag)) as session:
                answer = await session.act(HeuristicPolicy(8).choose(current), etag=current.etag)
                streams = session.streams
                got = [(await anext(session)).version]
            after = await acting.get_game(table.game)
            return int(current.etag), answer, int(after.etag), cut, [streams, *got]

    async def bounded() -> tuple[int, Update, int, Cutting, list[int]]:
        return await asyncio.wait_for(main(), 20)

    before, answer, after, cut, (streams, first) = asyncio.run(bounded())
    assert cut.cuts >= 1 and streams >= 2  # the stream was cut and the session resumed
    assert len(set(cut.written)) == 1 and len(cut.written) >= 2  # resent with its request id
    assert answer.version == before + 1 == after  # applied once
    assert first == before + 1  # and its version delivered once


def test_cut_streams_mid_match_resume_with_every_version_once(stack: Stack) -> None:  # noqa: F811
    async def main() -> tuple[list[Seat], list[Cutting], game_pb2.GameView]:
        async with seated(stack, "cuts") as table:
            game = table[0][1].game
            # Seat 0's first action is cut three times in a row (resent each
            # time); seats 1 and 2 lose every second and third action's stream.
            cuts = [
                cutting(client, every, limit)
                for (client, _), (every, limit) in zip(
                    table[:3], ((1, 3), (2, 1_000), (3, 1_000)), strict=True
                )
            ]
            async with contextlib.AsyncExitStack() as exits:
                sessions = [
                    await exits.enter_async_context(client.session(game)) for client, _ in table
                ]
                seats = await asyncio.wait_for(
                    asyncio.gather(
                        *(
                            play_seat(s, 70 + t.seat)
                            for s, (_, t) in zip(sessions, table, strict=True)
                        )
                    ),
                    30,
                )
            final = await table[0][0].get_game(game)
            return list(seats), cuts, final

    seats, cuts, final = asyncio.run(main())
    last = int(final.etag)
    assert final.finished
    assert cuts[0].cuts == 3 and len(set(cuts[0].written[:4])) == 1  # one id, sent 4 times
    assert all(c.cuts >= 1 for c in cuts), [c.cuts for c in cuts]
    for index, seen in enumerate(seats):
        assert_every_version_once(seen.updates, last)
        assert seen.updates[-1].over
        if index < 3:
            assert seen.streams > 1
    # Every version after the first came from exactly one applied action: an
    # action resent after a cut was not applied again.
    first = seats[0].updates[0].from_version
    assert sum(len(s.answers) for s in seats) == last - first
    resent = [c.written for c in cuts]
    assert all(len(w) > len(set(w)) for w in resent)  # some were sent twice
