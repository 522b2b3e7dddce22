"""asyncio helpers of the lobby integration tests: guests, tickets, polling.

Every helper talks to the real processes of a :class:`~tests.lobby_service.conftest.Stack`
over real gRPC (``grpc.aio``); nothing is faked.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

import grpc
import redis
from truc.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from tests.service.conftest import error_reason
from truc_lobby.store import FOLLOWED, HEARTBEATS, QUEUE

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub
    from truc.v1.lobby_service_pb2_grpc import LobbyServiceAsyncStub

    from .conftest import Stack

T = TypeVar("T")
Metadata = tuple[tuple[str, str], ...]

QUEUED: Final = lobby_pb2.TICKET_STATE_QUEUED
AWAITING: Final = lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION
MATCHED: Final = lobby_pb2.TICKET_STATE_MATCHED
CANCELLED: Final = lobby_pb2.TICKET_STATE_CANCELLED
EXPIRED: Final = lobby_pb2.TICKET_STATE_EXPIRED

TABLE_COUNTS: Final = ((0, 0, 2), (1, 1, 1), (3, 0, 1), (2, 2, 0), (4, 1, 0), (6, 0, 0))
"""The six table compositions as (solos, pairs, parties of three): 3|3, 3|2+1,
3|1+1+1, 2+1|2+1, 2+1|1+1+1 and 1+1+1|1+1+1."""

_OPTION_SERIAL = itertools.count()


def unique_options() -> game_pb2.RuleOptions:
    """Rule options no other call in this test session returns, so that the
    tickets of one test only ever match each other (tickets match only tickets
    asking for exactly the same options)."""
    n = next(_OPTION_SERIAL)
    return game_pb2.RuleOptions(target_score=26 + n % 224, manches_to_win=1 + (n // 224) % 9)


def purge_lobby_queue(redis_url: str) -> None:
    """Drop queue entries other test modules may have left in the shared Redis
    (their tickets can then never match ours)."""
    client = redis.Redis.from_url(redis_url)
    try:
        client.delete(QUEUE, HEARTBEATS, FOLLOWED)
    finally:
        client.close()


def can_form_table(solos: int, pairs: int, triples: int) -> bool:
    """Whether tickets of these party sizes (one options group) hold a full table."""
    return any(solos >= s and pairs >= p and triples >= t for s, p, t in TABLE_COUNTS)


@dataclass(frozen=True, slots=True)
class Guest:
    player: str
    token: str

    @property
    def metadata(self) -> Metadata:
        return (("authorization", "Bearer " + self.token),)


class AioStack:
    """asyncio channels to a stack's two lobby replicas and its game service.
    Create it inside the running event loop; close it with :meth:`close`.

    A ticket takes part in matching only while it is followed (the lobby's
    presence check), so :meth:`create` and :meth:`party_ticket` follow the
    ticket they create, as real clients do (a WatchTicket stream in the
    background until the ticket closes or the stack is closed), unless told
    ``follow=False``."""

    def __init__(self, stack: Stack) -> None:
        self._channels = [grpc.aio.insecure_channel(r.address) for r in stack.lobbies]
        self._lobbies: list[LobbyServiceAsyncStub] = [
            lobby_service_pb2_grpc.LobbyServiceStub(c) for c in self._channels
        ]
        self._game_channel = grpc.aio.insecure_channel(stack.game.address)
        self.game: GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(self._game_channel)
        self._following: set[asyncio.Task[None]] = set()

    def lobby(self, index: int = 0) -> LobbyServiceAsyncStub:
        """Replica ``index`` (modulo the number of replicas)."""
        return self._lobbies[index % len(self._lobbies)]

    async def close(self) -> None:
        for task in self._following:
            task.cancel()
        await asyncio.gather(*self._following, return_exceptions=True)
        for channel in (*self._channels, self._game_channel):
            await channel.close(None)

    def follow(self, guest: Guest, name: str, index: int = 0) -> asyncio.Task[None]:
        """Follow ticket ``name`` as ``guest`` (a WatchTicket stream on replica
        ``index``) until it closes, the task is cancelled or the stack closed."""

        async def watch() -> None:
            with contextlib.suppress(grpc.aio.AioRpcError):
                async for _ in self.lobby(index).WatchTicket(
                    lobby_service_pb2.WatchTicketRequest(name=name), metadata=guest.metadata
                ):
                    pass

        task = asyncio.create_task(watch(), name=f"follow {name}")
        self._following.add(task)
        task.add_done_callback(self._following.discard)
        return task

    async def sign_in(self, name: str = "p", index: int = 0) -> Guest:
        reply = await self.lobby(index).SignInGuest(
            lobby_service_pb2.SignInGuestRequest(display_name=name), timeout=10
        )
        return Guest(reply.player, reply.token)

    async def create(
        self,
        guest: Guest,
        party: Sequence[Guest] = (),
        options: game_pb2.RuleOptions | None = None,
        index: int = 0,
        *,
        follow: bool = True,
    ) -> lobby_pb2.Ticket:
        request = lobby_service_pb2.CreateTicketRequest(
            party=[g.player for g in party], options=options
        )
        reply = await self.lobby(index).CreateTicket(request, metadata=guest.metadata, timeout=10)
        if follow:
            self.follow(guest, reply.ticket.name, index)
        return reply.ticket

    async def confirm(self, guest: Guest, name: str, index: int = 0) -> lobby_pb2.Ticket:
        reply = await self.lobby(index).ConfirmTicket(
            lobby_service_pb2.ConfirmTicketRequest(name=name), metadata=guest.metadata, timeout=10
        )
        return reply.ticket

    async def get(self, guest: Guest, name: str, index: int = 0) -> lobby_pb2.Ticket:
        reply = await self.lobby(index).GetTicket(
            lobby_service_pb2.GetTicketRequest(name=name), metadata=guest.metadata, timeout=10
        )
        return reply.ticket

    async def cancel(self, guest: Guest, name: str, index: int = 0) -> lobby_pb2.Ticket:
        reply = await self.lobby(index).CancelTicket(
            lobby_service_pb2.CancelTicketRequest(name=name), metadata=guest.metadata, timeout=10
        )
        return reply.ticket

    async def party_ticket(
        self,
        members: Sequence[Guest],
        options: game_pb2.RuleOptions | None = None,
        index: int = 0,
        *,
        follow: bool = True,
    ) -> lobby_pb2.Ticket:
        """The first member creates the ticket (and follows it), the others
        confirm it (alternating replicas); the ticket as its last confirmation
        returned it."""
        ticket = await self.create(members[0], members[1:], options, index, follow=follow)
        for offset, member in enumerate(members[1:], start=1):
            ticket = await self.confirm(member, ticket.name, index + offset)
        return ticket

    async def get_game(self, token: str, name: str) -> game_pb2.GameView:
        reply = await self.game.GetGame(
            game_service_pb2.GetGameRequest(name=name),
            metadata=(("authorization", "Bearer " + token),),
            timeout=10,
        )
        return reply.game

    async def wait_state(
        self,
        guest: Guest,
        name: str,
        states: Iterable[int],
        *,
        timeout: float,
        interval: float = 0.05,
    ) -> lobby_pb2.Ticket:
        """Poll GetTicket until the ticket is in one of ``states``."""
        wanted = set(states)
        deadline = time.monotonic() + timeout
        while True:
            ticket = await self.get(guest, name)
            if ticket.state in wanted:
                return ticket
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} still {ticket.state} after {timeout} s: {ticket}")
            await asyncio.sleep(interval)


async def bounded_gather(calls: Iterable[Callable[[], Awaitable[T]]], limit: int = 32) -> list[T]:
    """Run the calls concurrently, at most ``limit`` at a time; results in order."""
    semaphore = asyncio.Semaphore(limit)

    async def run(call: Callable[[], Awaitable[T]]) -> T:
        async with semaphore:
            return await call()

    return list(await asyncio.gather(*(run(c) for c in calls)))


async def expect_aio_error(
    call: Awaitable[object], code: grpc.StatusCode, reason: str | None = None
) -> grpc.aio.AioRpcError:
    """Await ``call``; it must fail with ``code`` (and ErrorInfo ``reason``, if given)."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        assert error.code() == code, f"expected {code}, got {error.code()}: {error.details()}"
        if reason is not None:
            assert error_reason(error) == reason, error.details()
        return error
    raise AssertionError(f"the call succeeded; expected {code} {reason or ''}")


def team_of(seat: int) -> int:
    """The team of a seat: A for seats 0, 2, 4 and B for 1, 3, 5."""
    return game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B
