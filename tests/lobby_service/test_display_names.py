"""Display names through the real stack (a lobby, its Redis, the game service):
SignInGuest validates and normalizes them, the token carries them, tickets show
each member's and the table's, and the game service shows them on the seats;
private tickets queue apart from public ones."""

from __future__ import annotations

import asyncio

import grpc
import jwt
import pytest
from truc.v1 import game_pb2, lobby_service_pb2

from tests.service.conftest import SECRET, error_reason
from truc_protocol.identifiers import valid_player_id

from .aio_lobby import CANCELLED, MATCHED, QUEUED, AioStack, unique_options
from .conftest import Stack

Code = grpc.StatusCode

ACCEPTED = [
    ("José María", "José María", "JoseMaria-"),
    ("山田", "山田", "Guest-"),
    ("Ørjan", "Ørjan", "rjan-"),
    ("👩\u200d💻", "👩\u200d💻", "Guest-"),  # an emoji sequence: the zero-width joiner stays
    ("  Ana  ", "Ana", "Ana-"),  # the surrounding white space is trimmed
    ("Jose\u0301", "José", "Jose-"),  # NFC: e + combining acute is é
    ("", "Guest", "Guest-"),  # none given
    ("x" * 32, "x" * 32, "x" * 16 + "-"),
]
REFUSED = [
    "   ",  # nothing left once trimmed
    "x" * 33,
    "\u202eevil",  # a bidirectional override
    "a\nb",
    "\x07",
    "a\u200bb",  # a zero-width space
    "\u2066x",  # a bidirectional isolate
]


def _claims(token: str) -> dict[str, object]:
    claims: dict[str, object] = jwt.decode(
        token, SECRET, algorithms=["HS256"], audience="truc-lobby"
    )
    return claims


def _french() -> game_pb2.RuleOptions:
    options = unique_options()
    options.rule_set = game_pb2.RULE_SET_FRENCH_TRUC
    options.target_score = 1 + options.target_score % 12
    return options


@pytest.mark.parametrize(("given", "kept", "prefix"), ACCEPTED)
def test_a_display_name_is_kept_normalized_and_in_the_token(
    stack: Stack, given: str, kept: str, prefix: str
) -> None:
    reply = stack.lobby().SignInGuest(
        lobby_service_pb2.SignInGuestRequest(display_name=given), timeout=10
    )
    assert reply.display_name == kept
    assert _claims(reply.token)["name"] == kept
    # The player id stays ASCII, whatever the script of the name.
    assert valid_player_id(reply.player) and reply.player.startswith(prefix), reply.player


@pytest.mark.parametrize("given", REFUSED)
def test_a_bad_display_name_is_refused_saying_why(stack: Stack, given: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        stack.lobby().SignInGuest(
            lobby_service_pb2.SignInGuestRequest(display_name=given), timeout=10
        )
    error = caught.value
    assert error.code() == Code.INVALID_ARGUMENT
    assert error_reason(error) == "BAD_DISPLAY_NAME"
    assert "display name" in (error.details() or "")


async def _party_names(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        leader, friend = await aio.sign_in("Ana"), await aio.sign_in("山田")
        ticket = await aio.create(leader, [friend], unique_options())
        names = {m.player: m.display_name for m in ticket.members}
        # A party member who has not confirmed has no name on the ticket yet.
        assert names == {leader.player: "Ana", friend.player: ""}
        confirmed = await aio.confirm(friend, ticket.name, 1)
        assert confirmed.state == QUEUED
        names = {m.player: m.display_name for m in confirmed.members}
        assert names == {leader.player: "Ana", friend.player: "山田"}
        assert (await aio.cancel(leader, ticket.name)).state == CANCELLED
    finally:
        await aio.close()


def test_each_member_of_a_ticket_shows_the_name_of_their_own_token(stack: Stack) -> None:
    asyncio.run(_party_names(stack))


async def _table_names(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        guests = [await aio.sign_in("José María"), await aio.sign_in("Ørjan", 1)]
        options = _french()
        tickets = [await aio.create(g, options=options, index=i) for i, g in enumerate(guests)]
        matched = [
            await aio.wait_state(g, t.name, [MATCHED], timeout=10)
            for g, t in zip(guests, tickets, strict=True)
        ]
        names = {g.player: n for g, n in zip(guests, ("José María", "Ørjan"), strict=True)}
        for ticket in matched:
            assert {a.player: a.display_name for a in ticket.table} == names
            assert not ticket.private
            assert _claims(ticket.game_token)["name"] == names[ticket.table[ticket.seat].player]
        # The game service shows them on the seats (CreateGame's display_names).
        view = await aio.get_game(matched[0].game_token, matched[0].game)
        assert {s.player: s.display_name for s in view.seats} == names
    finally:
        await aio.close()


def test_the_table_and_the_game_show_the_players_names(stack: Stack) -> None:
    asyncio.run(_table_names(stack))


async def _private_apart(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        options = _french()
        hidden, shown, friend = [await aio.sign_in(f"p{i}", i) for i in range(3)]
        private = await aio.lobby().CreateTicket(
            lobby_service_pb2.CreateTicketRequest(options=options, private=True),
            metadata=hidden.metadata,
            timeout=10,
        )
        aio.follow(hidden, private.ticket.name)
        assert private.ticket.private
        public = await aio.create(shown, options=options, index=1)
        assert not public.private
        # Same options, both followed: a public ticket never sits at a private table.
        await asyncio.sleep(1.0)  # ten matching rounds
        assert (await aio.get(hidden, private.ticket.name)).state == QUEUED
        assert (await aio.get(shown, public.name)).state == QUEUED
        # A second private ticket of the same options is the private one's table.
        second = await aio.lobby(1).CreateTicket(
            lobby_service_pb2.CreateTicketRequest(options=options, private=True),
            metadata=friend.metadata,
            timeout=10,
        )
        aio.follow(friend, second.ticket.name, 1)
        table = await aio.wait_state(hidden, private.ticket.name, [MATCHED], timeout=10)
        assert {a.player for a in table.table} == {hidden.player, friend.player}
        assert table.private
        assert (await aio.get(shown, public.name)).state == QUEUED
        assert (await aio.cancel(shown, public.name)).state == CANCELLED
    finally:
        await aio.close()


def test_private_tickets_match_only_private_tickets(stack: Stack) -> None:
    asyncio.run(_private_apart(stack))
