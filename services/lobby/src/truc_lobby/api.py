"""The gRPC servicer of ``truc.v1.LobbyService``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError
from truc.v1 import lobby_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from truc_telemetry import logs

from .errors import LobbyError, to_status
from .service import LobbyService, parse_ticket_name
from .watch import TicketHub

__all__ = ["LobbyServicer", "add_to_server"]

_Context = grpc.aio.ServicerContext[object, object]
_Request = TypeVar("_Request")
_OPEN = (lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION, lobby_pb2.TICKET_STATE_QUEUED)


def _require(request: _Request | None, kind: str) -> _Request:
    if request is None:
        raise LobbyError(
            grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST", f"the request is not a valid {kind}"
        )
    return request


class LobbyServicer(lobby_service_pb2_grpc.LobbyServiceServicer):
    def __init__(self, service: LobbyService, hub: TicketHub, *, heartbeat_seconds: float) -> None:
        self._service = service
        self._hub = hub
        self._heartbeat = heartbeat_seconds

    def _player(self, context: _Context) -> str:
        """The caller (bound to the log context)."""
        token: str | None = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str):
                token = value
                break
        player = self._service.tokens.verify(token)
        logs.bind(player=player)
        return player

    @staticmethod
    async def _abort(context: _Context, error: Exception, method: str) -> None:
        code, message, trailers = to_status(error, method=method)
        await context.abort(code, message, trailers)

    async def SignInGuest(  # noqa: N802 - the generated servicer's method name
        self, raw: lobby_service_pb2.SignInGuestRequest | None, context: _Context
    ) -> lobby_service_pb2.SignInGuestResponse:
        try:
            request = _require(raw, "SignInGuestRequest")
            player, token, expires = self._service.sign_in_guest(request.display_name)
            response = lobby_service_pb2.SignInGuestResponse(player=player, token=token)
            response.expire_time.FromSeconds(expires)
            return response
        except Exception as exc:
            await self._abort(context, exc, "SignInGuest")
            raise

    async def CreateTicket(  # noqa: N802
        self, raw: lobby_service_pb2.CreateTicketRequest | None, context: _Context
    ) -> lobby_service_pb2.CreateTicketResponse:
        try:
            request = _require(raw, "CreateTicketRequest")
            player = self._player(context)
            stored = await self._service.create_ticket(player, list(request.party), request.options)
            logs.bind(ticket=stored.ticket)
            return lobby_service_pb2.CreateTicketResponse(
                ticket=self._service.ticket_proto(stored, player)
            )
        except Exception as exc:
            await self._abort(context, exc, "CreateTicket")
            raise

    async def ConfirmTicket(  # noqa: N802
        self, raw: lobby_service_pb2.ConfirmTicketRequest | None, context: _Context
    ) -> lobby_service_pb2.ConfirmTicketResponse:
        try:
            request = _require(raw, "ConfirmTicketRequest")
            player = self._player(context)
            stored = await self._service.confirm_ticket(player, _ticket(request.name))
            return lobby_service_pb2.ConfirmTicketResponse(
                ticket=self._service.ticket_proto(stored, player)
            )
        except Exception as exc:
            await self._abort(context, exc, "ConfirmTicket")
            raise

    async def GetTicket(  # noqa: N802
        self, raw: lobby_service_pb2.GetTicketRequest | None, context: _Context
    ) -> lobby_service_pb2.GetTicketResponse:
        try:
            request = _require(raw, "GetTicketRequest")
            player = self._player(context)
            stored = await self._service.get_ticket(player, _ticket(request.name))
            return lobby_service_pb2.GetTicketResponse(
                ticket=self._service.ticket_proto(stored, player)
            )
        except Exception as exc:
            await self._abort(context, exc, "GetTicket")
            raise

    async def CancelTicket(  # noqa: N802
        self, raw: lobby_service_pb2.CancelTicketRequest | None, context: _Context
    ) -> lobby_service_pb2.CancelTicketResponse:
        try:
            request = _require(raw, "CancelTicketRequest")
            player = self._player(context)
            stored = await self._service.cancel_ticket(player, _ticket(request.name))
            return lobby_service_pb2.CancelTicketResponse(
                ticket=self._service.ticket_proto(stored, player)
            )
        except Exception as exc:
            await self._abort(context, exc, "CancelTicket")
            raise

    async def WatchTicket(  # noqa: N802
        self, raw: lobby_service_pb2.WatchTicketRequest | None, context: _Context
    ) -> AsyncIterator[lobby_service_pb2.WatchTicketResponse]:
        try:
            request = _require(raw, "WatchTicketRequest")
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
                    await self._service.store.heartbeat(ticket, int(time.time() * 1000))
                    changed.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(changed.wait(), self._heartbeat)
            finally:
                self._hub.unregister(ticket, changed)
        except Exception as exc:
            await self._abort(context, exc, "WatchTicket")
            raise

    async def ListGames(  # noqa: N802
        self, raw: lobby_service_pb2.ListGamesRequest | None, context: _Context
    ) -> lobby_service_pb2.ListGamesResponse:
        try:
            request = _require(raw, "ListGamesRequest")
            player = self._player(context)
            games, next_token = await self._service.list_games(
                player, request.page_size, request.page_token
            )
            return lobby_service_pb2.ListGamesResponse(games=games, next_page_token=next_token)
        except Exception as exc:
            await self._abort(context, exc, "ListGames")
            raise


def _ticket(name: str) -> str:
    """The ticket id in ``name`` (bound to the log context)."""
    ticket = parse_ticket_name(name)
    logs.bind(ticket=ticket)
    return ticket


def _changed(before: lobby_pb2.Ticket, after: lobby_pb2.Ticket) -> bool:
    return before.state != after.state or list(before.members) != list(after.members)


def _lenient(parse: Callable[[bytes], _Request]) -> Callable[[bytes], _Request | None]:
    def deserialize(data: bytes) -> _Request | None:
        try:
            return parse(data)
        except DecodeError:
            return None

    return deserialize


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
            request_deserializer=_lenient(request.FromString),
            response_serializer=response.SerializeToString,
        )
        for name, (request, response) in unary.items()
    }
    handlers["WatchTicket"] = grpc.unary_stream_rpc_method_handler(
        servicer.WatchTicket,
        request_deserializer=_lenient(m.WatchTicketRequest.FromString),
        response_serializer=m.WatchTicketResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("truc.v1.LobbyService", handlers),)
    )
