"""The gRPC servicer of ``truc.v1.GameService``: requests in, protos out.

No rules logic and no validation here: it authenticates the caller, converts
the request (:mod:`truc_protocol.convert`), calls the use case
(:mod:`truc_game.service`, which validates) and converts the result. Every
failure goes through the kit's guard (:mod:`truc_service.guard`) and its one
error table (:func:`truc_service.errors.to_status`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_game.names import game_name, parse_game_name
from truc_game.ports import GameStore, VersionFeed
from truc_game.service import GameService, NewGame, SeatView, stream_changes
from truc_protocol.convert import (
    action_from_proto,
    card_from_proto,
    deal_from_proto,
    events_to_proto,
    minimal_view_from_proto,
    minimal_view_to_proto,
    options_from_proto,
    seat_view_from_public,
    view_to_proto,
    watch_events_bytes,
)
from truc_rules.registry import deck_of, rule_set_of, seat_count
from truc_service.guard import Context, bearer, guarded, guarded_stream, lenient, require
from truc_service.tokens import Identity, TokenVerifier, full_token
from truc_telemetry import logs

from .fanout import PublicViews
from .play import serve_session

__all__ = ["GameServicer", "add_to_server"]

_SERVICE = "truc.v1.GameService"


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
            request_deserializer=lenient(game_service_pb2.CreateGameRequest.FromString),
            response_serializer=game_service_pb2.CreateGameResponse.SerializeToString,
        ),
        "GetGame": grpc.unary_unary_rpc_method_handler(
            servicer.GetGame,
            request_deserializer=lenient(game_service_pb2.GetGameRequest.FromString),
            response_serializer=game_service_pb2.GetGameResponse.SerializeToString,
        ),
        "SubmitAction": grpc.unary_unary_rpc_method_handler(
            servicer.SubmitAction,
            request_deserializer=lenient(game_service_pb2.SubmitActionRequest.FromString),
            response_serializer=game_service_pb2.SubmitActionResponse.SerializeToString,
        ),
        "WatchGame": grpc.unary_stream_rpc_method_handler(
            servicer.WatchGame,
            request_deserializer=lenient(game_service_pb2.WatchGameRequest.FromString),
            response_serializer=game_service_pb2.WatchGameResponse.SerializeToString,
        ),
        "GetReplay": grpc.unary_unary_rpc_method_handler(
            servicer.GetReplay,
            request_deserializer=lenient(game_service_pb2.GetReplayRequest.FromString),
            response_serializer=game_service_pb2.GetReplayResponse.SerializeToString,
        ),
        # Play's responses are serialized PlayResponse bytes already (api.play).
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=lenient(game_service_pb2.PlayRequest.FromString),
            response_serializer=bytes,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))


class GameServicer(game_service_pb2_grpc.GameServiceServicer):
    def __init__(
        self, service: GameService, store: GameStore, hub: VersionFeed, verifier: TokenVerifier
    ) -> None:
        self._service = service
        self._store = store
        self._hub = hub
        self._verifier = verifier
        self._public = PublicViews()

    def _identity(self, context: Context, *, stream: bool = False) -> Identity:
        """The caller (bound to the log context). A stream token (short-lived,
        for a stream's URL: :attr:`Identity.stream_only`) is enough for
        WatchGame (``stream``) only: anything else is PERMISSION_DENIED
        ``STREAM_TOKEN_WATCH_ONLY``."""
        identity = self._verifier.verify(bearer(context))
        logs.bind(player=identity.player)
        return identity if stream else full_token(identity, "WatchGame streams")

    @staticmethod
    def _view(seat_view: SeatView) -> game_pb2.GameView:
        return view_to_proto(
            seat_view.view,
            name=game_name(seat_view.game_id),
            players=seat_view.meta.players,
            etag=seat_view.etag,
            deadline_ms=seat_view.deadline_ms,
            event_versions=seat_view.event_versions,
            absent=seat_view.absent,
            display_names=seat_view.meta.display_names,
        )

    @guarded
    async def CreateGame(  # noqa: N802 - the generated servicer's method name
        self, raw: game_service_pb2.CreateGameRequest | None, context: Context
    ) -> game_service_pb2.CreateGameResponse:
        request = require(raw, "CreateGameRequest")
        identity = self._identity(context)
        options = options_from_proto(request.options)
        seats = seat_count(options)
        pack = deck_of(rule_set_of(options))
        new = NewGame(
            game_id=request.game_id,
            players=list(request.players),
            options=options,
            turn_seconds=request.turn_seconds,
            dealer=request.dealer if request.HasField("dealer") else None,
            fixed_deals=[
                deal_from_proto(deal, f"fixed_deals[{i}]", seats, pack)
                for i, deal in enumerate(request.fixed_deals)
            ],
            start_scores=(request.start_scores.team_a, request.start_scores.team_b),
            start_manches=(request.start_manches.team_a, request.start_manches.team_b),
            fixed_draws=[
                card_from_proto(c, f"fixed_draws[{i}]", pack, strict=True)
                for i, c in enumerate(request.fixed_draws)
            ],
            display_names=list(request.display_names),
        )
        seat_view = await self._service.create_game(identity, new)
        return game_service_pb2.CreateGameResponse(
            name=game_name(seat_view.game_id), game=self._view(seat_view)
        )

    @guarded
    async def GetGame(  # noqa: N802
        self, raw: game_service_pb2.GetGameRequest | None, context: Context
    ) -> game_service_pb2.GetGameResponse:
        request = require(raw, "GetGameRequest")
        identity = self._identity(context)
        game_id = _game_id(request.name)
        seat_view = await self._service.get_game(identity, game_id)
        return game_service_pb2.GetGameResponse(game=self._view(seat_view))

    @guarded
    async def SubmitAction(  # noqa: N802
        self, raw: game_service_pb2.SubmitActionRequest | None, context: Context
    ) -> game_service_pb2.SubmitActionResponse:
        request = require(raw, "SubmitActionRequest")
        identity = self._identity(context)
        game_id = _game_id(request.name)
        logs.bind(request_id=request.request_id or None)
        # The protocol is checked before anything is loaded; a card is read again
        # in the game's pack once the game is (read_in).
        action = action_from_proto(request.action)
        minimal = minimal_view_from_proto(request.response_view)
        seat_view = await self._service.submit_action(
            identity,
            game_id,
            action,
            etag=request.etag,
            request_id=request.request_id,
            read_in=functools.partial(action_from_proto, request.action),
        )
        if minimal:
            return game_service_pb2.SubmitActionResponse(
                game=minimal_view_to_proto(seat_view.view, name=request.name, etag=seat_view.etag),
                events=events_to_proto(seat_view.view.events, seat_view.version),
            )
        response = game_service_pb2.SubmitActionResponse(game=self._view(seat_view))
        response.events.extend(response.game.events)
        response.game.ClearField("events")
        return response

    @guarded_stream
    async def WatchGame(  # noqa: N802
        self, raw: game_service_pb2.WatchGameRequest | None, context: Context
    ) -> AsyncIterator[game_service_pb2.WatchGameResponse]:
        request = require(raw, "WatchGameRequest")
        identity = self._identity(context, stream=True)
        game_id = _game_id(request.name)
        minimal = minimal_view_from_proto(request.response_view)
        watch = await self._service.open_watch(identity, game_id, request.after_version)
        try:
            if watch.over and request.after_version >= watch.version:
                return  # the client has seen the end already: nothing will follow
            changes = stream_changes(
                self._service,
                game_id,
                watch.seat,
                self._hub.follow(game_id, request.after_version),
                watch.meta,
            )
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
        finally:
            await self._service.end_watch(watch)

    @guarded
    async def GetReplay(  # noqa: N802
        self, raw: game_service_pb2.GetReplayRequest | None, context: Context
    ) -> game_service_pb2.GetReplayResponse:
        request = require(raw, "GetReplayRequest")
        identity = self._identity(context)
        game_id = _game_id(request.name)
        minimal = minimal_view_from_proto(request.response_view)
        page = await self._service.get_replay(
            identity,
            game_id,
            page_size=request.page_size,
            page_token=request.page_token,
            as_spectator=request.as_spectator,
        )
        response = game_service_pb2.GetReplayResponse(
            next_page_token=page.next_page_token,
            latest_version=page.latest_version,
            finished=page.finished,
        )
        add_step = response.steps.add
        for seat_view in page.steps:
            step = add_step(version=seat_view.version)
            if minimal:
                step.game.CopyFrom(
                    minimal_view_to_proto(seat_view.view, name=request.name, etag=seat_view.etag)
                )
                step.events.extend(events_to_proto(seat_view.view.events, seat_view.version))
            else:
                step.game.CopyFrom(self._view(seat_view))
                step.events.extend(step.game.events)
                step.game.ClearField("events")
        return response

    async def Play(  # type: ignore[override]  # noqa: N802 - responses are written as bytes
        self,
        request_iterator: AsyncIterator[game_service_pb2.PlayRequest | None],
        context: Context,
    ) -> None:
        await serve_session(
            service=self._service,
            store=self._store,
            feed=self._hub,
            public=self._public,
            identify=self._identity,
            requests=request_iterator,
            context=context,
        )
