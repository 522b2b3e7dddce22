"""What a client can make the gateway hold is bounded (issue 14): a connection
without a request in progress — idle, or sending its request's head a byte at a
time — is closed after ``TRUC_GATEWAY_IDLE_SECONDS``, while a stream in
progress is not idle; a request's head has at most 64 headers of at most 8190
bytes, and its line (the URL with its query) at most 8190 bytes; a compressed
body at most ``TRUC_GATEWAY_MAX_BODY_BYTES`` once inflated. (Plain bodies and
WebSocket frames: tests/gateway/test_errors.py and test_websocket_session.py.) A
real gateway process in front of a recording gRPC server."""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Iterator

import aiohttp
import pytest

from .conftest import MAX_BODY, Gateway, call
from .recording import RecordingUpstream
from .test_errors import run

IDLE_SECONDS = 1.0


@pytest.fixture(scope="module")
def idle_gateway(upstream: RecordingUpstream) -> Iterator[Gateway]:
    gateway = Gateway(
        upstream.address, upstream.address, TRUC_GATEWAY_IDLE_SECONDS=str(IDLE_SECONDS)
    )
    yield gateway
    code = gateway.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


def _closed_within(connection: socket.socket, seconds: float, trickle: bytes = b"") -> float:
    """How long until the gateway closes ``connection`` (sending ``trickle`` every
    0.2 s meanwhile); fails if it is still open after ``seconds``."""
    start = time.monotonic()
    connection.settimeout(0.2)
    while time.monotonic() - start < seconds:
        try:
            if trickle:
                connection.sendall(trickle)
            data = connection.recv(4096)
        except TimeoutError:
            continue
        except OSError:  # reset
            return time.monotonic() - start
        if not data or (b"\r\n\r\n" in data and trickle):
            return time.monotonic() - start
    raise AssertionError(f"still open after {seconds} s")


def test_connections_without_a_request_in_progress_are_closed(idle_gateway: Gateway) -> None:
    address = ("127.0.0.1", idle_gateway.port)
    # A connection that sends nothing.
    with socket.create_connection(address) as silent:
        assert _closed_within(silent, 10) < IDLE_SECONDS + 2
    # A slowloris: a request head that never ends, one header every 0.2 s.
    with socket.create_connection(address) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        assert _closed_within(slow, 10, trickle=b"X-Slow: a\r\n") < IDLE_SECONDS + 2
    # A keep-alive connection after its answer.
    with socket.create_connection(address) as kept:
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.settimeout(5)
        assert kept.recv(4096).startswith(b"HTTP/1.1 200")
        assert _closed_within(kept, 10) < IDLE_SECONDS + 2


def test_a_stream_in_progress_is_not_idle(
    upstream: RecordingUpstream, idle_gateway: Gateway
) -> None:
    upstream.stream_seconds = 3 * IDLE_SECONDS

    async def check(session: aiohttp.ClientSession) -> None:
        headers = {"Authorization": "Bearer t"}
        start = time.monotonic()
        url = f"{idle_gateway.url}/v1/games/g:watch"
        async with session.get(url, headers=headers) as response:
            assert response.status == 200
            body = await response.read()  # heartbeats until the stream ends
        assert body.endswith(b"event: end\ndata: {}\n\n"), body
        assert time.monotonic() - start >= 3 * IDLE_SECONDS

    try:
        run(check)
    finally:
        upstream.stream_seconds = 0.0


def _status(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(head)
        connection.settimeout(5)
        return connection.recv(4096).split(b"\r\n", 1)[0]


def test_a_request_head_is_bounded(idle_gateway: Gateway) -> None:
    port = idle_gateway.port
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    assert _status(port, ok + b"\r\n").endswith(b"200 OK")
    fine = b"".join(b"X-H%d: a\r\n" % i for i in range(60))
    assert _status(port, ok + fine + b"\r\n").endswith(b"200 OK")
    many = b"".join(b"X-H%d: a\r\n" % i for i in range(100))
    assert b" 400 " in _status(port, ok + many + b"\r\n")
    assert b" 400 " in _status(port, ok + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n")
    query = b"&".join(b"pageSize=%d" % i for i in range(1500))
    assert b" 400 " in _status(port, b"GET /v1/games?" + query + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _status(port, ok + b"\r\n").endswith(b"200 OK")  # and it still serves


def test_a_compressed_body_is_bounded_once_inflated(idle_gateway: Gateway) -> None:
    """A gzip bomb: 3 MiB of JSON in a 3 KiB body, under the limit until inflated."""
    bomb = gzip.compress(b'{"displayName": "' + b"a" * (3 << 20) + b'"}', 9)
    assert len(bomb) < MAX_BODY
    small = gzip.compress(b'{"displayName": "zipped"}')

    async def check(session: aiohttp.ClientSession) -> None:
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        url = f"{idle_gateway.url}/v1/guests:signIn"
        reply = await call(session, "POST", url, raw=bomb, headers=headers)
        assert (reply.status, reply.reason) == (413, "BODY_TOO_LARGE"), reply.body
        reply = await call(session, "POST", url, raw=small, headers=headers)
        assert reply.status == 200, reply.body

    run(check)
