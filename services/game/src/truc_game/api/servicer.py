"""The gRPC servicer of ``truc.v1.GameService``: requests in, protos out.

No rules logic here: it authenticates the caller, converts the request
(:mod:`.convert`), calls the use case (:mod:`truc_game.service`) and converts
the result. Every failure goes through :func:`.errors.to_status`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TypeVar

import grpc
from google.protobuf.message import DecodeError
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_game.auth import Identity, TokenVerifier
from truc_game.errors import InvalidArgument
from truc_game.names import game_name, parse_game_name
from truc_game.service import GameService, NewGame, SeatView, stream_changes
from truc_game.watch import WatchHub
from truc_telemetry import logs

from .convert import (
    action_from_proto,
    card_from_proto,
    deal_from_proto,
    events_to_proto,
    minimal_view_to_proto,
    options_from_proto,
    seat_view_from_public,
    view_to_proto,
    watch_events_bytes,
)
from .errors import to_status
from .fanout import PublicViews

__all__ = ["GameServicer", "add_to_server"]

_Context = grpc.aio.ServicerContext[object, object]
_Request = TypeVar("_Request")
_SERVICE = "truc.v1.GameService"


def _lenient(parse: Callable[[bytes], _Request]) -> Callable[[bytes], _Request | None]:
    """A request deserializer that answers None instead of raising on bad bytes,
    so that the method refuses them with INVALID_ARGUMENT (BAD_REQUEST) and an
    ErrorInfo, rather than grpc answering UNKNOWN and logging a traceback."""

    def deserialize(data: bytes) -> _Request | None:
        try:
            return parse(data)
        except DecodeError:
            return None

    return deserialize


def _require(request: _Request | None, kind: str) -> _Request:
    if request is None:
        raise InvalidArgument("BAD_REQUEST", f"the request is not a valid truc.v1.{kind}")
    return request


def _game_id(name: str) -> str:
    """The game id in ``name`` (bound to the log context)."""
    game_id = parse_game_name(name)
    logs.bind(game=game_id)
    return game_id


def add_to_server(servicer: GameServicer, server: grpc.aio.Server) -> None:
    """Register ``servicer`` (as the generated ``add_..._to_server`` would, but
    with lenient request deserializers)."""
    handlers = {
        "CreateGame": grpc.unary_unary_rpc_method_handler(
            servicer.CreateGame,
            request_deserializer=_lenient(game_service_pb2.CreateGameRequest.FromString),
            response_serializer=game_service_pb2.CreateGameResponse.SerializeToString,
        ),
        "GetGame": grpc.unary_unary_rpc_method_handler(
            servicer.GetGame,
            request_deserializer=_lenient(game_service_pb2.GetGameRequest.FromString),
            response_serializer=game_service_pb2.GetGameResponse.SerializeToString,
        ),
        "SubmitAction": grpc.unary_unary_rpc_method_handler(
            servicer.SubmitAction,
            request_deserializer=_lenient(game_service_pb2.SubmitActionRequest.FromString),
            response_serializer=game_service_pb2.SubmitActionResponse.SerializeToString,
        ),
        "WatchGame": grpc.unary_stream_rpc_method_handler(
            servicer.WatchGame,
            request_deserializer=_lenient(game_service_pb2.WatchGameRequest.FromString),
            response_serializer=game_service_pb2.WatchGameResponse.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))


class GameServicer(game_service_pb2_grpc.GameServiceServicer):
    def __init__(self, service: GameService, hub: WatchHub, verifier: TokenVerifier) -> None:
        self._service = service
        self._hub = hub
        self._verifier = verifier
        self._public = PublicViews()

    def _identity(self, context: _Context) -> Identity:
        """The caller (bound to the log context)."""
        token: str | None = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                token = value if isinstance(value, str) else None
                break
        identity = self._verifier.verify(token)
        logs.bind(player=identity.player)
        return identity

    @staticmethod
    def _view(seat_view: SeatView) -> game_pb2.GameView:
        return view_to_proto(
            seat_view.view,
            name=game_name(seat_view.game_id),
            players=seat_view.meta.players,
            etag=seat_view.etag,
            deadline_ms=seat_view.deadline_ms,
            event_versions=seat_view.event_versions,
        )

    @staticmethod
    async def _abort(context: _Context, error: Exception, method: str) -> None:
        status = to_status(error, method=method)
        await context.abort(status.code, status.message, status.trailers)

    async def CreateGame(  # noqa: N802 - the generated servicer's method name
        self, raw: game_service_pb2.CreateGameRequest | None, context: _Context
    ) -> game_service_pb2.CreateGameResponse:
        try:
            request = _require(raw, "CreateGameRequest")
            identity = self._identity(context)
            new = NewGame(
                game_id=request.game_id,
                players=list(request.players),
                options=options_from_proto(request.options),
                turn_seconds=request.turn_seconds,
                dealer=request.dealer if request.HasField("dealer") else None,
                fixed_deals=[
                    deal_from_proto(deal, f"fixed_deals[{i}]")
                    for i, deal in enumerate(request.fixed_deals)
                ],
                start_scores=(request.start_scores.team_a, request.start_scores.team_b),
                start_manches=(request.start_manches.team_a, request.start_manches.team_b),
            )
            draws = [
                card_from_proto(c, f"fixed_draws[{i}]") for i, c in enumerate(request.fixed_draws)
            ]
            if len(draws) % 2:
                raise InvalidArgument("BAD_REQUEST", "fixed_draws: pairs of cards (A's, then B's)")
            new = replace(new, fixed_draws=list(zip(draws[::2], draws[1::2], strict=True)))
            if new.dealer is not None and not 0 <= new.dealer <= 5:
                raise InvalidArgument("BAD_REQUEST", "dealer: a seat 0-5")
            seat_view = await self._service.create_game(identity, new)
            return game_service_pb2.CreateGameResponse(
                name=game_name(seat_view.game_id), game=self._view(seat_view)
            )
        except Exception as exc:
            await self._abort(context, exc, "CreateGame")
            raise

    async def GetGame(  # noqa: N802
        self, raw: game_service_pb2.GetGameRequest | None, context: _Context
    ) -> game_service_pb2.GetGameResponse:
        try:
            request = _require(raw, "GetGameRequest")
            identity = self._identity(context)
            game_id = _game_id(request.name)
            seat_view = await self._service.get_game(identity, game_id)
            return game_service_pb2.GetGameResponse(game=self._view(seat_view))
        except Exception as exc:
            await self._abort(context, exc, "GetGame")
            raise

    async def SubmitAction(  # noqa: N802
        self, raw: game_service_pb2.SubmitActionRequest | None, context: _Context
    ) -> game_service_pb2.SubmitActionResponse:
        try:
            request = _require(raw, "SubmitActionRequest")
            identity = self._identity(context)
            game_id = _game_id(request.name)
            logs.bind(request_id=request.request_id or None)
            action = action_from_proto(request.action)
            seat_view = await self._service.submit_action(
                identity, game_id, action, etag=request.etag, request_id=request.request_id
            )
            if request.response_view == game_service_pb2.RESPONSE_VIEW_MINIMAL:
                return game_service_pb2.SubmitActionResponse(
                    game=minimal_view_to_proto(
                        seat_view.view, name=request.name, etag=seat_view.etag
                    ),
                    events=events_to_proto(seat_view.view.events, seat_view.version),
                )
            response = game_service_pb2.SubmitActionResponse(game=self._view(seat_view))
            response.events.extend(response.game.events)
            response.game.ClearField("events")
            return response
        except Exception as exc:
            await self._abort(context, exc, "SubmitAction")
            raise

    async def WatchGame(  # noqa: N802
        self, raw: game_service_pb2.WatchGameRequest | None, context: _Context
    ) -> AsyncIterator[game_service_pb2.WatchGameResponse]:
        try:
            request = _require(raw, "WatchGameRequest")
            identity = self._identity(context)
            game_id = _game_id(request.name)
            if request.after_version < 0:
                raise InvalidArgument("BAD_REQUEST", "after_version: 0 or a version")
            watch = await self._service.authorize_watch(identity, game_id)
            if watch.over and request.after_version >= watch.version:
                return  # the client has seen the end already: nothing will follow
            changes = stream_changes(
                self._service,
                game_id,
                watch.seat,
                self._hub.follow(game_id, request.after_version),
                watch.meta,
            )
            minimal = request.response_view == game_service_pb2.RESPONSE_VIEW_MINIMAL
            async for seat_view in changes:
                view = seat_view.view
                response = game_service_pb2.WatchGameResponse(version=seat_view.version)
                if minimal:
                    response.game.CopyFrom(
                        minimal_view_to_proto(view, name=request.name, etag=seat_view.etag)
                    )
                else:
                    seat_view_from_public(response.game, self._public.of(seat_view), view)
                if view.events:
                    response.MergeFromString(watch_events_bytes(view.events, seat_view.version))
                yield response
        except Exception as exc:
            await self._abort(context, exc, "WatchGame")
            raise
