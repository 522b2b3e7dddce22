"""Limits at the gateway (issue 14): SSE streams and WebSockets open at once per
client address on a replica (``TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS``), past
which a new one is 429 RATE_LIMITED with ``Retry-After`` before any call; and
every RESOURCE_EXHAUSTED from upstream is 429 with ``Retry-After`` (seconds,
rounded up) from its ``retry_after_ms`` or its ``google.rpc.RetryInfo``. Real
Redis, game service, lobby and gateway processes (and a recording gRPC server
for statuses a service cannot be made to send)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from tests.service.conftest import Replica, new_players

from .conftest import Gateway, RestStack, call
from .recording import RecordingUpstream
from .test_errors import create_game, run, token

LIMIT = 2


@pytest.fixture(scope="module")
def limited(rest_stack: RestStack) -> Iterator[Gateway]:
    """A gateway allowing two streams per client address; loopback is a trusted
    proxy, so that X-Forwarded-For gives the test other addresses."""
    gateway = Gateway(
        rest_stack.services.game.address,
        rest_stack.services.lobbies[0].address,
        TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS=str(LIMIT),
        TRUC_GATEWAY_TRUSTED_PROXIES="127.0.0.1",
    )
    yield gateway
    code = gateway.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


@contextlib.asynccontextmanager
async def _watching(
    session: aiohttp.ClientSession, url: str, player: str, address: str | None = None
) -> AsyncIterator[aiohttp.ClientResponse]:
    headers = {"Authorization": "Bearer " + token(player)}
    if address is not None:
        headers["X-Forwarded-For"] = address
    async with session.get(url, headers=headers) as response:
        if response.status == 200:
            await asyncio.wait_for(response.content.readline(), 10)  # the stream is open
        yield response


def test_streams_per_client_address_are_limited(rest_stack: RestStack, limited: Gateway) -> None:
    async def check(session: aiohttp.ClientSession) -> None:
        players = new_players()
        name = await create_game(session, limited.url, players)
        watch = f"{limited.url}/v1/{name}:watch"
        async with contextlib.AsyncExitStack() as held:
            for seat in range(LIMIT):
                opened = await held.enter_async_context(_watching(session, watch, players[seat]))
                assert opened.status == 200, await opened.text()
            async with _watching(session, watch, players[LIMIT]) as over:
                assert over.status == 429, over.headers  # (a 200 is a stream: never read whole)
                assert over.headers["Retry-After"] == "1"
                body = await over.json()
                assert body["code"] == 8 and "streams" in body["message"], body
                assert body["details"][0]["reason"] == "RATE_LIMITED", body
            # A WebSocket counts as a stream: refused before the upgrade.
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(
                    f"{limited.url}/v1/{name}:play",
                    headers={"Authorization": "Bearer " + token(players[0])},
                )
            assert refused.value.status == 429
            # Another address has its own allowance.
            async with _watching(session, watch, players[4], "203.0.113.5") as other:
                assert other.status == 200
            # An IPv6 client counts by its /64: walking its own addresses gains nothing.
            for host in range(1, LIMIT + 1):
                ipv6 = await held.enter_async_context(
                    _watching(session, watch, players[host], f"2001:db8:0:1::{host}")
                )
                assert ipv6.status == 200
            async with _watching(session, watch, players[5], "2001:db8:0:1::99") as same:
                assert same.status == 429, same.headers
            async with _watching(session, watch, players[5], "2001:db8:0:2::1") as block:
                assert block.status == 200
        # Closed streams are given back.
        deadline = time.monotonic() + 10
        while True:
            async with _watching(session, watch, players[5]) as again:
                if again.status == 200 or time.monotonic() > deadline:
                    assert again.status == 200, await again.text()
                    break
            await asyncio.sleep(0.1)

    run(check)


def test_an_upstream_rate_limit_is_429_with_retry_after(rest_stack: RestStack) -> None:
    """The game service's own limit (TRUC_RATE_SIGNALS=1 per minute), over REST."""
    game = Replica(
        rest_stack.services.redis_url, TRUC_RATE_SIGNALS="1", TRUC_RATE_WINDOW_MS="60000"
    )
    try:
        gateway = Gateway(game.address, rest_stack.services.lobbies[0].address)
    except BaseException:
        game.stop()
        raise
    try:

        async def check(session: aiohttp.ClientSession) -> None:
            players = new_players()
            name = await create_game(session, gateway.url, players)
            act = f"{gateway.url}/v1/{name}:submitAction"
            captain = token(players[0])
            replies = []
            for directive in ("DIRECTIVE_PLAY_HIGH", "DIRECTIVE_PLAY_LOW"):
                body = {"action": {"directive": directive}, "requestId": uuid.uuid4().hex}
                replies.append(await call(session, "POST", act, body, token=captain))
            assert replies[0].status == 200, replies[0].body
            limited = replies[1]
            assert (limited.status, limited.reason) == (429, "RATE_LIMITED"), limited.body
            wait_ms = int(limited.body["details"][0]["metadata"]["retry_after_ms"])
            assert 0 < wait_ms <= 60_000
            assert limited.headers["Retry-After"] == str(-(-wait_ms // 1000)), limited.headers

        run(check)
    finally:
        gateway.stop()
        game.stop()


def _exhausted(*details: error_details_pb2.RetryInfo) -> status_pb2.Status:
    packed = []
    for detail in details:
        entry = any_pb2.Any()
        entry.Pack(detail)
        packed.append(entry)
    return status_pb2.Status(code=8, message="exhausted", details=packed)


def test_retry_info_alone_gives_retry_after(upstream: RecordingUpstream, direct: Gateway) -> None:
    """A RESOURCE_EXHAUSTED with only a google.rpc.RetryInfo (2.5 s): Retry-After 3;
    with no delay at all: Retry-After 1 (every 429 says when to come back)."""
    delay = error_details_pb2.RetryInfo()
    delay.retry_delay.FromMilliseconds(2500)

    async def check(session: aiohttp.ClientSession) -> None:
        for status, expected in ((_exhausted(delay), "3"), (_exhausted(), "1")):
            upstream.refusal = status
            try:
                reply = await call(session, "GET", f"{direct.url}/v1/games/g", token="t")
            finally:
                upstream.refusal = None
            assert reply.status == 429, reply.body
            assert reply.headers["Retry-After"] == expected, (reply.headers, reply.body)

    run(check)
