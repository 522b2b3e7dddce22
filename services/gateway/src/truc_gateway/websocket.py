"""The Play session as a WebSocket, for browsers: ``GET /v1/games/{game}:play``.

One WebSocket is one gRPC ``Play`` stream (``truc.v1.GameService.Play``): the
gateway opens the stream, forwards the ``open`` frame with the game the path
names, then relays frames both ways. Every frame is a JSON text frame, the
messages in the proto3 JSON mapping the REST routes use
(:mod:`truc_gateway.transcode`: lowerCamelCase, enums by name, 64-bit integers
as strings, zero values present)::

    client -> {"token": "<JWT>"}              only without an Authorization header, first
    client -> {"open": {"afterVersion": "0"}}  a PlayRequest: the name comes from the path
    server <- {"version": "1", "fromVersion": "1", "events": [...], "game": {...}, ...}
    client -> {"action": {"action": {"call": "CALL_TRUC"}, "requestId": "..."}}
    server <- {"version": "7", "requestId": "...", "refused": {"code": 9, ...}, ...}
    ...
    server <- the version that finishes the match, then close 1000

**The token** is the upgrade request's ``Authorization: Bearer`` header or, for
browsers (which cannot set headers on a WebSocket), the first frame
``{"token": "<JWT>"}``; never in the URL (the route takes no query string). The
gateway holds no secret: the game service checks the token when the stream
opens, and its refusal (TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED) comes back
as an error frame and close 4401. The token and the ``open`` frame must come
within ``TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS`` (else OPEN_TIMEOUT, close 4408).

**Errors that end the session** are one error frame, then the close:
``{"error": <google.rpc.Status JSON, as REST errors>, "httpStatus": 404}`` and
the close code ``4000 + httpStatus`` (the graphql-ws convention), the close
reason the ErrorInfo reason:

* the gRPC stream ending with a status: the service's refusal of the ``open``
  (4401 TOKEN_*, 4400 BAD_NAME, 4404 GAME_NOT_FOUND, 4403 NOT_SEATED) or
  UNAVAILABLE (4503: the game replica stopped; resume on a new socket);
* a malformed frame (400 BAD_REQUEST, close 4400): not JSON, not an object, an
  unknown field or a wrong type outside an action, a first frame that is not
  ``open`` (or the token), a second ``open``, a token where none belongs, a name
  in ``open`` that is not the path's — as the service ends the gRPC stream
  INVALID_ARGUMENT BAD_REQUEST for a second ``open``; a binary frame (close
  1003, with the same error frame first).

**A bad action frame does not end the session**: a frame ``{"action": {...}}``
whose content does not transcode (an unknown field, a wrong type) is answered,
as the service answers an action it refuses, with a PlayResponse ``refused``
(code 3, reason BAD_REQUEST, the frame's ``requestId`` when it has one, the
version last sent) and the socket stays open. Actions the service refuses
(NOT_YOUR_TURN, STALE_ETAG, BAD_ACTION, NOT_SEATED for spectators, ...) come
back as its own ``refused`` frames.

**Other closes**: 1000 when the stream ended OK (after the version that ends the
match, or at once for a game already over); 1001 when the gateway stops
(resume on another: ``open`` with ``afterVersion`` the last version received,
resend unanswered actions with the same ``requestId``); 1009 (sent by aiohttp)
for a frame larger than ``TRUC_GATEWAY_MAX_BODY_BYTES``. A client that closes
or vanishes cancels its gRPC stream.

**Limits.** A frame from the client is at most ``TRUC_GATEWAY_MAX_BODY_BYTES``.
The gateway queues nothing: it reads the next message of the gRPC stream only
once the last frame was handed to the socket, and aiohttp's ``send`` waits for
the socket to drain past its 64 KiB buffer, so a client that does not read
holds back its gRPC stream (HTTP/2 flow control) and the game service coalesces
its versions, bounded; a socket costs the gateway one message in hand and its
buffers. Actions go the other way the same: a frame is read from the socket
only once the last one was written to the gRPC stream. A ping goes out after
``TRUC_GATEWAY_WS_PING_MS`` without a frame from the client, and a client
whose pong does not come within half of that is dropped (which also drops a
client that stopped reading its socket). No compression (a deflate context
would cost far more per socket than the frames save on loopback or a LAN).

**Origins**: a browser's upgrade request carries ``Origin`` and CORS does not
protect a WebSocket, so the gateway checks it: an origin of
``TRUC_GATEWAY_CORS_ORIGINS`` (``*``: any) or the gateway's own (the ``Host``),
else 403 ORIGIN_NOT_ALLOWED before the upgrade. Requests without ``Origin``
(not a browser) pass. A ``GET`` that is not a WebSocket upgrade answers 426
UPGRADE_REQUIRED.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

import grpc
from aiohttp import WSMsgType, web
from google.rpc import status_pb2
from truc.v1 import game_service_pb2

from truc_service.errors import rich_status

from .cors import CorsPolicy
from .errors import (
    GatewayError,
    bad_request,
    http_status_of,
    http_worded,
    rpc_error_status,
    status_json,
    status_reason,
)
from .metrics import WS_CLOSES, WS_FRAMES, WS_SESSIONS
from .routes import Route
from .strict_json import JsonError, parse_into
from .transcode import message_json

__all__ = [
    "CLOSE_SECONDS",
    "GOING_AWAY",
    "NORMAL",
    "STATUS_CLOSE_BASE",
    "UNSUPPORTED_DATA",
    "SessionEnd",
    "SessionLimits",
    "serve_session",
]

log = logging.getLogger("truc.gateway.websocket")

NORMAL: Final = 1000
"""The gRPC stream ended OK (the match is over), or the client closed."""
GOING_AWAY: Final = 1001
"""The gateway is stopping: resume on another."""
UNSUPPORTED_DATA: Final = 1003
"""A binary frame: frames are JSON text."""
ABNORMAL: Final = 1006
"""No close frame: the connection broke (never sent, only recorded)."""
STATUS_CLOSE_BASE: Final = 4000
"""An error frame was sent: the close code is this plus its HTTP status."""
CLOSE_SECONDS: Final = 2.0
"""How long a close waits for the client's close frame."""
OPEN_TIMEOUT_HTTP: Final = 408
RACE_SECONDS: Final = 0.25
"""After an ``open`` whose write met the stream's end: how long the second stream
may take to end on its own before the open is written to it."""
WS_TOKEN_MISSING: Final = (
    "send the header 'Authorization: Bearer <token>' with the upgrade, or a first "
    'frame {"token": "<token>"} before the open frame'
)
"""TOKEN_MISSING's message on a WebSocket."""
_MAX_REQUEST_ID: Final = 64
_MAX_CLOSE_REASON: Final = 123
"""The longest close reason a close frame carries (bytes)."""

Metadata = tuple[tuple[str, str], ...]
PlayCall = grpc.aio.StreamStreamCall[game_service_pb2.PlayRequest, game_service_pb2.PlayResponse]
OpenCall = Callable[[Metadata], PlayCall]
"""Opens the gRPC stream with the caller's metadata (the token, if any)."""


@dataclass(frozen=True, slots=True)
class SessionLimits:
    max_frame_bytes: int
    """The largest frame a client may send (larger: close 1009)."""
    open_timeout: float
    """Seconds for the token and ``open`` frames."""
    ping: float
    """Seconds without a frame from the client before a ping; the pong within half."""


@dataclass(slots=True)
class SessionEnd:
    """How a session ended, for the caller's metrics: the gRPC stream's status
    (``CANCELLED`` when the gateway cut it: the client left, a bad frame, the
    gateway stopping) and the close code."""

    code: grpc.StatusCode = grpc.StatusCode.CANCELLED
    close: str = str(ABNORMAL)
    """The ``code`` label of ``truc_gateway_websocket_closes_total``: the close code
    the gateway sent, ``client`` when the client closed first, 1006 when it broke."""


@dataclass(frozen=True, slots=True)
class _Ending:
    """How a session ends: the close to send, after an error frame if ``error``."""

    code: int
    reason: str
    error: status_pb2.Status | None = None
    http_status: int = 0
    rpc: grpc.StatusCode = grpc.StatusCode.CANCELLED
    label: str = ""
    """The closes counter's label (the code unless said otherwise)."""


class _Closing(Exception):
    """Raised where a frame or the socket ends the session."""

    def __init__(self, ending: _Ending) -> None:
        super().__init__(ending.reason)
        self.ending = ending


class _FrameError(Exception):
    """A frame that does not transcode to a PlayRequest."""


def _failed(
    status: status_pb2.Status,
    *,
    http_status: int | None = None,
    code: int | None = None,
    rpc: grpc.StatusCode = grpc.StatusCode.CANCELLED,
) -> _Ending:
    """The ending of an error: its frame, then close ``4000 + HTTP status`` (or ``code``)."""
    http = http_status or http_status_of(status)
    return _Ending(
        code if code is not None else STATUS_CLOSE_BASE + http,
        status_reason(status),
        error=status,
        http_status=http,
        rpc=rpc,
    )


def _malformed(message: str, *, code: int | None = None) -> _Closing:
    return _Closing(_failed(bad_request(message).status, code=code))


def error_frame(status: status_pb2.Status, http_status: int) -> str:
    """The frame that precedes an error close: the Status as REST answers it
    (TOKEN_MISSING worded for a WebSocket: :data:`WS_TOKEN_MISSING`)."""
    worded = http_worded(status, WS_TOKEN_MISSING)
    return f'{{"error":{status_json(worded)},"httpStatus":{http_status}}}'


def origin_allowed(request: web.BaseRequest, cors: CorsPolicy) -> bool:
    """No Origin (not a browser), an allowed CORS origin, or the gateway's own host."""
    origin = request.headers.get("Origin")
    if origin is None or cors.allows(origin):
        return True
    netloc = urllib.parse.urlsplit(origin).netloc
    return bool(netloc) and netloc.lower() == request.host.lower()


def _upgrade_metadata(request: web.Request, cors: CorsPolicy) -> Metadata | None:
    """The refusals known before the upgrade (GatewayError); the header's token, if any."""
    if request.rel_url.raw_query_string:
        raise bad_request(
            "the :play route takes no query parameters: the token goes in the "
            'Authorization header or a first frame {"token": "..."}, never in the URL, '
            'and where to resume in the open frame {"open": {"afterVersion": "N"}}'
        )
    origin = request.headers.get("Origin")
    if origin is not None and not origin_allowed(request, cors):
        raise GatewayError(
            403,
            grpc.StatusCode.PERMISSION_DENIED,
            "ORIGIN_NOT_ALLOWED",
            f"origin {origin!r} is not allowed (TRUC_GATEWAY_CORS_ORIGINS)",
        )
    authorization = request.headers.get("Authorization")
    if authorization is None:
        return None
    return (("authorization", _printable(authorization, "the Authorization header")),)


def _printable(value: str, what: str) -> str:
    if not (value.isascii() and value.isprintable()):
        raise GatewayError(
            401,
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_INVALID",
            f"{what} must be printable ASCII",
        )
    return value


async def serve_session(
    request: web.Request,
    route: Route,
    name: str,
    open_call: OpenCall,
    *,
    limits: SessionLimits,
    cors: CorsPolicy,
    stopping: asyncio.Event,
    end: SessionEnd,
) -> web.StreamResponse:
    """Upgrade ``request`` and relay one Play session on it until it ends; refusals
    known before the upgrade raise :class:`GatewayError` (an HTTP answer)."""
    metadata = _upgrade_metadata(request, cors)
    socket = web.WebSocketResponse(
        timeout=CLOSE_SECONDS,
        heartbeat=limits.ping,
        max_msg_size=limits.max_frame_bytes,
        compress=False,
    )
    if not socket.can_prepare(request).ok:
        raise GatewayError(
            426,
            grpc.StatusCode.INVALID_ARGUMENT,
            "UPGRADE_REQUIRED",
            f"{route.template.text} is a WebSocket: upgrade the GET (Upgrade: websocket)",
            headers={"Upgrade": "websocket"},
        )
    await socket.prepare(request)
    session = _Session(
        socket,
        route=route.method.name,
        name=name,
        metadata=metadata,
        open_call=open_call,
        limits=limits,
    )
    gauge = WS_SESSIONS.labels(route.method.name)
    gauge.inc()
    try:
        ending = await session.run(stopping)
        end.code = ending.rpc
        end.close = ending.label or str(ending.code)
        log.debug("session closed", extra={"close": end.close, "reason": ending.reason})
    finally:
        gauge.dec()
        WS_CLOSES.labels(route.method.name, end.close).inc()
    return socket


class _Session:
    """One WebSocket and the gRPC stream behind it."""

    def __init__(
        self,
        socket: web.WebSocketResponse,
        *,
        route: str,
        name: str,
        metadata: Metadata | None,
        open_call: OpenCall,
        limits: SessionLimits,
    ) -> None:
        self.socket = socket
        self.name = name
        self.metadata = metadata
        """The header's token; None: the first frame may bring one."""
        self.open_call = open_call
        self.limits = limits
        self.version = 0
        """The last version sent (a gateway refusal carries it)."""
        self._sending = asyncio.Lock()
        self._raced = False
        """A write met the stream's end (whose status grpc-aio then lost)."""
        self._received = WS_FRAMES.labels(route, "received")
        self._sent = WS_FRAMES.labels(route, "sent")

    async def run(self, stopping: asyncio.Event) -> _Ending:
        """The session until it ends or the gateway stops; then the close."""
        main = asyncio.ensure_future(self._session())
        stop = asyncio.ensure_future(stopping.wait())
        try:
            await asyncio.wait({main, stop}, return_when=asyncio.FIRST_COMPLETED)
            if main.done():
                ending = main.result()
            else:
                ending = _Ending(GOING_AWAY, "the gateway is stopping: resume on another")
        except Exception:
            log.exception("Play session: internal error")
            status = rich_status(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error", {})
            ending = _failed(status)
        finally:
            for task in (main, stop):
                task.cancel()
            await asyncio.gather(main, stop, return_exceptions=True)
        await self._close(ending)
        return ending

    async def _session(self) -> _Ending:
        try:
            metadata, opening = await self._handshake()
        except _Closing as closing:
            return closing.ending
        call = self.open_call(metadata)
        try:
            if not await self._write(call, opening) and self._raced:
                # The service answered before it read the open (a refused token):
                # grpc-aio replaced that status with INTERNAL. Once more, letting the
                # stream end on its own before writing.
                call.cancel()
                self._raced = False
                call = self.open_call(metadata)
                try:
                    await asyncio.wait_for(asyncio.shield(call.code()), RACE_SECONDS)
                except TimeoutError:
                    await self._write(call, opening)
            return await self._relay(call)
        finally:
            call.cancel()

    # ------------------------------------------------------------------ frames

    async def _next_text(self) -> str:
        """The next text frame; _Closing for anything else."""
        message = await self.socket.receive()
        if message.type is WSMsgType.TEXT:
            self._received.inc()
            return str(message.data)
        if message.type is WSMsgType.BINARY:
            raise _malformed("frames are JSON text, not binary", code=UNSUPPORTED_DATA)
        # CLOSE (the client closed: aiohttp answered it), ERROR (a frame over the
        # limit: aiohttp closed 1009; no pong: dropped), CLOSED.
        client = message.type is WSMsgType.CLOSE
        label = "client" if client else str(self.socket.close_code or ABNORMAL)
        raise _Closing(_Ending(self.socket.close_code or ABNORMAL, "closed", label=label))

    async def _send(self, text: str) -> bool:
        """Send one frame (waiting for the socket to drain); False if the client is gone."""
        try:
            async with self._sending:
                await self.socket.send_str(text)
        except ConnectionError:
            return False
        self._sent.inc()
        return True

    async def _close(self, ending: _Ending) -> None:
        if self.socket.closed:
            return
        if ending.error is not None:
            await self._send(error_frame(ending.error, ending.http_status))
        reason = ending.reason.encode("ascii", "replace")[:_MAX_CLOSE_REASON]
        with contextlib.suppress(ConnectionError):
            await self.socket.close(code=ending.code, message=reason)

    # ------------------------------------------------------------------ phases

    async def _handshake(self) -> tuple[Metadata, game_service_pb2.PlayRequest]:
        """The token frame (when the header brought none) and the ``open`` frame."""
        # One deadline for both frames (a receive timeout would restart at each ping).
        try:
            async with asyncio.timeout(self.limits.open_timeout):
                return await self._opening()
        except TimeoutError:
            raise _Closing(_open_timeout()) from None

    async def _opening(self) -> tuple[Metadata, game_service_pb2.PlayRequest]:
        metadata = self.metadata
        token_frame = metadata is None
        while True:
            decoded = _decode(await self._next_text())
            if isinstance(decoded, dict) and "token" in decoded:
                if not token_frame:
                    raise _malformed(
                        "a token frame comes first and once, and only without an "
                        "Authorization header"
                    )
                metadata = _token_metadata(decoded)
                token_frame = False
                continue
            try:
                request = _play_request(decoded)
            except _FrameError as error:
                raise _malformed(str(error)) from None
            if request.WhichOneof("kind") != "open":
                raise _malformed(
                    'a session starts with an open frame, e.g. {"open": {"afterVersion": "0"}}'
                    + (' (after the token frame {"token": "..."})' if token_frame else "")
                )
            if request.open.name and request.open.name != self.name:
                raise _malformed(
                    f"open.name {request.open.name!r} is not the path's {self.name!r} "
                    "(leave it out: the path names the game)"
                )
            request.open.name = self.name
            self.version = request.open.after_version
            return metadata or (), request

    async def _write(self, call: PlayCall, request: game_service_pb2.PlayRequest) -> bool:
        """Write to the stream; False if it had ended (reading it says how)."""
        try:
            await call.write(request)
        except grpc.aio.AioRpcError:
            # The write met the stream's end before grpc-aio had read its status,
            # and grpc-aio made the stream's status INTERNAL ("Internal error from
            # Core") in its place.
            self._raced = True
            return False
        except asyncio.InvalidStateError:  # it had ended: its status stands
            return False
        return True

    async def _relay(self, call: PlayCall) -> _Ending:
        down = asyncio.ensure_future(self._downstream(call))
        up = asyncio.ensure_future(self._upstream(call))
        try:
            await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
            if down.done():
                return down.result()
            ending = up.result()
            if ending is None:  # the stream refused a write: it ended, its status follows
                return await down
            return ending
        finally:
            for task in (down, up):
                task.cancel()
            await asyncio.gather(down, up, return_exceptions=True)

    async def _downstream(self, call: PlayCall) -> _Ending:
        """gRPC -> socket, one message at a time, until the stream ends."""
        while True:
            try:
                item = await call.read()
            except grpc.aio.AioRpcError as error:
                if self._raced and error.code() == grpc.StatusCode.INTERNAL:
                    return _failed(_interrupted(), rpc=error.code())
                return _failed(rpc_error_status(error), rpc=error.code())
            if item is grpc.aio.EOF:  # type: ignore[attr-defined]
                return _Ending(NORMAL, "session ended", rpc=grpc.StatusCode.OK)
            response = cast(game_service_pb2.PlayResponse, item)
            self.version = max(self.version, response.version)
            if not await self._send(message_json(response)):
                return _Ending(ABNORMAL, "gone", label=str(ABNORMAL))

    async def _upstream(self, call: PlayCall) -> _Ending | None:
        """Socket -> gRPC: action frames, until the client closes or errs (an
        ending), or the stream refuses a write (None: it ended)."""
        while True:
            try:
                decoded = _decode(await self._next_text())
                try:
                    request = _play_request(decoded)
                except _FrameError as error:
                    if not _is_action_frame(decoded):
                        raise _malformed(str(error)) from None
                    await self._refuse(decoded["action"], str(error))
                    continue
            except _Closing as closing:
                return closing.ending
            kind = request.WhichOneof("kind")
            if kind != "action":
                detail = "a session is opened once" if kind == "open" else "no action"
                return _malformed(
                    f'{detail}: after open every frame is {{"action": {{...}}}}'
                ).ending
            if not await self._write(call, request):
                return None

    async def _refuse(self, fields: dict[str, Any], message: str) -> None:
        """Answer a malformed action frame as the service answers a refused action."""
        request_id = fields.get("requestId", fields.get("request_id"))
        if not isinstance(request_id, str) or len(request_id) > _MAX_REQUEST_ID:
            request_id = ""
        refusal = game_service_pb2.PlayResponse(
            version=self.version,
            request_id=request_id,
            refused=game_service_pb2.ActionRefused(
                code=grpc.StatusCode.INVALID_ARGUMENT.value[0],
                reason="BAD_REQUEST",
                message=f"the action frame is malformed: {message}",
            ),
        )
        await self._send(message_json(refusal))


def _interrupted() -> status_pb2.Status:
    """The status of a stream whose end an action's write met: its real status is
    lost (grpc-aio), but resuming is always right (an ended match ends at once)."""
    return rich_status(
        grpc.StatusCode.UNAVAILABLE,
        "SESSION_INTERRUPTED",
        "the session ended while an action was being sent: resume (open with "
        "afterVersion the last version received, resend unanswered actions)",
        {},
    )


def _open_timeout() -> _Ending:
    status = rich_status(
        grpc.StatusCode.DEADLINE_EXCEEDED,
        "OPEN_TIMEOUT",
        "no open frame in time (TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS)",
        {},
    )
    return _failed(status, http_status=OPEN_TIMEOUT_HTTP)


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise _malformed(f"a frame is not JSON: {error}") from None


def _play_request(decoded: Any) -> game_service_pb2.PlayRequest:
    """A frame as a PlayRequest; _FrameError if it is not one."""
    if not isinstance(decoded, dict):
        raise _FrameError("a frame must be a JSON object")
    request = game_service_pb2.PlayRequest()
    try:
        parse_into(decoded, request)  # strictly, as REST bodies (truc_gateway.strict_json)
    except JsonError as error:
        raise _FrameError(str(error)) from None
    return request


def _is_action_frame(decoded: Any) -> bool:
    return (
        isinstance(decoded, dict)
        and list(decoded) == ["action"]
        and isinstance(decoded["action"], dict)
    )


def _token_metadata(decoded: dict[str, Any]) -> Metadata:
    token = decoded.get("token")
    if list(decoded) != ["token"] or not isinstance(token, str):
        raise _malformed('a token frame is {"token": "<JWT>"} alone')
    try:
        return (("authorization", "Bearer " + _printable(token, "the token")),)
    except GatewayError as error:
        raise _Closing(_failed(error.status, http_status=error.http_status)) from None
