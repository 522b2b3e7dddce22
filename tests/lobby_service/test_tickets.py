"""Tickets through the real stack: documented errors, cancellation, the cancel
racing the matcher, expiry of unwatched tickets and WatchTicket. A ticket is
matched only while it is followed, so the tests that want tables follow their
tickets, as clients do (``followers``, or :class:`AioStack`'s own)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator
from functools import partial

import grpc
import pytest
from truc.v1 import game_pb2, lobby_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from tests.service.conftest import SECRET, expect_error
from truc_dev_redis import RedisServer
from truc_service.tokens import issue_token

from .aio_lobby import (
    AWAITING,
    CANCELLED,
    EXPIRED,
    MATCHED,
    QUEUED,
    AioStack,
    Guest,
    bounded_gather,
    expect_aio_error,
    purge_lobby_queue,
    team_of,
    unique_options,
)
from .conftest import Followers, Stack, start_stack

Code = grpc.StatusCode
Lobby = lobby_service_pb2_grpc.LobbyServiceStub


@pytest.fixture(scope="module", autouse=True)
def _isolated_queue(redis_server: RedisServer) -> Iterator[None]:
    purge_lobby_queue(redis_server.url)
    yield


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer) -> Iterator[Stack]:
    """The conftest's stack (bots off), each lobby replica on a port of its own
    (see :func:`start_stack`), so that "both replicas" are really both."""
    started = start_stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0")
    yield started
    started.stop()


@pytest.fixture(scope="module")
def lobbies(stack: Stack) -> Iterator[list[Lobby]]:
    """Blocking stubs of the two lobby replicas."""
    channels = [grpc.insecure_channel(r.address) for r in stack.lobbies]
    yield [lobby_service_pb2_grpc.LobbyServiceStub(c) for c in channels]
    for channel in channels:
        channel.close()


@pytest.fixture(scope="module")
def short_grace(redis_server: RedisServer) -> Iterator[Stack]:
    """A dedicated stack whose queued tickets expire after 2 s unwatched (bots off)."""
    started = start_stack(
        redis_server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_TICKET_GRACE_SECONDS="2"
    )
    yield started
    started.stop()


def guest(lobby: Lobby, name: str = "t") -> Guest:
    reply = lobby.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name=name))
    return Guest(reply.player, reply.token)


def create(
    lobby: Lobby,
    who: Guest,
    party: tuple[Guest, ...] = (),
    options: game_pb2.RuleOptions | None = None,
) -> lobby_pb2.Ticket:
    request = lobby_service_pb2.CreateTicketRequest(
        party=[g.player for g in party], options=options
    )
    return lobby.CreateTicket(request, metadata=who.metadata).ticket


def get(lobby: Lobby, who: Guest, name: str) -> lobby_pb2.Ticket:
    request = lobby_service_pb2.GetTicketRequest(name=name)
    return lobby.GetTicket(request, metadata=who.metadata).ticket


def confirm(lobby: Lobby, who: Guest, name: str) -> lobby_pb2.Ticket:
    request = lobby_service_pb2.ConfirmTicketRequest(name=name)
    return lobby.ConfirmTicket(request, metadata=who.metadata).ticket


def cancel(lobby: Lobby, who: Guest, name: str) -> lobby_pb2.Ticket:
    request = lobby_service_pb2.CancelTicketRequest(name=name)
    return lobby.CancelTicket(request, metadata=who.metadata).ticket


def first_watch(lobby: Lobby, who: Guest, name: str) -> lobby_service_pb2.WatchTicketResponse:
    stream = lobby.WatchTicket(
        lobby_service_pb2.WatchTicketRequest(name=name), metadata=who.metadata, timeout=10
    )
    for message in stream:
        stream.cancel()  # type: ignore[no-untyped-call]
        return message
    raise AssertionError("the stream ended without a message")


def every_ticket_call(lobby: Lobby, who: Guest, name: str) -> list[Callable[[], object]]:
    """GetTicket, ConfirmTicket, CancelTicket and WatchTicket on ``name`` as ``who``."""
    return [
        lambda: get(lobby, who, name),
        lambda: confirm(lobby, who, name),
        lambda: cancel(lobby, who, name),
        lambda: first_watch(lobby, who, name),
    ]


def wait_state(
    lobby: Lobby, who: Guest, name: str, state: int, timeout: float = 10.0
) -> lobby_pb2.Ticket:
    deadline = time.monotonic() + timeout
    while True:
        ticket = get(lobby, who, name)
        if ticket.state == state or time.monotonic() > deadline:
            assert ticket.state == state, ticket
            return ticket
        time.sleep(0.05)


# --------------------------------------------------------------------------- errors


def test_a_queued_player_cannot_create_a_second_ticket(lobbies: list[Lobby]) -> None:
    solo, leader, member = (guest(lobbies[i % 2], f"q{i}") for i in range(3))
    options = unique_options()
    first = create(lobbies[0], solo, options=options)
    assert first.state == QUEUED
    for lobby in lobbies:  # whichever replica is asked
        expect_error(
            partial(create, lobby, solo, options=unique_options()),
            Code.ALREADY_EXISTS,
            "ALREADY_QUEUED",
        )
    # The leader of a party still awaiting its members holds a live ticket too...
    party = create(lobbies[1], leader, (member,), options)
    assert party.state == AWAITING
    expect_error(lambda: create(lobbies[0], leader), Code.ALREADY_EXISTS, "ALREADY_QUEUED")
    # ...and so does a member once confirmed.
    assert confirm(lobbies[0], member, party.name).state == QUEUED
    expect_error(lambda: create(lobbies[1], member), Code.ALREADY_EXISTS, "ALREADY_QUEUED")
    # The refused calls changed nothing.
    assert get(lobbies[1], solo, first.name).state == QUEUED
    assert get(lobbies[0], leader, party.name).state == QUEUED
    cancel(lobbies[0], solo, first.name)
    cancel(lobbies[1], member, party.name)


def test_a_member_holding_another_live_ticket_cannot_confirm(lobbies: list[Lobby]) -> None:
    leader, member = guest(lobbies[0], "lead"), guest(lobbies[1], "busy")
    own = create(lobbies[1], member, options=unique_options())
    party = create(lobbies[0], leader, (member,), unique_options())
    expect_error(
        lambda: confirm(lobbies[0], member, party.name), Code.ALREADY_EXISTS, "ALREADY_QUEUED"
    )
    after = get(lobbies[1], leader, party.name)
    assert after.state == AWAITING
    assert [(m.player, m.confirmed) for m in after.members] == [
        (leader.player, True),
        (member.player, False),
    ]
    assert get(lobbies[0], member, own.name).state == QUEUED
    # Once the other ticket is gone, the member may confirm: the party is queued.
    assert cancel(lobbies[0], member, own.name).state == CANCELLED
    assert confirm(lobbies[1], member, party.name).state == QUEUED
    cancel(lobbies[0], leader, party.name)


def test_only_members_can_read_or_touch_a_ticket(lobbies: list[Lobby]) -> None:
    leader, member, stranger = (guest(lobbies[i % 2], f"n{i}") for i in range(3))
    party = create(lobbies[0], leader, (member,), unique_options())
    for lobby in lobbies:
        for call in every_ticket_call(lobby, stranger, party.name):
            expect_error(call, Code.PERMISSION_DENIED, "NOT_ON_TICKET")
    # Nothing changed, and the stranger still holds no ticket.
    ticket = get(lobbies[1], member, party.name)
    assert ticket.state == AWAITING and not ticket.members[1].confirmed
    assert ticket == get(lobbies[0], leader, party.name)
    cancel(lobbies[0], stranger, create(lobbies[0], stranger, options=unique_options()).name)
    cancel(lobbies[1], leader, party.name)


def test_an_unknown_ticket_is_not_found(lobbies: list[Lobby]) -> None:
    who = guest(lobbies[0])
    for lobby in lobbies:
        for call in every_ticket_call(lobby, who, "tickets/no-such-ticket_0123"):
            expect_error(call, Code.NOT_FOUND, "TICKET_NOT_FOUND")


@pytest.mark.parametrize(
    "name",
    ["", "no-such-ticket", "tickets/", "ticket/abc", "games/abc", "tickets/a/b",
     "tickets/a b", "tickets/" + "x" * 65, "tickets/abc\n", "Tickets/abc"],
)  # fmt: skip
def test_bad_ticket_names_are_invalid(lobbies: list[Lobby], name: str) -> None:
    who = guest(lobbies[1])
    for call in every_ticket_call(lobbies[0], who, name):
        expect_error(call, Code.INVALID_ARGUMENT, "BAD_NAME")


def test_bad_parties_are_invalid(lobbies: list[Lobby]) -> None:
    leader, *others = (guest(lobbies[i % 2], f"b{i}") for i in range(4))
    bad_parties: list[list[str]] = [
        [g.player for g in others],  # three others: a party is at most three players
        [others[0].player, leader.player],  # the caller in their own party
        [others[0].player, others[0].player],  # a player twice
        ["not a player id"],
        [""],
        ["x" * 129],
    ]
    for party in bad_parties:
        request = lobby_service_pb2.CreateTicketRequest(party=party)
        expect_error(
            partial(lobbies[0].CreateTicket, request, metadata=leader.metadata),
            Code.INVALID_ARGUMENT,
            "BAD_REQUEST",
        )
    # None of them left a ticket behind: the caller can still queue.
    ticket = create(lobbies[1], leader, tuple(others[:2]), unique_options())
    assert ticket.state == AWAITING and len(ticket.members) == 3
    cancel(lobbies[0], leader, ticket.name)


@pytest.mark.parametrize(
    "options",
    [
        game_pb2.RuleOptions(ace_value=5),
        game_pb2.RuleOptions(ace_value=-1),
        game_pb2.RuleOptions(target_score=251),
        game_pb2.RuleOptions(target_score=-3),
        game_pb2.RuleOptions(manches_to_win=10),
        game_pb2.RuleOptions(perique_trick_rank=99),  # type: ignore[arg-type]
        game_pb2.RuleOptions(responder=42),  # type: ignore[arg-type]
        game_pb2.RuleOptions(cut=7),  # type: ignore[arg-type]
    ],
    ids=["ace5", "ace-1", "target251", "target-3", "manches10", "perique", "responder", "cut"],
)
def test_bad_options_are_invalid(lobbies: list[Lobby], options: game_pb2.RuleOptions) -> None:
    who = guest(lobbies[0], "opt")
    expect_error(
        lambda: create(lobbies[1], who, options=options), Code.INVALID_ARGUMENT, "BAD_REQUEST"
    )
    cancel(lobbies[0], who, create(lobbies[0], who, options=unique_options()).name)


def test_calls_without_a_valid_token_are_unauthenticated(lobbies: list[Lobby]) -> None:
    owner = guest(lobbies[0], "owner")
    ticket = create(lobbies[0], owner, options=unique_options())
    name = ticket.name
    lobby_token = issue_token(SECRET, owner.player, audience="truc-lobby")
    assert get(lobbies[1], Guest(owner.player, lobby_token), name).state == QUEUED  # control
    tokens = {
        "TOKEN_INVALID": [
            "garbage",
            owner.token + "x",  # a bad signature
            issue_token(
                "another-secret-0123456789abcdef-0123", owner.player, audience="truc-lobby"
            ),
            issue_token(SECRET, owner.player),  # a game-service-only audience
            issue_token(SECRET, owner.player, audience="truc-lobby", issuer="someone-else"),
        ],
        "TOKEN_EXPIRED": [
            issue_token(SECRET, owner.player, audience="truc-lobby", ttl_seconds=-60),
        ],
    }
    create_call = lobby_service_pb2.CreateTicketRequest()
    list_call = lobby_service_pb2.ListGamesRequest()
    for lobby in lobbies:
        for reason, bad_tokens in tokens.items():
            for token in bad_tokens:
                who = Guest(owner.player, token)
                calls: list[Callable[[], object]] = [
                    *every_ticket_call(lobby, who, name),
                    partial(lobby.CreateTicket, create_call, metadata=who.metadata),
                    partial(lobby.ListGames, list_call, metadata=who.metadata),
                ]
                for call in calls:
                    expect_error(call, Code.UNAUTHENTICATED, reason)
        missing: list[Callable[[], object]] = [
            partial(lobby.GetTicket, lobby_service_pb2.GetTicketRequest(name=name)),
            partial(lobby.CreateTicket, create_call),
            partial(lobby.CancelTicket, lobby_service_pb2.CancelTicketRequest(name=name)),
            partial(lobby.ListGames, list_call),
        ]
        for call in missing:
            expect_error(call, Code.UNAUTHENTICATED, "TOKEN_MISSING")
        for header in ("Basic abc", "Bearer", "bearer " + owner.token + " extra"):
            expect_error(
                partial(
                    lobby.GetTicket,
                    lobby_service_pb2.GetTicketRequest(name=name),
                    metadata=(("authorization", header),),
                ),
                Code.UNAUTHENTICATED,
                "TOKEN_INVALID",
            )
    # None of those calls touched the ticket.
    assert get(lobbies[1], owner, name).state == QUEUED
    cancel(lobbies[0], owner, name)


# --------------------------------------------------------------------------- cancellation


def test_a_cancelled_ticket_is_never_matched_and_its_players_can_queue_again(
    lobbies: list[Lobby], followers: Followers
) -> None:
    options = unique_options()
    leader, member = guest(lobbies[0], "cl"), guest(lobbies[1], "cm")
    solos = [guest(lobbies[i % 2], f"cs{i}") for i in range(4)]
    old = create(lobbies[0], leader, (member,), options)
    followers.follow(lobbies[0], leader.metadata, old.name)
    assert confirm(lobbies[1], member, old.name).state == QUEUED
    cancelled = cancel(lobbies[1], member, old.name)  # a member may cancel
    assert cancelled.state == CANCELLED and not cancelled.game
    waiting = [create(lobbies[i % 2], g, options=options) for i, g in enumerate(solos)]
    for i, (g, t) in enumerate(zip(solos, waiting, strict=True)):
        followers.follow(lobbies[i % 2], g.metadata, t.name)
    time.sleep(0.6)  # several matching rounds: the cancelled pair would complete a table
    for g, t in zip(solos, waiting, strict=True):
        assert get(lobbies[0], g, t.name).state == QUEUED
    old_now = get(lobbies[0], leader, old.name)
    assert old_now.state == CANCELLED and not old_now.game and not old_now.table
    # A closed ticket cannot be cancelled or confirmed again.
    expect_error(
        lambda: cancel(lobbies[0], leader, old.name), Code.FAILED_PRECONDITION, "TICKET_CLOSED"
    )
    expect_error(
        lambda: confirm(lobbies[1], member, old.name), Code.FAILED_PRECONDITION, "TICKET_CLOSED"
    )
    # Its players can queue again; the new ticket completes the table.
    new = create(lobbies[1], leader, (member,), options)
    followers.follow(lobbies[1], leader.metadata, new.name)
    confirm(lobbies[0], member, new.name)
    matched = wait_state(lobbies[1], leader, new.name, MATCHED)
    seated = {a.player for a in matched.table}
    assert seated == {leader.player, member.player, *(g.player for g in solos)}
    assert get(lobbies[0], leader, old.name).state == CANCELLED


def test_cancelling_a_matched_ticket_is_ticket_closed(
    lobbies: list[Lobby], followers: Followers
) -> None:
    options = unique_options()
    guests = [guest(lobbies[i % 2], f"m{i}") for i in range(6)]
    tickets = [create(lobbies[i % 2], g, options=options) for i, g in enumerate(guests)]
    for i, (g, t) in enumerate(zip(guests, tickets, strict=True)):
        followers.follow(lobbies[i % 2], g.metadata, t.name)
    finals = [
        wait_state(lobbies[0], g, t.name, MATCHED) for g, t in zip(guests, tickets, strict=True)
    ]
    assert len({t.game for t in finals}) == 1
    for i, (g, t) in enumerate(zip(guests, tickets, strict=True)):
        expect_error(
            partial(cancel, lobbies[i % 2], g, t.name),
            Code.FAILED_PRECONDITION,
            "TICKET_CLOSED",
        )
        assert get(lobbies[0], g, t.name).state == MATCHED


RACE_ROUNDS = 40


async def _race_round(aio: AioStack, round_number: int, delay: float) -> bool:
    """Six solos of their own options, one of them cancelled ``delay`` s after
    the last is created. True if the cancel won (checked either way)."""
    options = unique_options()
    guests = await asyncio.gather(*(aio.sign_in(f"r{i}", i) for i in range(6)))
    tickets = await asyncio.gather(
        *(aio.create(g, options=options, index=i) for i, g in enumerate(guests))
    )
    victim = round_number % 6
    await asyncio.sleep(delay)
    try:
        cancelled = await aio.cancel(guests[victim], tickets[victim].name, round_number)
    except grpc.aio.AioRpcError as error:
        assert error.code() == Code.FAILED_PRECONDITION, error
        cancelled = None
    if cancelled is not None:
        assert cancelled.state == CANCELLED and not cancelled.game
        await asyncio.sleep(0.4)  # a few matching rounds
        finals = await asyncio.gather(
            *(aio.get(g, t.name, i) for i, (g, t) in enumerate(zip(guests, tickets, strict=True)))
        )
        assert finals[victim].state == CANCELLED and not finals[victim].game
        others = [t for i, t in enumerate(finals) if i != victim]
        assert all(t.state == QUEUED and not t.game for t in others), others
        # The cancelled player is free again; clean up.
        again = await aio.create(guests[victim], options=unique_options())
        await aio.cancel(guests[victim], again.name)
        for i, (g, t) in enumerate(zip(guests, tickets, strict=True)):
            if i != victim:
                await aio.cancel(g, t.name, i)
        return True
    finals = await asyncio.gather(
        *(
            aio.wait_state(g, t.name, [MATCHED, CANCELLED], timeout=10)
            for g, t in zip(guests, tickets, strict=True)
        )
    )
    assert all(t.state == MATCHED for t in finals), finals
    assert len({t.game for t in finals}) == 1
    assert {a.player for a in finals[0].table} == {g.player for g in guests}
    return False


async def _races(stack: Stack) -> list[bool]:
    aio = AioStack(stack)
    rng = random.Random(7)
    try:
        delays = [rng.uniform(0.0, 0.15) for _ in range(RACE_ROUNDS)]
        return await bounded_gather(
            (partial(_race_round, aio, n, d) for n, d in enumerate(delays)), limit=10
        )
    finally:
        await aio.close()


def test_a_cancel_racing_the_matcher_either_cancels_or_loses_cleanly(stack: Stack) -> None:
    outcomes = asyncio.run(_races(stack))
    print(f"\ncancel races: {sum(outcomes)} cancelled, {len(outcomes) - sum(outcomes)} matched")
    # Both sides of the race were exercised.
    assert 0 < sum(outcomes) < len(outcomes)


# --------------------------------------------------------------------------- watching


async def _watch_until_matched(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        options = unique_options()
        leader, member = await aio.sign_in("wl", 0), await aio.sign_in("wm", 1)
        party = await aio.create(leader, (member,), options, index=0)
        stream = aio.lobby(1).WatchTicket(  # the other replica than the one that writes
            lobby_service_pb2.WatchTicketRequest(name=party.name), metadata=leader.metadata
        )
        seen: list[lobby_pb2.Ticket] = []

        async def collect() -> None:
            async for message in stream:
                seen.append(message.ticket)

        watching = asyncio.create_task(collect())
        await asyncio.sleep(0.3)
        await aio.confirm(member, party.name, 0)
        await asyncio.sleep(0.3)
        solos = [await aio.sign_in(f"ws{i}", i) for i in range(4)]
        for i, g in enumerate(solos):
            await aio.create(g, options=options, index=i)
        await asyncio.wait_for(watching, 10)  # the stream ends once matched
        states = [t.state for t in seen]
        assert states[0] == AWAITING and states[-1] == MATCHED, states
        assert QUEUED in states and states.index(QUEUED) < len(states) - 1, states
        assert seen[0].members[1].confirmed is False
        assert all(t.members[1].confirmed for t in seen[1:])
        assert all(not t.game and not t.game_token for t in seen[:-1])
        last = seen[-1]
        assert last.game.startswith("games/") and last.game_token
        assert len(last.table) == 6
        mine = {a.player: a for a in last.table}
        assert (last.seat, last.team) == (mine[leader.player].seat, mine[leader.player].team)
        assert last.team == team_of(last.seat)
        assert mine[member.player].team == last.team  # the party sits together
        view = await aio.get_game(last.game_token, last.game)
        assert view.seat == last.seat
        assert view.seats[last.seat].player == leader.player
        # A stream opened on a matched ticket sends it once and ends.
        after = [
            m.ticket
            async for m in aio.lobby(0).WatchTicket(
                lobby_service_pb2.WatchTicketRequest(name=party.name),
                metadata=member.metadata,
                timeout=5,
            )
        ]
        assert [t.state for t in after] == [MATCHED]
        assert after[0].seat == mine[member.player].seat
    finally:
        await aio.close()


def test_watch_ticket_streams_changes_and_ends_when_matched(stack: Stack) -> None:
    asyncio.run(_watch_until_matched(stack))


# --------------------------------------------------------------------------- expiry


async def _expiry(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        lonely, watched = await aio.sign_in("lonely", 0), await aio.sign_in("watched", 1)
        began = time.monotonic()
        left = await aio.create(lonely, options=unique_options(), index=0, follow=False)
        kept = await aio.create(watched, options=unique_options(), index=1, follow=False)
        stream = aio.lobby(0).WatchTicket(
            lobby_service_pb2.WatchTicketRequest(name=kept.name), metadata=watched.metadata
        )
        seen: list[lobby_pb2.Ticket] = []

        async def collect() -> None:
            async for message in stream:
                seen.append(message.ticket)

        watching = asyncio.create_task(collect())
        # GetTicket does not keep a ticket alive: it expires after the 2 s grace.
        expired = await aio.wait_state(lonely, left.name, [EXPIRED, MATCHED], timeout=8)
        took = time.monotonic() - began
        assert expired.state == EXPIRED and not expired.game
        assert 1.8 <= took <= 5.0, took
        # Its player holds no live ticket any more; a closed ticket cannot be cancelled.
        await expect_aio_error(
            aio.cancel(lonely, left.name), Code.FAILED_PRECONDITION, "TICKET_CLOSED"
        )
        again = await aio.create(lonely, options=unique_options(), follow=False)
        await aio.cancel(lonely, again.name)
        # The watched ticket outlives the grace period several times over.
        await asyncio.sleep(max(0.0, 6.0 - (time.monotonic() - began)))
        assert (await aio.get(watched, kept.name, 1)).state == QUEUED
        assert not watching.done()
        await aio.cancel(watched, kept.name)
        await asyncio.wait_for(watching, 5)  # the stream ends with the cancellation
        # Queued (sent again every TRUC_TICKET_PROGRESS_SECONDS meanwhile), then cancelled.
        states = [t.state for t in seen]
        assert states[-1] == CANCELLED and set(states[:-1]) == {QUEUED}, states
    finally:
        await aio.close()


def test_an_unwatched_ticket_expires_and_a_watched_one_does_not(short_grace: Stack) -> None:
    asyncio.run(_expiry(short_grace))
