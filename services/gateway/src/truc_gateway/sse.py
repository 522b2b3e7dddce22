"""Server-streaming RPCs as Server-Sent Events (``text/event-stream``).

Each streamed message is one event: ``id: <its version>`` when the route has an
event-id field (WatchGame), then ``data: <the message as proto3 JSON>``. A
comment line (``: heartbeat``) follows every ``heartbeat`` seconds of silence,
so proxies keep the connection and a vanished client is noticed. When the gRPC
stream ends normally the gateway sends ``event: end`` (clients close their
EventSource on it, or it would reconnect) and closes the response; when it fails
after the response started, ``event: error`` with the google.rpc.Status JSON.

Errors that come before anything was streamed (a bad token, an unknown game)
are ordinary JSON error responses: the gateway waits up to
:data:`PRELUDE_SECONDS` for the stream's first message, its end or its error
before it commits to ``200``. The client going away (or the gateway stopping)
cancels the gRPC call.

Every event sent counts in ``truc_gateway_sse_events_total{route,event}``, and
:class:`StreamEnd` tells the caller the status code the gRPC stream ended with
(for ``truc_gateway_upstream_duration_seconds`` and the call's span).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Final

import grpc
from aiohttp import web
from google.protobuf.message import Message

from .errors import error_response, rpc_error_status, status_json
from .metrics import SSE_EVENTS
from .routes import Route
from .transcode import message_json

__all__ = ["PRELUDE_SECONDS", "StreamEnd", "event_bytes", "relay_stream"]

PRELUDE_SECONDS: Final = 1.0
"""How long a stream may stay silent before the gateway answers 200 without its
first message (its errors after that arrive as ``event: error``)."""

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}

log = logging.getLogger("truc.gateway.sse")


@dataclass(slots=True)
class StreamEnd:
    """How the relayed gRPC stream ended: ``OK`` (it ended), the code of its error,
    or ``CANCELLED`` (the client went away or the gateway stopped)."""

    code: grpc.StatusCode = grpc.StatusCode.CANCELLED
    started: bool = False
    """Whether the 200 and the SSE headers were sent."""


class _Counted:
    """The event counters of one route."""

    __slots__ = ("end", "error", "message")

    def __init__(self, route: str) -> None:
        self.message = SSE_EVENTS.labels(route, "message")
        self.end = SSE_EVENTS.labels(route, "end")
        self.error = SSE_EVENTS.labels(route, "error")


_COUNTED: dict[str, _Counted] = {}


def event_bytes(route: Route, message: Message) -> bytes:
    """One SSE event for a streamed message."""
    lines = []
    id_field = route.event_id_field
    if id_field is not None:
        lines.append(f"id: {getattr(message, id_field.name)}\n")
    lines.append(f"data: {message_json(message)}\n\n")
    return "".join(lines).encode()


async def relay_stream(
    request: web.Request,
    route: Route,
    call: grpc.aio.UnaryStreamCall[Any, Any],
    *,
    heartbeat: float,
    stopping: asyncio.Event,
    end: StreamEnd,
) -> web.StreamResponse:
    """Relay ``call`` to ``request`` as SSE until it ends, the client leaves or the
    gateway stops; the call is cancelled on the way out whatever happens, and
    ``end`` says how it ended."""
    counted = _COUNTED.get(route.method.name)
    if counted is None:
        counted = _COUNTED[route.method.name] = _Counted(route.method.name)
    pending: asyncio.Future[Any] = asyncio.ensure_future(call.read())
    stop = asyncio.ensure_future(stopping.wait())
    try:
        await asyncio.wait({pending, stop}, timeout=PRELUDE_SECONDS, return_when="FIRST_COMPLETED")
        if pending.done() and not pending.cancelled():
            error = pending.exception()
            if isinstance(error, grpc.aio.AioRpcError):
                end.code = error.code()
                return error_response(rpc_error_status(error))
        response = web.StreamResponse(headers=SSE_HEADERS)
        await response.prepare(request)
        end.started = True
        while True:
            done, _ = await asyncio.wait(
                {pending, stop}, timeout=heartbeat, return_when="FIRST_COMPLETED"
            )
            if not done:
                await response.write(b": heartbeat\n\n")
                continue
            if pending not in done:  # the gateway is stopping: the client reconnects elsewhere
                break
            try:
                item = pending.result()
            except grpc.aio.AioRpcError as error:
                end.code = error.code()
                body = status_json(rpc_error_status(error))
                await response.write(f"event: error\ndata: {body}\n\n".encode())
                counted.error.inc()
                break
            if item is grpc.aio.EOF:  # type: ignore[attr-defined]
                end.code = grpc.StatusCode.OK
                await response.write(b"event: end\ndata: {}\n\n")
                counted.end.inc()
                break
            await response.write(event_bytes(route, item))
            counted.message.inc()
            pending = asyncio.ensure_future(call.read())
        await response.write_eof()
        return response
    except ConnectionError:  # the client went away mid-write
        log.debug("%s: client gone", route.method.name)
        raise
    finally:
        call.cancel()
        for future in (pending, stop):
            future.cancel()
        await asyncio.gather(pending, stop, return_exceptions=True)
