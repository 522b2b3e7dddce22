"""SSE without the long-lived token in the URL (issue 14): a streaming route's
``?access_token=`` must be a stream token (claim ``scope: stream``, a lifetime of
at most 300 s), else 401 TOKEN_IN_URL before any call upstream; the
``Authorization`` header works on every route. First against a real gRPC
server that records what reaches it, then end to end: a stream token from
``POST /v1/streamTokens`` (the lobby's CreateStreamToken) opens a game's and a
ticket's stream."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import jwt

from tests.service.conftest import SECRET, new_players

from .conftest import Gateway, RestStack, call, sse
from .recording import RecordingUpstream
from .test_errors import create_game, run
from .test_errors import token as game_token_of


def _token(**claims: Any) -> str:
    now = int(time.time())
    body = {"sub": "url-player", "iss": "truc-lobby", "aud": "truc-game", "iat": now}
    body["exp"] = now + 60
    body.update(claims)
    return jwt.encode({k: v for k, v in body.items() if v is not None}, SECRET, algorithm="HS256")


def test_a_url_token_must_be_a_stream_token(upstream: RecordingUpstream, direct: Gateway) -> None:
    now = int(time.time())
    refused = {
        "a player token": _token(role="player", exp=now + 3600),
        "a player token of 60 s": _token(role="player"),  # short, but not scoped
        "another scope": _token(scope="everything"),
        "a stream token of 10 min": _token(scope="stream", exp=now + 600),
        "iat in the future": _token(scope="stream", iat=now + 3600, exp=now + 3660),
        "without exp": _token(scope="stream", exp=None),
        "without iat, 10 min": _token(scope="stream", iat=None, exp=now + 600),
        "not a JWT": "not-a-jwt",
    }
    accepted = {
        "a stream token": _token(scope="stream"),
        "5 min exactly": _token(scope="stream", exp=now + 300),
        "without iat": _token(scope="stream", iat=None),
    }

    async def check(session: aiohttp.ClientSession) -> None:
        for route in ("/v1/games/g:watch", "/v1/tickets/t:watch"):
            for why, token in refused.items():
                upstream.clear()
                reply = await call(session, "GET", f"{direct.url}{route}?access_token={token}")
                assert (reply.status, reply.reason) == (401, "TOKEN_IN_URL"), (why, reply.body)
                assert reply.body["code"] == 16
                assert "POST /v1/streamTokens" in reply.body["message"], reply.body
                assert "Authorization header" in reply.body["message"], reply.body
                assert upstream.calls == [], (why, upstream.calls)  # nothing went upstream
            # A header does not make a long-lived token in the URL acceptable.
            both = {"Authorization": "Bearer " + accepted["a stream token"]}
            url = f"{direct.url}{route}?access_token={refused['a player token']}"
            reply = await call(session, "GET", url, headers=both)
            assert (reply.status, reply.reason) == (401, "TOKEN_IN_URL"), reply.body
            twice = f"{direct.url}{route}?access_token=a&access_token=b"
            reply = await call(session, "GET", twice)
            assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), reply.body
            for why, token in accepted.items():
                upstream.clear()
                url = f"{direct.url}{route}?access_token={token}"
                async with session.get(url) as response:
                    assert response.status == 200, (why, await response.text())
                    assert b"event: end" in await response.read()
                [recorded] = upstream.calls
                assert recorded.metadata["authorization"] == "Bearer " + token, why
            # The Authorization header, on a streaming route: any token, as before.
            upstream.clear()
            header = {"Authorization": "Bearer " + refused["a player token"]}
            async with session.get(f"{direct.url}{route}", headers=header) as response:
                assert response.status == 200
            assert upstream.calls[0].metadata["authorization"] == header["Authorization"]

    run(check)


def test_a_stream_token_from_the_lobby_opens_the_watch_streams(rest_stack: RestStack) -> None:
    """End to end: POST /v1/streamTokens, then EventSource-style URLs (no header)."""
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        guest = await call(session, "POST", f"{url}/v1/guests:signIn", {"displayName": "sse"})
        assert guest.status == 200, guest.body
        me, long_lived = guest.body["player"], guest.body["token"]
        issued = await call(session, "POST", f"{url}/v1/streamTokens", token=long_lived)
        assert issued.status == 200, issued.body
        short = issued.body["token"]
        assert jwt.decode(short, options={"verify_signature": False})["scope"] == "stream"
        assert "expireTime" in issued.body

        # A ticket's stream, from the URL alone.
        body = {"options": {"targetScore": 99}}
        created = await call(session, "POST", f"{url}/v1/tickets", body, token=long_lived)
        assert created.status == 200, created.body
        ticket = created.body["ticket"]["name"]
        async with session.get(f"{url}/v1/{ticket}:watch?access_token={short}") as response:
            assert response.status == 200, await response.text()
            first = await asyncio.wait_for(response.content.readline(), 10)
            assert first.startswith(b"data: ") and b"TICKET_STATE_QUEUED" in first, first
        # The long-lived token in the same URL: refused at the gateway.
        async with session.get(f"{url}/v1/{ticket}:watch?access_token={long_lived}") as refused:
            assert refused.status == 401, refused.headers  # (a 200 is a stream: not read)
            assert (await refused.json())["details"][0]["reason"] == "TOKEN_IN_URL"
        await call(session, "POST", f"{url}/v1/{ticket}:cancel", token=long_lived)

        # A game's stream, the guest seated in it.
        players = [me, *new_players()[1:]]
        name = await create_game(session, url, players)
        watch = f"{url}/v1/{name}:watch?access_token={short}&after_version=0"
        async with session.get(watch) as response:
            assert response.status == 200, await response.text()
            assert await asyncio.wait_for(response.content.readline(), 10) == b"id: 1\n"
        # The Authorization header on the same route works as before.
        game_token = game_token_of(me)
        async with sse(session, f"{url}/v1/{name}:watch", token=game_token) as stream:
            async for event in stream:
                assert event.id == "1", event
                break

    run(check)


def test_a_spectator_grant_may_watch_its_own_game_from_the_url(
    upstream: RecordingUpstream, direct: Gateway
) -> None:
    """A spectator grant (role spectator, claim game; hours long) in the URL of
    that game's watch stream only; anywhere else it is a long-lived token."""
    now = int(time.time())
    grant = _token(role="spectator", game="games/g", exp=now + 4 * 3600)
    refused = {
        "/v1/games/g:watch": {
            "a grant for another game": _token(role="spectator", game="games/h", exp=now + 3600),
            "a spectator token without game": _token(role="spectator", exp=now + 3600),
            "a grant without exp": _token(role="spectator", game="games/g", exp=None),
            "a player token naming the game": _token(role="player", game="games/g", exp=now + 3600),
        },
        "/v1/tickets/g:watch": {"the grant on a ticket's stream": grant},
    }

    async def check(session: aiohttp.ClientSession) -> None:
        upstream.clear()
        async with session.get(f"{direct.url}/v1/games/g:watch?access_token={grant}") as response:
            assert response.status == 200, await response.text()
            assert b"event: end" in await response.read()
        [recorded] = upstream.calls
        assert recorded.method == "/truc.v1.GameService/WatchGame"
        assert recorded.metadata["authorization"] == "Bearer " + grant
        for route, tokens in refused.items():
            for why, token in tokens.items():
                upstream.clear()
                reply = await call(session, "GET", f"{direct.url}{route}?access_token={token}")
                assert (reply.status, reply.reason) == (401, "TOKEN_IN_URL"), (why, reply.body)
                assert upstream.calls == [], why
        reply = await call(session, "GET", f"{direct.url}/v1/games/h:watch?access_token={grant}")
        assert "POST /v1/games/{game}:spectate" in reply.body["message"], reply.body
        assert "for another game, not games/h" in reply.body["message"], reply.body
        # A non-streaming route takes no URL token at all, a grant neither.
        reply = await call(session, "GET", f"{direct.url}/v1/games/g:replay?access_token={grant}")
        assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), reply.body

    run(check)
