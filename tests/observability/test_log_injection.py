"""Hostile values sent to real processes logging in the text format
(``TRUC_LOG_FORMAT=text``) reach their log escaped: no forged line, no escape
sequence for the operator's terminal.

* the game service: a SubmitAction's ``request_id`` (bound to the log context
  and written on the DEBUG ``rpc`` line);
* the gateway: the request's path (percent-decoded, on the DEBUG ``request``
  line) and its ``X-Request-Id`` header.
"""

from __future__ import annotations

import re
import socket
import uuid
from collections.abc import Iterator

import grpc
import pytest
from truc.v1 import game_service_pb2

from tests.gateway.conftest import Gateway
from tests.service.conftest import (
    Replica,
    auth,
    create_fixed_game,
    new_players,
    play_action,
    redis_server,  # noqa: F401 - the shared fixture
    stub,
    wait_until,
)
from truc_dev_redis import RedisServer
from truc_telemetry.logs import UNSAFE

HOSTILE = "r\n2026-01-01 00:00:00,000 WARNING x: FORGED\x1b[2J\x1b]0;owned\x07\u2028\u202e"
"""A request id (64 characters, the longest allowed) that, written raw, starts a
line of its own, clears the screen, sets the terminal's title and reverses the
text after it."""
RECORD = re.compile(rb"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.]+: ")


def check_lines(log: bytes) -> None:
    """Every line is a record of the process (or a traceback's indented line),
    and not one character of :data:`UNSAFE` is there but the newlines."""
    text = log.decode("utf-8")
    assert not {c for c in text if c in UNSAFE} - {"\n"}, "an unsafe character reached the log"
    for line in log.splitlines():
        assert RECORD.match(line) or line.startswith(b"    "), line
        assert not line.startswith(b"2026-01-01 00:00:00,000"), "a forged record"


@pytest.fixture(scope="module")
def text_replica(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    replica = Replica(redis_server.url, TRUC_LOG_FORMAT="text", TRUC_LOG_LEVEL="DEBUG")
    yield replica
    replica.stop()


def test_a_hostile_request_id_reaches_the_game_service_log_escaped(
    text_replica: Replica,
) -> None:
    client = stub(text_replica.address)
    players = new_players()
    name = create_fixed_game(client, players).name
    request = game_service_pb2.SubmitActionRequest(
        name=name, action=play_action("5Sw"), request_id=HOSTILE
    )
    with pytest.raises(grpc.RpcError) as refused:
        client.SubmitAction(request, metadata=auth(players[1]))  # not seat 1's turn
    code = refused.value.code()
    # The DEBUG line of the call is written once it is answered.
    wait_until(
        lambda: b"method=SubmitAction code=" in text_replica.log_path.read_bytes(), timeout=5.0
    )
    log = text_replica.log_path.read_bytes()
    check_lines(log)
    # NOT_YOUR_TURN; or INVALID_ARGUMENT once the id's alphabet is checked (the id
    # may be bound to the context before that check, or not at all).
    assert code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT)
    if code is grpc.StatusCode.FAILED_PRECONDITION or b"FORGED" in log:
        assert (
            b'request_id="r\\n2026-01-01 00:00:00,000 WARNING x: FORGED'
            b'\\x1b[2J\\x1b]0;owned\\x07\\u2028\\u202e"' in log
        )


def raw_get(port: int, path: bytes, headers: bytes = b"") -> bytes:
    """One HTTP/1.1 GET written by hand (no client library tidies it up)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_hostile_path_and_request_id_reach_the_gateway_log_escaped(
    text_replica: Replica,
) -> None:
    gateway = Gateway(
        text_replica.address, "127.0.0.1:1", TRUC_LOG_FORMAT="text", TRUC_LOG_LEVEL="DEBUG"
    )
    try:
        tag = uuid.uuid4().hex[:8].encode()
        path = (
            b"/v1/games/"
            + tag
            + b"%0A2026-01-01%2000:00:00,000%20INFO%20x:%20FORGED%1B[31m%E2%80%A8"
        )
        answer = raw_get(
            gateway.port, path, b"X-Request-Id: id\xc2\x9b5m\xe2\x80\xa8 a=" + tag + b"\r\n"
        )
        assert answer.startswith(b"HTTP/1.1 4"), answer[:200]
        wanted = (
            b'path="/v1/games/'
            + tag
            + b'\\n2026-01-01 00:00:00,000 INFO x: FORGED\\x1b[31m\\u2028"'
        )
        wait_until(lambda: wanted in gateway.log_path.read_bytes(), timeout=5.0)
        log = gateway.log_path.read_bytes()
        check_lines(log)
        request_ids = re.findall(rb"request_id=(\S+)", log)
        if any(tag in found for found in request_ids):  # kept (not refused by the gateway)
            assert b'request_id="id\\x9b5m\\u2028 a=' + tag + b'"' in log
    finally:
        gateway.stop()
