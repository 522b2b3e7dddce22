"""The typed async client of truc: one player's view of the lobby and the game service.

:class:`TrucClient` wraps the generated ``grpc.aio`` stubs of ``LobbyService`` and
``GameService`` and returns the generated messages. It keeps the player's token
(from :meth:`TrucClient.sign_in_guest` or :meth:`TrucClient.use_token`) and the
game token of every ticket it sees matched, and it handles the network.

**Play a game over a session** (one ``Play`` stream for the whole match: one
message per version, the seat's actions sent on the same stream)::

    async with client.session(game, after_version=version) as session:
        async for update in session:  # a truc_client.session.Update per version
            ...
            await session.act(action, etag=update.view.etag)

The session (:class:`~truc_client.session.GameSession`) resumes a broken stream
by itself after the last version received and resends an unanswered action
with the same request id; a refused action raises the same errors as
:meth:`TrucClient.submit`. The unary calls stay, for callers that want them:

* :meth:`TrucClient.watch_game` reopens a dropped stream after the last version
  it yielded, so the caller sees every version once, in order (unless the store
  lost its last writes: then it follows the server back to its older version);
* :meth:`TrucClient.submit` sends one request id per call and retries that same
  id on UNAVAILABLE / DEADLINE_EXCEEDED (the service applies it at most once);
* ABORTED (STALE_ETAG, CONFLICT) is *not* retried: the action was decided on a
  view that is no longer current, so the client fetches the current view and
  raises :class:`StaleView` carrying it, and the caller decides again.

Every failure is a :class:`TrucError` with the gRPC code and the
``google.rpc.ErrorInfo`` reason of the ``grpc-status-details-bin`` trailer
(``NOT_YOUR_TURN``, ``NOT_SEATED``, ``TICKET_CLOSED``...). Render views and
events in words with :mod:`truc_client.narration`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeVar

import grpc
from google.protobuf.message import Message
from truc.v1 import (
    cards_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_protocol.balancing import ROUND_ROBIN
from truc_protocol.status import TrucError, rate_limit_wait, retry_after_ms
from truc_protocol.views import game_version, is_over

from .session import GameSession, RetryBudget, StaleView, Update

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub
    from truc.v1.lobby_service_pb2_grpc import LobbyServiceAsyncStub

__all__ = [
    "GameSession",
    "StaleView",
    "TicketClosed",
    "TrucClient",
    "TrucError",
    "Update",
    "game_version",
    "is_over",
    "rate_limit_wait",
    "retry_after_ms",
]

_Reply = TypeVar("_Reply")
_RETRY_CODES: Final = frozenset((grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
_STREAM_RETRY_CODES: Final = _RETRY_CODES | {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


class TicketClosed(TrucError):
    """:meth:`TrucClient.wait_until_seated`: the ticket was cancelled or expired."""

    def __init__(self, ticket: lobby_pb2.Ticket) -> None:
        state = lobby_pb2.TicketState.Name(ticket.state)
        super().__init__(
            grpc.StatusCode.FAILED_PRECONDITION,
            "TICKET_CLOSED",
            f"{ticket.name} will not be seated: {state}",
        )
        self.ticket = ticket


def _name(prefix: str, name: str) -> str:
    return name if name.startswith(prefix) else prefix + name


class TrucClient:
    """One player's async client of the lobby and the game service (``async with``)."""

    def __init__(
        self,
        lobby_address: str,
        game_address: str,
        *,
        rpc_timeout: float = 10.0,
        retry_for: float = 20.0,
        backoff: float = 0.05,
        max_backoff: float = 1.0,
    ) -> None:
        """A call that fails for a transient reason (and a watch that keeps dropping)
        is retried for up to ``retry_for`` seconds, long enough to ride out the
        restart of a replica or a Redis failover; the waits between tries double
        from ``backoff`` up to ``max_backoff`` seconds, and the channels reconnect
        at the same pace (gRPC's own default would wait up to 120 s).
        ``rpc_timeout`` bounds each unary call."""
        options = (
            *ROUND_ROBIN,  # every replica the addresses resolve to, in turn
            ("grpc.initial_reconnect_backoff_ms", max(1, int(backoff * 1000))),
            ("grpc.min_reconnect_backoff_ms", max(1, int(backoff * 1000))),
            ("grpc.max_reconnect_backoff_ms", max(1, int(max_backoff * 1000))),
        )
        self._lobby_channel = grpc.aio.insecure_channel(lobby_address, options=options)
        self._game_channel = grpc.aio.insecure_channel(game_address, options=options)
        self._lobby: LobbyServiceAsyncStub = lobby_service_pb2_grpc.LobbyServiceStub(
            self._lobby_channel
        )
        self._game: GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(self._game_channel)
        self._rpc_timeout = rpc_timeout
        self._retry_for = retry_for
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._token = ""
        self._game_tokens: dict[str, str] = {}
        self.player = ""
        """The signed-in player id ("" after :meth:`use_token`)."""
        self.display_name = ""
        """The signed-in guest's display name as the lobby kept it (normalized)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close both channels (pending calls are cancelled)."""
        await self._lobby_channel.close(None)
        await self._game_channel.close(None)

    # ----------------------------------------------------------------- plumbing

    def _retries(self) -> RetryBudget:
        return RetryBudget(self._retry_for, self._backoff, self._max_backoff)

    async def _read(
        self,
        method: Callable[..., Awaitable[_Reply]],
        request: Message,
        metadata: tuple[tuple[str, str], ...],
    ) -> _Reply:
        """One call that changes nothing, retried on a transient failure."""
        retries = self._retries()
        while True:
            try:
                return await method(request, metadata=metadata, timeout=self._rpc_timeout)
            except grpc.aio.AioRpcError as error:
                if error.code() not in _RETRY_CODES or not await retries.wait():
                    raise TrucError.from_rpc(error) from None

    def _metadata(self, token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),) if token else ()

    def _game_metadata(self, game: str) -> tuple[tuple[str, str], ...]:
        return self._metadata(self._game_tokens.get(game, self._token))

    def _seen(self, ticket: lobby_pb2.Ticket) -> lobby_pb2.Ticket:
        if ticket.state == lobby_pb2.TICKET_STATE_MATCHED and ticket.game and ticket.game_token:
            self._game_tokens[ticket.game] = ticket.game_token
        return ticket

    # ----------------------------------------------------------------- lobby

    async def sign_in_guest(self, display_name: str = "") -> str:
        """Sign in as a new guest; keeps its token and returns the player id."""
        try:
            reply = await self._lobby.SignInGuest(
                lobby_service_pb2.SignInGuestRequest(display_name=display_name),
                timeout=self._rpc_timeout,
            )
        except grpc.aio.AioRpcError as error:
            raise TrucError.from_rpc(error) from None
        self._token = reply.token
        self.player = reply.player
        self.display_name = reply.display_name or display_name
        return reply.player

    def use_token(self, token: str) -> None:
        """Act with an existing bearer token (from the lobby or the identity provider)."""
        self._token = token

    async def queue(
        self, party: Sequence[str] = (), options: game_pb2.RuleOptions | None = None
    ) -> lobby_pb2.Ticket:
        """Create a ticket: alone, or leading ``party`` (the others' player ids)."""
        request = lobby_service_pb2.CreateTicketRequest(party=list(party), options=options)
        try:
            reply = await self._lobby.CreateTicket(
                request, metadata=self._metadata(self._token), timeout=self._rpc_timeout
            )
        except grpc.aio.AioRpcError as error:
            raise TrucError.from_rpc(error) from None
        return self._seen(reply.ticket)

    async def confirm(self, ticket_name: str) -> lobby_pb2.Ticket:
        """Confirm a party ticket the caller is a member of."""
        request = lobby_service_pb2.ConfirmTicketRequest(name=_name("tickets/", ticket_name))
        try:
            reply = await self._lobby.ConfirmTicket(
                request, metadata=self._metadata(self._token), timeout=self._rpc_timeout
            )
        except grpc.aio.AioRpcError as error:
            raise TrucError.from_rpc(error) from None
        return self._seen(reply.ticket)

    async def cancel(self, ticket_name: str) -> lobby_pb2.Ticket:
        """Cancel a ticket that is not matched yet."""
        request = lobby_service_pb2.CancelTicketRequest(name=_name("tickets/", ticket_name))
        try:
            reply = await self._lobby.CancelTicket(
                request, metadata=self._metadata(self._token), timeout=self._rpc_timeout
            )
        except grpc.aio.AioRpcError as error:
            raise TrucError.from_rpc(error) from None
        return self._seen(reply.ticket)

    async def get_ticket(self, name: str) -> lobby_pb2.Ticket:
        """The ticket as the caller sees it (retried while the lobby is unavailable)."""
        request = lobby_service_pb2.GetTicketRequest(name=_name("tickets/", name))
        reply = await self._read(self._lobby.GetTicket, request, self._metadata(self._token))
        return self._seen(reply.ticket)

    async def watch_ticket(self, name: str) -> AsyncGenerator[lobby_pb2.Ticket, None]:
        """The ticket each time it changes, until it is matched, cancelled or expired.

        Watching keeps a queued ticket alive. The stream is not resumed when it
        drops: :meth:`wait_until_seated` does that.
        """
        call = self._lobby.WatchTicket(
            lobby_service_pb2.WatchTicketRequest(name=_name("tickets/", name)),
            metadata=self._metadata(self._token),
        )
        try:
            async for change in call:
                yield self._seen(change.ticket)
        except grpc.aio.AioRpcError as error:
            raise TrucError.from_rpc(error) from None
        finally:
            call.cancel()

    async def wait_until_seated(self, name: str, timeout: float = 60.0) -> lobby_pb2.Ticket:
        """Watch the ticket until it is matched; the matched ticket (with its game token).

        Raises :class:`TicketClosed` when it is cancelled or expired, and a
        :class:`TrucError` (DEADLINE_EXCEEDED, reason ``WAIT_TIMEOUT``) after
        ``timeout`` seconds. A dropped stream is reopened (bounded).
        """
        retries = self._retries()
        try:
            async with asyncio.timeout(timeout):
                while True:
                    ticket = await self.get_ticket(name)
                    if ticket.state == lobby_pb2.TICKET_STATE_MATCHED:
                        return ticket
                    if ticket.state in (
                        lobby_pb2.TICKET_STATE_CANCELLED,
                        lobby_pb2.TICKET_STATE_EXPIRED,
                    ):
                        raise TicketClosed(ticket)
                    try:
                        async for change in self.watch_ticket(name):
                            if change.state == lobby_pb2.TICKET_STATE_MATCHED:
                                return change
                            if change.state in (
                                lobby_pb2.TICKET_STATE_CANCELLED,
                                lobby_pb2.TICKET_STATE_EXPIRED,
                            ):
                                raise TicketClosed(change)
                    except TicketClosed:
                        raise
                    except TrucError as error:
                        if error.code not in _STREAM_RETRY_CODES:
                            raise
                    # The stream ended or dropped: look again.
                    if not await retries.wait():
                        raise TrucError(
                            grpc.StatusCode.UNAVAILABLE,
                            "WATCH_FAILED",
                            f"{name}: WatchTicket keeps ending",
                        )
        except TimeoutError:
            raise TrucError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                "WAIT_TIMEOUT",
                f"{name} was not seated within {timeout} s",
            ) from None

    async def list_games(
        self, page_size: int = 0, page_token: str = ""
    ) -> lobby_service_pb2.ListGamesResponse:
        """A page of the caller's finished games, the most recent first (retried
        while the lobby is unavailable); read a game's log with :meth:`get_game`."""
        request = lobby_service_pb2.ListGamesRequest(page_size=page_size, page_token=page_token)
        return await self._read(self._lobby.ListGames, request, self._metadata(self._token))

    # ----------------------------------------------------------------- game

    async def get_game(self, name: str) -> game_pb2.GameView:
        """The caller's view of the game, with its event log (retried while unavailable).

        Uses the game token of the matched ticket when the client saw one, else
        the player's token.
        """
        game = _name("games/", name)
        request = game_service_pb2.GetGameRequest(name=game)
        reply = await self._read(self._game.GetGame, request, self._game_metadata(game))
        return reply.game

    async def watch_game(
        self, name: str, after_version: int = 0, *, idle_timeout: float = 20.0
    ) -> AsyncGenerator[game_service_pb2.WatchGameResponse, None]:
        """Every version of the game after ``after_version``, once each and in order.

        A stream that drops (UNAVAILABLE, DEADLINE_EXCEEDED...) or ends before the
        match does is reopened after the last version yielded, with a doubling
        backoff; failing for ``retry_for`` seconds without a new version raises
        a :class:`TrucError`. Ends after yielding a finished view (or a fixed-deal
        game's last one). To resume later, pass the last ``version`` received.

        The server is the truth about where the game is. Before each stream is
        opened after a version, and after ``idle_timeout`` seconds without one,
        the client asks ``GetGame``; when the game is *behind* that version (the
        store lost its last writes, e.g. a Redis crash with ``appendfsync
        everysec``), it yields the current view (a response of the server's
        version, without events) and follows on from there, so versions already
        yielded come again, with the game's new history. (A stream after a
        version that no longer exists would stay silent until the game passed
        it again.)
        """
        game = _name("games/", name)
        last = after_version
        retries = self._retries()
        while True:
            current = await self._behind(game, last)
            if current is not None:
                last = game_version(current)
                retries = self._retries()
                yield game_service_pb2.WatchGameResponse(version=last, game=current)
                if is_over(current):
                    return
            call = self._game.WatchGame(
                game_service_pb2.WatchGameRequest(name=game, after_version=last),
                metadata=self._game_metadata(game),
            )
            error: TrucError | None = None
            quiet = False
            try:
                while True:
                    try:
                        async with asyncio.timeout(idle_timeout):
                            message = await call.read()
                    except TimeoutError:
                        quiet = True  # nothing for a while: check with GetGame, watch again
                        break
                    if not isinstance(message, game_service_pb2.WatchGameResponse):
                        break  # EOF
                    if message.version <= last:
                        continue  # never yield a version twice
                    retries = self._retries()
                    last = message.version
                    yield message
                    if is_over(message.game):
                        return
            except grpc.aio.AioRpcError as rpc_error:
                error = TrucError.from_rpc(rpc_error)
                if error.code not in _STREAM_RETRY_CODES:
                    raise error from None
            finally:
                call.cancel()
            if not quiet and not await retries.wait():
                raise error or TrucError(
                    grpc.StatusCode.UNAVAILABLE, "WATCH_FAILED", f"{game}: WatchGame keeps ending"
                )

    async def _behind(self, game: str, version: int) -> game_pb2.GameView | None:
        """The current view (without events) if the game is behind ``version``, else
        None. One GetGame: if it fails for a transient reason, None too (the
        stream's own retries ride out an outage)."""
        if version <= 0:
            return None  # nothing can be behind the start
        try:
            reply = await self._game.GetGame(
                game_service_pb2.GetGameRequest(name=game),
                metadata=self._game_metadata(game),
                timeout=self._rpc_timeout,
            )
        except grpc.aio.AioRpcError as rpc_error:
            if rpc_error.code() in _STREAM_RETRY_CODES:
                return None
            raise TrucError.from_rpc(rpc_error) from None
        view = reply.game
        if game_version(view) >= version:
            return None
        view.ClearField("events")
        return view

    def session(
        self,
        name: str,
        after_version: int = 0,
        *,
        response_view: game_service_pb2.ResponseView.ValueType = (
            game_service_pb2.RESPONSE_VIEW_FULL
        ),
        idle_timeout: float = 20.0,
    ) -> GameSession:
        """A ``Play`` session on the game, resuming after ``after_version``
        (``async with client.session(game) as session``; see
        :mod:`truc_client.session`).

        It yields an :class:`~truc_client.session.Update` for every version after
        ``after_version``, once each and in order (several versions may come as
        one update), and ends after the one that finishes the match;
        :meth:`GameSession.act <truc_client.session.GameSession.act>` sends an
        action for the caller's seat. Uses the game token of the matched ticket
        when the client saw one, else the player's token; a spectator's or the
        lobby's token opens a read-only session. It resumes a broken stream
        within the client's ``retry_for`` budget, and after ``idle_timeout``
        seconds without news checks the game with ``GetGame`` (as
        :meth:`watch_game` does: a game behind the session is adopted).
        """
        game = _name("games/", name)
        return GameSession(
            self._game,
            game,
            self._game_metadata(game),
            after_version=after_version,
            response_view=response_view,
            rpc_timeout=self._rpc_timeout,
            retry_for=self._retry_for,
            backoff=self._backoff,
            max_backoff=self._max_backoff,
            idle_timeout=idle_timeout,
        )

    async def submit(
        self,
        name: str,
        action: game_pb2.Action,
        *,
        etag: str = "",
        request_id: str = "",
        response_view: game_service_pb2.ResponseView.ValueType = (
            game_service_pb2.RESPONSE_VIEW_FULL
        ),
    ) -> game_service_pb2.SubmitActionResponse:
        """Apply one action for the caller's seat; the new view and the events it caused.

        ``etag`` (the view's) makes the service refuse the action if the game
        moved on; empty acts on whatever is current. One request id (a fresh
        UUID unless given) is retried on UNAVAILABLE / DEADLINE_EXCEEDED, so the
        action is applied at most once; RATE_LIMITED waits ``retry_after_ms``.
        On ABORTED (STALE_ETAG, CONFLICT) nothing was applied: the current view
        is fetched and :class:`StaleView` raised with it, because an action
        chosen on an outdated view must be chosen again, not resent.
        """
        game = _name("games/", name)
        request = game_service_pb2.SubmitActionRequest(
            name=game,
            action=action,
            etag=etag,
            request_id=request_id or uuid.uuid4().hex,
            response_view=response_view,
        )
        retries = self._retries()
        while True:
            try:
                reply: game_service_pb2.SubmitActionResponse = await self._game.SubmitAction(
                    request, metadata=self._game_metadata(game), timeout=self._rpc_timeout
                )
            except grpc.aio.AioRpcError as rpc_error:
                code = rpc_error.code()
                if code in _RETRY_CODES and await retries.wait():
                    continue  # the same request id: applied at most once
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED and await retries.wait(
                    rate_limit_wait(rpc_error, self._max_backoff)
                ):
                    continue
                error = TrucError.from_rpc(rpc_error)
                if code == grpc.StatusCode.ABORTED:
                    raise StaleView(error, await self.get_game(game)) from None
                raise error from None
            return reply

    async def play(
        self, name: str, card: cards_pb2.Card, *, etag: str = ""
    ) -> game_service_pb2.SubmitActionResponse:
        """Play ``card`` from the caller's hand."""
        return await self.submit(name, game_pb2.Action(play_card=card), etag=etag)

    async def call(
        self, name: str, call: game_pb2.Call.ValueType, *, etag: str = ""
    ) -> game_service_pb2.SubmitActionResponse:
        """Make a call (a declaration, an answer, a truc call)."""
        return await self.submit(name, game_pb2.Action(call=call), etag=etag)

    async def signal(
        self, name: str, signal: game_pb2.Signal.ValueType, *, etag: str = ""
    ) -> game_service_pb2.SubmitActionResponse:
        """Send a signal to the caller's team."""
        return await self.submit(name, game_pb2.Action(signal=signal), etag=etag)
