"""OpenTelemetry tracing: off by default (not even imported), and when turned on a
SubmitAction is a SERVER span continuing the caller's trace, with its Redis calls
as CLIENT spans below it (the console exporter's JSON lines, read from the log)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import (
    Replica,
    auth,
    create_fixed_game,
    new_players,
    play_action,
    redis_server,  # noqa: F401
    wait_until,
)
from truc_dev_redis import RedisServer

TRACE_ID = uuid.uuid4().hex
CALLER_SPAN = uuid.uuid4().hex[:16]


def test_tracing_is_off_and_not_imported_by_default() -> None:
    code = (
        "import sys, truc_game.server, truc_lobby.server\n"
        "from truc_telemetry import tracing\n"
        "assert tracing.tracer is None\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _spans(log: str) -> list[dict[str, Any]]:
    spans = []
    for line in log.splitlines():
        parsed = json.loads(line)
        if "context" in parsed and "span_id" in parsed["context"]:
            spans.append(parsed)
    return spans


@pytest.fixture(scope="module")
def traced(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    replica = Replica(
        redis_server.url,
        TRUC_TRACING="1",
        OTEL_TRACES_EXPORTER="console",
        OTEL_BSP_SCHEDULE_DELAY="50",
        OTEL_SERVICE_NAME="truc-game-under-test",
    )
    try:
        yield replica
    finally:
        replica.stop()


def test_a_submit_action_is_a_span_with_its_redis_calls_below(traced: Replica) -> None:
    players = new_players()
    with grpc.insecure_channel(traced.address) as channel:
        client = game_service_pb2_grpc.GameServiceStub(channel)
        name = create_fixed_game(client, players).name
        traceparent = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
        client.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                name=name, action=play_action("5Sw"), request_id=uuid.uuid4().hex
            ),
            metadata=(*auth(players[0]), ("traceparent", traceparent)),
        )

    def submit_spans() -> list[dict[str, Any]]:
        return [s for s in _spans(traced.log()) if s["context"]["trace_id"] == "0x" + TRACE_ID]

    wait_until(lambda: len(submit_spans()) >= 3, timeout=10, what="the spans exported")
    spans = submit_spans()
    server = [s for s in spans if s["name"] == "truc.v1.GameService/SubmitAction"]
    assert len(server) == 1
    rpc = server[0]
    assert rpc["kind"] == "SpanKind.SERVER"
    assert rpc["parent_id"] == "0x" + CALLER_SPAN
    assert rpc["attributes"]["rpc.method"] == "SubmitAction"
    assert rpc["attributes"]["rpc.grpc.status_code"] == 0
    assert rpc["resource"]["attributes"]["service.name"] == "truc-game-under-test"
    children = {s["name"]: s for s in spans if s["parent_id"] == rpc["context"]["span_id"]}
    assert {"redis load", "redis commit"} <= children.keys()
    for child in children.values():
        assert child["kind"] == "SpanKind.CLIENT"
        assert child["attributes"]["db.system"] == "redis"
    # The CreateGame call made no trace of the caller's: it is a root span of its own.
    created = [s for s in _spans(traced.log()) if s["name"] == "truc.v1.GameService/CreateGame"]
    assert created and created[0]["parent_id"] is None
