"""Fixtures for the gateway tests: a real Redis, game service and lobby (the
lobby tests' :class:`Stack`) and a real ``python -m truc_gateway`` process in
front of them on a free port, spoken to over HTTP."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from tests.lobby_service.conftest import Stack
from tests.service.conftest import Replica, redis_server, wait_until  # noqa: F401
from truc_dev_redis import RedisServer

from .recording import RecordingUpstream

FRONT = "http://front.example"
"""The one origin the test gateway allows (CORS)."""
MAX_BODY = 4096


class Gateway(Replica):
    """One ``python -m truc_gateway`` process on a free port (started and stopped
    as a :class:`Replica`, ready once ``/healthz`` answers)."""

    def __init__(self, game: str, lobby: str, **env: str) -> None:
        super().__init__(
            "",
            module="truc_gateway",
            **{
                "TRUC_GATEWAY_PORT": "0",
                "TRUC_GAME_ADDRESS": game,
                "TRUC_LOBBY_ADDRESS": lobby,
                "TRUC_GATEWAY_CORS_ORIGINS": FRONT,
                "TRUC_GATEWAY_MAX_BODY_BYTES": str(MAX_BODY),
                "TRUC_GATEWAY_HEARTBEAT_MS": "200",
                "TRUC_GATEWAY_GRACE_SECONDS": "1",
                **env,
            },
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_serving(self, timeout: float = 20.0) -> None:
        wait_until(lambda: self.health().get("status") == "SERVING", timeout=timeout)

    def health(self) -> dict[str, Any]:
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=5) as reply:
                return dict(json.load(reply))
        except urllib.error.HTTPError as error:
            return dict(json.load(error))
        except OSError:
            return {}


@dataclass
class RestStack:
    services: Stack
    gateway: Gateway

    @property
    def url(self) -> str:
        return self.gateway.url


@pytest.fixture(scope="session")
def rest_stack(redis_server: RedisServer) -> Iterator[RestStack]:  # noqa: F811
    services = Stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0")
    try:
        gateway = Gateway(services.game.address, services.lobbies[0].address)
    except BaseException:
        services.stop()
        raise
    yield RestStack(services, gateway)
    code = gateway.stop()
    services.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


# ----------------------------------------------------------------- a recording upstream


@pytest.fixture(scope="module")
def upstream() -> Iterator[RecordingUpstream]:
    server = RecordingUpstream()
    yield server
    server.stop()


def _recorded_gateway(upstream: RecordingUpstream, **env: str) -> Iterator[Gateway]:
    gateway = Gateway(upstream.address, upstream.address, **env)
    yield gateway
    code = gateway.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


@pytest.fixture(scope="module")
def direct(upstream: RecordingUpstream) -> Iterator[Gateway]:
    """A gateway that trusts no proxy (the default)."""
    yield from _recorded_gateway(upstream)


@pytest.fixture(scope="module")
def proxied(upstream: RecordingUpstream) -> Iterator[Gateway]:
    """A gateway behind proxies: loopback (the test's own connections) and 10/8."""
    yield from _recorded_gateway(upstream, TRUC_GATEWAY_TRUSTED_PROXIES="127.0.0.0/8, 10.0.0.0/8")


# ----------------------------------------------------------------- HTTP helpers


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def reason(self) -> str | None:
        """The ErrorInfo reason of a google.rpc.Status body."""
        for detail in self.body.get("details", []) if isinstance(self.body, dict) else []:
            if detail.get("@type", "").endswith("google.rpc.ErrorInfo"):
                return str(detail["reason"])
        return None


async def call(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    body: object = None,
    *,
    token: str | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """One HTTP request; the JSON answer (or the text if it is not JSON)."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = "Bearer " + token
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    async with session.request(method, url, data=data, headers=sent) as response:
        text = await response.text()
        try:
            decoded: Any = json.loads(text)
        except ValueError:
            decoded = text
        return Reply(response.status, dict(response.headers), decoded)


@dataclass
class Event:
    """One server-sent event."""

    data: Any
    id: str | None = None
    event: str = "message"


@dataclass
class EventStream:
    """The events of one SSE response, read as they come."""

    response: aiohttp.ClientResponse
    comments: int = 0

    async def __aiter__(self) -> AsyncIterator[Event]:
        fields: dict[str, str] = {}
        async for raw in self.response.content:
            line = raw.decode().rstrip("\r\n")
            if not line:
                if "data" in fields:
                    yield Event(
                        json.loads(fields["data"]), fields.get("id"), fields.get("event", "message")
                    )
                fields = {}
            elif line.startswith(":"):
                self.comments += 1
            else:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")


@contextlib.asynccontextmanager
async def sse(
    session: aiohttp.ClientSession, url: str, *, token: str, last_event_id: str | None = None
) -> AsyncIterator[EventStream]:
    headers = {"Authorization": "Bearer " + token, "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with session.get(url, headers=headers) as response:
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"].startswith("text/event-stream")
        yield EventStream(response)
