"""Matching rounds: read the queue, form tables (pure), seat them atomically.

Every replica runs :meth:`Matcher.run`; a short Redis lock lets one of them do
a round at a time (the claim script would keep two concurrent rounds from
seating a ticket twice anyway: a ticket leaves the queue in the same atomic
step that marks it taken). A round also expires queued tickets nobody has
watched for the grace period, and, for tickets that have waited longer than
the bot wait, adds server-side bots to complete their table.

**No table for an absent player.** Only a ticket *followed now* takes part in a
round, at a human table or with bots: one a member followed (a WatchTicket
stream's heartbeat, every third of the window while the stream is open, or a
GetTicket) within the presence window (``TRUC_TICKET_PRESENCE_SECONDS``, 10 s).
Creating or confirming a ticket does not count: a client that queues and never
looks at its ticket is not there to play. The record is in Redis
(:data:`~truc_lobby.store.FOLLOWED`), so a watcher on any replica counts, and
a ticket whose watcher went away (its replica too) stops being matched within
the window; it stays queued (and expires at the grace, unless watched again).
The bot wait still counts from when the ticket was queued, but bots only fill
around followed tickets, so a ticket nobody follows never starts bot jobs.

A table is seated in three steps, each safe to die after
(:class:`~truc_lobby.store.Claim`): the claim (tickets out of the queue, the
table and its game id written down under a lease), ``CreateGame`` with that
game id, then the seat (tickets matched, players held, the game followed for
results, bot jobs queued: one script). A create the game service refuses
puts the tickets back. A create whose outcome is unknown (deadline exceeded,
replica gone, lobby killed) leaves the claim to be repeated: every round first
takes up the claims whose lease ran out and repeats their create, which the
game service answers with the game if it was written. So a table gets one
game, and its players are seated in it or back in the queue, whichever
lobby replica survives. While the game service cannot be reached, a claimed
table waits for it (its players see their tickets QUEUED): putting it back
would be safe only if the create had surely not been written.

Tickets queue per options key (:mod:`truc_lobby.rule_sets`: the rule set, its
table size and every other option): a round forms tables of each key's size,
six, four or two seats, and ``CreateGame`` gets the table's players seat 0
first (teams alternate: team A on the even seats) with the key's normalized
options. Tickets queued by a lobby older than the rule sets (Truc y Flou
options without ``rule_set``) are keyed like today's Truc y Flou tickets; a
ticket whose options name a rule set this lobby does not know (queued by a
newer one, in a rolling update) stays in the queue for the replicas that do.
A private ticket's queue key ends with the private mark
(:data:`~truc_lobby.rule_sets.PRIVATE_SUFFIX`): it is seated only with private
tickets, and its game is neither listed nor watched (:class:`~truc_lobby.store.Claim`
``private``).

Each round also counts the players waiting in each queue (the followed tickets
taking part in it, every member) and writes the counts down
(:meth:`~truc_lobby.store.LobbyStore.set_waiting`): a queued ticket shows its
queue's (``players_waiting``). ``CreateGame`` gets each seat's display name
(the one its player signed in with; a bot's :func:`~truc_lobby.store.bot_name`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

import grpc
from redis.exceptions import RedisError
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_protocol.display_names import MAX_DISPLAY_NAME
from truc_protocol.errors import InvalidArgument, Unavailable

from . import metrics
from .matchmaking import MatchPolicy, Member, QueuedTicket, Table, form_tables
from .rule_sets import TableRules, queued_rules
from .store import Claim, LobbyStore, bot_name
from .tokens import TokenIssuer

__all__ = ["BOT_PREFIX", "Matcher"]

log = logging.getLogger("truc.lobby.matcher")

BOT_PREFIX: Final = "bot:"
"""Bot player ids (a guest's id never holds a colon, but bots are told apart by
the matcher's own records, not by this prefix)."""
_LOCK_MS: Final = 5000
CREATE_TIMEOUT_S: Final = 5.0
"""How long a CreateGame may take before its outcome counts as unknown."""
CLAIM_LEASE_MS: Final = int(CREATE_TIMEOUT_S * 1000) + 3000
"""A claim nobody resolved within this is taken up by the next round (its lobby
died; longer than a create may take, so a live lobby's create is not raced)."""
RETRY_MS: Final = 1000
"""A create whose outcome is unknown is repeated after this."""
_REFUSED: Final = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
    }
)
"""Answers that mean the game service refused the table before writing anything
(a repeat of a written create is answered with the game, never with these)."""


class Matcher:
    def __init__(
        self,
        store: LobbyStore,
        game: game_service_pb2_grpc.GameServiceAsyncStub,
        tokens: TokenIssuer,
        *,
        interval_ms: int,
        bot_wait_seconds: float,
        grace_seconds: float,
        turn_seconds: int,
        presence_seconds: float = 10.0,
        confirm_seconds: float = 120.0,
        policy: MatchPolicy | None = None,
    ) -> None:
        self._store = store
        self._game = game
        self._tokens = tokens
        self._interval = interval_ms / 1000
        self._bot_wait = bot_wait_seconds
        self._grace_ms = int(grace_seconds * 1000)
        self._presence_ms = int(presence_seconds * 1000)
        self._confirm_ms = int(confirm_seconds * 1000)
        self._turn_seconds = turn_seconds
        self._policy = policy or MatchPolicy()
        self._owner = secrets.token_hex(8)
        self._unreadable: set[str] = set()
        """Queued tickets this lobby cannot seat (warned about once)."""
        self._waiting_ms = max(2000, 10 * interval_ms)
        """How long a round's counts of waiting players are kept (rounds rewrite them)."""
        self.tables_formed = 0

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                if await self._store.lock_matcher(self._owner, _LOCK_MS):
                    try:
                        await self.round()
                    finally:
                        await self._store.unlock_matcher(self._owner)
            except (RedisError, Unavailable) as exc:  # the store's: RedisError is its cause
                log.warning("matching round failed: %s", exc.__cause__ or exc)
            except Exception:
                log.exception("matching round failed")

    async def round(self, now: float | None = None) -> list[Table]:
        """One round; returns the tables seated."""
        now = time.time() if now is None else now
        now_ms = int(now * 1000)
        await self._take_up_claims(now_ms)
        for ticket in await self._store.unconfirmed_since(now_ms - self._confirm_ms):
            stored = await self._store.get(ticket)
            if stored is not None and await self._store.close(stored, "EXPIRED") == 2:
                metrics.TICKETS_EXPIRED.inc()
        queue = await self._store.queue()
        live: dict[str, dict[str, Any]] = {}
        for ticket, entry in queue.tickets.items():
            if now_ms - queue.beats.get(ticket, entry["q"]) > self._grace_ms:
                stored = await self._store.get(ticket)
                if stored is not None and await self._store.close(stored, "EXPIRED") == 2:
                    metrics.TICKETS_EXPIRED.inc()
                    log.info("ticket expired", extra={"ticket": ticket})
                continue
            live[ticket] = entry
        self._unreadable &= live.keys()
        tickets: list[QueuedTicket] = []
        names: dict[str, str] = {}
        waiting: dict[str, int] = defaultdict(int)
        for ticket, entry in live.items():
            if not self._present(queue.followed.get(ticket), now_ms):
                continue  # nobody follows it now: no table, no bots
            table = self._rules(ticket, entry)
            if table is None:
                continue
            rules, private = table
            key = rules.queue_key(private)  # today's key, also for a ticket queued before
            waiting[entry["k"]] += len(entry["m"])
            for member in entry["m"]:
                names[member[0]] = str(member[2]) if len(member) > 2 else ""
            tickets.append(
                QueuedTicket(
                    ticket=ticket,
                    members=tuple(Member(m[0], float(m[1])) for m in entry["m"]),
                    options=key,
                    enqueued_at=entry["q"] / 1000,
                    seats=rules.seat_count,
                )
            )
        await self._store.set_waiting(waiting, self._waiting_ms)
        tables = form_tables(tickets, now, self._policy)
        bots: set[str] = set()
        if self._bot_wait > 0:
            tables += self._bot_tables(tickets, tables, now, bots)
        # Seat tables concurrently (each claim and seat is atomic on its own).
        limit = asyncio.Semaphore(16)

        async def seat(table: Table) -> bool:
            async with limit:
                return await self._seat(table, live, now_ms, bots, names)

        outcomes = await asyncio.gather(*(seat(t) for t in tables))
        seated = [t for t, ok in zip(tables, outcomes, strict=True) if ok]
        self.tables_formed += len(seated)
        return seated

    def _present(self, followed_ms: int | None, now_ms: int) -> bool:
        """Whether a ticket last followed at ``followed_ms`` (None: never) is
        followed now: within the presence window (0: every ticket is)."""
        if self._presence_ms <= 0:
            return True
        return followed_ms is not None and now_ms - followed_ms <= self._presence_ms

    def _rules(self, ticket: str, entry: dict[str, Any]) -> tuple[TableRules, bool] | None:
        """The table a queued ticket waits for and whether it is private (from
        its stored queue key), or None when this lobby cannot seat it: options
        of a rule set it does not know, or a party larger than their team (only
        a ticket a newer lobby stored can be so, in a rolling update). Such a ticket is left in the
        queue for the replicas that can (logged once)."""
        try:
            rules, private = queued_rules(entry["k"])
        except (InvalidArgument, ValueError) as exc:
            problem = str(exc)
        else:
            if len(entry["m"]) <= rules.team_size:
                return rules, private
            problem = f"a party of {len(entry['m'])} in {rules.rule_set}"
        if ticket not in self._unreadable:
            log.warning("ticket left to other replicas: %s", problem, extra={"ticket": ticket})
        self._unreadable.add(ticket)
        return None

    def _bot_tables(
        self, tickets: Sequence[QueuedTicket], tables: Sequence[Table], now: float, bots: set[str]
    ) -> list[Table]:
        """For each options group whose oldest left-over ticket waited past the bot
        wait: the oldest tickets that can make a table with bots (rated like them),
        and those bots. Bot ids are recorded in ``bots`` (never told by their names:
        a player may call themselves anything)."""
        taken = {t for table in tables for t in table.tickets}
        groups: dict[str, list[QueuedTicket]] = defaultdict(list)
        for ticket in sorted(tickets, key=lambda t: (t.enqueued_at, t.ticket)):
            if ticket.ticket not in taken:
                groups[ticket.options].append(ticket)
        formed: list[Table] = []
        for options, waiting in groups.items():
            if now - waiting[0].enqueued_at < self._bot_wait:
                continue
            seats = waiting[0].seats  # one table size per options key
            humans: list[QueuedTicket] = []
            for ticket in waiting:
                if sum(len(t.members) for t in humans) + len(ticket.members) <= seats:
                    humans.append(ticket)
            # Fewer humans (and more bots) until a table forms: three pairs, say,
            # cannot make two teams of three on their own, two pairs and two bots can.
            for count in range(len(humans), 0, -1):
                chosen = humans[:count]
                players = sum(len(t.members) for t in chosen)
                mean = sum(m.rating for t in chosen for m in t.members) / players
                fill = [
                    QueuedTicket(
                        ticket=f"{BOT_PREFIX}{secrets.token_hex(6)}",
                        members=(Member(f"{BOT_PREFIX}{secrets.token_hex(6)}", mean),),
                        options=options,
                        enqueued_at=chosen[0].enqueued_at,
                        seats=seats,
                    )
                    for _ in range(seats - players)
                ]
                made = form_tables([*chosen, *fill], now, self._policy)
                if made:
                    bots.update(b.members[0].player for b in fill)
                    bots.update(b.ticket for b in fill)
                    formed.extend(made)
                    break
        return formed

    async def _seat(
        self,
        table: Table,
        live: dict[str, dict[str, Any]],
        now_ms: int,
        bots: set[str],
        names: dict[str, str],
    ) -> bool:
        rules, private = queued_rules(table.options)
        claim = Claim(
            game=secrets.token_hex(12),
            tickets=tuple(t for t in table.tickets if t not in bots),
            seats=tuple(
                (s, m.player, m.player in bots, m.rating) for s, m in enumerate(table.seats)
            ),
            options=rules.options,
            turn_seconds=self._turn_seconds,
            names=tuple(
                bot_name(s) if m.player in bots else names.get(m.player, "")
                for s, m in enumerate(table.seats)
            ),
            private=private,
        )
        if not await self._store.claim(claim, lease_until_ms=now_ms + CLAIM_LEASE_MS):
            return False
        seated = await self._create(claim)
        if seated:
            seated_ms = time.time() * 1000
            for ticket in claim.tickets:
                metrics.TICKET_WAIT.observe(max(seated_ms - live[ticket]["q"], 0) / 1000)
        return seated

    async def _take_up_claims(self, now_ms: int) -> None:
        """Repeat the create of every claim whose lease ran out (its lobby died,
        or its create's outcome is unknown); one replica takes each up."""

        async def take_up(claim: Claim) -> None:
            if await self._store.lease_claim(
                claim.game, until_ms=now_ms + CLAIM_LEASE_MS, if_due_at_ms=now_ms
            ):
                log.info("taking up a claimed table", extra={"game": claim.game})
                await self._create(claim)

        # Concurrently: while the game service is down each create waits its deadline.
        await asyncio.gather(*(take_up(c) for c in await self._store.claims_due(now_ms)))

    async def _create(self, claim: Claim) -> bool:
        """Create the claim's game and seat the table; True once seated."""
        request = game_service_pb2.CreateGameRequest(
            game_id=claim.game,
            players=claim.players,
            options=game_pb2.RuleOptions.FromString(claim.options),
            turn_seconds=claim.turn_seconds,
            display_names=_display_names(claim),
        )
        metadata = (("authorization", "Bearer " + self._tokens.lobby_token()),)
        try:
            await self._game.CreateGame(request, metadata=metadata, timeout=CREATE_TIMEOUT_S)
        except grpc.RpcError as exc:
            now_ms = int(time.time() * 1000)
            if exc.code() in _REFUSED:
                log.warning("the game service refused a table: %s", exc)
                await self._store.unclaim(claim, now_ms)
            else:
                log.warning("a table's game may not exist yet; repeating: %s", exc)
                await self._store.lease_claim(
                    claim.game, until_ms=now_ms + RETRY_MS, if_due_at_ms=None
                )
            return False
        names = claim.seat_names()
        bot_tokens = {
            player: self._tokens.player_token(player, name=names[i])[0]
            for i, (_, player, bot, _) in enumerate(claim.seats)
            if bot
        }
        if not await self._store.seat(claim, bot_tokens=bot_tokens):
            return False  # another replica seated it (or put it back) meanwhile
        metrics.TABLES_SEATED.inc()
        log.info("table seated", extra={"game": claim.game, "tickets": list(claim.tickets)})
        return True


def _display_names(claim: Claim) -> list[str]:
    """CreateGame's ``display_names``: each seat's, seat 0 first; a player who
    has none (an identity provider's token without a valid name) is shown by
    their player id (of the safe alphabet, so a valid display name; cut to the
    longest one). None at all (a claim written before display names): none."""
    names = claim.seat_names()
    if not any(names):
        return []
    return [
        name or player[:MAX_DISPLAY_NAME] for name, player in zip(names, claim.players, strict=True)
    ]
