"""Use cases of the lobby: guests, tickets, parties (stateless: all in Redis).

Refusals are :mod:`truc_protocol.errors` (transport-neutral); the store's
failures reach here as ``Unavailable`` (``STORE_UNAVAILABLE``), never as a
Redis error (:func:`truc_lobby.store.store_call`).

A ticket names its game in its options (``options.rule_set``, and
``options.seats`` in Catalan Truc): :func:`normalized_options` checks them
against that rule set, and a party holds at most a team of it (three in Truc
y Flou, two in the 2 v 2 rule sets, one, so no party, in 1 v 1). Ratings and
history are per rule set.

Abuse limits (:mod:`truc_lobby.limits`): every SignInGuest counts for its
client address and in total, every CreateTicket for its player, before the
request is looked at (a malformed call counts too). A member reading a ticket
(GetTicket) or watching it (WatchTicket) *follows* it, which is what lets it
take part in matching (:mod:`truc_lobby.matcher`). Player ids, the guests'
and those a party names, are of the shared safe alphabet
(:func:`truc_protocol.identifiers.valid_player_id`).

Display names (:mod:`truc_protocol.display_names`): a guest chooses theirs at
sign-in (empty: "Guest"; anything else the rules refuse is INVALID_ARGUMENT
``BAD_DISPLAY_NAME``), and the token carries it (claim ``name``). A ticket keeps
each member's as their own token says it: the leader's at CreateTicket, a party
member's at ConfirmTicket (empty until then); the table, the game
(``CreateGame.display_names``) and the history show them, a bot as "Bot" and
its seat. The guest's player id is derived from the name's ASCII letters
(accents dropped: "José María" -> ``JoseMaria-...``), "Guest" when it has none.

Private tables (``CreateTicketRequest.private``) queue apart
(:meth:`~truc_lobby.rule_sets.TableRules.queue_key`); their games are not
listed (ListLiveGames) and only their own players get a spectator grant for
them (CreateSpectatorGrant: PERMISSION_DENIED ``GAME_PRIVATE`` to anyone
else). Spectator grants are counted per player (RATE_LIMITED past the limit)
before the request is looked at, and are issued for any game the lobby seated
whose record is still kept (the history retention): NOT_FOUND
``GAME_NOT_FOUND`` otherwise.
"""

from __future__ import annotations

import re
import secrets
import time
import unicodedata
from collections.abc import Sequence
from typing import Final

from truc.v1 import game_pb2, lobby_pb2

from truc_protocol.convert import rule_set_from_proto, rule_set_to_proto
from truc_protocol.display_names import (
    BAD_DISPLAY_NAME,
    display_name_problem,
    normalized_display_name,
)
from truc_protocol.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from truc_protocol.identifiers import (
    PLAYER_ID_ALPHABET,
    game_name,
    parse_game_name,
    valid_player_id,
)
from truc_rules.rule_set import RuleSet

from .history import GameHistory, GameRecord, PageTokenError
from .limits import LobbyLimits
from .live import LiveGames
from .results import ResultsFollower
from .rule_sets import TableRules, normalize, stored_rules
from .store import LobbyStore, SeatedTable, StoredTicket
from .tokens import TokenIssuer

__all__ = [
    "DEFAULT_DISPLAY_NAME",
    "GAME_NOT_FOUND",
    "GAME_PRIVATE",
    "LobbyService",
    "normalized_options",
    "parse_game_name",
    "parse_ticket_name",
    "ticket_name",
]

_TICKET_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEFAULT_DISPLAY_NAME: Final = "Guest"
"""A guest who gives no display name is called this."""
GAME_NOT_FOUND: Final = "GAME_NOT_FOUND"
"""NOT_FOUND: no game the lobby seated by that name (or its record expired)."""
GAME_PRIVATE: Final = "GAME_PRIVATE"
"""PERMISSION_DENIED: a private table's game, asked for by someone not at it."""
_STATES: Final = {
    "AWAITING": lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION,
    "QUEUED": lobby_pb2.TICKET_STATE_QUEUED,
    "MATCHING": lobby_pb2.TICKET_STATE_QUEUED,
    "MATCHED": lobby_pb2.TICKET_STATE_MATCHED,
    "CANCELLED": lobby_pb2.TICKET_STATE_CANCELLED,
    "EXPIRED": lobby_pb2.TICKET_STATE_EXPIRED,
}
_FOLLOWABLE: Final = frozenset(("AWAITING", "QUEUED"))
"""The states in which following a ticket is recorded (the store checks again)."""
_TEAMS: Final = (game_pb2.TEAM_A, game_pb2.TEAM_B)
DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 100


def _bad(message: str) -> InvalidArgument:
    return InvalidArgument("BAD_REQUEST", message)


def ticket_name(ticket: str) -> str:
    return "tickets/" + ticket


def parse_ticket_name(name: str) -> str:
    if not name.startswith("tickets/") or not _TICKET_ID.fullmatch(name[8:]):
        raise InvalidArgument("BAD_NAME", f"name must be 'tickets/<id>', not {name[:80]!r}")
    return name[8:]


def _page_request(page_size: int, page_token: str, rule_set: int) -> tuple[RuleSet | None, int]:
    """A paged request's rule set filter (None: every rule set) and page size,
    after checking them (INVALID_ARGUMENT ``BAD_REQUEST``); the token itself is
    checked by the store that issued it."""
    only = rule_set_from_proto(rule_set, "rule_set") if rule_set else None
    if not 0 <= page_size <= MAX_PAGE_SIZE:
        raise _bad(f"page_size: 1-{MAX_PAGE_SIZE} (0: {DEFAULT_PAGE_SIZE})")
    if len(page_token) > 256:
        raise _bad("page_token: not one this lobby issued")
    return only, page_size or DEFAULT_PAGE_SIZE


def _display_name(requested: str) -> str:
    """The display name a guest asked for, as kept (normalized; empty:
    :data:`DEFAULT_DISPLAY_NAME`); INVALID_ARGUMENT ``BAD_DISPLAY_NAME``
    saying why for one the rules refuse."""
    name = normalized_display_name(requested)
    if not requested:
        return DEFAULT_DISPLAY_NAME
    problem = display_name_problem(name)
    if problem is not None:
        raise InvalidArgument(BAD_DISPLAY_NAME, f"display_name: {problem}")
    return name


def _player_slug(name: str) -> str:
    """The ASCII start of a guest's player id from their display name: its
    letters, digits, ``_`` and ``-`` with accents dropped, at most 16; "Guest"
    when none is left ("山田", "😀")."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9_-]", "", ascii_name)[:16] or DEFAULT_DISPLAY_NAME


def normalized_options(options: game_pb2.RuleOptions) -> game_pb2.RuleOptions:
    """The options with every default written out (``rule_set`` and ``seats``
    included), so equal tables get equal keys.

    The engine's options of the rule set they name check them (one definition
    of the bounds and of which options a rule set has): INVALID_ARGUMENT
    ``BAD_REQUEST`` naming the option otherwise (``options.ace_value`` in French
    Truc, say).
    """
    return normalize(options).proto()


def _check_party(party: Sequence[str], player: str, rules: TableRules) -> None:
    """INVALID_ARGUMENT ``BAD_REQUEST`` (``party: ...``, with the ``field`` and
    the ``team_size`` in the error's metadata) unless ``party`` is other
    players' ids, each once, that fit on one team with the caller."""
    if len(party) >= rules.team_size:
        fits = (
            "one against one: a ticket holds one player"
            if rules.team_size == 1
            else f"in teams of {rules.team_size}: a party holds at most {rules.team_size} players"
        )
        raise InvalidArgument(
            "BAD_REQUEST",
            f"party: {rules.rule_set} at {rules.seat_count} seats is played {fits},"
            f" not {len(party) + 1}",
            metadata={"field": "party", "team_size": str(rules.team_size)},
        )
    members = [player, *party]
    if len(set(members)) != len(members):
        raise _bad("party: each player once, without the caller")
    for other in party:
        if not valid_player_id(other):
            raise _bad(f"party: player ids are 1-128 of {PLAYER_ID_ALPHABET}")


class LobbyService:
    def __init__(
        self,
        store: LobbyStore,
        tokens: TokenIssuer,
        history: GameHistory,
        results: ResultsFollower,
        limits: LobbyLimits,
        *,
        default_rating: float,
        live: LiveGames | None = None,
        bot_wait_seconds: float = 0.0,
        spectator_grant_seconds: int = 14_400,
    ) -> None:
        """``bot_wait_seconds``: the matcher's bot wait (a queued ticket's
        ``bots_time``; 0: bots never fill, no ``bots_time``)."""
        self.store = store
        self.tokens = tokens
        self.limits = limits
        self._history = history
        self._results = results
        self._default_rating = default_rating
        self._live = live if live is not None else LiveGames(store.redis)
        self._bot_wait_ms = int(bot_wait_seconds * 1000)
        self._grant_seconds = spectator_grant_seconds

    @staticmethod
    def _now_ms() -> int:
        return int(time.time() * 1000)

    async def sign_in_guest(self, display_name: str, address: str) -> tuple[str, str, int, str]:
        """(player id, token, expiry in seconds, display name as kept) for a new
        guest signing in from the client address ``address`` (RATE_LIMITED past
        its limits; BAD_DISPLAY_NAME for a name the rules refuse)."""
        await self.limits.guest_sign_in(address)
        name = _display_name(display_name)
        player = f"{_player_slug(name)}-{secrets.token_hex(6)}"
        assert valid_player_id(player), player
        token, expires = self.tokens.player_token(player, name=name)
        return player, token, expires, name

    async def stream_token(self, player: str) -> tuple[str, int]:
        """A stream token for ``player`` and its expiry in seconds (RATE_LIMITED
        past the player's limit)."""
        await self.limits.stream_token(player)
        return self.tokens.stream_token(player)

    async def create_ticket(
        self,
        player: str,
        party: Sequence[str],
        options: game_pb2.RuleOptions,
        *,
        name: str = "",
        private: bool = False,
    ) -> StoredTicket:
        """Queue ``player`` (display name ``name``; and a party they lead, once
        confirmed) for a table of the rule set ``options`` name, a private one
        if ``private``; nothing is stored when the options or the party do not
        fit it (INVALID_ARGUMENT ``BAD_REQUEST``); every call counts towards
        the player's ticket limit (RATE_LIMITED past it)."""
        await self.limits.ticket(player)
        rules = normalize(options)
        _check_party(party, player, rules)
        members = [player, *party]
        ticket = secrets.token_urlsafe(12)
        for attempt in range(2):
            ratings = await self.store.ratings(members, self._default_rating, rules.rule_set)
            entries = [(p, p == player, r) for p, r in zip(members, ratings, strict=True)]
            if await self.store.create(
                ticket,
                leader=player,
                members=entries,
                options=rules.options,
                options_key=rules.queue_key(private),
                now_ms=self._now_ms(),
                names=[name],
            ):
                break
            if attempt == 0 and await self._game_over(player):
                continue  # the game that held the player just ended: queue now
            raise AlreadyExists(
                "ALREADY_QUEUED",
                f"player {player!r} already holds a live ticket or is playing a game",
            )
        found = await self.store.get(ticket)
        assert found is not None
        return found

    async def _member_ticket(self, player: str, ticket: str) -> StoredTicket:
        found = await self.store.get(ticket)
        if found is None:
            raise NotFound("TICKET_NOT_FOUND", f"no ticket {ticket!r}")
        if all(p != player for p, _, _ in found.members):
            raise PermissionDenied("NOT_ON_TICKET", f"{player!r} is not on this ticket")
        return found

    async def _game_over(self, player: str) -> bool:
        """The player was held by a game that has ended: record it now if its
        follower has not yet (it is a moment behind), and say so."""
        held = await self.store.live(player)
        if held is None:
            return True  # freed since: the game's follower has just recorded it
        if not held.startswith("game:"):
            return False  # a live ticket
        return await self._results.settle(held.removeprefix("game:"), player)

    async def get_ticket(self, player: str, ticket: str, *, watching: bool = False) -> StoredTicket:
        """The ticket, read by one of its members, who thereby follows it (a
        stream's read, ``watching``, also keeps it from expiring)."""
        found = await self._member_ticket(player, ticket)
        if found.state in _FOLLOWABLE:
            await self.store.follow(ticket, self._now_ms(), watching=watching)
        return found

    async def confirm_ticket(self, player: str, ticket: str, *, name: str = "") -> StoredTicket:
        """``player`` (display name ``name``) confirms their place on ``ticket``."""
        await self._member_ticket(player, ticket)
        outcome = await self.store.confirm(ticket, player, self._now_ms(), name)
        if outcome == 4 and await self._game_over(player):
            outcome = await self.store.confirm(ticket, player, self._now_ms(), name)
        if outcome == 1:
            raise FailedPrecondition("TICKET_CLOSED", "the ticket is closed")
        if outcome == 4:
            raise AlreadyExists(
                "ALREADY_QUEUED", f"player {player!r} already holds another live ticket"
            )
        return await self._member_ticket(player, ticket)

    async def cancel_ticket(self, player: str, ticket: str) -> StoredTicket:
        found = await self._member_ticket(player, ticket)
        if await self.store.close(found, "CANCELLED") != 2:
            raise FailedPrecondition(
                "TICKET_CLOSED", "the ticket is already matched, cancelled or expired"
            )
        return await self._member_ticket(player, ticket)

    def ticket_proto(self, stored: StoredTicket, caller: str) -> lobby_pb2.Ticket:
        """The ticket as ``caller`` sees it (with its seat and game token once
        matched), its options normalized (also those of a ticket stored before
        the rule sets existed: Truc y Flou's, ``rule_set`` written out)."""
        try:
            rules = stored_rules(stored.options)
            options = rules.proto()
            rule_set, seats = rule_set_to_proto(rules.rule_set), rules.seat_count
        except InvalidArgument:  # a rule set this lobby does not know (a newer one's)
            options = game_pb2.RuleOptions.FromString(stored.options)
            rule_set, seats = options.rule_set, options.seats
        message = lobby_pb2.Ticket(
            name=ticket_name(stored.ticket),
            state=_STATES[stored.state],
            leader=stored.leader,
            members=[
                lobby_pb2.TicketMember(player=p, confirmed=c, rating=r, display_name=n)
                for (p, c, r), n in zip(stored.members, stored.member_names, strict=True)
            ],
            options=options,
            rule_set=rule_set,
            seat_count=seats,
            private=stored.private,
        )
        message.create_time.FromMilliseconds(stored.created_ms)
        if message.state == lobby_pb2.TICKET_STATE_QUEUED:
            message.players_waiting = max(stored.players_waiting, len(stored.members))
            if self._bot_wait_ms > 0 and stored.queued_ms:
                message.bots_time.FromMilliseconds(stored.queued_ms + self._bot_wait_ms)
        if stored.state == "MATCHED":
            message.game = game_name(stored.game)
            caller_name = ""
            for (seat, player, bot), seat_name in zip(
                stored.table, stored.table_names, strict=True
            ):
                message.table.add(
                    seat=seat,
                    team=_TEAMS[seat % 2],
                    player=player,
                    bot=bot,
                    display_name=seat_name,
                )
                if player == caller:
                    message.seat = seat
                    message.team = _TEAMS[seat % 2]
                    caller_name = seat_name
            message.game_token = self.tokens.player_token(caller, name=caller_name)[0]
        return message

    async def list_games(
        self, player: str, page_size: int, page_token: str, rule_set: int = 0
    ) -> tuple[list[lobby_pb2.GameSummary], str]:
        """A page of the player's finished games (most recent first), of the
        proto ``rule_set`` if one is named (else of every rule set, each summary
        naming its own), and the next token."""
        only, size = _page_request(page_size, page_token, rule_set)
        try:
            records, next_token = await self._history.page(player, size, page_token, only)
        except PageTokenError:
            raise _bad("page_token: not one this lobby issued") from None
        return [_summary(record, player) for record in records], next_token

    async def list_live_games(
        self, page_size: int, page_token: str, rule_set: int = 0
    ) -> tuple[list[lobby_pb2.LiveGame], str]:
        """A page of the games being played at public tables (the most recently
        seated first), of the proto ``rule_set`` if one is named, and the next
        token; INVALID_ARGUMENT ``BAD_REQUEST`` for a bad page size or token."""
        only, size = _page_request(page_size, page_token, rule_set)
        try:
            tables, next_token = await self._live.page(size, page_token, only)
        except PageTokenError:
            raise _bad("page_token: not one this lobby issued") from None
        return [_live_game(table) for table in tables], next_token

    async def spectator_grant(self, player: str, name: str, game: str) -> tuple[str, int, str]:
        """A spectator grant of ``player`` (display name ``name``) for the game
        named ``game`` (``"games/{game}"``): (token, expiry in seconds, game
        name). Counted first (RATE_LIMITED past the player's limit); BAD_NAME,
        GAME_NOT_FOUND, GAME_PRIVATE (module docstring)."""
        await self.limits.spectator_grant(player)
        game_id = parse_game_name(game)
        seated = await self.store.seated_table(game_id)
        if seated is None:
            raise NotFound(GAME_NOT_FOUND, f"no game {game!r} seated by the lobby")
        if seated.private and not seated.holds(player):
            raise PermissionDenied(
                GAME_PRIVATE, f"{game!r} is a private table's: only its players may watch it"
            )
        name_of_game = game_name(game_id)
        token, expires = self.tokens.spectator_grant(
            player, name_of_game, name=name, ttl_seconds=self._grant_seconds
        )
        return token, expires, name_of_game


def _assignment(seat: int, player: str, bot: bool, name: str) -> lobby_pb2.Assignment:
    return lobby_pb2.Assignment(
        seat=seat, team=_TEAMS[seat % 2], player=player, bot=bot, display_name=name
    )


def _live_game(table: SeatedTable) -> lobby_pb2.LiveGame:
    game = lobby_pb2.LiveGame(
        name=game_name(table.game),
        rule_set=rule_set_to_proto(table.rule_set),
        seat_count=table.seat_count,
        table=[_assignment(*seat) for seat in table.seats],
        options=game_pb2.RuleOptions.FromString(table.options),
    )
    game.start_time.FromMilliseconds(table.start_ms)
    return game


def _summary(record: GameRecord, caller: str) -> lobby_pb2.GameSummary:
    summary = lobby_pb2.GameSummary(
        name=game_name(record.game),
        table=[
            _assignment(seat, player, bot, record.name_of(i))
            for i, (seat, player, bot) in enumerate(record.seats)
        ],
        private=record.private,
        winner=game_pb2.TEAM_UNSPECIFIED if record.winner is None else _TEAMS[record.winner],
        rating_change=record.changes.get(caller, 0.0),
        rule_set=rule_set_to_proto(record.rule_set),
        seat_count=record.seat_count,
    )
    for seat, player, _ in record.seats:
        if player == caller:
            summary.seat = seat
            summary.team = _TEAMS[seat % 2]
    summary.end_time.FromMilliseconds(record.end_ms)
    return summary
