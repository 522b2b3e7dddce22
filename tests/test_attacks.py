"""Issue 14's attacks again, from outside, against ``make serve`` (tools/serve.py:
its bundled Redis, the game service, the lobby and the gateway) with every
setting at its default: what a hostile client did then is refused now, and the
limits hold at their documented defaults (the limits' own tests run with
settings chosen for speed; this one checks the defaults people get). Issue 16's
browser origins too: localhost ones, on any port, are allowed, no other."""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from truc.v1 import lobby_service_pb2, lobby_service_pb2_grpc

from truc_protocol.status import reason_of, retry_after_ms

from .test_serve_signals import Serve

pytestmark = pytest.mark.integration

_LISTENING = re.compile(r"^\[(game|lobby|gateway)\].*listening on [^ ]*?:(\d+)")


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Stack:
    gateway: str
    lobby: str

    def call(self, method: str, path: str, body: object = None, token: str | None = None) -> Answer:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://{self.gateway}{path}", data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return Answer(response.status, dict(response.headers), json.loads(response.read()))
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), json.loads(error.read() or b"{}"))

    def guest(self, name: str = "ana") -> str:
        answer = self.call("POST", "/v1/guests:signIn", {"displayName": name})
        assert answer.status == 200, answer
        token: str = answer.body["token"]
        return token


def _reason(answer: Answer) -> str:
    return str(next((d.get("reason", "") for d in answer.body.get("details", [])), ""))


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    serve = Serve()
    try:
        serve.start()
        ports: dict[str, str] = {}
        for line in serve.lines:
            found = _LISTENING.match(line)
            if found:
                ports.setdefault(found.group(1), found.group(2))
        yield Stack(f"127.0.0.1:{ports['gateway']}", f"127.0.0.1:{ports['lobby']}")
        serve.signal(signal.SIGTERM)
        assert serve.exit_status() == 0, serve.output()
    finally:
        serve.close()


def test_an_enum_given_as_a_float_is_refused_naming_the_field(stack: Stack) -> None:
    me = stack.guest()
    answer = stack.call("POST", "/v1/tickets", {"options": {"ruleSet": 1.5}}, token=me)
    assert answer.status == 400, answer
    assert _reason(answer) == "BAD_REQUEST"
    assert "ruleSet" in answer.body["message"], answer.body


def test_a_long_lived_token_in_a_url_is_refused_and_a_stream_token_is_not(stack: Stack) -> None:
    me = stack.guest()
    ticket = stack.call("POST", "/v1/tickets", {}, token=me)
    assert ticket.status == 200, ticket
    name = ticket.body["ticket"]["name"]
    refused = stack.call("GET", f"/v1/{name}:watch?access_token={me}")
    assert (refused.status, _reason(refused)) == (401, "TOKEN_IN_URL"), refused
    minted = stack.call("POST", "/v1/streamTokens", {}, token=me)
    assert minted.status == 200, minted
    url = f"http://{stack.gateway}/v1/{name}:watch?access_token={minted.body['token']}"
    with urllib.request.urlopen(url, timeout=10) as stream:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.readline().startswith(b"data: ")  # the ticket as it is
    stack.call("POST", f"/v1/{name}:cancel", {}, token=me)


def _preflight(stack: Stack, origin: str) -> Answer:
    request = urllib.request.Request(
        f"http://{stack.gateway}/v1/guests:signIn",
        method="OPTIONS",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return Answer(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, dict(error.headers), json.loads(error.read()))


def test_browser_origins_on_this_machine_are_allowed_and_others_are_not(stack: Stack) -> None:
    """make serve's CORS default: a front-end's dev server on localhost, any port
    (the gateway's own default allows no origin)."""
    for origin in ("http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8000"):
        answer = _preflight(stack, origin)
        assert answer.status == 204, (origin, answer)
        assert "POST" in answer.headers["Access-Control-Allow-Methods"], answer.headers
    for origin in (
        "http://evil.example",
        "https://localhost.evil.example",
        "http://localhost:5173.evil.example",
        "http://127.0.0.2:3000",
    ):
        answer = _preflight(stack, origin)
        assert (answer.status, _reason(answer)) == (403, "ORIGIN_NOT_ALLOWED"), (origin, answer)


def test_one_player_cannot_hold_many_ticket_streams(stack: Stack) -> None:
    me = stack.guest()
    ticket = stack.call("POST", "/v1/tickets", {}, token=me)
    name = ticket.body["ticket"]["name"]
    metadata = (("authorization", f"Bearer {me}"),)
    with grpc.insecure_channel(stack.lobby) as channel:
        lobby = lobby_service_pb2_grpc.LobbyServiceStub(channel)
        streams: list[Any] = []
        try:
            refused: grpc.RpcError | None = None
            for _ in range(40):
                stream: Any = lobby.WatchTicket(
                    lobby_service_pb2.WatchTicketRequest(name=name), metadata=metadata
                )
                streams.append(stream)
                try:
                    next(stream)  # an open stream sends the ticket first
                except grpc.RpcError as error:
                    refused = error
                    break
            assert refused is not None, "40 streams of one player were all accepted"
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert reason_of(refused) == "RATE_LIMITED"
            assert (retry_after_ms(refused) or 0) > 0
            assert len(streams) <= 9  # the default: 8 per player on a replica
        finally:
            for stream in streams:
                stream.cancel()
    stack.call("POST", f"/v1/{name}:cancel", {}, token=me)


def test_guest_sign_ins_from_one_address_are_limited(stack: Stack) -> None:
    """The flood ran 3,000 sign-ins at up to 2,780/s; the default is 300 per
    address per 10 minutes (this module's earlier tests used a few)."""
    accepted = 0
    refused: Answer | None = None
    started = time.monotonic()
    for _ in range(400):
        answer = stack.call("POST", "/v1/guests:signIn", {"displayName": "flood"})
        if answer.status != 200:
            refused = answer
            break
        accepted += 1
    assert refused is not None, f"{accepted} sign-ins in {time.monotonic() - started:.1f} s"
    assert refused.status == 429 and _reason(refused) == "RATE_LIMITED", refused
    assert int(refused.headers["Retry-After"]) > 0
    assert accepted <= 300
