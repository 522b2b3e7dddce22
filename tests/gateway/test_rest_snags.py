"""Issue 16's REST snags, over HTTP against real gateway processes: a resource
name pasted after its collection (``/v1/games/games/g``) says which path was
meant; a missing token is explained in HTTP's words (a header, not gRPC
metadata) on REST, SSE and WebSocket routes; the new RPCs (GetReplay,
ListLiveGames, CreateSpectatorGrant) reach the right service; a spectator
grant opens a game's WebSocket session to watch, and acts for nobody."""

from __future__ import annotations

import asyncio
import json
import uuid

import aiohttp

from tests.service.conftest import SECRET
from truc_service.tokens import issue_token

from .conftest import Gateway, RestStack, call
from .recording import RecordingUpstream
from .test_errors import run
from .test_websocket_session import OPEN, TIMEOUT, _session, create_game


def test_a_resource_name_pasted_after_its_collection_names_the_path_meant(
    direct: Gateway, upstream: RecordingUpstream
) -> None:
    doubled = {
        "/v1/games/games/XYZ": "/v1/games/XYZ",
        "/v1/games/games/XYZ:watch": "/v1/games/XYZ:watch",
        "/v1/games/games/XYZ:submitAction": "/v1/games/XYZ:submitAction",
        "/v1/games/games/XYZ:replay": "/v1/games/XYZ:replay",
        "/v1/tickets/tickets/T1:confirm": "/v1/tickets/T1:confirm",
    }

    async def check(session: aiohttp.ClientSession) -> None:
        upstream.clear()
        for path, meant in doubled.items():
            method = "POST" if path.endswith((":submitAction", ":confirm")) else "GET"
            reply = await call(session, method, direct.url + path)
            assert (reply.status, reply.reason) == (404, "BAD_PATH"), (path, reply.body)
            assert reply.body["code"] == 5  # NOT_FOUND
            message = reply.body["message"]
            assert message.endswith(": " + meant), message
            assert "takes the resource's name once" in message and "/v1/{name}" in message
            assert reply.body["details"][0]["metadata"] == {"path": meant}
        assert upstream.calls == []  # refused at the gateway
        # Not a doubled collection, or nothing meant by it: the usual 404.
        for path in ("/v1/games/games/a/b", "/v1/nothing/nothing/x", "/v1/games/tickets/x"):
            reply = await call(session, "GET", direct.url + path)
            assert (reply.status, reply.reason) == (404, "ROUTE_NOT_FOUND"), path
        # A game whose id is "games" is still a game.
        reply = await call(session, "GET", direct.url + "/v1/games/games")
        assert reply.status == 200, reply.body

    run(check)


def test_a_missing_token_is_explained_in_http_words(rest_stack: RestStack) -> None:
    url = rest_stack.url
    expected = "send the header 'Authorization: Bearer <token>'"

    async def check(session: aiohttp.ClientSession) -> None:
        for method, path in (
            ("GET", "/v1/games/no-token"),
            ("GET", "/v1/games/no-token:watch"),  # an SSE route: refused before the stream
            ("GET", "/v1/games"),
            ("POST", "/v1/tickets"),
        ):
            body: dict[str, object] | None = {} if method == "POST" else None
            reply = await call(session, method, url + path, body)
            assert (reply.status, reply.reason) == (401, "TOKEN_MISSING"), (path, reply.body)
            message = reply.body["message"]
            assert message.startswith(expected), (path, message)
            assert "metadata" not in message, (path, message)
        # A WebSocket: the header with the upgrade, or the first frame.
        name = await create_game(session, url, [f"{uuid.uuid4().hex[:8]}-{i}" for i in range(6)])
        closed = await _session(f"{url}/v1/{name}:play", [OPEN])
        assert (closed.code, closed.error_reason) == (4401, "TOKEN_MISSING"), closed
        message = closed.error["message"]
        assert message.startswith(expected) and '{"token": "<token>"}' in message, message
        assert "metadata" not in message, message

    run(check)


def test_the_new_rpcs_reach_their_service(direct: Gateway, upstream: RecordingUpstream) -> None:
    routes = {
        ("GET", "/v1/games/g1:replay?page_size=5&as_spectator=true"): (
            "/truc.v1.GameService/GetReplay"
        ),
        ("GET", "/v1/liveGames?page_size=3&rule_set=RULE_SET_TRUC_Y_FLOU"): (
            "/truc.v1.LobbyService/ListLiveGames"
        ),
        ("POST", "/v1/games/g1:spectate"): "/truc.v1.LobbyService/CreateSpectatorGrant",
        ("GET", "/v1/games/g1"): "/truc.v1.GameService/GetGame",
        ("GET", "/v1/games"): "/truc.v1.LobbyService/ListGames",
    }

    async def check(session: aiohttp.ClientSession) -> None:
        for (method, path), grpc_path in routes.items():
            upstream.clear()
            reply = await call(session, method, direct.url + path, token="t")
            assert reply.status == 200, (path, reply.body)
            assert [c.method for c in upstream.calls] == [grpc_path], path
            assert upstream.calls[0].metadata["authorization"] == "Bearer t"
        # Their parameters are checked as every route's.
        reply = await call(session, "GET", direct.url + "/v1/liveGames?page_size=x", token="t")
        assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), reply.body
        reply = await call(session, "POST", direct.url + "/v1/games/g1:replay", token="t")
        assert (reply.status, reply.reason) == (405, "METHOD_NOT_ALLOWED"), reply.body

    run(check)


def test_a_spectator_grant_watches_a_game_over_a_websocket(rest_stack: RestStack) -> None:
    """A grant (role spectator, claim game) as the first frame of the game's
    :play socket: the spectator's view, and any action refused by the service."""
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        players = [f"{uuid.uuid4().hex[:8]}-{i}" for i in range(6)]
        name = await create_game(session, url, players, turn_seconds=3600)
        grant = issue_token(SECRET, "grant-holder", role="spectator", ttl_seconds=600, game=name)
        async with session.ws_connect(f"{url}/v1/{name}:play") as ws:
            await ws.send_str(json.dumps({"token": grant}))
            await ws.send_str(OPEN)
            first = json.loads((await ws.receive(timeout=20)).data)
            assert first["version"] == "1" and first["game"]["name"] == name, first
            assert "seat" not in first["game"], first  # a spectator's view
            action = {"action": {"action": {"call": "CALL_TRUC"}, "requestId": "r1"}}
            await ws.send_str(json.dumps(action))
            refused = json.loads((await ws.receive(timeout=20)).data)
            assert refused["requestId"] == "r1" and refused["refused"]["code"] == 7, refused
            await ws.close()
        # A grant for another game opens nothing (the game service's check).
        other = issue_token(
            SECRET, "grant-holder", role="spectator", ttl_seconds=600, game="games/other"
        )
        closed = await _session(f"{url}/v1/{name}:play", [json.dumps({"token": other}), OPEN])
        assert (closed.code, closed.error["code"]) == (4403, 7), closed

    async def go() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            await check(session)

    asyncio.run(go())
