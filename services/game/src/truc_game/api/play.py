"""The Play RPC: a session per player, over one bidirectional gRPC stream.

The transport side of :mod:`truc_game.sessions`: read the ``open`` request,
open the session, then run two loops until the match is over or the client
goes: one reads the client's actions and hands them to the session (one at a
time, in order), the other writes the session's messages (updates, refusals,
repeats). Writing waits for the client to read (HTTP/2 flow control), and the
session coalesces what it cannot send meanwhile, so a client that stops reading
costs bounded memory. Updates are serialized field by field from parts shared
by every session of the version (:mod:`.fanout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from truc.v1 import game_service_pb2

from truc_game.names import game_name, parse_game_name
from truc_game.ports import GameStore, VersionFeed
from truc_game.service import GameService
from truc_game.sessions import Refused, Repeated, Session, Update, open_session
from truc_protocol.convert import (
    action_from_proto,
    minimal_view_from_proto,
    minimal_view_to_proto,
    play_response_bytes,
    seat_view_bytes,
    session_events_bytes,
)
from truc_protocol.errors import InvalidArgument, ServiceError
from truc_service.errors import GRPC_CODES
from truc_service.guard import Context, abort
from truc_service.tokens import Identity
from truc_telemetry import logs

from .fanout import PublicViews

__all__ = ["OPEN_TIMEOUT_S", "serve_session"]

log = logging.getLogger("truc.game.play")

OPEN_TIMEOUT_S: Final = 30.0
"""How long a new stream has to send its ``open`` request."""
LINGER_S: Final = 1.0
"""After the version that finishes the match, how long the stream stays open to
answer the actions the client sent before it saw that version (a resent action
is then answered ``repeated``, or refused ``GAME_OVER``), unless the client
half-closes first."""
_METHOD = "Play"

Requests = AsyncIterator[game_service_pb2.PlayRequest | None]


async def serve_session(
    *,
    service: GameService,
    store: GameStore,
    feed: VersionFeed,
    public: PublicViews,
    identify: Callable[[Context], Identity],
    requests: Requests,
    context: Context,
) -> None:
    """Serve one Play stream to its end."""
    try:
        # The first request is read before the token is checked: a client writes
        # it right after opening, and a stream ended before that write races it
        # (the client's write would hide the status the stream ended with).
        try:
            first = await asyncio.wait_for(anext(requests), OPEN_TIMEOUT_S)
        except (StopAsyncIteration, TimeoutError):
            raise InvalidArgument(
                "BAD_REQUEST", f"a session starts with an open request, within {OPEN_TIMEOUT_S} s"
            ) from None
        identity = identify(context)
        if first is None or first.WhichOneof("kind") != "open":
            raise InvalidArgument("BAD_REQUEST", "a session's first request must be open")
        opening = first.open
        game_id = parse_game_name(opening.name)
        logs.bind(game=game_id)
        minimal = minimal_view_from_proto(opening.response_view, "open.response_view")
        session = await open_session(
            service,
            store=store,
            feed=feed,
            identity=identity,
            game_id=game_id,
            after_version=opening.after_version,
        )
    except Exception as exc:
        await abort(context, exc, _METHOD)
        raise
    if session is None:
        return  # the client has seen the end already
    name = game_name(game_id)
    reader = asyncio.create_task(_read_actions(session, requests))
    try:
        while (message := await session.next()) is not None:
            await context.write(_encode(message, name, minimal, public))
        await _linger(session, reader, lambda m: context.write(_encode(m, name, minimal, public)))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if context.cancelled() or context.done():
            return  # the client went away while we wrote to it
        await abort(context, exc, _METHOD)
        raise
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
        await session.close()


async def _linger(
    session: Session,
    reader: asyncio.Task[None],
    write: Callable[[Refused | Repeated], Awaitable[None]],
) -> None:
    """Answer what the client sent before it saw the end, for :data:`LINGER_S`."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LINGER_S):
            while not reader.done():
                reply = asyncio.ensure_future(session.reply())
                done, _ = await asyncio.wait({reply, reader}, return_when=asyncio.FIRST_COMPLETED)
                if reply not in done:
                    reply.cancel()
                    break
                await write(reply.result())
    while (pending := session.pending_reply()) is not None:
        await write(pending)


async def _read_actions(session: Session, requests: Requests) -> None:
    """Hand the client's actions to the session, in order; a request that is not
    an action ends the stream with its error (:meth:`Session.fail`)."""
    try:
        async for request in requests:
            await session.room()
            if request is None or request.WhichOneof("kind") != "action":
                raise InvalidArgument("BAD_REQUEST", "after open, a session's requests are actions")
            sent = request.action
            logs.bind(request_id=sent.request_id or None)
            try:
                action = action_from_proto(sent.action)
            except ServiceError as exc:
                await session.refuse(sent.request_id, exc)
                continue
            await session.act(
                action,
                etag=sent.etag,
                request_id=sent.request_id,
                read_in=functools.partial(action_from_proto, sent.action),
            )
    except Exception as exc:
        session.fail(exc)


def _encode(
    message: Update | Refused | Repeated, name: str, minimal: bool, public: PublicViews
) -> bytes:
    if isinstance(message, Update):
        seat_view = message.seat_view
        view = seat_view.view
        if minimal:
            game = minimal_view_to_proto(view, name=name, etag=seat_view.etag).SerializeToString()
        else:
            game = seat_view_bytes(public.of(seat_view), view)
        return play_response_bytes(
            version=seat_view.version,
            from_version=message.from_version,
            events=session_events_bytes(view.events, seat_view.event_versions),
            game=game,
            request_id=message.request_id,
        )
    if isinstance(message, Repeated):
        return game_service_pb2.PlayResponse(
            version=message.version, request_id=message.request_id, repeated=True
        ).SerializeToString()
    error = message.error
    return game_service_pb2.PlayResponse(
        version=message.version,
        request_id=message.request_id,
        refused=game_service_pb2.ActionRefused(
            code=GRPC_CODES[error.code].value[0],
            reason=error.reason,
            message=error.message,
            metadata=error.metadata,
        ),
    ).SerializeToString()
