"""Use cases of the game service: load -> rules -> compare-and-set.

Stateless: every call loads the game from the store, lets the pure engine
decide, and commits with one atomic compare-and-set. Nothing about a game
survives in this process between calls. Transport-neutral: the use cases know
the store only through its port (:class:`~truc_game.ports.GameStore`), raise
the protocol's errors (:mod:`truc_protocol.errors`, no status codes of any
transport) and import neither grpc nor redis; the gRPC servicer
(:mod:`truc_game.api.servicer`) turns requests into these calls and results
into protos. Turn deadlines are :mod:`truc_game.deadlines`.

Nobody makes the service work for free: every action (a replay of an applied
request id too) and every GetGame and GetReplay is counted per player and game
in the script that serves it (RESOURCE_EXHAUSTED ``RATE_LIMITED`` past its
rate), a caller without a seat is refused before a game's log is read, a player
has a few such reads in flight at most per replica, a GetReplay page builds at
most :data:`truc_game.replays.MAX_PAGE_SIZE` views, and the streams (WatchGame,
Play) a player and a replica hold open are limited (:mod:`truc_game.streams`).

A spectator's token (role ``spectator``) always reads the public view and never
acts, whichever player it names; a spectator grant (one naming a game,
:attr:`~truc_service.tokens.Identity.game`) reads that game only
(PERMISSION_DENIED :data:`GRANT_OTHER_GAME` for another, before anything is read).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from truc_protocol.display_names import (
    BAD_DISPLAY_NAME,
    display_name_problem,
    normalized_display_name,
)
from truc_protocol.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    rate_limited,
)
from truc_protocol.identifiers import (
    MAX_PLAYER_ID,
    MAX_REQUEST_ID,
    PLAYER_ID_ALPHABET,
    REQUEST_ID_ALPHABET,
    valid_player_id,
    valid_request_id,
)
from truc_rules.action_codec import encode_action
from truc_rules.actions import Action, PlayCard, SendDirective, SendSignal
from truc_rules.cards import SPANISH, Card, Deck
from truc_rules.errors import IllegalAction, InvalidSetup
from truc_rules.event_codec import decode_events, encode_events
from truc_rules.events import Event
from truc_rules.family import Phase as FamilyPhase
from truc_rules.registry import (
    AnyOptions,
    AnyState,
    AnyView,
    apply_action,
    deck_of,
    decode_state,
    encode_state,
    new_game,
    rule_set_of,
    seat_count,
    view_for,
)
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou.state import Phase
from truc_service.limits import Concurrency
from truc_service.tokens import Identity
from truc_telemetry import logs

from . import metrics, replays
from .absence import NEVER_ABSENT, AbsencePolicy
from .history import Replayed, flattened, read_history
from .names import game_name, new_game_id, valid_game_id
from .ports import (
    KEEP_DEADLINE,
    AlreadyApplied,
    Entry,
    GameMeta,
    GameMissing,
    GameStore,
    Loaded,
    NotSeated,
    RateLimited,
    Reader,
    VersionConflict,
    VersionFeed,
    log_record,
)
from .replays import ReplayPage
from .streams import OpenStreams, Stream

__all__ = [
    "GRANT_OTHER_GAME",
    "ActionReader",
    "GameService",
    "NewGame",
    "Rate",
    "SeatView",
    "Watch",
    "actions_limited",
    "applied",
    "check_grant",
    "checked_display_names",
    "decoded",
    "decoded_state",
    "is_message",
    "is_over",
    "needs_seat",
    "not_seated",
    "read_in_pack",
    "remember_decoded",
    "replayed_or_reused",
    "request_key_of",
    "seat_of",
    "versions_of",
]

log = logging.getLogger("truc.game")

MAX_ETAG = 64
GRANT_OTHER_GAME: Final = "GRANT_OTHER_GAME"
"""PERMISSION_DENIED: a spectator grant (a token whose ``game`` claim names one
game) used on another game."""
READ_RETRY_MS: Final = 100
"""The wait a GetGame refused for too many calls in flight is told to take."""
_CONFLICTS = metrics.CAS_CONFLICTS.labels("player")
_OVER: Final = (Phase.MATCH_OVER, Phase.NO_DEAL, FamilyPhase.MATCH_OVER, FamilyPhase.NO_DEAL)
"""The phases after which nothing can happen, in every rule set."""

Deal = tuple[tuple[Card, ...], ...]
"""One hand of three cards per seat, seat 0 first."""
ActionReader = Callable[[Deck], Action]
"""An action read in a pack (a card's reading depends on the game's pack)."""
Rate = tuple[str, str, int, int]
"""How an action is rate-limited in the store: (player, kind, limit, window ms);
kind ``"a"`` (actions) or ``"s"`` (team messages), limit 0: none."""


@dataclass(frozen=True, slots=True)
class SeatView:
    """A game as one seat (or a spectator, seat None) may see it, at a version."""

    game_id: str
    seat: int | None
    version: int
    view: AnyView
    event_versions: tuple[int, ...]
    """The version of each event in ``view.events``."""
    meta: GameMeta
    deadline_ms: int | None
    source: Entry | None = None
    """The event-log entry the view was built from (the watch path), if any: the
    views of one entry differ only in what :func:`~truc_rules.registry.view_for`
    hides from each seat, so a transport may share the rest between them."""
    absent: frozenset[int] = frozenset()
    """The seats the house plays for at this version (:mod:`truc_game.absence`)."""

    @property
    def etag(self) -> str:
        return str(self.version)


@dataclass(frozen=True, slots=True)
class Watch:
    seat: int | None
    meta: GameMeta
    version: int
    """The game's version when the watch began."""
    over: bool
    """The match was already over (or out of deals) then: no version will follow."""
    stream: Stream | None = None
    """The open stream this watch holds (:meth:`GameService.end_watch` gives it back)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewGame:
    """What CreateGame asks for (already converted from the wire)."""

    game_id: str
    players: Sequence[str]
    """One distinct player per seat of the rule set, seat 0 first."""
    options: AnyOptions
    """The rule set's options (the rule set is theirs)."""
    turn_seconds: int
    dealer: int | None
    fixed_deals: Sequence[Deal]
    """Tests only: one hand per seat in each deal."""
    start_scores: tuple[int, int]
    start_manches: tuple[int, int]
    fixed_draws: Sequence[Card] = ()
    """Truc y Flou only: the cards of each draw for the dealer (§2.4), team A's,
    then team B's, per draw."""
    display_names: Sequence[str] = ()
    """What each seat's player is called, seat 0 first (as stored: normalized),
    or none."""


class GameService:
    def __init__(
        self,
        store: GameStore,
        *,
        turn_seconds: int,
        allow_fixed_deals: bool,
        rate_actions: int,
        rate_signals: int,
        rate_window_ms: int,
        feed: VersionFeed | None = None,
        clock: Callable[[], float] = time.time,
        absence: AbsencePolicy = NEVER_ABSENT,
        rate_reads: int = 0,
        reads_in_flight: int = 0,
        streams: OpenStreams | None = None,
    ) -> None:
        """``feed``: this replica's feed, told of every version committed here
        (so its sessions and watchers have it at once). ``absence``: when a seat
        that keeps missing its turns is played by the house (default: never).
        ``rate_reads``: GetGame calls per player and game per window;
        ``reads_in_flight``: GetGame calls per player at once on this replica
        (the lobby's are not capped: its results follower reads many games);
        ``streams``: the limits of open streams (0 and None: no limit)."""
        self._store = store
        self._feed = feed
        self._turn_seconds = turn_seconds
        self._allow_fixed_deals = allow_fixed_deals
        self._rate_actions = rate_actions
        self._rate_signals = rate_signals
        self._rate_window_ms = rate_window_ms
        self._clock = clock
        self._absence = absence
        self._rate_reads = rate_reads
        self._reads = Concurrency(
            per_key=reads_in_flight, total=0, what="GetGame calls", retry_after_ms=READ_RETRY_MS
        )
        self._streams = streams or OpenStreams(None, per_player=0, total=0)

    # ------------------------------------------------------------------ create

    async def create_game(self, identity: Identity, request: NewGame) -> SeatView:
        if identity.role != "lobby":
            raise PermissionDenied("LOBBY_ONLY", "only the lobby may create games")
        options = request.options
        rule_set = rule_set_of(options)
        seats = seat_count(options)
        players = tuple(request.players)
        if len(players) != seats:
            raise InvalidArgument(
                "BAD_REQUEST", f"players: {rule_set} needs {seats}, got {len(players)}"
            )
        if not all(valid_player_id(p) for p in players):
            raise InvalidArgument(
                "BAD_REQUEST", f"players: ids are 1-{MAX_PLAYER_ID} of {PLAYER_ID_ALPHABET}"
            )
        if len(set(players)) != seats:
            raise InvalidArgument("BAD_REQUEST", "players: a player may hold only one seat")
        names = checked_display_names(request.display_names, seats)
        game_id = request.game_id or new_game_id()
        if not valid_game_id(game_id):
            raise InvalidArgument("BAD_REQUEST", "game_id: 1-64 of A-Z a-z 0-9 _ -")
        turn = request.turn_seconds or self._turn_seconds
        if not 1 <= turn <= 3600:
            raise InvalidArgument("BAD_REQUEST", "turn_seconds: 0 (the default) or 1-3600")
        fixed = bool(request.fixed_deals)
        if fixed and not self._allow_fixed_deals:
            raise InvalidArgument(
                "FIXED_DEALS_DISABLED",
                "fixed_deals need a server started with TRUC_ALLOW_FIXED_DEALS=1",
            )
        if request.fixed_draws and rule_set != RuleSet.TRUC_Y_FLOU:
            raise InvalidArgument(
                "BAD_REQUEST",
                f"fixed_draws: {rule_set} has no draw for the first deal (give a dealer)",
            )
        if not fixed and (
            any(request.start_scores) or any(request.start_manches) or request.fixed_draws
        ):
            raise InvalidArgument(
                "BAD_REQUEST", "start_scores, start_manches and fixed_draws go with fixed_deals"
            )
        if fixed and request.dealer is None and not request.fixed_draws:
            raise InvalidArgument("BAD_REQUEST", "fixed_deals need a dealer or fixed_draws")
        if request.dealer is not None and not 0 <= request.dealer < seats:
            raise InvalidArgument("BAD_REQUEST", f"dealer: a seat 0-{seats - 1}")
        if len(request.fixed_draws) % 2:
            raise InvalidArgument("BAD_REQUEST", "fixed_draws: pairs of cards (A's, then B's)")
        draws = list(zip(request.fixed_draws[::2], request.fixed_draws[1::2], strict=True))
        try:
            transition = new_game(
                options,
                seed=None if fixed else secrets.randbits(63),
                deals=list(request.fixed_deals) if fixed else None,
                dealer=request.dealer,
                draws=draws or None,
                scores=request.start_scores,
                manches=request.start_manches,
            )
        except InvalidSetup as exc:
            raise InvalidArgument("BAD_REQUEST", str(exc)) from None
        state = transition.state
        meta = GameMeta(players, turn, names)
        created = await self._store.create(
            game_id,
            state=encode_state(state),
            events=encode_events(transition.events),
            meta=meta,
            deadline_ms=self.deadline_for(state, turn),
        )
        if not created:
            return await self._created_before(identity, game_id, meta)
        metrics.GAMES_CREATED.inc()
        logs.bind(game=game_id)
        log.info("game created", extra={"players": list(players)})
        view = view_for(state, None, transition.events)
        return SeatView(
            game_id, None, 1, view, (1,) * len(view.events), meta, self.deadline_for(state, turn)
        )

    async def _created_before(self, identity: Identity, game_id: str, meta: GameMeta) -> SeatView:
        """A CreateGame whose ``game_id`` exists: the same players and turn length
        make it a repeat (the lobby retries a create whose answer it lost, with
        the id it chose for the table), answered with the game as it is now;
        anything else is ``ALREADY_EXISTS GAME_EXISTS``."""
        try:
            existing = await self.get_game(identity, game_id)
        except NotFound:  # created and already expired: the id stays spent
            existing = None
        if existing is None or existing.meta != meta:
            raise AlreadyExists("GAME_EXISTS", f"game {game_id!r} already exists")
        log.info("game create repeated", extra={"game": game_id})
        return existing

    # ------------------------------------------------------------------ read

    def _seat(self, identity: Identity, meta: GameMeta, game_id: str) -> int | None:
        seat = seat_of(identity, meta)
        if seat is None and needs_seat(identity):
            raise not_seated(identity, game_id)
        return seat

    async def _read_counted(self, identity: Identity, game_id: str) -> Replayed:
        """The game's every version, for a read of its log (GetGame, GetReplay):
        a spectator grant for another game is refused first; the read is
        counted (``rate_reads`` per player and game per window) and a caller
        without a seat refused before the log is read, in the same round trip;
        a player has at most ``reads_in_flight`` of them at once on this
        replica."""
        check_grant(identity, game_id)
        reader = Reader(
            identity.player, needs_seat(identity), self._rate_reads, self._rate_window_ms
        )
        in_flight = (
            contextlib.nullcontext()
            if identity.role == "lobby"
            else self._reads.hold(identity.player)
        )
        with in_flight:
            try:
                return await read_history(self._store, game_id, reader)
            except NotSeated:
                raise not_seated(identity, game_id) from None
            except RateLimited as exc:
                raise rate_limited(exc.retry_after_ms, "reads of this game") from None

    async def get_game(self, identity: Identity, game_id: str) -> SeatView:
        """The caller's view with the whole event log so far (rebuilt from the
        game's action log: :mod:`truc_game.history`), read as
        :meth:`_read_counted` says."""
        found = await self._read_counted(identity, game_id)
        snapshot = found.snapshot
        seat = self._seat(identity, snapshot.meta, game_id)
        logs.bind(seat=seat)
        events, versions = flattened(enumerate(found.events, start=1))
        view = view_for(found.state, seat, events)
        return SeatView(
            game_id,
            seat,
            snapshot.version,
            view,
            versions_of(view.events, events, versions),
            snapshot.meta,
            snapshot.deadline_ms,
            absent=self.absent(found.missed[-1]),
        )

    async def get_replay(
        self,
        identity: Identity,
        game_id: str,
        *,
        page_size: int,
        page_token: str,
        as_spectator: bool,
    ) -> ReplayPage:
        """A page of the game's replay: the viewer's view of each version
        after the one ``page_token`` names (none: from version 1), at most
        ``page_size`` of them (:mod:`truc_game.replays`), each with that
        version's events the viewer may see, exactly as WatchGame streamed
        them. The viewer is the caller's seat, or a spectator (a spectator's
        or the lobby's token, or ``as_spectator``). The page and its token are
        checked before anything is read; the read is GetGame's
        (:meth:`_read_counted`) and the log is replayed once, up to the page's
        last version."""
        size = replays.page_size_of(page_size)
        after = replays.version_after(game_id, page_token)
        found = await self._read_counted(identity, game_id)
        snapshot = found.snapshot
        meta = snapshot.meta
        seat = self._seat(identity, meta, game_id)
        if as_spectator:
            seat = None
        logs.bind(seat=seat)
        latest = found.latest_version
        if after > latest:
            raise InvalidArgument(
                "BAD_REQUEST", f"page_token: past the game's latest version {latest}"
            )
        last = min(after + size, latest)
        steps = [
            self.version_view(
                game_id,
                seat,
                meta=meta,
                version=version,
                state=state,
                events=found.events[version - 1],
                deadline_ms=found.deadlines[version - 1],
                missed=found.missed[version - 1],
            )
            for version, state in found.states(after + 1, last)
        ]
        return ReplayPage(
            steps,
            latest,
            is_over(found.state),
            replays.page_token(game_id, last) if last < latest else "",
        )

    # ------------------------------------------------------------------ act

    async def submit_action(
        self,
        identity: Identity,
        game_id: str,
        action: Action,
        *,
        etag: str,
        request_id: str,
        read_in: ActionReader | None = None,
    ) -> SeatView:
        """Apply one action for the caller's seat; the view holds its events only.

        ``read_in`` reads the action again in the game's pack, once the game is
        loaded, when its reading depends on the pack (a card named by suit and
        rank: the protocol's ``SUIT_CLUBS`` seven is the seven of bastos in the
        Spanish pack and of clubs in the piquet pack); ``action`` is its reading
        in the Spanish pack, which decides how it is rate-limited. Every call
        is counted, a replay of an applied request id too; a request id applied
        with another action is refused ``REQUEST_ID_REUSED``."""
        request_key = request_key_of(identity, request_id, etag)
        message = is_message(action)
        loaded = await self.load_counted(game_id, request_key, self.rate_of(identity, action))
        snapshot = loaded.snapshot
        seat = seat_of(identity, snapshot.meta)
        if seat is None:
            raise not_seated(identity, game_id)
        logs.bind(seat=seat)
        state = decode_state(snapshot.state)
        action = read_in_pack(state, action, read_in)
        if loaded.prior_version is not None:
            replayed_or_reused(loaded.prior_action, seat, action)
            return await self._replay(game_id, seat, loaded.prior_version, snapshot.meta)
        if etag and etag != str(snapshot.version):
            raise Aborted(
                "STALE_ETAG",
                f"the game is at version {snapshot.version}, not the etag sent; refresh and retry",
            )
        try:
            transition = apply_action(state, seat, action)
        except IllegalAction as exc:
            raise FailedPrecondition(exc.reason.value, exc.detail) from None
        new_state = transition.state
        deadline = (
            KEEP_DEADLINE if message else self.deadline_for(new_state, snapshot.meta.turn_seconds)
        )
        try:
            entry = await self.commit(
                game_id,
                snapshot.version,
                new_state,
                transition.events,
                seat=seat,
                action=action,
                request=request_key,
                deadline_ms=deadline,
                current_deadline_ms=snapshot.deadline_ms,
            )
        except VersionConflict:
            _CONFLICTS.inc()
            raise Aborted(
                "CONFLICT", "another action changed the game first; refresh and retry"
            ) from None
        except AlreadyApplied as exc:
            replayed_or_reused(exc.action, seat, action)
            return await self._replay(game_id, seat, exc.version, snapshot.meta)
        except GameMissing:
            raise NotFound("GAME_NOT_FOUND", f"no game {game_id!r}") from None
        version = entry.version
        applied(action, "player", state, new_state, version)
        view = view_for(new_state, seat, transition.events)
        return SeatView(
            game_id,
            seat,
            version,
            view,
            (version,) * len(view.events),
            snapshot.meta,
            entry.deadline_ms,
            absent=self.absent(entry.missed),
        )

    async def commit(
        self,
        game_id: str,
        expected_version: int,
        state: AnyState,
        events: Sequence[Event],
        *,
        seat: int,
        action: Action,
        request: str,
        deadline_ms: int | None,
        current_deadline_ms: int | None,
        timed_out: bool = False,
        rate: Rate | None = None,
    ) -> Entry:
        """Compare-and-set the version after ``expected_version`` (the store's
        outcomes pass through), then hand it to this replica's feed. ``seat``'s
        ``action`` (taken for it at its deadline: ``timed_out``) goes to the
        game's log with the deadline it sets (``deadline_ms``; KEEP_DEADLINE
        keeps ``current_deadline_ms``, the deadline of ``expected_version``); the
        store gives the seat to act next the short deadline instead when it is
        absent (:mod:`truc_game.absence`): the entry says which deadline it set."""
        over = is_over(state)
        kept = current_deadline_ms if deadline_ms == KEEP_DEADLINE else deadline_ms
        encoded = encode_action(seat, action, timed_out=timed_out)
        record = log_record(encoded, kept, request)
        absence = self._absence.commit(
            seat=seat,
            timed_out=timed_out,
            next_seat=state.to_act,
            deadline_ms=deadline_ms,
            now_ms=self.now_ms(),
            record_with=lambda short_ms: log_record(encoded, short_ms, request),
        )
        entry = await self._store.commit(
            game_id,
            expected_version=expected_version,
            state=encode_state(state),
            events=encode_events(events),
            record=record,
            request_id=request,
            deadline_ms=deadline_ms,
            finished=over,
            winner=state.winner if over else None,
            rate=rate,
            absence=absence,
        )
        remember_decoded(entry, state, events)
        if self._feed is not None:
            self._feed.announce(game_id, entry)
        return entry

    def rate_of(self, identity: Identity, action: Action | None) -> Rate:
        """How the caller's ``action`` (None: an action that could not be read)
        is rate-limited."""
        if action is not None and is_message(action):
            return identity.player, "s", self._rate_signals, self._rate_window_ms
        return identity.player, "a", self._rate_actions, self._rate_window_ms

    async def load_counted(self, game_id: str, request: str, rate: Rate) -> Loaded:
        """The game for an action (LOAD), the action counted at ``rate``
        (:meth:`rate_of`; RATE_LIMITED past it) and the request key
        ``request`` looked for among the applied ones."""
        player, kind, limit, window_ms = rate
        try:
            return await self._store.load(
                game_id,
                request_id=request,
                player=player,
                kind=kind,
                limit=limit,
                window_ms=window_ms,
            )
        except GameMissing:
            raise NotFound("GAME_NOT_FOUND", f"no game {game_id!r}") from None
        except RateLimited as exc:
            raise actions_limited(kind, exc.retry_after_ms) from None

    async def _replay(self, game_id: str, seat: int, version: int, meta: GameMeta) -> SeatView:
        """The answer a request id got the first time, rebuilt from the action log."""
        found = (await read_history(self._store, game_id)).entries_after(version - 1)
        if not found:
            raise NotFound("GAME_NOT_FOUND", f"version {version} of {game_id!r} is gone")
        return self.entry_view(game_id, seat, found[0], meta)

    def entry_view(self, game_id: str, seat: int | None, entry: Entry, meta: GameMeta) -> SeatView:
        """A seat's view of one version of the event log."""
        state, events = decoded(entry)
        return self.version_view(
            game_id,
            seat,
            meta=meta,
            version=entry.version,
            state=state,
            events=events,
            deadline_ms=entry.deadline_ms,
            missed=entry.missed,
            source=entry,
        )

    def version_view(
        self,
        game_id: str,
        seat: int | None,
        *,
        meta: GameMeta,
        version: int,
        state: AnyState,
        events: Sequence[Event],
        deadline_ms: int | None,
        missed: Sequence[int],
        source: Entry | None = None,
    ) -> SeatView:
        """A seat's view of one version: its state, its events (those the seat
        may see are kept), the deadline it set and its missed turns
        (:attr:`Entry.missed`). What a watch, a session and a replay show of a
        version."""
        view = view_for(state, seat, events)
        return SeatView(
            game_id,
            seat,
            version,
            view,
            (version,) * len(view.events),
            meta,
            deadline_ms,
            source,
            self.absent(missed),
        )

    # ------------------------------------------------------------------ watch

    async def open_watch(self, identity: Identity, game_id: str, after_version: int) -> Watch:
        """A stream of the caller on the game (WatchGame, a Play session)
        resuming after ``after_version``: who watches, and whether anything is
        left to watch. It holds one of the caller's open streams until
        :meth:`end_watch` (:mod:`truc_game.streams`: its lease is taken beside
        the read of the game, no round trip of its own). Raises NOT_FOUND,
        NOT_SEATED, OUT_OF_RANGE ``AFTER_VERSION_AHEAD`` (past the game's
        version), or RATE_LIMITED (too many streams open)."""
        if after_version < 0:
            raise InvalidArgument("BAD_REQUEST", "after_version: 0 or a version")
        check_grant(identity, game_id)
        stream, watch = await self._streams.open(
            identity.player, self._authorize_watch(identity, game_id, after_version)
        )
        return dataclasses.replace(watch, stream=stream)

    async def _authorize_watch(self, identity: Identity, game_id: str, after_version: int) -> Watch:
        try:
            snapshot = await self._store.read(game_id)
        except GameMissing:
            raise NotFound("GAME_NOT_FOUND", f"no game {game_id!r}") from None
        seat = self._seat(identity, snapshot.meta, game_id)
        logs.bind(seat=seat)
        if after_version > snapshot.version:
            raise OutOfRange(
                "AFTER_VERSION_AHEAD",
                f"after_version {after_version} is past the game's version {snapshot.version}",
            )
        return Watch(seat, snapshot.meta, snapshot.version, is_over(decode_state(snapshot.state)))

    async def end_watch(self, watch: Watch) -> None:
        """The stream of ``watch`` closed: give it back."""
        if watch.stream is not None:
            await self._streams.close(watch.stream)

    @property
    def streams(self) -> OpenStreams:
        """This replica's open streams (their leases are renewed by :meth:`OpenStreams.run`)."""
        return self._streams

    # ------------------------------------------------------------------ deadlines

    def now_ms(self) -> int:
        """The service's clock, in milliseconds."""
        return int(self._clock() * 1000)

    def absent(self, missed: Sequence[int]) -> frozenset[int]:
        """The absent seats of a version, from its missed turns (:attr:`Entry.missed`)."""
        return self._absence.absent(missed)

    def deadline_for(self, state: AnyState, turn_seconds: int) -> int | None:
        """When the seat to act in ``state`` runs out of time (None: nobody acts)."""
        if state.to_act is None:
            return None
        return self.now_ms() + turn_seconds * 1000


def request_key_of(identity: Identity, request_id: str, etag: str) -> str:
    """The store's key of a request id (checked with the etag: both are the
    caller's, bounded): request ids are the caller's, so another player reusing
    one gets nothing of it. Empty without a request id."""
    if not valid_request_id(request_id):
        raise InvalidArgument(
            "BAD_REQUEST", f"request_id: at most {MAX_REQUEST_ID} of {REQUEST_ID_ALPHABET}"
        )
    if len(etag) > MAX_ETAG:
        raise InvalidArgument("BAD_REQUEST", f"etag: at most {MAX_ETAG} characters")
    return f"{identity.player}\x00{request_id}" if request_id else ""


def checked_display_names(names: Sequence[str], seats: int) -> tuple[str, ...]:
    """CreateGame's display names: none, or one per seat, each a display name
    as stored (:func:`~truc_protocol.display_names.normalized_display_name`
    gives it back unchanged; :func:`~truc_protocol.display_names.display_name_problem`
    finds nothing), else INVALID_ARGUMENT (``BAD_REQUEST`` for their number,
    ``BAD_DISPLAY_NAME`` naming the seat)."""
    if not names:
        return ()
    if len(names) != seats:
        raise InvalidArgument(
            "BAD_REQUEST", f"display_names: none or one per seat ({seats}), got {len(names)}"
        )
    for seat, name in enumerate(names):
        problem = display_name_problem(name)
        if problem is None and normalized_display_name(name) != name:
            problem = "send it in NFC, without surrounding white space, as the lobby stores it"
        if problem is not None:
            raise InvalidArgument(
                BAD_DISPLAY_NAME, f"display_names[{seat}] (seat {seat}): {problem}"
            )
    return tuple(names)


def seat_of(identity: Identity, meta: GameMeta) -> int | None:
    """The caller's seat in the game: its player's, but none for a spectator's
    token (whoever it names: a spectator sees the public view and never acts)."""
    return None if identity.role == "spectator" else meta.seat_of(identity.player)


def check_grant(identity: Identity, game_id: str) -> None:
    """A spectator grant (a token naming one game, :attr:`Identity.game`) opens
    that game only: PERMISSION_DENIED :data:`GRANT_OTHER_GAME` for another."""
    if identity.game is not None and identity.game != game_name(game_id):
        raise PermissionDenied(
            GRANT_OTHER_GAME,
            f"this spectator grant is for {identity.game}, not {game_name(game_id)}: "
            "ask the lobby for a grant of this game",
        )


def needs_seat(identity: Identity) -> bool:
    """Whether the caller reads a game only from a seat of its own (spectators
    and the lobby read any game's public view)."""
    return identity.role not in ("spectator", "lobby")


def not_seated(identity: Identity, game_id: str) -> PermissionDenied:
    return PermissionDenied("NOT_SEATED", f"player {identity.player!r} has no seat in {game_id!r}")


def actions_limited(kind: str, retry_after_ms: int) -> ResourceExhausted:
    """The RATE_LIMITED refusal of a player's actions (kind ``"a"``) or team
    messages (``"s"``) past their rate."""
    return rate_limited(retry_after_ms, "signals" if kind == "s" else "actions")


def replayed_or_reused(prior_action: bytes, seat: int, action: Action) -> None:
    """A request id applied before, with ``prior_action`` (its log record's
    action entry), sent again with ``action`` for ``seat``: a replay if it is
    the same action, else ``INVALID_ARGUMENT REQUEST_ID_REUSED``."""
    try:
        same = not prior_action or prior_action == encode_action(seat, action)
    except ValueError:  # no log entry for it (one the rules refuse): another action
        same = False
    if not same:
        raise InvalidArgument(
            "REQUEST_ID_REUSED",
            "request_id: already used for another action in this game; send a new one",
        )


def is_message(action: Action) -> bool:
    """A team message (signal or directive): it keeps the turn's deadline and has
    its own rate."""
    return isinstance(action, SendSignal | SendDirective)


def read_in_pack(state: AnyState, action: Action, read_in: ActionReader | None) -> Action:
    """``action`` read in the pack of the game in ``state`` (``action`` is its
    reading in the Spanish pack)."""
    if read_in is not None and isinstance(action, PlayCard):
        pack = deck_of(rule_set_of(state))
        if pack is not SPANISH:
            return read_in(pack)
    return action


def is_over(state: AnyState | AnyView) -> bool:
    """Nothing more can happen in the game: the match is over (or its fixed deals ran out)."""
    return state.phase in _OVER


def applied(action: Action, origin: str, before: AnyState, after: AnyState, version: int) -> None:
    """Count and log an action once committed: by kind, never the card (a hidden
    card must never reach a log, and a played one is in the game's event log)."""
    kind = metrics.action_kind(action)
    metrics.count_action(kind, origin)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("action applied", extra={"kind": kind, "origin": origin, "version": version})
    if is_over(after) and not is_over(before):
        metrics.GAMES_FINISHED.inc()
        winner = after.winner
        log.info(
            "game finished",
            extra={"version": version, "winner": None if winner is None else "AB"[winner]},
        )


_DECODED: Final[OrderedDict[Entry, tuple[AnyState, tuple[Event, ...]]]] = OrderedDict()
_DECODED_SIZE: Final = 1024
"""Versions kept decoded: those being fanned out at once, about one per watched
game; a miss only decodes again."""


def decoded(entry: Entry) -> tuple[AnyState, tuple[Event, ...]]:
    """The state and events of a version, decoded once for all the watchers and
    sessions of it (a pure function of the entry's bytes; the engine never
    mutates a state, so they share it)."""
    found = _DECODED.get(entry)
    if found is None:
        found = decode_state(entry.state), decode_events(entry.events)
        remember_decoded(entry, *found)
    return found


def remember_decoded(entry: Entry, state: AnyState, events: Sequence[Event]) -> None:
    """Keep what ``entry`` decodes to, known already (the version this replica
    just computed: its sessions and watchers then decode nothing)."""
    _DECODED[entry] = (state, tuple(events))
    if len(_DECODED) > _DECODED_SIZE:
        _DECODED.popitem(last=False)


def decoded_state(entry: Entry) -> AnyState:
    """The state of a version (an action is validated against it)."""
    found = _DECODED.get(entry)
    return found[0] if found is not None else _decoded_state(entry.state)


@functools.lru_cache(maxsize=1024)
def _decoded_state(state: bytes) -> AnyState:
    return decode_state(state)


def versions_of(
    visible: Sequence[Event], events: Sequence[Event], versions: Sequence[int]
) -> tuple[int, ...]:
    """The version of each visible event (view_for keeps the order and the objects)."""
    by_id = {id(e): v for e, v in zip(events, versions, strict=True)}
    return tuple(by_id[id(e)] for e in visible)


async def stream_changes(
    service: GameService,
    game_id: str,
    seat: int | None,
    entries: AsyncIterator[Entry],
    meta: GameMeta,
) -> AsyncIterator[SeatView]:
    """The seat's view of each version from ``entries``, until the match is over."""
    async for entry in entries:
        seat_view = service.entry_view(game_id, seat, entry, meta)
        yield seat_view
        if is_over(seat_view.view):
            return
