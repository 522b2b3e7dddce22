"""Errors over HTTP: the services' reasons keep their ErrorInfo and get the HTTP
status of their gRPC code; the gateway's own refusals (malformed JSON, unknown
fields, size, route, method, media type, CORS) are clear 4xx JSON errors."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp

from tests.service.conftest import SECRET, TRUC_REFUSED_DEAL, new_players
from truc_protocol.tokens import STREAM_SCOPE
from truc_service.tokens import issue_token

from .conftest import FRONT, MAX_BODY, Reply, RestStack, call, sse

LOBBY_TOKEN = issue_token(SECRET, "the-lobby", role="lobby", ttl_seconds=600)


def token(player: str) -> str:
    return issue_token(SECRET, player, ttl_seconds=600)


def run(check: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def go() -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            await check(session)

    asyncio.run(go())


def deal() -> list[dict[str, Any]]:
    ranks, suits = "1234567JNK", ("Sw", "Cl", "Co", "Cu")
    suit_names = ("SUIT_SWORDS", "SUIT_CLUBS", "SUIT_COINS", "SUIT_CUPS")
    rank_names = ("ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "JACK", "KNIGHT", "KING")

    def card(text: str) -> dict[str, str]:
        return {
            "suit": suit_names[suits.index(text[-2:])],
            "rank": "RANK_" + rank_names[ranks.index(text[:-2])],
        }

    return [{"hands": [{"cards": [card(c) for c in hand]} for hand in TRUC_REFUSED_DEAL]}]


async def create_game(session: aiohttp.ClientSession, url: str, players: list[str]) -> str:
    """CreateGame over REST with a lobby token: seat 0 is to act first."""
    created = await call(
        session,
        "POST",
        f"{url}/v1/games",
        {"players": players, "dealer": 5, "fixedDeals": deal()},
        token=LOBBY_TOKEN,
    )
    assert created.status == 200, created.body
    return str(created.body["name"])


def test_service_errors_keep_their_reason_and_get_the_http_status(rest_stack: RestStack) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        players = new_players()
        name = await create_game(session, url, players)
        got = await call(session, "GET", f"{url}/v1/{name}", token=token(players[0]))
        assert got.status == 200 and got.body["game"]["toAct"] == 0, got.body
        assert got.body["game"]["seat"] == 0  # zero values are present, not omitted

        bad = await call(session, "GET", f"{url}/v1/{name}", token="not-a-jwt")
        assert (bad.status, bad.reason) == (401, "TOKEN_INVALID"), bad.body
        assert bad.body["code"] == 16 and bad.body["details"][0]["domain"] == "truc.v1"
        missing = await call(session, "GET", f"{url}/v1/{name}")
        assert (missing.status, missing.reason) == (401, "TOKEN_MISSING")
        stranger = await call(session, "GET", f"{url}/v1/{name}", token=token("stranger"))
        assert (stranger.status, stranger.reason) == (403, "NOT_SEATED")
        nobody = await call(session, "GET", f"{url}/v1/games/no-such", token=token(players[0]))
        assert (nobody.status, nobody.reason) == (404, "GAME_NOT_FOUND")
        lobby_only = await call(
            session, "POST", f"{url}/v1/games", {"players": players}, token=token(players[0])
        )
        assert (lobby_only.status, lobby_only.reason) == (403, "LOBBY_ONLY")

        act = f"{url}/v1/{name}:submitAction"
        pass_ = {"action": {"call": "CALL_PASS"}}
        turn = await call(session, "POST", act, pass_, token=token(players[1]))
        assert (turn.status, turn.reason) == (400, "NOT_YOUR_TURN"), turn.body
        stale = await call(session, "POST", act, {**pass_, "etag": "999"}, token=token(players[0]))
        assert (stale.status, stale.reason) == (409, "STALE_ETAG"), stale.body
        played = await call(
            session,
            "POST",
            act,
            {
                "action": {"playCard": {"suit": "SUIT_SWORDS", "rank": "RANK_FIVE"}},
                "requestId": uuid.uuid4().hex,
                "responseView": "RESPONSE_VIEW_MINIMAL",
            },
            token=token(players[0]),
        )
        assert played.status == 200, played.body
        assert played.body["game"]["toAct"] == 1
        assert played.body["events"], played.body

    run(check)


def test_malformed_requests_are_400_with_reason_bad_request(rest_stack: RestStack) -> None:
    url = rest_stack.url
    me = token("someone")

    async def check(session: aiohttp.ClientSession) -> None:
        tickets = f"{url}/v1/tickets"
        json_type = {"Content-Type": "application/json"}
        cases: list[Reply] = [
            await call(session, "POST", tickets, raw=b"{not json", token=me, headers=json_type),
            await call(session, "POST", tickets, raw=b"[1, 2]", token=me, headers=json_type),
            await call(session, "POST", tickets, raw=b"\xff\xfe", token=me, headers=json_type),
            await call(session, "POST", tickets, {"bogus": 1}, token=me),
            await call(session, "POST", tickets, {"options": {"targetScore": "x"}}, token=me),
            await call(session, "POST", tickets, {"party": "not-a-list"}, token=me),
            await call(session, "GET", f"{url}/v1/games/g:watch?after_version=x", token=me),
            await call(session, "GET", f"{url}/v1/games/g:watch?nope=1", token=me),
            await call(session, "GET", f"{url}/v1/games/g?access_token=abc", token=me),
            await call(
                session,
                "GET",
                f"{url}/v1/games/g:watch",
                token=me,
                headers={"Last-Event-ID": "seven"},
            ),
        ]
        for reply in cases:
            assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), reply.body
            assert reply.body["code"] == 3 and reply.body["message"]

        unknown = await call(session, "GET", f"{url}/v1/nothing/here")
        assert (unknown.status, unknown.reason) == (404, "ROUTE_NOT_FOUND")
        wrong = await call(session, "DELETE", f"{url}/v1/tickets/t-1")
        assert (wrong.status, wrong.reason) == (405, "METHOD_NOT_ALLOWED")
        assert wrong.headers["Allow"] == "GET, OPTIONS"
        form = await call(
            session,
            "POST",
            tickets,
            raw=b"a=1",
            token=me,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert (form.status, form.reason) == (415, "UNSUPPORTED_MEDIA_TYPE")
        big = await call(session, "POST", tickets, {"party": ["x" * MAX_BODY]}, token=me)
        assert (big.status, big.reason) == (413, "BODY_TOO_LARGE"), big.body

        async def stream() -> AsyncIterator[bytes]:  # no Content-Length: chunked
            yield b'{"party": ["'
            for _ in range(MAX_BODY // 100 + 1):
                yield b"x" * 100
            yield b'"]}'

        async with session.post(
            tickets,
            data=stream(),
            headers={"Authorization": "Bearer " + me, "Content-Type": "application/json"},
        ) as response:
            assert response.status == 413
            assert "BODY_TOO_LARGE" in await response.text()

    run(check)


def test_cors_preflight_and_headers_for_the_allowed_origin_only(rest_stack: RestStack) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        preflight = {"Origin": FRONT, "Access-Control-Request-Method": "POST"}
        allowed = await call(
            session, "OPTIONS", f"{url}/v1/games/g:submitAction", headers=preflight
        )
        assert allowed.status == 204
        assert allowed.headers["Access-Control-Allow-Origin"] == FRONT
        assert "POST" in allowed.headers["Access-Control-Allow-Methods"]
        assert "Authorization" in allowed.headers["Access-Control-Allow-Headers"]
        assert "Last-Event-ID" in allowed.headers["Access-Control-Allow-Headers"]
        other = {**preflight, "Origin": "http://evil.example"}
        refused = await call(session, "OPTIONS", f"{url}/v1/games/g:submitAction", headers=other)
        assert (refused.status, refused.reason) == (403, "ORIGIN_NOT_ALLOWED")
        assert "Access-Control-Allow-Origin" not in refused.headers
        # Actual answers, errors and SSE streams alike, carry the header for the front.
        answer = await call(session, "GET", f"{url}/v1/games/g", headers={"Origin": FRONT})
        assert answer.status == 401
        assert answer.headers["Access-Control-Allow-Origin"] == FRONT
        assert "Retry-After" in answer.headers["Access-Control-Expose-Headers"]
        foreign = await call(session, "GET", f"{url}/v1/games/g", headers={"Origin": "http://x.y"})
        assert "Access-Control-Allow-Origin" not in foreign.headers

    run(check)


def test_sse_errors_before_the_stream_are_json_and_the_stream_ends_cleanly(
    rest_stack: RestStack,
) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        players = new_players()
        name = await create_game(session, url, players)
        missing = await call(session, "GET", f"{url}/v1/games/no-such:watch", token=token("p"))
        assert (missing.status, missing.reason) == (404, "GAME_NOT_FOUND")
        assert missing.headers["Content-Type"].startswith("application/json")

        # A stream token in the query (EventSource cannot set headers); heartbeats while idle.
        short = issue_token(SECRET, players[2], ttl_seconds=60, scope=STREAM_SCOPE)
        watch = f"{url}/v1/{name}:watch?access_token={short}&after_version=1"
        async with session.get(watch, headers={"Origin": FRONT}) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/event-stream")
            assert response.headers["Access-Control-Allow-Origin"] == FRONT
            heartbeat = await asyncio.wait_for(response.content.readline(), 5)
            assert heartbeat == b": heartbeat\n"

        # A ticket's stream ends with `end` once the ticket is closed.
        guest = await call(session, "POST", f"{url}/v1/guests:signIn", {"displayName": "c"})
        me = guest.body["token"]
        created = await call(
            session, "POST", f"{url}/v1/tickets", {"options": {"targetScore": 99}}, token=me
        )
        ticket = created.body["ticket"]["name"]
        seen: list[str] = []
        async with sse(session, f"{url}/v1/{ticket}:watch", token=me) as stream:
            async for event in stream:
                if event.event == "end":
                    break
                seen.append(event.data["ticket"]["state"])
                if len(seen) == 1:
                    cancel = await call(session, "POST", f"{url}/v1/{ticket}:cancel", token=me)
                    assert cancel.status == 200, cancel.body
        assert seen == ["TICKET_STATE_QUEUED", "TICKET_STATE_CANCELLED"]

    run(check)
