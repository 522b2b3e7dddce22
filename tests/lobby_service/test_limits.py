"""The lobby's abuse limits through real processes (issue 14): guest sign-ins per
client address and in total (counted in Redis: both lobby replicas share
them), tickets per player, stream tokens per player, WatchTicket streams per
player; each refusal is RESOURCE_EXHAUSTED ``RATE_LIMITED`` with the wait in
the ``retry_after_ms`` metadata and a ``google.rpc.RetryInfo``.

The client address is the gRPC peer's, unless the peer is trusted
(``TRUC_LOBBY_TRUSTED_PEERS``, loopback by default: the tests' own client) and
names another in ``x-truc-client-address``, as the gateway does."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from functools import partial
from typing import cast

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from truc.v1 import lobby_service_pb2, lobby_service_pb2_grpc

from tests.service.conftest import error_reason, expect_error, trailers
from truc_dev_redis import RedisServer
from truc_protocol.status import STATUS_DETAILS

from .aio_lobby import AioStack, Guest, unique_options
from .conftest import Stack, start_stack

Code = grpc.StatusCode
Lobby = lobby_service_pb2_grpc.LobbyServiceStub

_BLOCK = itertools.count(1)


def fresh_block() -> int:
    """N for addresses 198.18.N.x and 2001:db8:N::x (benchmarking and documentation
    ranges) no other test of the session uses, so their counts never collide."""
    return next(_BLOCK)


def from_address(address: str) -> tuple[tuple[str, str], ...]:
    return (("x-truc-client-address", address),)


def sign_in(lobby: Lobby, address: str | None = None) -> lobby_service_pb2.SignInGuestResponse:
    metadata = from_address(address) if address else ()
    request = lobby_service_pb2.SignInGuestRequest(display_name="g")
    return lobby.SignInGuest(request, metadata=metadata)


def retry_delays(error: grpc.RpcError) -> tuple[int, int]:
    """The refusal's wait, as (the ``retry_after_ms`` trailer, the RetryInfo's ms)."""
    found = trailers(error)
    status = status_pb2.Status.FromString(cast(bytes, found[STATUS_DETAILS]))
    delays = []
    for detail in status.details:
        retry = error_details_pb2.RetryInfo()
        if detail.Is(retry.DESCRIPTOR):
            detail.Unpack(retry)
            delays.append(retry.retry_delay.ToMilliseconds())
    assert len(delays) == 1, status
    return int(cast(str, found["retry_after_ms"])), delays[0]


def expect_rate_limited(error: grpc.RpcError, *, window_ms: int) -> None:
    """``error`` is RESOURCE_EXHAUSTED asking, twice alike, to wait at most the window."""
    assert error.code() == Code.RESOURCE_EXHAUSTED, error.details()
    trailer, retry = retry_delays(error)
    assert 0 < trailer <= window_ms, trailer
    assert abs(trailer - retry) <= 1, (trailer, retry)


def stubs(stack: Stack) -> list[Lobby]:
    return [stack.lobby(0), stack.lobby(1)]


def limited(redis_server: RedisServer, **env: str) -> Iterator[Stack]:
    """A stack (bots off) with the limits ``env`` sets, stopped after its module."""
    started = start_stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0", **env)
    yield started
    started.stop()


# --------------------------------------------------------------------------- sign-ins


@pytest.fixture(scope="module")
def per_address(redis_server: RedisServer) -> Iterator[Stack]:
    """30 sign-ins per address per minute (the total unlimited)."""
    yield from limited(
        redis_server,
        TRUC_GUEST_SIGNINS_PER_ADDRESS="30",
        TRUC_GUEST_SIGNINS_PER_ADDRESS_WINDOW_SECONDS="60",
    )


def test_the_31st_sign_in_from_an_address_is_refused_with_its_wait(per_address: Stack) -> None:
    lobbies = stubs(per_address)
    block = fresh_block()
    address = f"198.18.{block}.7"
    players = {sign_in(lobbies[i % 2], address).player for i in range(30)}  # both replicas
    assert len(players) == 30
    for lobby in lobbies:
        error = expect_error(
            partial(sign_in, lobby, address), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
        )
        expect_rate_limited(error, window_ms=60_000)
        assert "guest sign-ins from this address" in (error.details() or "")
    # Another address the trusted gateway forwards for is counted apart.
    assert sign_in(lobbies[0], f"198.18.{block}.8").player
    # IPv6 addresses count by their /64: one subscriber cannot walk through its block.
    v6 = f"2001:db8:{block}:1::"
    for i in range(30):
        sign_in(lobbies[i % 2], f"{v6}{i + 1:x}")
    expect_error(lambda: sign_in(lobbies[0], f"{v6}ffff"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert sign_in(lobbies[1], f"2001:db8:{block}:2::1").player  # the next /64
    # A forwarded value that is not an address is ignored: the call is the peer's own.
    assert sign_in(lobbies[0], "not-an-address").player


@pytest.fixture(scope="module")
def untrusting(redis_server: RedisServer) -> Iterator[Stack]:
    """Only 192.0.2.0/24 may forward: the tests' client (loopback) is not trusted."""
    yield from limited(
        redis_server,
        TRUC_GUEST_SIGNINS_PER_ADDRESS="5",
        TRUC_GUEST_SIGNINS_PER_ADDRESS_WINDOW_SECONDS="60",
        TRUC_LOBBY_TRUSTED_PEERS="192.0.2.0/24",
    )


def test_an_untrusted_peer_cannot_choose_its_address(untrusting: Stack) -> None:
    lobbies = stubs(untrusting)
    block = fresh_block()
    # Each call claims an address of its own; all count as the peer's (127.0.0.1,
    # which earlier tests may have counted already): refused by the sixth at most.
    refused: grpc.RpcError | None = None
    for i in range(6):
        try:
            sign_in(lobbies[i % 2], f"198.18.{block}.{i + 1}")
        except grpc.RpcError as error:
            refused = error
            break
    assert refused is not None, "the claimed addresses were believed"
    assert error_reason(refused) == "RATE_LIMITED"
    expect_rate_limited(refused, window_ms=60_000)
    expect_error(lambda: sign_in(lobbies[1]), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED")


@pytest.fixture(scope="module")
def total(redis_server: RedisServer) -> Iterator[Stack]:
    """12 sign-ins per minute in all (per address unlimited)."""
    yield from limited(
        redis_server, TRUC_GUEST_SIGNINS_TOTAL="12", TRUC_GUEST_SIGNINS_TOTAL_WINDOW_SECONDS="60"
    )


def test_the_total_sign_in_limit_holds_across_two_lobby_replicas(total: Stack) -> None:
    lobbies = stubs(total)
    block = fresh_block()
    for i in range(12):  # every one from another address, on alternating replicas
        sign_in(lobbies[i % 2], f"198.18.{block}.{i + 1}")
    for index, lobby in enumerate(lobbies):
        error = expect_error(
            partial(sign_in, lobby, f"198.18.{block}.{100 + index}"),
            Code.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
        )
        expect_rate_limited(error, window_ms=60_000)
        assert "too many guest sign-ins;" in (error.details() or "")


# --------------------------------------------------------------------------- tickets


@pytest.fixture(scope="module")
def few_tickets(redis_server: RedisServer) -> Iterator[Stack]:
    """Three tickets per player per minute, three stream tokens, two watches."""
    yield from limited(
        redis_server,
        TRUC_TICKETS_PER_PLAYER="3",
        TRUC_TICKETS_PER_PLAYER_WINDOW_SECONDS="60",
        TRUC_STREAM_TOKENS_PER_PLAYER="3",
        TRUC_STREAM_TOKENS_PER_PLAYER_WINDOW_SECONDS="60",
        TRUC_TICKET_WATCHES_PER_PLAYER="2",
    )


def _guest(lobby: Lobby) -> Guest:
    reply = sign_in(lobby)
    return Guest(reply.player, reply.token)


def test_tickets_per_player_are_limited_across_replicas(few_tickets: Stack) -> None:
    lobbies = stubs(few_tickets)
    player, other = _guest(lobbies[0]), _guest(lobbies[1])

    def create(lobby: Lobby, who: Guest) -> str:
        request = lobby_service_pb2.CreateTicketRequest(options=unique_options())
        return str(lobby.CreateTicket(request, metadata=who.metadata).ticket.name)

    def cancel(lobby: Lobby, who: Guest, name: str) -> None:
        lobby.CancelTicket(lobby_service_pb2.CancelTicketRequest(name=name), metadata=who.metadata)

    for i in range(3):  # a create/cancel loop, on alternating replicas
        cancel(lobbies[i % 2], player, create(lobbies[i % 2], player))
    for lobby in lobbies:
        error = expect_error(
            partial(create, lobby, player), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
        )
        expect_rate_limited(error, window_ms=60_000)
        assert "tickets created by this player" in (error.details() or "")
    # A malformed request counts too (and is refused as over the limit first).
    bad = lobby_service_pb2.CreateTicketRequest(party=["not a player id"])
    expect_error(
        lambda: lobbies[0].CreateTicket(bad, metadata=player.metadata),
        Code.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
    )
    # Another player is not affected.
    cancel(lobbies[1], other, create(lobbies[0], other))


def test_stream_tokens_per_player_are_limited(few_tickets: Stack) -> None:
    lobbies = stubs(few_tickets)
    player = _guest(lobbies[0])
    request = lobby_service_pb2.CreateStreamTokenRequest()
    for i in range(3):
        assert lobbies[i % 2].CreateStreamToken(request, metadata=player.metadata).token
    error = expect_error(
        lambda: lobbies[1].CreateStreamToken(request, metadata=player.metadata),
        Code.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
    )
    expect_rate_limited(error, window_ms=60_000)


async def _first(
    stream: grpc.aio.UnaryStreamCall[
        lobby_service_pb2.WatchTicketRequest, lobby_service_pb2.WatchTicketResponse
    ],
) -> str:
    """The name of the ticket a WatchTicket stream sends first."""
    message = await stream.read()
    assert isinstance(message, lobby_service_pb2.WatchTicketResponse), message
    return message.ticket.name


async def _watches(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        player = await aio.sign_in("w")
        ticket = await aio.create(player, options=unique_options(), follow=False)
        request = lobby_service_pb2.WatchTicketRequest(name=ticket.name)
        open_streams = [aio.lobby(0).WatchTicket(request, metadata=player.metadata) for _ in "ab"]
        for stream in open_streams:
            assert await _first(stream) == ticket.name
        third = aio.lobby(0).WatchTicket(request, metadata=player.metadata)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await third.read()
        expect_rate_limited(refused.value, window_ms=60_000)
        # The other replica holds its own count: the limit is per replica.
        elsewhere = aio.lobby(1).WatchTicket(request, metadata=player.metadata)
        assert await _first(elsewhere) == ticket.name
        elsewhere.cancel()
        # A stream that ends gives its place back.
        open_streams[0].cancel()
        await asyncio.sleep(0.3)
        again = aio.lobby(0).WatchTicket(request, metadata=player.metadata)
        assert await _first(again) == ticket.name
        again.cancel()
        open_streams[1].cancel()
        await aio.cancel(player, ticket.name)
    finally:
        await aio.close()


def test_ticket_watches_per_player_are_limited_per_replica(few_tickets: Stack) -> None:
    asyncio.run(_watches(few_tickets))
