"""The gRPC servicer of ``truc.v1.LobbyService``.

Each method reads its request (:func:`~truc_service.guard.require`: bytes that
did not parse are INVALID_ARGUMENT ``BAD_REQUEST``) and the caller's token
(:func:`~truc_service.guard.bearer`), calls the use case and builds the reply.
Every failure, a :class:`~truc_protocol.errors.ServiceError` of the use cases
or the store (``STORE_UNAVAILABLE``) or a bug, is answered by the kit's one
table (:func:`truc_service.errors.to_status`, through
:func:`~truc_service.guard.guarded`); no store is imported here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
from truc.v1 import lobby_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from truc_service.guard import Context, bearer, guarded, guarded_stream, lenient, require
from truc_telemetry import logs

from .service import LobbyService, parse_ticket_name
from .watch import TicketHub

__all__ = ["LobbyServicer", "add_to_server"]

_OPEN = (lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION, lobby_pb2.TICKET_STATE_QUEUED)


class LobbyServicer(lobby_service_pb2_grpc.LobbyServiceServicer):
    def __init__(self, service: LobbyService, hub: TicketHub, *, heartbeat_seconds: float) -> None:
        self._service = service
        self._hub = hub
        self._heartbeat = heartbeat_seconds

    def _player(self, context: Context) -> str:
        """The caller (bound to the log context)."""
        player = self._service.tokens.verify(bearer(context))
        logs.bind(player=player)
        return player

    @guarded
    async def SignInGuest(  # noqa: N802 - the generated servicer's method name
        self, raw: lobby_service_pb2.SignInGuestRequest | None, context: Context
    ) -> lobby_service_pb2.SignInGuestResponse:
        request = require(raw, "SignInGuestRequest")
        player, token, expires = self._service.sign_in_guest(request.display_name)
        response = lobby_service_pb2.SignInGuestResponse(player=player, token=token)
        response.expire_time.FromSeconds(expires)
        return response

    @guarded
    async def CreateTicket(  # noqa: N802
        self, raw: lobby_service_pb2.CreateTicketRequest | None, context: Context
    ) -> lobby_service_pb2.CreateTicketResponse:
        request = require(raw, "CreateTicketRequest")
        player = self._player(context)
        stored = await self._service.create_ticket(player, list(request.party), request.options)
        logs.bind(ticket=stored.ticket)
        return lobby_service_pb2.CreateTicketResponse(
            ticket=self._service.ticket_proto(stored, player)
        )

    @guarded
    async def ConfirmTicket(  # noqa: N802
        self, raw: lobby_service_pb2.ConfirmTicketRequest | None, context: Context
    ) -> lobby_service_pb2.ConfirmTicketResponse:
        request = require(raw, "ConfirmTicketRequest")
        player = self._player(context)
        stored = await self._service.confirm_ticket(player, _ticket(request.name))
        return lobby_service_pb2.ConfirmTicketResponse(
            ticket=self._service.ticket_proto(stored, player)
        )

    @guarded
    async def GetTicket(  # noqa: N802
        self, raw: lobby_service_pb2.GetTicketRequest | None, context: Context
    ) -> lobby_service_pb2.GetTicketResponse:
        request = require(raw, "GetTicketRequest")
        player = self._player(context)
        stored = await self._service.get_ticket(player, _ticket(request.name))
        return lobby_service_pb2.GetTicketResponse(
            ticket=self._service.ticket_proto(stored, player)
        )

    @guarded
    async def CancelTicket(  # noqa: N802
        self, raw: lobby_service_pb2.CancelTicketRequest | None, context: Context
    ) -> lobby_service_pb2.CancelTicketResponse:
        request = require(raw, "CancelTicketRequest")
        player = self._player(context)
        stored = await self._service.cancel_ticket(player, _ticket(request.name))
        return lobby_service_pb2.CancelTicketResponse(
            ticket=self._service.ticket_proto(stored, player)
        )

    @guarded_stream
    async def WatchTicket(  # noqa: N802
        self, raw: lobby_service_pb2.WatchTicketRequest | None, context: Context
    ) -> AsyncIterator[lobby_service_pb2.WatchTicketResponse]:
        request = require(raw, "WatchTicketRequest")
        player = self._player(context)
        ticket = _ticket(request.name)
        changed = self._hub.register(ticket)
        try:
            last: lobby_pb2.Ticket | None = None
            while True:
                stored = await self._service.get_ticket(player, ticket)
                current = self._service.ticket_proto(stored, player)
                if last is None or _changed(last, current):
                    yield lobby_service_pb2.WatchTicketResponse(ticket=current)
                    last = current
                if current.state not in _OPEN:
                    return
                await self._service.heartbeat(ticket)
                changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), self._heartbeat)
        finally:
            self._hub.unregister(ticket, changed)

    @guarded
    async def ListGames(  # noqa: N802
        self, raw: lobby_service_pb2.ListGamesRequest | None, context: Context
    ) -> lobby_service_pb2.ListGamesResponse:
        request = require(raw, "ListGamesRequest")
        player = self._player(context)
        games, next_token = await self._service.list_games(
            player, request.page_size, request.page_token, request.rule_set
        )
        return lobby_service_pb2.ListGamesResponse(games=games, next_page_token=next_token)


def _ticket(name: str) -> str:
    """The ticket id in ``name`` (bound to the log context)."""
    ticket = parse_ticket_name(name)
    logs.bind(ticket=ticket)
    return ticket


def _changed(before: lobby_pb2.Ticket, after: lobby_pb2.Ticket) -> bool:
    return before.state != after.state or list(before.members) != list(after.members)


def add_to_server(servicer: LobbyServicer, server: grpc.aio.Server) -> None:
    """Register the servicer with lenient request parsing (bad bytes: INVALID_ARGUMENT)."""
    m = lobby_service_pb2
    unary: dict[str, tuple[Any, Any]] = {
        "SignInGuest": (m.SignInGuestRequest, m.SignInGuestResponse),
        "CreateTicket": (m.CreateTicketRequest, m.CreateTicketResponse),
        "ConfirmTicket": (m.ConfirmTicketRequest, m.ConfirmTicketResponse),
        "GetTicket": (m.GetTicketRequest, m.GetTicketResponse),
        "CancelTicket": (m.CancelTicketRequest, m.CancelTicketResponse),
        "ListGames": (m.ListGamesRequest, m.ListGamesResponse),
    }
    handlers: dict[str, grpc.RpcMethodHandler[object, object]] = {
        name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=lenient(request.FromString),
            response_serializer=response.SerializeToString,
        )
        for name, (request, response) in unary.items()
    }
    handlers["WatchTicket"] = grpc.unary_stream_rpc_method_handler(
        servicer.WatchTicket,
        request_deserializer=lenient(m.WatchTicketRequest.FromString),
        response_serializer=m.WatchTicketResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("truc.v1.LobbyService", handlers),)
    )
