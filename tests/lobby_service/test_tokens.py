"""Who may act at the lobby (issue 14), through real processes:

* only a player's token: one of role ``lobby`` (the lobby's own credential)
  or ``spectator`` is PERMISSION_DENIED ``PLAYERS_ONLY`` on every player RPC;
* an external identity provider's token is always a player's, whatever role
  claim it carries, and its ``sub`` must be a player id of the safe alphabet;
* stream tokens (CreateStreamToken): short-lived, ``scope: stream``, accepted
  by WatchTicket (and the game service's WatchGame), refused
  ``STREAM_TOKEN_WATCH_ONLY`` by every other lobby RPC;
* player ids a caller names (a party's members) and guests' ids are of the
  shared safe alphabet.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import grpc
import jwt
import pytest
from truc.v1 import game_service_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from tests.service.conftest import LOBBY, SECRET, expect_error, stub
from truc_dev_redis import RedisServer
from truc_protocol.identifiers import valid_player_id
from truc_service.tokens import issue_token

from .aio_lobby import QUEUED, Guest, unique_options
from .conftest import Stack, start_stack

Code = grpc.StatusCode
Lobby = lobby_service_pb2_grpc.LobbyServiceStub

IDP_KEY = "an-identity-providers-hs256-key-0123456789"
IDP_ISSUER = "https://idp.example"
IDP_AUDIENCE = "truc"
STREAM_SECONDS = 20


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer) -> Iterator[Stack]:
    """Bots off, stream tokens of 20 s, an external identity provider (HS256)."""
    started = start_stack(
        redis_server.url,
        TRUC_BOT_WAIT_SECONDS="0",
        TRUC_STREAM_TOKEN_SECONDS=str(STREAM_SECONDS),
        TRUC_EXTERNAL_JWT_KEY=IDP_KEY,
        TRUC_EXTERNAL_JWT_ALGORITHM="HS256",
        TRUC_EXTERNAL_JWT_ISSUER=IDP_ISSUER,
        TRUC_EXTERNAL_JWT_AUDIENCE=IDP_AUDIENCE,
    )
    yield started
    started.stop()


@pytest.fixture(scope="module")
def lobbies(stack: Stack) -> list[Lobby]:
    return [stack.lobby(0), stack.lobby(1)]


def guest(lobby: Lobby, name: str = "t") -> Guest:
    reply = lobby.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name=name))
    return Guest(reply.player, reply.token)


def queue(lobby: Lobby, who: Guest) -> str:
    request = lobby_service_pb2.CreateTicketRequest(options=unique_options())
    return str(lobby.CreateTicket(request, metadata=who.metadata).ticket.name)


def first_watch(lobby: Lobby, token: str, name: str) -> lobby_service_pb2.WatchTicketResponse:
    stream = lobby.WatchTicket(
        lobby_service_pb2.WatchTicketRequest(name=name),
        metadata=(("authorization", "Bearer " + token),),
        timeout=10,
    )
    for message in stream:
        stream.cancel()  # type: ignore[no-untyped-call]
        return message
    raise AssertionError("the stream ended without a message")


def every_player_call(lobby: Lobby, token: str, name: str) -> dict[str, Callable[[], object]]:
    """Each player RPC of the lobby but WatchTicket, with ``token``, on ticket ``name``."""
    meta = (("authorization", "Bearer " + token),)
    m = lobby_service_pb2
    return {
        "CreateTicket": partial(lobby.CreateTicket, m.CreateTicketRequest(), metadata=meta),
        "ConfirmTicket": partial(
            lobby.ConfirmTicket, m.ConfirmTicketRequest(name=name), metadata=meta
        ),
        "GetTicket": partial(lobby.GetTicket, m.GetTicketRequest(name=name), metadata=meta),
        "CancelTicket": partial(
            lobby.CancelTicket, m.CancelTicketRequest(name=name), metadata=meta
        ),
        "ListGames": partial(lobby.ListGames, m.ListGamesRequest(), metadata=meta),
        "CreateStreamToken": partial(
            lobby.CreateStreamToken, m.CreateStreamTokenRequest(), metadata=meta
        ),
    }


# --------------------------------------------------------------------------- roles


@pytest.mark.parametrize("role", ["lobby", "spectator"])
def test_a_token_of_another_role_cannot_act_as_a_player(lobbies: list[Lobby], role: str) -> None:
    owner = guest(lobbies[0], "owner")
    name = queue(lobbies[0], owner)
    # The same player's id, in a token of that role for the lobby's audience.
    token = issue_token(SECRET, owner.player, role=role, audience="truc-lobby")
    for lobby in lobbies:
        calls = every_player_call(lobby, token, name)
        calls["WatchTicket"] = partial(first_watch, lobby, token, name)
        for method, call in calls.items():
            error = expect_error(call, Code.PERMISSION_DENIED, "PLAYERS_ONLY")
            assert role in (error.details() or ""), method
    # The player's own token still works, and nothing was changed.
    ticket = (
        lobbies[1]
        .GetTicket(lobby_service_pb2.GetTicketRequest(name=name), metadata=owner.metadata)
        .ticket
    )
    assert ticket.state == QUEUED  # the cancel and the create were refused
    lobbies[0].CancelTicket(
        lobby_service_pb2.CancelTicketRequest(name=name), metadata=owner.metadata
    )


def _external(sub: str, **claims: Any) -> str:
    now = int(time.time())
    body: dict[str, Any] = {
        "sub": sub,
        "iss": IDP_ISSUER,
        "aud": IDP_AUDIENCE,
        "iat": now,
        "exp": now + 3600,
        **claims,
    }
    return jwt.encode(body, IDP_KEY, algorithm="HS256")


@pytest.mark.parametrize("role", ["lobby", "spectator", "admin", None])
def test_an_external_token_is_a_players_whatever_its_role_claim(
    lobbies: list[Lobby], role: str | None
) -> None:
    sub = f"auth0|{int(time.time() * 1e6)}-{role}"
    token = _external(sub, **({} if role is None else {"role": role}))
    who = Guest(sub, token)
    name = queue(lobbies[0], who)  # acts as a player: not refused, not elevated
    ticket = lobbies[1].GetTicket(
        lobby_service_pb2.GetTicketRequest(name=name), metadata=who.metadata
    )
    assert ticket.ticket.leader == sub
    # What the lobby signs for it is a player's token, never the claimed role's.
    reply = lobbies[0].CreateStreamToken(
        lobby_service_pb2.CreateStreamTokenRequest(), metadata=who.metadata
    )
    claims = jwt.decode(reply.token, SECRET, algorithms=["HS256"], audience="truc-lobby")
    assert (claims["sub"], claims["role"]) == (sub, "player")
    lobbies[1].CancelTicket(lobby_service_pb2.CancelTicketRequest(name=name), metadata=who.metadata)


@pytest.mark.parametrize(
    ("claim", "shown"),
    [(" Jose\u0301 ", "José"), ("\u202eevil", ""), ("x" * 33, ""), (42, ""), (None, "")],
)
def test_an_external_tokens_name_is_its_display_name_when_valid(
    lobbies: list[Lobby], claim: object, shown: str
) -> None:
    sub = f"auth0|{int(time.time() * 1e6)}"
    token = _external(sub, **({} if claim is None else {"name": claim}))
    who = Guest(sub, token)  # signed in either way; an invalid name is no name
    name = queue(lobbies[0], who)
    ticket = (
        lobbies[1]
        .GetTicket(lobby_service_pb2.GetTicketRequest(name=name), metadata=who.metadata)
        .ticket
    )
    assert [(m.player, m.display_name) for m in ticket.members] == [(sub, shown)]
    lobbies[1].CancelTicket(lobby_service_pb2.CancelTicketRequest(name=name), metadata=who.metadata)


@pytest.mark.parametrize(
    "sub", ["a b", "tab\there", "ctl\x01", "esc\x1b[31m", 'q"uote', "k=v", "x" * 129, ""]
)
def test_an_external_sub_outside_the_safe_alphabet_is_refused(
    lobbies: list[Lobby], sub: str
) -> None:
    token = _external(sub)
    expect_error(
        every_player_call(lobbies[0], token, "tickets/x")["ListGames"],
        Code.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )


def test_an_external_token_valid_for_centuries_is_refused(lobbies: list[Lobby]) -> None:
    token = _external("auth0|far-future", exp=32503680000)  # the year 3000
    error = expect_error(
        every_player_call(lobbies[0], token, "tickets/x")["ListGames"],
        Code.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )
    assert "too long" in (error.details() or "")


# --------------------------------------------------------------------------- stream tokens


def test_a_stream_token_is_short_lived_and_opens_only_the_watch_streams(
    stack: Stack, lobbies: list[Lobby]
) -> None:
    owner = guest(lobbies[0], "streamer")
    name = queue(lobbies[0], owner)
    began = int(time.time())
    reply = lobbies[1].CreateStreamToken(
        lobby_service_pb2.CreateStreamTokenRequest(), metadata=owner.metadata
    )
    claims = jwt.decode(
        reply.token, SECRET, algorithms=["HS256"], audience="truc-game", issuer="truc-lobby"
    )
    assert claims["scope"] == "stream" and claims["sub"] == owner.player
    assert claims["exp"] - claims["iat"] == STREAM_SECONDS
    assert began <= claims["iat"] <= int(time.time()) + 1
    assert reply.expire_time.seconds == claims["exp"]
    assert set(claims["aud"]) == {"truc-lobby", "truc-game"}
    # WatchTicket takes it, on either replica...
    for lobby in lobbies:
        assert first_watch(lobby, reply.token, name).ticket.name == name
    # ...and every other lobby RPC refuses it (it does not even renew itself).
    for lobby in lobbies:
        for method, call in every_player_call(lobby, reply.token, name).items():
            error = expect_error(call, Code.PERMISSION_DENIED, "STREAM_TOKEN_WATCH_ONLY")
            assert "stream token" in (error.details() or ""), method
    # The game service's WatchGame takes it too (the game's own checks still apply).
    game = stub(stack.game.address)
    created = game.CreateGame(
        game_service_pb2.CreateGameRequest(
            players=[owner.player, *(f"{owner.player}-{i}" for i in range(5))]
        ),
        metadata=LOBBY,
    )
    stream = game.WatchGame(
        game_service_pb2.WatchGameRequest(name=created.game.name),
        metadata=(("authorization", "Bearer " + reply.token),),
        timeout=10,
    )
    for message in stream:
        assert message.game.seats[0].player == owner.player
        stream.cancel()  # type: ignore[no-untyped-call]
        break
    # The ticket is untouched; the player's own token still cancels it.
    lobbies[0].CancelTicket(
        lobby_service_pb2.CancelTicketRequest(name=name), metadata=owner.metadata
    )


def test_an_expired_stream_token_is_refused(lobbies: list[Lobby]) -> None:
    owner = guest(lobbies[0], "late")
    name = queue(lobbies[0], owner)
    expired = issue_token(
        SECRET,
        owner.player,
        audience=["truc-lobby", "truc-game"],
        scope="stream",
        ttl_seconds=STREAM_SECONDS,
        now=time.time() - STREAM_SECONDS - 5,
    )
    expect_error(
        partial(first_watch, lobbies[1], expired, name), Code.UNAUTHENTICATED, "TOKEN_EXPIRED"
    )
    lobbies[0].CancelTicket(
        lobby_service_pb2.CancelTicketRequest(name=name), metadata=owner.metadata
    )


# --------------------------------------------------------------------------- player ids


@pytest.mark.parametrize(
    "member", ["ctl\x01", "esc\x1b[2J", "line\nbreak", "sp ace", 'q"', "k=v", "back\\slash", "é"]
)
def test_a_party_member_outside_the_safe_alphabet_is_invalid(
    lobbies: list[Lobby], member: str
) -> None:
    leader = guest(lobbies[0], "lead")
    request = lobby_service_pb2.CreateTicketRequest(party=[member])
    error = expect_error(
        partial(lobbies[1].CreateTicket, request, metadata=leader.metadata),
        Code.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    assert "A-Z a-z 0-9 _ . : @ | + -" in (error.details() or "")


def test_a_party_member_of_an_identity_provider_is_a_valid_id(lobbies: list[Lobby]) -> None:
    leader = guest(lobbies[0], "lead")
    request = lobby_service_pb2.CreateTicketRequest(party=["auth0|5f3a+x@idp.example"])
    ticket = lobbies[1].CreateTicket(request, metadata=leader.metadata).ticket
    assert [m.player for m in ticket.members] == [leader.player, "auth0|5f3a+x@idp.example"]
    lobbies[0].CancelTicket(
        lobby_service_pb2.CancelTicketRequest(name=ticket.name), metadata=leader.metadata
    )


@pytest.mark.parametrize("name", ["Ana María", "<script>", "a=b \"c\" 'd'", "🂡 truc", "x" * 32])
def test_a_guest_id_is_of_the_safe_alphabet_whatever_the_display_name(
    lobbies: list[Lobby], name: str
) -> None:
    reply = lobbies[0].SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name=name))
    assert valid_player_id(reply.player), reply.player
