"""Matching at scale through the real stack: 600 tickets (solos and parties of two
and three) created by concurrent clients on both lobby replicas become six-seat
games of two teams of three, parties whole on one team, nobody seated twice and
nobody dropped; tickets with different options never share a game."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import pytest
from truc.v1 import game_pb2, lobby_pb2

from truc_dev_redis import RedisServer

from .aio_lobby import (
    MATCHED,
    QUEUED,
    AioStack,
    Guest,
    bounded_gather,
    can_form_table,
    purge_lobby_queue,
    team_of,
    unique_options,
)
from .conftest import Stack, start_stack

TICKETS = 600
SEED = 20240611
SIZE_WEIGHTS = (2, 1, 1)
"""Solos, pairs, parties of three: solos are needed to seat pairs (2+1 teams)."""
SETTLE_TIMEOUT = 40.0


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


@dataclass
class Party:
    """One ticket and its members (the leader first), as the leader last saw it."""

    name: str
    members: list[Guest]
    ticket: lobby_pb2.Ticket


async def _create_party(aio: AioStack, index: int, size: int) -> Party:
    members = [await aio.sign_in(f"m{index}-{k}", index + k) for k in range(size)]
    leader = members[0]
    ticket = await aio.create(leader, members[1:], index=index)
    assert ticket.leader == leader.player
    assert [m.player for m in ticket.members] == [g.player for g in members]
    assert [m.confirmed for m in ticket.members] == [True] + [False] * (size - 1)
    assert ticket.state == (QUEUED if size == 1 else lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION)
    for k, member in enumerate(members[1:], start=1):
        confirmed = await aio.confirm(member, ticket.name, index + k)
        if k < size - 1:
            assert confirmed.state == lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION
        else:  # the last confirmation queues it (the matcher may already have seated it)
            assert confirmed.state in (QUEUED, MATCHED), confirmed
    return Party(ticket.name, members, ticket)


async def _read_all(aio: AioStack, parties: list[Party]) -> None:
    """Refresh, as their leaders see them, the tickets that are not matched yet."""
    pending = [p for p in parties if p.ticket.state != MATCHED]
    tickets = await bounded_gather(
        partial(aio.get, p.members[0], p.name, n) for n, p in enumerate(pending)
    )
    for party, ticket in zip(pending, tickets, strict=True):
        party.ticket = ticket


def _leftover_counts(parties: list[Party]) -> tuple[int, int, int]:
    sizes = Counter(len(p.members) for p in parties if p.ticket.state != MATCHED)
    return sizes[1], sizes[2], sizes[3]


async def _settle(aio: AioStack, parties: list[Party]) -> float:
    """Poll until the tickets left cannot form a table and stay so; the seconds taken."""
    began = time.monotonic()
    stable = 0
    while stable < 3:
        if time.monotonic() - began > SETTLE_TIMEOUT:
            raise AssertionError(f"not settled in {SETTLE_TIMEOUT} s: {_leftover_counts(parties)}")
        await asyncio.sleep(0.2)
        before = _leftover_counts(parties)
        await _read_all(aio, parties)
        after = _leftover_counts(parties)
        stable = stable + 1 if before == after and not can_form_table(*after) else 0
    return time.monotonic() - began


async def _six_hundred_tickets(stack: Stack) -> None:
    rng = random.Random(SEED)
    sizes = rng.choices((1, 2, 3), weights=SIZE_WEIGHTS, k=TICKETS)
    aio = AioStack(stack)
    parties: list[Party] = []
    try:
        began = time.monotonic()
        parties = await bounded_gather(
            (partial(_create_party, aio, i, s) for i, s in enumerate(sizes)), limit=48
        )
        created = time.monotonic() - began
        settled = await _settle(aio, parties)
        await _check(aio, parties)
        print(
            f"\n{TICKETS} tickets ({Counter(sizes)}) created in {created:.1f} s,"
            f" settled {settled:.1f} s later"
        )
    finally:
        leftovers = [p for p in parties if p.ticket.state == QUEUED]
        await bounded_gather(partial(aio.cancel, p.members[0], p.name) for p in leftovers)
        await aio.close()


async def _check(aio: AioStack, parties: list[Party]) -> None:
    players = [g.player for p in parties for g in p.members]
    assert len(set(players)) == len(players)
    # Nobody dropped: every ticket is matched or still queued (none expired, none
    # lost), and what is still queued (one options group) cannot form a table.
    states = Counter(p.ticket.state for p in parties)
    assert set(states) <= {MATCHED, QUEUED}, states
    solos, pairs, triples = _leftover_counts(parties)
    assert not can_form_table(solos, pairs, triples), (solos, pairs, triples)
    # So fewer than six players are left, unless pairs are left without a solo
    # to sit with (a pair's team is 2+1): the matcher seats whatever the queue
    # holds each round, and the last pairs, queued only once their members have
    # confirmed, can find every solo already seated.
    assert solos + 2 * pairs + 3 * triples < 6 or (pairs >= 2 and solos <= 1), (
        solos,
        pairs,
        triples,
    )

    games: dict[str, list[Party]] = defaultdict(list)
    for party in parties:
        if party.ticket.state == MATCHED:
            games[party.ticket.game].append(party)
    seated: dict[str, str] = {}  # player -> game
    gaps: list[float] = []
    for game, members in games.items():
        table = list(members[0].ticket.table)
        for party in members:  # every ticket of a game shows the same table
            assert list(party.ticket.table) == table, game
        assert sorted(a.seat for a in table) == list(range(6)), table
        for assignment in table:
            assert assignment.team == team_of(assignment.seat), table
            assert not assignment.bot, table  # bots are off in this stack
        by_player = {a.player: a for a in table}
        assert len(by_player) == 6, table
        # The seats are exactly the tickets' members: nobody else, nobody twice.
        expected = sorted(g.player for p in members for g in p.members)
        assert sorted(by_player) == expected, (game, table)
        for party in members:
            teams = {by_player[g.player].team for g in party.members}
            assert len(teams) == 1, f"party {party.name} split: {table}"
        for player in by_player:
            assert player not in seated, f"{player} in {seated.get(player)} and {game}"
            seated[player] = game
        rating = {m.player: m.rating for p in members for m in p.ticket.members}
        team_a = [rating[a.player] for a in table if a.team == game_pb2.TEAM_A]
        team_b = [rating[a.player] for a in table if a.team == game_pb2.TEAM_B]
        assert len(team_a) == len(team_b) == 3
        gaps.append(abs(sum(team_a) / 3 - sum(team_b) / 3))
    # Every ticket's member sees their own seat, and their game token shows that
    # seat of that game on the game service.
    checks = [(p, g) for p in parties if p.ticket.state == MATCHED for g in p.members]
    await bounded_gather(
        (partial(_check_member, aio, p, g, n) for n, (p, g) in enumerate(checks)), limit=48
    )
    matched = sum(len(p.members) for p in parties if p.ticket.state == MATCHED)
    assert matched == 6 * len(games) == len(seated)
    print(
        f"\n{len(games)} games, {matched} of {len(players)} players seated,"
        f" leftover queue (solos, pairs, threes) = {(solos, pairs, triples)};"
        f" average rating gap {sum(gaps) / len(gaps):.2f}"
        f" (ratings {sorted({m.rating for p in parties for m in p.ticket.members})})"
    )


async def _check_member(aio: AioStack, party: Party, member: Guest, index: int) -> None:
    mine = await aio.get(member, party.name, index)
    assert mine.state == MATCHED and mine.game == party.ticket.game
    own = next(a for a in mine.table if a.player == member.player)
    assert (mine.seat, mine.team) == (own.seat, own.team)
    view = await aio.get_game(mine.game_token, mine.game)
    assert view.name == mine.game
    assert view.HasField("seat") and view.seat == mine.seat
    assert [s.player for s in view.seats] == [
        a.player for a in sorted(mine.table, key=lambda a: a.seat)
    ]
    assert view.options.target_score == 25  # the default options


def test_six_hundred_tickets_form_whole_tables(stack: Stack) -> None:
    asyncio.run(_six_hundred_tickets(stack))


async def _mixed_options(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        twelve = game_pb2.RuleOptions(target_score=12)
        guests = list(await asyncio.gather(*(aio.sign_in(f"o{i}", i) for i in range(12))))
        wanted = [twelve if i % 2 else None for i in range(12)]  # interleaved
        tickets = await asyncio.gather(
            *(
                aio.create(g, options=o, index=i)
                for i, (g, o) in enumerate(zip(guests, wanted, strict=True))
            )
        )
        finals = await asyncio.gather(
            *(
                aio.wait_state(g, t.name, [MATCHED], timeout=15)
                for g, t in zip(guests, tickets, strict=True)
            )
        )
        by_game: dict[str, set[int]] = defaultdict(set)
        for ticket in finals:
            by_game[ticket.game].add(ticket.options.target_score)
        assert len(by_game) == 2, by_game
        assert sorted(min(s) for s in by_game.values()) == [12, 25]
        assert all(len(scores) == 1 for scores in by_game.values()), by_game
        for guest, ticket in zip(guests, finals, strict=True):
            view = await aio.get_game(ticket.game_token, ticket.game)
            assert view.seat == ticket.seat
            assert view.options.target_score == ticket.options.target_score
            seated = {s.player for s in view.seats}
            assert guest.player in seated
            same = {
                g.player
                for g, t in zip(guests, finals, strict=True)
                if t.options.target_score == ticket.options.target_score
            }
            assert seated == same
    finally:
        await aio.close()


def test_tickets_with_different_options_never_share_a_game(stack: Stack) -> None:
    asyncio.run(_mixed_options(stack))


async def _guest_named_bot(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        options = unique_options()
        guests = [await aio.sign_in("bot" if i == 0 else f"h{i}", i) for i in range(6)]
        tickets = [await aio.create(g, options=options, index=i) for i, g in enumerate(guests)]
        finals = await asyncio.gather(
            *(
                aio.wait_state(g, t.name, [MATCHED], timeout=10)
                for g, t in zip(guests, tickets, strict=True)
            )
        )
        assert len({t.game for t in finals}) == 1
        table = {a.player: a for a in finals[0].table}
        assert set(table) == {g.player for g in guests}
        # Six humans (bots are off in this stack): none of them is flagged a bot,
        # so no server-side bot is sent to play a human's seat.
        assert [p for p, a in table.items() if a.bot] == []
    finally:
        await aio.close()


def test_a_guest_named_bot_is_seated_as_a_human(stack: Stack) -> None:
    asyncio.run(_guest_named_bot(stack))
