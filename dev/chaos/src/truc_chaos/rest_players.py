"""The players' REST transport: JSON over HTTP and Server-Sent Events, through the gateway.

The same calls as gRPC (README, "REST and SSE"): ``POST /v1/guests:signIn``,
``POST /v1/tickets``, ``GET /v1/tickets/{t}:watch`` (SSE), ``GET``/``:cancel`` a
ticket, ``GET /v1/games/{g}``, ``GET /v1/games/{g}:watch`` (SSE, resumed with
``Last-Event-ID``), ``POST /v1/games/{g}:submitAction`` and ``GET /v1/games``
(ListGames). A JSON error body (a ``google.rpc.Status``: ``code`` and an
ErrorInfo ``reason``) becomes the same :class:`~truc_chaos.players.CallError` as
over gRPC; a connection that fails is UNAVAILABLE. Views are parsed back into
``truc.v1.GameView`` messages, so one player loop serves both transports.
:meth:`RestTransport.reconnect` closes the HTTP session under the requests and
streams in flight.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, Final

import aiohttp
import grpc
from google.protobuf import json_format
from truc.v1 import game_pb2, lobby_pb2

from .players import CallError

__all__ = ["RestTransport", "parse_events"]

_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
_TIMEOUT: Final = 8.0


def _status_error(status: int, body: Any) -> CallError:
    if isinstance(body, dict) and isinstance(body.get("code"), int):
        reason = ""
        for detail in body.get("details", []):
            if str(detail.get("@type", "")).endswith("google.rpc.ErrorInfo"):
                reason = str(detail.get("reason", ""))
        code = _CODES.get(body["code"], grpc.StatusCode.UNKNOWN)
        return CallError(code, reason, str(body.get("message", "")))
    return CallError(grpc.StatusCode.UNAVAILABLE, "", f"HTTP {status}: {str(body)[:200]}")


def _view(data: dict[str, Any]) -> game_pb2.GameView:
    return json_format.ParseDict(data, game_pb2.GameView(), ignore_unknown_fields=True)


def _ticket(data: dict[str, Any]) -> lobby_pb2.Ticket:
    return json_format.ParseDict(data, lobby_pb2.Ticket(), ignore_unknown_fields=True)


async def parse_events(
    lines: AsyncIterable[bytes],
) -> AsyncGenerator[tuple[str, str | None, str], None]:
    """Server-sent events as (event, id, data); comments (heartbeats) are skipped."""
    fields: dict[str, str] = {}
    async for raw in lines:
        line = raw.decode(errors="replace").rstrip("\r\n")
        if not line:
            if "data" in fields:
                yield fields.get("event", "message"), fields.get("id"), fields["data"]
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name in fields else value


class RestTransport:
    via = "rest"

    def __init__(self, base_url: str) -> None:
        self._base = base_url.rstrip("/")
        self._session = self._new_session()

    @staticmethod
    def _new_session() -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=3),
            connector=aiohttp.TCPConnector(limit=0, force_close=False),
        )

    async def reconnect(self) -> None:
        old = self._session
        self._session = self._new_session()
        await old.close()

    async def close(self) -> None:
        await self._session.close()

    async def _call(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        token: str | None = None,
        timeout: float = _TIMEOUT,
    ) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        data = None if body is None else json.dumps(body)
        try:
            async with asyncio.timeout(timeout):
                async with self._session.request(
                    method, self._base + path, data=data, headers=headers
                ) as response:
                    text = await response.text()
                    status = response.status
        except TimeoutError:
            raise CallError(grpc.StatusCode.DEADLINE_EXCEEDED, "", f"{method} {path}") from None
        except (aiohttp.ClientError, RuntimeError) as error:  # RuntimeError: session closed
            raise CallError(
                grpc.StatusCode.UNAVAILABLE, "", f"{type(error).__name__}: {error}"
            ) from None
        try:
            decoded: Any = json.loads(text) if text else {}
        except ValueError:
            decoded = text
        if status != 200:
            raise _status_error(status, decoded)
        if not isinstance(decoded, dict):
            raise CallError(grpc.StatusCode.UNKNOWN, "", f"not a JSON object: {text[:200]}")
        return decoded

    async def _stream(
        self, path: str, token: str, *, last_event_id: int = 0
    ) -> AsyncGenerator[tuple[str | None, dict[str, Any]], None]:
        """The messages of an SSE route as (id, JSON); ``event: end`` ends it,
        ``event: error`` raises."""
        headers = {"Authorization": "Bearer " + token, "Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = str(last_event_id)
        try:
            async with self._session.get(self._base + path, headers=headers) as response:
                if response.status != 200:
                    text = await response.text()
                    try:
                        body: Any = json.loads(text)
                    except ValueError:
                        body = text
                    raise _status_error(response.status, body)
                async for event, event_id, data in parse_events(response.content):
                    decoded = json.loads(data)
                    if event == "end":
                        return
                    if event == "error":
                        raise _status_error(500, decoded)
                    yield event_id, decoded
        except (aiohttp.ClientError, RuntimeError) as error:
            raise CallError(
                grpc.StatusCode.UNAVAILABLE, "", f"{type(error).__name__}: {error}"
            ) from None

    # ------------------------------------------------------------------ lobby

    async def sign_in(self, name: str) -> tuple[str, str]:
        reply = await self._call("POST", "/v1/guests:signIn", {"displayName": name})
        return str(reply["player"]), str(reply["token"])

    async def create_ticket(self, token: str, options: game_pb2.RuleOptions) -> lobby_pb2.Ticket:
        body = {"options": json_format.MessageToDict(options)}
        reply = await self._call("POST", "/v1/tickets", body, token=token)
        return _ticket(reply["ticket"])

    async def get_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket:
        reply = await self._call("GET", f"/v1/{ticket}", token=token)
        return _ticket(reply["ticket"])

    async def cancel_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket:
        reply = await self._call("POST", f"/v1/{ticket}:cancel", {}, token=token)
        return _ticket(reply["ticket"])

    async def watch_ticket(self, token: str, ticket: str) -> AsyncGenerator[lobby_pb2.Ticket, None]:
        async for _, data in self._stream(f"/v1/{ticket}:watch", token):
            yield _ticket(data["ticket"])

    async def list_games(self, token: str) -> list[str]:
        games: list[str] = []
        page = ""
        while True:
            path = "/v1/games?page_size=100" + (f"&page_token={page}" if page else "")
            reply = await self._call("GET", path, token=token)
            games += [str(g["name"]) for g in reply.get("games", [])]
            page = str(reply.get("nextPageToken", ""))
            if not page:
                return games

    # ------------------------------------------------------------------ game

    async def get_game(self, token: str, game: str) -> game_pb2.GameView:
        reply = await self._call("GET", f"/v1/{game}", token=token, timeout=4.0)
        data = dict(reply["game"])
        data.pop("events", None)
        return _view(data)

    async def watch_game(
        self, token: str, game: str, after_version: int
    ) -> AsyncGenerator[tuple[int, game_pb2.GameView], None]:
        async for event_id, data in self._stream(
            f"/v1/{game}:watch", token, last_event_id=after_version
        ):
            version = int(data.get("version", event_id or 0))
            yield version, _view(data["game"])

    async def submit(
        self,
        token: str,
        game: str,
        action: game_pb2.Action,
        *,
        etag: str,
        request_id: str,
        timeout: float,
    ) -> int:
        body = {
            "action": json_format.MessageToDict(action),
            "etag": etag,
            "requestId": request_id,
            "responseView": "RESPONSE_VIEW_MINIMAL",
        }
        reply = await self._call(
            "POST", f"/v1/{game}:submitAction", body, token=token, timeout=timeout + 1.0
        )
        return int(reply["game"]["etag"])
