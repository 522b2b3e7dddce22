"""The players' gRPC transport: the lobby and the game service, straight.

Each player has its own two channels (``grpc.use_local_subchannel_pool``: its own
connections), balanced round robin over every lobby and every game replica
(``ipv4:A,B`` targets). :meth:`GrpcTransport.reconnect` closes them under the
calls in flight (a client dropping its connections mid-call) and opens new ones.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Iterator
from typing import TYPE_CHECKING, Final

import grpc
from grpc.aio import EOF  # type: ignore[attr-defined]
from truc.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_protocol.balancing import ROUND_ROBIN
from truc_protocol.status import reason_of

from .players import CallError

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub
    from truc.v1.lobby_service_pb2_grpc import LobbyServiceAsyncStub

__all__ = ["GrpcTransport"]

_OPTIONS: Final = (*ROUND_ROBIN, ("grpc.use_local_subchannel_pool", 1))
_LOBBY_TIMEOUT: Final = 5.0


def _error(error: grpc.aio.AioRpcError) -> CallError:
    return CallError(error.code(), reason_of(error) or "", error.details() or "")


@contextlib.contextmanager
def _calling() -> Iterator[None]:
    """A failed call raises the players' :class:`CallError`."""
    try:
        yield
    except grpc.aio.AioRpcError as error:
        raise _error(error) from None


def _meta(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", "Bearer " + token),)


class GrpcTransport:
    via = "grpc"

    def __init__(self, lobby_target: str, game_target: str) -> None:
        self._lobby_target = lobby_target
        self._game_target = game_target
        self._channels: list[grpc.aio.Channel] = []
        self._open()

    def _open(self) -> None:
        lobby = grpc.aio.insecure_channel(self._lobby_target, options=_OPTIONS)
        game = grpc.aio.insecure_channel(self._game_target, options=_OPTIONS)
        self._channels = [lobby, game]
        self._lobby: LobbyServiceAsyncStub = lobby_service_pb2_grpc.LobbyServiceStub(lobby)
        self._game: GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(game)

    async def reconnect(self) -> None:
        old = self._channels
        self._open()
        for channel in old:
            await channel.close(None)

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(None)

    # ------------------------------------------------------------------ lobby

    async def sign_in(self, name: str) -> tuple[str, str]:
        with _calling():
            reply = await self._lobby.SignInGuest(
                lobby_service_pb2.SignInGuestRequest(display_name=name), timeout=_LOBBY_TIMEOUT
            )
        return reply.player, reply.token

    async def create_ticket(self, token: str, options: game_pb2.RuleOptions) -> lobby_pb2.Ticket:
        with _calling():
            reply = await self._lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=options),
                metadata=_meta(token),
                timeout=_LOBBY_TIMEOUT,
            )
        return reply.ticket

    async def get_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket:
        with _calling():
            reply = await self._lobby.GetTicket(
                lobby_service_pb2.GetTicketRequest(name=ticket),
                metadata=_meta(token),
                timeout=_LOBBY_TIMEOUT,
            )
        return reply.ticket

    async def cancel_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket:
        with _calling():
            reply = await self._lobby.CancelTicket(
                lobby_service_pb2.CancelTicketRequest(name=ticket),
                metadata=_meta(token),
                timeout=_LOBBY_TIMEOUT,
            )
        return reply.ticket

    async def watch_ticket(self, token: str, ticket: str) -> AsyncGenerator[lobby_pb2.Ticket, None]:
        call = self._lobby.WatchTicket(
            lobby_service_pb2.WatchTicketRequest(name=ticket), metadata=_meta(token)
        )
        try:
            while True:
                message = await call.read()
                if message is EOF or not isinstance(message, lobby_service_pb2.WatchTicketResponse):
                    return
                yield message.ticket
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        finally:
            call.cancel()

    async def list_games(self, token: str) -> list[str]:
        games: list[str] = []
        page = ""
        while True:
            with _calling():
                reply = await self._lobby.ListGames(
                    lobby_service_pb2.ListGamesRequest(page_size=100, page_token=page),
                    metadata=_meta(token),
                    timeout=_LOBBY_TIMEOUT,
                )
            games += [g.name for g in reply.games]
            page = reply.next_page_token
            if not page:
                return games

    # ------------------------------------------------------------------ game

    async def get_game(self, token: str, game: str) -> game_pb2.GameView:
        with _calling():
            reply = await self._game.GetGame(
                game_service_pb2.GetGameRequest(name=game), metadata=_meta(token), timeout=3.0
            )
        view = reply.game
        view.ClearField("events")
        return view

    async def watch_game(
        self, token: str, game: str, after_version: int
    ) -> AsyncGenerator[tuple[int, game_pb2.GameView], None]:
        call = self._game.WatchGame(
            game_service_pb2.WatchGameRequest(name=game, after_version=after_version),
            metadata=_meta(token),
        )
        try:
            while True:
                message = await call.read()
                if message is EOF or not isinstance(message, game_service_pb2.WatchGameResponse):
                    return
                yield int(message.version), message.game
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        finally:
            call.cancel()

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
        with _calling():
            reply = await self._game.SubmitAction(
                game_service_pb2.SubmitActionRequest(
                    name=game,
                    action=action,
                    etag=etag,
                    request_id=request_id,
                    response_view=game_service_pb2.RESPONSE_VIEW_MINIMAL,
                ),
                metadata=_meta(token),
                timeout=timeout,
            )
        return int(reply.game.etag)
