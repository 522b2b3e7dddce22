"""The client's address, forwarded (issue 14): every call the gateway makes
carries ``x-truc-client-address``: the HTTP peer's address, or, from a trusted
proxy (``TRUC_GATEWAY_TRUSTED_PROXIES``), the rightmost ``X-Forwarded-For``
entry that is not a trusted proxy; a client's own ``x-truc-client-address`` is
never passed on. A real gateway process in front of a real gRPC server that
records what reaches it (:mod:`tests.gateway.recording`)."""

from __future__ import annotations

import json

import aiohttp

from tests.service.conftest import SECRET, Replica
from truc_dev_redis import RedisServer
from truc_service.tokens import issue_token

from .conftest import Gateway, Reply, RestStack, call
from .recording import RecordingUpstream
from .test_errors import run

ADDRESS = "x-truc-client-address"
TRUSTING = {"TRUC_GATEWAY_TRUSTED_PROXIES": "127.0.0.1"}


async def _sign_in_address(
    session: aiohttp.ClientSession,
    upstream: RecordingUpstream,
    gateway: Gateway,
    headers: dict[str, str],
) -> str:
    """The address the upstream got with one sign-in sent with ``headers``."""
    upstream.clear()
    reply = await call(
        session, "POST", f"{gateway.url}/v1/guests:signIn", {"displayName": "a"}, headers=headers
    )
    assert reply.status == 200, reply.body
    [recorded] = upstream.recorded("/SignInGuest")
    return recorded.metadata[ADDRESS]


def test_the_peer_is_the_client_unless_it_is_a_trusted_proxy(
    upstream: RecordingUpstream, direct: Gateway, proxied: Gateway
) -> None:
    async def check(session: aiohttp.ClientSession) -> None:
        forged = {"X-Forwarded-For": "203.0.113.9", ADDRESS: "198.51.100.66"}
        # Not behind a trusted proxy: X-Forwarded-For is anyone's to write; ignored.
        assert await _sign_in_address(session, upstream, direct, {}) == "127.0.0.1"
        assert await _sign_in_address(session, upstream, direct, forged) == "127.0.0.1"
        # Behind trusted proxies: the rightmost entry that is not one of them.
        cases = {
            "": "127.0.0.1",  # no header: the peer
            "203.0.113.9": "203.0.113.9",
            "198.51.100.1, 203.0.113.9, 10.1.2.3": "203.0.113.9",  # the left is the client's
            "203.0.113.9:5555, 10.1.2.3": "203.0.113.9",  # a port a proxy added
            "[2001:db8::1]:80": "2001:db8::1",
            "::ffff:203.0.113.7": "203.0.113.7",
            "10.0.0.5, 10.0.0.6": "10.0.0.5",  # all trusted: the leftmost
            "203.0.113.9, unknown": "127.0.0.1",  # not an address: the hop that wrote it
        }
        for forwarded, expected in cases.items():
            headers = {"X-Forwarded-For": forwarded} if forwarded else {}
            headers[ADDRESS] = "198.51.100.66"  # never passed on
            got = await _sign_in_address(session, upstream, proxied, headers)
            assert got == expected, (forwarded, got)
        # Two X-Forwarded-For headers are one list, in order.
        upstream.clear()
        async with session.post(
            f"{proxied.url}/v1/guests:signIn",
            json={"displayName": "b"},
            headers=[("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-For", "10.9.9.9")],
        ) as response:
            assert response.status == 200
        assert upstream.recorded("/SignInGuest")[0].metadata[ADDRESS] == "198.51.100.1"

    run(check)


def test_every_kind_of_call_carries_the_address(
    upstream: RecordingUpstream, proxied: Gateway
) -> None:
    token = issue_token(SECRET, "address-player", ttl_seconds=600)
    forwarded = {"X-Forwarded-For": "203.0.113.40", "Authorization": "Bearer " + token}

    async def check(session: aiohttp.ClientSession) -> None:
        upstream.clear()
        unary = await call(session, "GET", f"{proxied.url}/v1/games/g", headers=forwarded)
        assert unary.status == 200, unary.body
        async with session.get(f"{proxied.url}/v1/games/g:watch", headers=forwarded) as response:
            assert response.status == 200
            assert b"event: end" in await response.read()
        async with session.ws_connect(f"{proxied.url}/v1/games/g:play", headers=forwarded) as ws:
            await ws.send_str(json.dumps({"open": {"afterVersion": "0"}}))
            await ws.receive(timeout=10)
        for method in ("/GetGame", "/WatchGame", "/Play"):
            [recorded] = upstream.recorded(method)
            assert recorded.metadata[ADDRESS] == "203.0.113.40", (method, recorded)
            assert recorded.metadata["authorization"] == "Bearer " + token

    run(check)


def test_the_lobby_counts_guest_sign_ins_by_the_forwarded_address(rest_stack: RestStack) -> None:
    """A real lobby (TRUC_GUEST_SIGNINS_PER_ADDRESS=2) behind two gateways: one
    behind a trusted proxy (loopback), whose X-Forwarded-For gives each client
    its own allowance, and one trusting no proxy, where X-Forwarded-For changes
    nothing: every sign-in through it is the peer's."""
    with RedisServer() as redis:  # a Redis of its own: the counts are this test's alone
        lobby = Replica(
            redis.url,
            module="truc_lobby",
            TRUC_LOBBY_PORT="0",
            TRUC_GAME_ADDRESS=rest_stack.services.game.address,
            TRUC_GUEST_SIGNINS_PER_ADDRESS="2",
        )
        gateways: list[Gateway] = []
        try:
            gateways.append(Gateway("127.0.0.1:1", lobby.address, **TRUSTING))
            gateways.append(Gateway("127.0.0.1:1", lobby.address))
            trusting, plain = gateways

            async def check(session: aiohttp.ClientSession) -> None:
                async def sign_in(gateway: Gateway, forwarded: str) -> Reply:
                    return await call(
                        session,
                        "POST",
                        f"{gateway.url}/v1/guests:signIn",
                        {"displayName": "g"},
                        headers={"X-Forwarded-For": forwarded, ADDRESS: "192.0.2.1"},
                    )

                statuses = [(await sign_in(trusting, "203.0.113.1")).status for _ in range(2)]
                assert statuses == [200, 200]
                over = await sign_in(trusting, "203.0.113.1")
                assert (over.status, over.reason) == (429, "RATE_LIMITED"), over.body
                assert int(over.headers["Retry-After"]) >= 1
                other = await sign_in(trusting, "203.0.113.2")  # another client: its own
                assert other.status == 200, other.body
                # Not behind a trusted proxy: all are 127.0.0.1, whatever they claim.
                replies = [await sign_in(plain, f"198.51.100.{i}") for i in range(3)]
                assert [r.status for r in replies] == [200, 200, 429], [r.body for r in replies]

            run(check)
        finally:
            for gateway in gateways:
                gateway.stop()
            lobby.stop()
