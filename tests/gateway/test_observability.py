"""The gateway observed as the services are (truc_telemetry): after a few REST
calls and an SSE watch through a gateway of its own, its ``/metrics`` has the
series with the right counts (routes by RPC name, unknown paths under one label,
statuses, the upstream gRPC codes, SSE streams and events), and its log is JSON
lines with the request's context, without a token anywhere."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import aiohttp
import grpc
import pytest
from google.protobuf import json_format
from truc.v1 import game_service_pb2_grpc

from tests.observability.scrape import Samples, json_lines
from tests.service.conftest import (
    SECRET,
    Replica,
    create_fixed_game,
    new_players,
    play_action,
    redis_server,  # noqa: F401
    wait_until,
)
from truc_dev_redis import RedisServer
from truc_gateway.config import ConfigError, Settings
from truc_service.tokens import issue_token

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


def test_requests_streams_and_upstream_calls_are_counted_and_logged(
    rest_stack: RestStack, observed: Gateway
) -> None:
    assert observed.metrics_url is not None, observed.log()
    players = new_players()
    with grpc.insecure_channel(rest_stack.services.game.address) as channel:
        game = create_fixed_game(game_service_pb2_grpc.GameServiceStub(channel), players).name
    token = issue_token(SECRET, players[0], ttl_seconds=3600)
    watcher = issue_token(SECRET, players[1], ttl_seconds=3600)
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
            played = await call(session, "POST", f"{url}/v1/{game}:submitAction", body, token=token)
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


# ------------------------------------------------------------------ tracing

TRACED = {"TRUC_TRACING": "1", "OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "50"}


def test_tracing_is_off_and_not_imported_by_default() -> None:
    code = (
        "import sys, truc_gateway.server\n"
        "from truc_telemetry import tracing\n"
        "assert tracing.tracer is None\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.fixture(scope="module")
def traced(rest_stack: RestStack, redis_server: RedisServer) -> Iterator[tuple[Replica, Gateway]]:  # noqa: F811
    game = Replica(redis_server.url, **TRACED)
    try:
        gateway = Gateway(game.address, rest_stack.services.lobbies[0].address, **TRACED)
    except BaseException:
        game.stop()
        raise
    try:
        yield game, gateway
    finally:
        gateway.stop()
        game.stop()


def _spans(log: str, trace_id: str) -> list[dict[str, Any]]:
    return [
        line
        for line in json_lines(log)
        if line.get("context", {}).get("trace_id") == "0x" + trace_id
    ]


def test_a_request_is_a_span_whose_forwarded_call_continues_in_the_service(
    traced: tuple[Replica, Gateway],
) -> None:
    game_service, gateway = traced
    players = new_players()
    with grpc.insecure_channel(game_service.address) as channel:
        game = create_fixed_game(game_service_pb2_grpc.GameServiceStub(channel), players).name
    trace_id, caller = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    token = issue_token(SECRET, players[0], ttl_seconds=3600)

    async def get() -> int:
        async with aiohttp.ClientSession() as session:
            headers = {"traceparent": f"00-{trace_id}-{caller}-01"}
            reply = await call(
                session, "GET", f"{gateway.url}/v1/{game}", token=token, headers=headers
            )
            return reply.status

    assert asyncio.run(get()) == 200
    wait_until(lambda: len(_spans(gateway.log(), trace_id)) >= 2, timeout=10, what="gateway spans")
    wait_until(lambda: bool(_spans(game_service.log(), trace_id)), timeout=10, what="spans")
    spans = {span["kind"]: span for span in _spans(gateway.log(), trace_id)}
    server, client = spans["SpanKind.SERVER"], spans["SpanKind.CLIENT"]
    assert server["name"] == "GET GetGame"
    assert server["parent_id"] == "0x" + caller
    assert server["attributes"]["http.route"] == "GetGame"
    assert server["attributes"]["http.response.status_code"] == 200
    assert server["resource"]["attributes"]["service.name"] == "truc-gateway"
    assert client["name"] == "truc.v1.GameService/GetGame"
    assert client["parent_id"] == server["context"]["span_id"]
    assert client["attributes"]["rpc.grpc.status_code"] == 0
    (handled,) = [
        span
        for span in _spans(game_service.log(), trace_id)
        if span["name"] == "truc.v1.GameService/GetGame"
    ]
    assert handled["parent_id"] == client["context"]["span_id"]  # the traceparent metadata


def test_settings_default_to_json_logs_metrics_on_9466_and_no_tracing() -> None:
    settings = Settings.from_env({})
    assert (settings.log_format, settings.metrics_port, settings.tracing) == ("json", 9466, False)
    chosen = Settings.from_env(
        {"TRUC_LOG_FORMAT": "TEXT", "TRUC_METRICS_PORT": "-1", "TRUC_TRACING": "1"}
    )
    assert (chosen.log_format, chosen.metrics_port, chosen.tracing) == ("text", -1, True)
    for wrong in ({"TRUC_LOG_FORMAT": "xml"}, {"TRUC_METRICS_PORT": "-2"}):
        with pytest.raises(ConfigError):
            Settings.from_env(wrong)
