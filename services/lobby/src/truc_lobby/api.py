"""The gRPC servicer of ``truc.v1.LobbyService``.

Each method reads its request (:func:`~truc_service.guard.require`: bytes that
did not parse are INVALID_ARGUMENT ``BAD_REQUEST``) and the caller's token
(:func:`~truc_service.guard.bearer`), calls the use case and builds the reply.
Every failure, a :class:`~truc_protocol.errors.ServiceError` of the use cases
or the store (``STORE_UNAVAILABLE``) or a bug, is answered by the kit's one
table (:func:`truc_service.errors.to_status`, through
:func:`~truc_service.guard.guarded`); no store is imported here.

Only a player's token acts here (:meth:`~truc_lobby.tokens.TokenIssuer.player`:
PERMISSION_DENIED ``PLAYERS_ONLY`` otherwise), and a stream token only opens
WatchTicket (``STREAM_TOKEN_WATCH_ONLY`` elsewhere). SignInGuest is counted for the
call's client address (:class:`~truc_lobby.addresses.ClientAddresses`).
A WatchTicket stream follows its ticket, refreshing it every ``heartbeat``
seconds (a third of the shorter of the grace and the presence window) while
it is open; a player holds at most ``TRUC_TICKET_WATCHES_PER_PLAYER`` of them
open on one replica, and the replica ``TRUC_TICKET_WATCHES_PER_REPLICA``
(RESOURCE_EXHAUSTED ``RATE_LIMITED`` past either). The stream sends the ticket
whenever its state, its members or its queue's ``players_waiting`` changed,
and, while it is queued, again at least every ``progress`` seconds
(``TRUC_TICKET_PROGRESS_SECONDS``), so a client can show the bot wait's
countdown (``bots_time``): one read of the ticket per wake-up (a change, a
heartbeat or a progress tick), never more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
from truc.v1 import lobby_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from truc_service.guard import Context, bearer, guarded, guarded_stream, lenient, require
from truc_service.limits import Concurrency
from truc_service.tokens import Identity
from truc_telemetry import logs

from .addresses import ClientAddresses
from .service import LobbyService, parse_ticket_name
from .watch import TicketHub

__all__ = ["LobbyServicer", "add_to_server"]

_OPEN = (lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION, lobby_pb2.TICKET_STATE_QUEUED)


class LobbyServicer(lobby_service_pb2_grpc.LobbyServiceServicer):
    def __init__(
        self,
        service: LobbyService,
        hub: TicketHub,
        *,
        heartbeat_seconds: float,
        addresses: ClientAddresses,
        watches: Concurrency,
        progress_seconds: float = 5.0,
    ) -> None:
        self._service = service
        self._hub = hub
        self._heartbeat = heartbeat_seconds
        self._progress = progress_seconds
        self._addresses = addresses
        self._watches = watches

    def _player(self, context: Context, *, watching: bool = False) -> str:
        """The calling player (bound to the log context); a stream token only
        when ``watching``."""
        return self._identity(context, watching=watching).player

    def _identity(self, context: Context, *, watching: bool = False) -> Identity:
        """The calling player and their display name (see :meth:`_player`)."""
        identity = self._service.tokens.identity(bearer(context), watching=watching)
        logs.bind(player=identity.player)
        return identity

    @guarded
    async def SignInGuest(  # noqa: N802 - the generated servicer's method name
        self, raw: lobby_service_pb2.SignInGuestRequest | None, context: Context
    ) -> lobby_service_pb2.SignInGuestResponse:
        request = require(raw, "SignInGuestRequest")
        player, token, expires, name = await self._service.sign_in_guest(
            request.display_name, self._addresses.of(context)
        )
        response = lobby_service_pb2.SignInGuestResponse(
            player=player, token=token, display_name=name
        )
        response.expire_time.FromSeconds(expires)
        return response

    @guarded
    async def CreateTicket(  # noqa: N802
        self, raw: lobby_service_pb2.CreateTicketRequest | None, context: Context
    ) -> lobby_service_pb2.CreateTicketResponse:
        request = require(raw, "CreateTicketRequest")
        caller = self._identity(context)
        player = caller.player
        stored = await self._service.create_ticket(
            player,
            list(request.party),
            request.options,
            name=caller.display_name,
            private=request.private,
        )
        logs.bind(ticket=stored.ticket)
        return lobby_service_pb2.CreateTicketResponse(
            ticket=self._service.ticket_proto(stored, player)
        )

    @guarded
    async def ConfirmTicket(  # noqa: N802
        self, raw: lobby_service_pb2.ConfirmTicketRequest | None, context: Context
    ) -> lobby_service_pb2.ConfirmTicketResponse:
        request = require(raw, "ConfirmTicketRequest")
        caller = self._identity(context)
        player = caller.player
        stored = await self._service.confirm_ticket(
            player, _ticket(request.name), name=caller.display_name
        )
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
        player = self._player(context, watching=True)
        ticket = _ticket(request.name)
        with self._watches.hold(player):
            changed = self._hub.register(ticket)
            loop = asyncio.get_running_loop()
            wake = min(self._heartbeat, self._progress)
            try:
                last: lobby_pb2.Ticket | None = None
                sent_at = 0.0
                while True:
                    changed.clear()
                    stored = await self._service.get_ticket(player, ticket, watching=True)
                    current = self._service.ticket_proto(stored, player)
                    due = (
                        current.state == lobby_pb2.TICKET_STATE_QUEUED
                        and loop.time() - sent_at >= self._progress
                    )
                    if last is None or due or _changed(last, current):
                        yield lobby_service_pb2.WatchTicketResponse(ticket=current)
                        last, sent_at = current, loop.time()
                    if current.state not in _OPEN:
                        return
                    timeout = wake
                    if current.state == lobby_pb2.TICKET_STATE_QUEUED:
                        timeout = min(wake, max(0.0, sent_at + self._progress - loop.time()))
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(changed.wait(), timeout)
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

    @guarded
    async def CreateStreamToken(  # noqa: N802
        self, raw: lobby_service_pb2.CreateStreamTokenRequest | None, context: Context
    ) -> lobby_service_pb2.CreateStreamTokenResponse:
        require(raw, "CreateStreamTokenRequest")
        player = self._player(context)
        token, expires = await self._service.stream_token(player)
        response = lobby_service_pb2.CreateStreamTokenResponse(token=token)
        response.expire_time.FromSeconds(expires)
        return response

    @guarded
    async def ListLiveGames(  # noqa: N802
        self, raw: lobby_service_pb2.ListLiveGamesRequest | None, context: Context
    ) -> lobby_service_pb2.ListLiveGamesResponse:
        request = require(raw, "ListLiveGamesRequest")
        self._player(context)
        games, next_token = await self._service.list_live_games(
            request.page_size, request.page_token, request.rule_set
        )
        return lobby_service_pb2.ListLiveGamesResponse(games=games, next_page_token=next_token)

    @guarded
    async def CreateSpectatorGrant(  # noqa: N802
        self, raw: lobby_service_pb2.CreateSpectatorGrantRequest | None, context: Context
    ) -> lobby_service_pb2.CreateSpectatorGrantResponse:
        request = require(raw, "CreateSpectatorGrantRequest")
        caller = self._identity(context)
        token, expires, game = await self._service.spectator_grant(
            caller.player, caller.display_name, request.name
        )
        logs.bind(game=game)
        response = lobby_service_pb2.CreateSpectatorGrantResponse(token=token, game=game)
        response.expire_time.FromSeconds(expires)
        return response


def _ticket(name: str) -> str:
    """The ticket id in ``name`` (bound to the log context)."""
    ticket = parse_ticket_name(name)
    logs.bind(ticket=ticket)
    return ticket


def _changed(before: lobby_pb2.Ticket, after: lobby_pb2.Ticket) -> bool:
    return (
        before.state != after.state
        or list(before.members) != list(after.members)
        or before.players_waiting != after.players_waiting
    )


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
        "CreateStreamToken": (m.CreateStreamTokenRequest, m.CreateStreamTokenResponse),
        "ListLiveGames": (m.ListLiveGamesRequest, m.ListLiveGamesResponse),
        "CreateSpectatorGrant": (m.CreateSpectatorGrantRequest, m.CreateSpectatorGrantResponse),
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
