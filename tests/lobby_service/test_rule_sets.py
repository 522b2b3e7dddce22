"""Every rule set through the real stack (Redis, a game service, two lobby
replicas): a 1 v 1 French Truc table of two humans played out, a partnership
Truc table seating a party of two as one team, a two-seat Catalan Truc ticket
completed by a server-side bot, the parties and options a rule set refuses,
ratings and history kept per rule set, and tickets and ratings stored by a
lobby older than the rule sets."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import cast

import grpc
import pytest
import redis
from redis.asyncio import Redis as AsyncRedis
from truc.v1 import game_pb2, lobby_pb2, lobby_service_pb2

from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer
from truc_lobby.store import QUEUE, RATINGS, LobbyStore, player_key, ratings_key
from truc_protocol.status import trailers
from truc_rules.rule_set import RuleSet

from .aio_lobby import (
    AWAITING,
    MATCHED,
    QUEUED,
    AioStack,
    Guest,
    expect_aio_error,
    purge_lobby_queue,
    team_of,
)
from .conftest import Stack, start_stack

R = game_pb2
BOT_WAIT = 2.0
"""Long enough that tables of humans created together never get a bot, short
enough for the bot test."""
MATCH_TIMEOUT = 90.0

# A short match (one hand wins a game, one game the match) in each rule set;
# every test asks for other options, so its tickets only ever match each other.
FRENCH = R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, target_score=1, manches_to_win=1)
PARTNERSHIP = R.RuleOptions(rule_set=R.RULE_SET_PARTNERSHIP_TRUC, target_score=11)
CATALAN_DUEL = R.RuleOptions(
    rule_set=R.RULE_SET_CATALAN_TRUC, seats=2, target_score=1, manches_to_win=1
)
# What the lobby stored as Truc y Flou options before the rule sets (fields 1-7
# only), with a target no other test uses.
LEGACY_OPTIONS = R.RuleOptions(
    perique_trick_rank=R.PERIQUE_TRICK_RANK_LOWEST,
    responder=R.RESPONDER_CAPTAIN,
    cut=R.CUT_MODE_AUTOMATIC,
    target_score=23,
    manches_to_win=2,
).SerializeToString(deterministic=True)


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer) -> Iterator[Stack]:
    purge_lobby_queue(redis_server.url)
    started = start_stack(
        redis_server.url, TRUC_BOT_WAIT_SECONDS=str(int(BOT_WAIT)), TRUC_MATCH_INTERVAL_MS="50"
    )
    yield started
    started.stop()


def _check_table(ticket: lobby_pb2.Ticket, seats: int, humans: set[str]) -> None:
    assert ticket.state == MATCHED, ticket
    assert sorted(a.seat for a in ticket.table) == list(range(seats)), ticket.table
    assert len({a.player for a in ticket.table}) == seats
    for assignment in ticket.table:
        assert assignment.team == team_of(assignment.seat)
        assert assignment.bot == (assignment.player not in humans), ticket.table


async def _rating(aio: AioStack, guest: Guest, options: game_pb2.RuleOptions) -> float:
    """The guest's rating in the options' rule set, as a new ticket shows it
    (once the lobby has released them from their last game)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            ticket = await aio.create(guest, options=options)
        except grpc.aio.AioRpcError as error:  # still held by a game being recorded
            assert error.code() == grpc.StatusCode.ALREADY_EXISTS, error
            assert time.monotonic() < deadline, "the player is never released"
            await asyncio.sleep(0.2)
            continue
        await aio.cancel(guest, ticket.name)
        return ticket.members[0].rating


async def _history(aio: AioStack, guest: Guest, games: int) -> list[lobby_pb2.GameSummary]:
    """The guest's finished games, once the lobby has recorded ``games`` of them."""
    deadline = time.monotonic() + 20
    while True:
        reply = await aio.lobby(1).ListGames(
            lobby_service_pb2.ListGamesRequest(), metadata=guest.metadata, timeout=10
        )
        if len(reply.games) >= games or time.monotonic() > deadline:
            return list(reply.games)
        await asyncio.sleep(0.1)


# ------------------------------------------------------------------ 1 v 1


async def _french_duel(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        humans = [await aio.sign_in("duel", i) for i in range(2)]
        tickets = await asyncio.gather(
            *(aio.create(h, options=FRENCH, index=i) for i, h in enumerate(humans))
        )
        for ticket in tickets:
            assert ticket.state == QUEUED
            assert (ticket.rule_set, ticket.seat_count) == (R.RULE_SET_FRENCH_TRUC, 2)
            assert ticket.options.rule_set == R.RULE_SET_FRENCH_TRUC
            assert ticket.options.seats == 2 and ticket.options.target_score == 1
            assert [m.rating for m in ticket.members] == [1500.0]
        finals = await asyncio.gather(
            *(
                aio.wait_state(h, t.name, [MATCHED], timeout=10)
                for h, t in zip(humans, tickets, strict=True)
            )
        )
        assert len({t.game for t in finals}) == 1
        players = {h.player for h in humans}
        _check_table(finals[0], 2, players)
        assert sorted(t.seat for t in finals) == [0, 1]
        # CreateGame got the players seat 0 first and the ticket's options.
        view = await aio.get_game(finals[0].game_token, finals[0].game)
        assert [s.player for s in view.seats] == [
            a.player for a in sorted(finals[0].table, key=lambda a: a.seat)
        ]
        assert view.rule_set == R.RULE_SET_FRENCH_TRUC and view.seat_count == 2
        # Both humans play their seats (local bots on their game tokens) to the end.
        bots = [
            BotPlayer(aio.game, t.game, t.game_token, HeuristicPolicy(seed=20 + t.seat))
            for t in finals
        ]
        views = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        assert all(v.finished for v in views) and len({v.winner for v in views}) == 1
        winner = views[0].winner
        assert winner in (R.TEAM_A, R.TEAM_B)
        # Rated in French Truc only: even players, so +16 and -16 (plain Elo at 1 v 1).
        for ticket, guest in zip(finals, humans, strict=True):
            won = ticket.team == winner
            assert await _rating(aio, guest, FRENCH) == pytest.approx(1516.0 if won else 1484.0)
            assert await _rating(aio, guest, R.RuleOptions()) == 1500.0
            sackson = R.RuleOptions(rule_set=R.RULE_SET_SACKSON_TRUC)
            assert await _rating(aio, guest, sackson) == 1500.0
            # The history entry names the rule set and the table size.
            (summary,) = await _history(aio, guest, 1)
            assert summary.name == ticket.game
            assert (summary.rule_set, summary.seat_count) == (R.RULE_SET_FRENCH_TRUC, 2)
            assert len(summary.table) == 2 and summary.seat == ticket.seat
            assert summary.winner == winner
            assert summary.rating_change == pytest.approx(16.0 if won else -16.0)
            # ListGames filtered by rule set: the duel is French Truc's only.
            for rule_set, count in ((R.RULE_SET_FRENCH_TRUC, 1), (R.RULE_SET_TRUC_Y_FLOU, 0)):
                reply = await aio.lobby(0).ListGames(
                    lobby_service_pb2.ListGamesRequest(rule_set=rule_set),
                    metadata=guest.metadata,
                    timeout=10,
                )
                assert [g.name for g in reply.games] == [ticket.game] * count
                assert reply.next_page_token == ""
    finally:
        await aio.close()


def test_two_humans_play_a_french_truc_duel_rated_in_french_truc_only(stack: Stack) -> None:
    asyncio.run(_french_duel(stack))


# ------------------------------------------------------------------ 2 v 2


async def _partnership_with_a_party(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        leader, mate, solo1, solo2 = [await aio.sign_in(f"p{i}", i) for i in range(4)]
        party = await aio.create(leader, (mate,), PARTNERSHIP)
        assert party.state == AWAITING
        assert (party.rule_set, party.seat_count) == (R.RULE_SET_PARTNERSHIP_TRUC, 4)
        party = await aio.confirm(mate, party.name, 1)
        assert party.state == QUEUED
        solos = await asyncio.gather(
            aio.create(solo1, options=PARTNERSHIP, index=0),
            aio.create(solo2, options=PARTNERSHIP, index=1),
        )
        matched = await aio.wait_state(leader, party.name, [MATCHED], timeout=10)
        others = [
            await aio.wait_state(g, t.name, [MATCHED], timeout=10)
            for g, t in ((solo1, solos[0]), (solo2, solos[1]))
        ]
        humans = {g.player for g in (leader, mate, solo1, solo2)}
        _check_table(matched, 4, humans)
        assert {t.game for t in others} == {matched.game}
        seat = {a.player: a.seat for a in matched.table}
        # The party is one team, the older ticket's (A): the leader at seat 0, the
        # partner opposite at seat 2; the solos are team B (seats 1 and 3).
        assert (seat[leader.player], seat[mate.player]) == (0, 2)
        assert {seat[solo1.player], seat[solo2.player]} == {1, 3}
        assert matched.team == R.TEAM_A
        view = await aio.get_game(matched.game_token, matched.game)
        assert [s.player for s in view.seats] == [
            a.player for a in sorted(matched.table, key=lambda a: a.seat)
        ]
        assert view.rule_set == R.RULE_SET_PARTNERSHIP_TRUC and view.seat_count == 4
    finally:
        await aio.close()


def test_a_party_of_two_is_one_team_of_a_partnership_truc_table(stack: Stack) -> None:
    asyncio.run(_partnership_with_a_party(stack))


# ------------------------------------------------------------------ bots


async def _catalan_duel_with_a_bot(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        human = await aio.sign_in("catalan")
        began = time.monotonic()
        ticket = await aio.create(human, options=CATALAN_DUEL)
        assert (ticket.rule_set, ticket.seat_count) == (R.RULE_SET_CATALAN_TRUC, 2)
        matched = await aio.wait_state(human, ticket.name, [MATCHED], timeout=BOT_WAIT + 8)
        assert time.monotonic() - began >= 0.8 * BOT_WAIT
        _check_table(matched, 2, {human.player})
        assert sum(a.bot for a in matched.table) == 1
        # The human plays their seat; the lobby's bot plays the other to the end.
        player = BotPlayer(aio.game, matched.game, matched.game_token, HeuristicPolicy(seed=3))
        final = await asyncio.wait_for(player.run(), MATCH_TIMEOUT)
        assert final.finished and final.seat == matched.seat
        assert final.rule_set == R.RULE_SET_CATALAN_TRUC and final.seat_count == 2
        assert not [e for e in final.events if e.HasField("turn_timed_out")]
        won = final.winner == matched.team
        (summary,) = await _history(aio, human, 1)
        assert (summary.rule_set, summary.seat_count) == (R.RULE_SET_CATALAN_TRUC, 2)
        assert [a.bot for a in sorted(summary.table, key=lambda a: a.seat)] == [
            a.bot for a in sorted(matched.table, key=lambda a: a.seat)
        ]
        # The bot was seated at the human's rating: +16 or -16, in Catalan Truc only
        # (its four-seat game shares the rating; the other rule sets do not).
        assert await _rating(aio, human, CATALAN_DUEL) == pytest.approx(1516.0 if won else 1484.0)
        catalan4 = R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC)
        assert await _rating(aio, human, catalan4) == pytest.approx(1516.0 if won else 1484.0)
        for other in (R.RuleOptions(), FRENCH, PARTNERSHIP):
            assert await _rating(aio, human, other) == 1500.0
    finally:
        await aio.close()


def test_a_two_seat_catalan_truc_ticket_is_completed_by_a_bot(stack: Stack) -> None:
    asyncio.run(_catalan_duel_with_a_bot(stack))


# ------------------------------------------------------------------ refusals


async def _refusals(stack: Stack) -> None:
    aio = AioStack(stack)
    client = redis.Redis.from_url(stack.redis_url)
    try:
        leader, *friends = [await aio.sign_in(f"r{i}", i) for i in range(4)]
        queued_before = cast(int, client.hlen(QUEUE))
        french_ace = R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, ace_value=1)
        catalan_six = R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC, seats=6)
        catalan_order = R.RuleOptions(
            rule_set=R.RULE_SET_CATALAN_TRUC, trick_order=R.TRICK_ORDER_SEVEN_ACE
        )
        partnership_cut = R.RuleOptions(rule_set=R.RULE_SET_PARTNERSHIP_TRUC, cut=R.CUT_MODE_CUTTER)
        refused = [
            (friends[:1], FRENCH, "party: french_truc at 2 seats", "1"),  # a pair at 1 v 1
            (friends[:1], CATALAN_DUEL, "party: catalan_truc at 2 seats", "1"),
            (friends[:2], PARTNERSHIP, "party: partnership_truc at 4 seats", "2"),  # a trio
            (friends[:3], R.RuleOptions(), "party: truc_y_flou at 6 seats", "3"),  # four
            ([], french_ace, "options.ace_value:", None),
            ([], catalan_six, "options.seats:", None),
            ([], catalan_order, "options.trick_order:", None),
            ([], partnership_cut, "options.cut:", None),
        ]
        for party, options, field, team_size in refused:
            error = await expect_aio_error(
                aio.create(leader, party, options, index=len(party)),
                grpc.StatusCode.INVALID_ARGUMENT,
                "BAD_REQUEST",
            )
            assert (error.details() or "").startswith(field), error.details()
            if team_size is not None:  # machine-readable: which field, how many fit
                metadata = dict(trailers(error))
                assert metadata["field"] == "party" and metadata["team_size"] == team_size
        # Nothing was queued or held: every one of them may queue at once.
        assert client.hlen(QUEUE) == queued_before
        assert not any(client.exists(player_key(g.player)) for g in (leader, *friends))
        fits = [
            (friends[:1], PARTNERSHIP),
            (friends[:2], R.RuleOptions()),
            ([], R.RuleOptions(rule_set=R.RULE_SET_SACKSON_TRUC)),
        ]
        for party, options in fits:
            ticket = await aio.create(leader, party, options)
            assert ticket.state == (AWAITING if party else QUEUED)
            assert len(ticket.members) == 1 + len(party)
            await aio.cancel(leader, ticket.name)
    finally:
        client.close()
        await aio.close()


def test_parties_larger_than_a_team_and_foreign_options_are_refused(stack: Stack) -> None:
    asyncio.run(_refusals(stack))


# ------------------------------------------------------------------ stored data


async def _legacy(stack: Stack) -> None:
    """A ticket and a rating as the lobby wrote them before the rule sets."""
    aio = AioStack(stack)
    client = AsyncRedis.from_url(stack.redis_url)
    try:
        old, *new = [await aio.sign_in(f"old{i}", i) for i in range(6)]
        await client.hset(RATINGS, old.player, "1600")
        store = LobbyStore(client)
        now_ms = int(time.time() * 1000)
        assert await store.create(
            "legacy-ticket",
            leader=old.player,
            members=[(old.player, True, 1600.0)],
            options=LEGACY_OPTIONS,
            options_key=LEGACY_OPTIONS.hex(),
            now_ms=now_ms,
        )
        raw = await client.hget(QUEUE, "legacy-ticket")
        assert json.loads(raw)["k"] == LEGACY_OPTIONS.hex()
        stored = await aio.get(old, "tickets/legacy-ticket")
        assert (stored.rule_set, stored.seat_count) == (R.RULE_SET_TRUC_Y_FLOU, 6)
        assert stored.options.rule_set == R.RULE_SET_TRUC_Y_FLOU and stored.options.seats == 6
        assert stored.options.target_score == 23
        # Today's tickets of the same options queue with it: one table of six humans.
        options = R.RuleOptions(target_score=23)
        tickets = await asyncio.gather(
            *(aio.create(g, options=options, index=i) for i, g in enumerate(new))
        )
        matched = await aio.wait_state(old, stored.name, [MATCHED], timeout=10)
        _check_table(matched, 6, {g.player for g in (old, *new)})
        for guest, ticket in zip(new, tickets, strict=True):
            mine = await aio.wait_state(guest, ticket.name, [MATCHED], timeout=10)
            assert mine.game == matched.game
        # The Truc y Flou rating stored before is still the player's Truc y Flou
        # rating (and only that one).
        assert ratings_key(RuleSet.TRUC_Y_FLOU) == RATINGS
        assert {m.player: m.rating for m in matched.members} == {old.player: 1600.0}
        fresh = await aio.sign_in("fresh")
        await client.hset(RATINGS, fresh.player, "1700")
        assert await _rating(aio, fresh, R.RuleOptions()) == 1700.0
        assert await _rating(aio, fresh, FRENCH) == 1500.0
    finally:
        await client.aclose()
        await aio.close()


def test_a_ticket_and_a_rating_stored_before_the_rule_sets_keep_working(stack: Stack) -> None:
    asyncio.run(_legacy(stack))


async def _unknown_rule_set(stack: Stack) -> None:
    """A ticket a newer lobby queued for a rule set this one does not know."""
    aio = AioStack(stack)
    client = AsyncRedis.from_url(stack.redis_url)
    try:
        future, *duel = [await aio.sign_in(f"f{i}", i) for i in range(3)]
        options = R.RuleOptions(rule_set=42, seats=2).SerializeToString()  # type: ignore[arg-type]
        assert await LobbyStore(client).create(
            "future-ticket",
            leader=future.player,
            members=[(future.player, True, 1500.0)],
            options=options,
            options_key=options.hex(),
            now_ms=int(time.time() * 1000),
        )
        # The rounds go on around it: a French Truc table is seated meanwhile.
        french = R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, target_score=2)
        tickets = [await aio.create(g, options=french, index=i) for i, g in enumerate(duel)]
        for guest, ticket in zip(duel, tickets, strict=True):
            assert (await aio.wait_state(guest, ticket.name, [MATCHED], timeout=10)).game
        # It stays queued for a lobby that can seat it, readable as it was stored.
        waiting = await aio.get(future, "tickets/future-ticket")
        assert waiting.state == QUEUED and not waiting.table
        assert (waiting.rule_set, waiting.seat_count) == (42, 2)
        assert (await aio.cancel(future, waiting.name)).state == lobby_pb2.TICKET_STATE_CANCELLED
    finally:
        await client.aclose()
        await aio.close()


def test_a_ticket_of_an_unknown_rule_set_waits_and_stops_no_round(stack: Stack) -> None:
    asyncio.run(_unknown_rule_set(stack))
