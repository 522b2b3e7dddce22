"""The typed client against a real stack (a game service and two lobbies on Redis):
six clients queue, are seated and play a whole match; watch resumption, safe
retries, stale views and error reasons."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, lobby_pb2

from tests.bots.conftest import FlakyStub
from tests.lobby_service.conftest import Stack, stack  # noqa: F401
from tests.service.conftest import redis_server  # noqa: F401
from truc_bots import HeuristicPolicy
from truc_client.client import StaleView, TicketClosed, TrucClient, TrucError
from truc_client.narration import describe


@contextlib.asynccontextmanager
async def seated(
    services: Stack, prefix: str
) -> AsyncIterator[list[tuple[TrucClient, lobby_pb2.Ticket]]]:
    """Six clients signed in, queued alone and seated in one game (seat order)."""
    async with contextlib.AsyncExitStack() as exits:
        clients = [
            await exits.enter_async_context(
                TrucClient(services.lobbies[i % 2].address, services.game.address)
            )
            for i in range(6)
        ]
        for i, client in enumerate(clients):
            assert await client.sign_in_guest(f"{prefix}{i}") == client.player
        queued = [await client.queue() for client in clients]
        assert all(t.state == lobby_pb2.TICKET_STATE_QUEUED for t in queued)
        tickets = await asyncio.gather(
            *(c.wait_until_seated(t.name, timeout=20) for c, t in zip(clients, queued, strict=True))
        )
        assert len({t.game for t in tickets}) == 1
        assert sorted(t.seat for t in tickets) == list(range(6))
        yield sorted(zip(clients, tickets, strict=True), key=lambda ct: ct[1].seat)


async def act(
    client: TrucClient, game: str, policy: HeuristicPolicy, view: game_pb2.GameView
) -> None:
    """Submit the policy's choice while ``view`` says it is this seat's turn."""
    for _ in range(20):
        if view.finished or not view.HasField("to_act") or view.to_act != view.seat:
            return
        try:
            await client.submit(game, policy.choose(view), etag=view.etag)
        except StaleView as stale:  # decided on an old view: decide again
            assert stale.reason in ("STALE_ETAG", "CONFLICT")
            view = stale.view
        except TrucError as error:
            if error.reason == "NOT_YOUR_TURN":
                return
            raise
        else:
            return
    raise AssertionError("the action never got through")


async def play_seat(
    client: TrucClient, game: str, seed: int
) -> tuple[game_pb2.GameView, int, list[int]]:
    """Play one seat to the end; the final view, the start version and the versions watched."""
    policy = HeuristicPolicy(seed)
    view = await client.get_game(game)
    start = int(view.etag)
    versions: list[int] = []
    await act(client, game, policy, view)
    async for change in client.watch_game(game, after_version=start):
        versions.append(change.version)
        view = change.game
        await act(client, game, policy, view)
    return view, start, versions


@dataclass
class Played:
    game: str
    tokens: list[str]
    finals: list[game_pb2.GameView]
    watched: list[tuple[int, list[int]]]
    flaky: list[FlakyStub]


@pytest.fixture(scope="module")
def played(stack: Stack) -> Played:  # noqa: F811
    async def main() -> Played:
        async with seated(stack, "match") as table:
            game = table[0][1].game
            flaky = []
            for client, _ in table[:2]:  # two seats on a network that misbehaves
                stub = FlakyStub(
                    client._game, drop_every=9, fail_every=5, lose_every=4, stale_every=7
                )
                client._game = stub.as_stub()
                flaky.append(stub)
            results = await asyncio.wait_for(
                asyncio.gather(*(play_seat(c, game, 11 + t.seat) for c, t in table)), 30
            )
            return Played(
                game,
                [t.game_token for _, t in table],
                [r[0] for r in results],
                [(r[1], r[2]) for r in results],
                flaky,
            )

    return asyncio.run(main())


def test_six_clients_play_a_whole_match(played: Played) -> None:
    finals = played.finals
    assert all(v.finished and v.phase == game_pb2.PHASE_MATCH_OVER for v in finals)
    assert len({v.etag for v in finals}) == 1
    assert len({v.winner for v in finals}) == 1
    assert [v.seat for v in finals] == list(range(6))
    # The flaky network did drop streams, fail and lose calls, and stale the etag.
    assert all(stub.watches > 1 and stub.submits >= 7 for stub in played.flaky)


def test_watch_game_sees_every_version_once_across_dropped_streams(played: Played) -> None:
    last = int(played.finals[0].etag)
    for start, versions in played.watched:
        assert versions == list(range(start + 1, last + 1))


def test_watch_game_resumes_after_the_last_version_received(
    stack: Stack,  # noqa: F811
    played: Played,
) -> None:
    async def main() -> list[int]:
        async with TrucClient(stack.lobbies[0].address, stack.game.address) as client:
            client.use_token(played.tokens[0])
            seen: list[int] = []
            async with contextlib.aclosing(client.watch_game(played.game)) as stream:
                async for change in stream:
                    seen.append(change.version)
                    if len(seen) == 10:
                        break  # the caller goes away...
            async for change in client.watch_game(played.game, after_version=seen[-1]):
                seen.append(change.version)  # ...and comes back with its last version
                lines = [describe(e) for e in change.events]
                assert all(line is None or line for line in lines)
            assert change.game.finished
            return seen

    seen = asyncio.run(main())
    assert seen == list(range(1, int(played.finals[0].etag) + 1))


# --------------------------------------------------------------------------- a live table


@dataclass
class Table:
    game: str
    tokens: list[str]
    tickets: list[str]


@pytest.fixture(scope="module")
def table(stack: Stack, played: Played) -> Table:  # noqa: F811
    async def main() -> Table:
        async with seated(stack, "live") as seats:
            return Table(
                seats[0][1].game, [t.game_token for _, t in seats], [t.name for _, t in seats]
            )

    return asyncio.run(main())


def client_of(services: Stack, token: str) -> TrucClient:
    client = TrucClient(services.lobbies[0].address, services.game.address)
    client.use_token(token)
    return client


async def to_act(services: Stack, table: Table) -> tuple[TrucClient, game_pb2.GameView]:
    async with client_of(services, table.tokens[0]) as watcher:
        view = await watcher.get_game(table.game)
    assert view.HasField("to_act")
    client = client_of(services, table.tokens[view.to_act])
    return client, await client.get_game(table.game)


def test_a_repeated_request_id_is_applied_once(stack: Stack, table: Table) -> None:  # noqa: F811
    async def main() -> None:
        client, view = await to_act(stack, table)
        async with client:
            action = HeuristicPolicy(1).choose(view)
            request = game_service_pb2.SubmitActionRequest(
                name=table.game, action=action, etag=view.etag, request_id="fixed-id-1"
            )
            meta = (("authorization", "Bearer " + table.tokens[view.seat]),)
            first = await client._game.SubmitAction(request, metadata=meta)
            again = await client._game.SubmitAction(request, metadata=meta)
            assert again == first
            assert int(first.game.etag) == int(view.etag) + 1
            assert (await client.get_game(table.game)).etag == first.game.etag

    asyncio.run(main())


class LosesTheFirstAnswer:
    """A stub whose first SubmitAction is applied but its answer lost (UNAVAILABLE)."""

    def __init__(self, stub: Any) -> None:
        self._stub = stub
        self.GetGame = stub.GetGame
        self.WatchGame = stub.WatchGame
        self.request_ids: list[str] = []

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        self.request_ids.append(request.request_id)
        reply: game_service_pb2.SubmitActionResponse = await self._stub.SubmitAction(
            request, **kwargs
        )
        if len(self.request_ids) == 1:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "lost", None
            )
        return reply


def test_submit_retries_the_same_request_id_and_applies_once(
    stack: Stack,  # noqa: F811
    table: Table,
) -> None:
    async def main() -> None:
        client, view = await to_act(stack, table)
        async with client:
            flaky = LosesTheFirstAnswer(client._game)
            client._game = flaky  # type: ignore[assignment]
            reply = await client.submit(table.game, HeuristicPolicy(2).choose(view), etag=view.etag)
            assert len(flaky.request_ids) == 2
            assert flaky.request_ids[0] == flaky.request_ids[1] != ""
            assert int(reply.game.etag) == int(view.etag) + 1  # applied once
            assert (await client.get_game(table.game)).etag == reply.game.etag

    asyncio.run(main())


def test_a_stale_etag_raises_stale_view_with_the_current_view(
    stack: Stack,  # noqa: F811
    table: Table,
) -> None:
    async def main() -> None:
        client, view = await to_act(stack, table)
        async with client:
            stale = str(int(view.etag) - 1)
            with pytest.raises(StaleView) as raised:
                await client.submit(table.game, HeuristicPolicy(3).choose(view), etag=stale)
            assert raised.value.code == grpc.StatusCode.ABORTED
            assert raised.value.reason == "STALE_ETAG"
            assert raised.value.view.etag == view.etag  # nothing was applied

    asyncio.run(main())


def test_errors_carry_their_reason(stack: Stack, table: Table) -> None:  # noqa: F811
    async def main() -> None:
        client, view = await to_act(stack, table)
        await client.close()
        other = (view.to_act + 1) % 6
        async with client_of(stack, table.tokens[other]) as waiting:
            # A game move (a signal may be sent out of turn, so it would not fail).
            move = next(
                a for a in view.legal_actions if a.WhichOneof("kind") in ("play_card", "call")
            )
            with pytest.raises(TrucError) as raised:
                await waiting.submit(table.game, move)
            assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
            assert raised.value.reason == "NOT_YOUR_TURN"
        async with TrucClient(stack.lobbies[1].address, stack.game.address) as stranger:
            await stranger.sign_in_guest("stranger")
            with pytest.raises(TrucError) as raised:
                await stranger.get_game(table.game)
            assert raised.value.code == grpc.StatusCode.PERMISSION_DENIED
            assert raised.value.reason == "NOT_SEATED"
            with pytest.raises(TrucError) as raised:
                await stranger.get_ticket(table.tickets[0])
            assert raised.value.reason == "NOT_ON_TICKET"
            ticket = await stranger.queue()
            assert (await stranger.cancel(ticket.name)).state == lobby_pb2.TICKET_STATE_CANCELLED
            with pytest.raises(TicketClosed):
                await stranger.wait_until_seated(ticket.name, timeout=5)
        async with TrucClient(stack.lobbies[0].address, stack.game.address) as anonymous:
            with pytest.raises(TrucError) as raised:
                await anonymous.queue()
            assert raised.value.reason == "TOKEN_MISSING"

    asyncio.run(main())
