"""The gateway observed as the services are (truc_telemetry): after a few REST
calls and an SSE watch through a gateway of its own, its ``/metrics`` has the
series with the right counts (routes by RPC name, unknown paths under one label,
statuses, the upstream gRPC codes, SSE streams and events), and its log is JSON
lines with the request's context, without a token anywhere."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import aiohttp
import grpc
import pytest
from google.protobuf import json_format
from truc.v1 import game_service_pb2_grpc

from tests.observability.scrape import Samples, json_lines
from tests.service.conftest import auth, create_fixed_game, new_players, play_action, wait_until

from .conftest import Gateway, RestStack, call, sse

GETS = 3


@pytest.fixture(scope="module")
def observed(rest_stack: RestStack) -> Iterator[Gateway]:
    services = rest_stack.services
    gateway = Gateway(
        services.game.address,
        services.lobbies[0].address,
        TRUC_LOG_LEVEL="DEBUG",
        TRUC_LOG_FORMAT="json",
    )
    try:
        yield gateway
    finally:
        gateway.stop()


def _token(metadata: tuple[tuple[str, str], ...]) -> str:
    return metadata[0][1].removeprefix("Bearer ")


def test_requests_streams_and_upstream_calls_are_counted_and_logged(
    rest_stack: RestStack, observed: Gateway
) -> None:
    assert observed.metrics_url is not None, observed.log()
    players = new_players()
    with grpc.insecure_channel(rest_stack.services.game.address) as channel:
        game = create_fixed_game(game_service_pb2_grpc.GameServiceStub(channel), players).name
    token = _token(auth(players[0]))
    watcher = _token(auth(players[1]))
    request_id = uuid.uuid4().hex
    url = observed.url

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            for _ in range(GETS):
                got = await call(session, "GET", f"{url}/v1/{game}", token=token)
                assert got.status == 200, got.body
            assert (await call(session, "GET", f"{url}/v1/{game}")).status == 401
            assert (await call(session, "GET", f"{url}/v1/nowhere/{game}")).status == 404
            assert (await call(session, "DELETE", f"{url}/v1/{game}", token=token)).status == 405
            action = json_format.MessageToDict(play_action("5Sw"))
            body = {"action": action, "etag": "0", "requestId": request_id}
            played = await call(
                session, "POST", f"{url}/v1/{game}:submitAction", body, token=token
            )
            assert played.status in (200, 400, 409), played.body
            tagged = await call(
                session, "GET", f"{url}/v1/{game}", token=token, headers={"X-Request-Id": "tag-7"}
            )
            assert tagged.status == 200
            async with sse(session, f"{url}/v1/{game}:watch", token=watcher) as stream:
                async for event in stream:
                    assert event.event == "message"
                    break
                live = Samples(str(observed.metrics_url))
                assert live.value("truc_gateway_sse_streams", route="WatchGame") == 1
                assert live.value("truc_gateway_sse_events_total", route="WatchGame") >= 1
            # ?access_token= (refused but for :watch): the query string is never logged.
            got = await call(session, "GET", f"{url}/v1/{game}?access_token={token}")
            assert got.status == 400, got.body

    asyncio.run(scenario())

    def scrape() -> Samples:
        return Samples(str(observed.metrics_url))

    def stream_closed() -> bool:
        return scrape().value("truc_gateway_sse_streams", route="WatchGame") == 0

    wait_until(stream_closed, timeout=10, what="the SSE stream closed")
    samples = scrape()
    http = "truc_gateway_http_duration_seconds_count"
    assert samples.value(http, route="GetGame", method="GET", status="200") == GETS + 1
    assert samples.value(http, route="GetGame", method="GET", status="401") == 1
    assert samples.value(http, route="GetGame", method="GET", status="400") == 1
    assert samples.value(http, route="unknown", method="GET", status="404") == 1
    assert samples.value(http, route="unknown", method="DELETE", status="405") == 1
    assert samples.value(http, route="SubmitAction", method="POST") == 1
    assert samples.value(http, route="WatchGame", method="GET", status="200") == 1
    assert samples.value("truc_gateway_http_duration_seconds_bucket", route="GetGame", le="+Inf")
    assert not [n for n in samples.names if "nowhere" in n]
    upstream = "truc_gateway_upstream_duration_seconds_count"
    game_service = "truc.v1.GameService"
    assert samples.value(upstream, service=game_service, method="GetGame", code="OK") == GETS + 1
    assert samples.value(upstream, method="GetGame", code="UNAUTHENTICATED") == 1
    assert samples.value(upstream, method="SubmitAction") == 1
    # The client closed the stream: the gateway cancelled its gRPC call.
    assert samples.value(upstream, method="WatchGame", code="CANCELLED") == 1
    assert samples.value("truc_gateway_sse_events_total", route="WatchGame", event="message") >= 1

    text = observed.log()
    assert "Traceback" not in text, text
    lines = json_lines(text)
    assert token not in text and watcher not in text
    assert "access_token" not in text
    requests = [line for line in lines if line["message"] == "request"]
    for line in requests:
        assert {"time", "level", "logger", "route", "http_method", "path", "status", "ms"} <= set(
            line
        ), line
    get_game = [line for line in requests if line["route"] == "GetGame" and line["status"] == 200]
    assert len(get_game) == GETS + 1
    assert all(line["method"] == "GetGame" and line["game"] in game for line in get_game)
    assert [line for line in get_game if line.get("request_id") == "tag-7"]
    (submitted,) = [line for line in requests if line["route"] == "SubmitAction"]
    assert submitted["request_id"] == request_id  # the body's idempotency key
    unknown = [line for line in requests if line["route"] == "unknown"]
    assert {line["status"] for line in unknown} == {404, 405}
    assert not [line for line in unknown if "method" in line]  # no stale context
    assert any(line["message"].startswith("metrics on http://") for line in lines)
