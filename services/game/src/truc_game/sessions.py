"""Sessions: one player's (or spectator's) long-lived connection to one game.

The use case of the Play RPC, transport-neutral as :mod:`truc_game.service`
is. A :class:`Session` is a listener of this replica's feed
(:class:`~truc_game.ports.VersionFeed`): the feed hands it every version heard
(published by the commit that made it, on any replica), and it turns them into
exactly one :class:`Update` per new version: the seat's view at that version
and the version's events the seat may see, with the request id of the
player's own action that made it (on a new stream, the versions caught up on from the
game's log carry no request id, the log keeping only its digest: a client
resending its unanswered action is answered :class:`Repeated`).

**Back-pressure.** A session that does not read is never queued for without
bound: versions wait in a list of at most :data:`MAX_PENDING` entries (each the
few hundred bytes of one version); past that the list is dropped and the
versions are read again from the game's log when the session reads, so a
session costs at most about ``MAX_PENDING`` versions of memory (under 100 KB)
however far behind it is. When it reads again it gets the versions it missed
*coalesced*: one update with the latest view and every event since its last
one (an update never coalesces past a version one of this session's actions
made, so each of its actions is answered by its own update). Replies to
refused actions wait in a queue of at most :data:`MAX_REPLIES`; past that the
session reads no more actions until its client reads.

**One Redis round trip per action.** :meth:`Session.act` validates the action
against the newest version this replica holds (the feed's, or the session's
own when fresher) and commits with one compare-and-set script that also
counts the player's rate, checks the request id, moves the deadline and
publishes the version. A copy that was behind costs one reload and one retry;
a second conflict is ``ABORTED CONFLICT``. Redis stays the only truth: a
session resumes on any replica from the last version its client received.

**Every action counts.** An action the replica's copy of the game refuses
(illegal, a stale etag, a resent one already applied, one from a seatless
session, one that could not be read) costs one LOAD (:meth:`GameService.load_counted`):
it counts the action at the player's rate (past it the refusal is
RESOURCE_EXHAUSTED ``RATE_LIMITED``), says whether the request id was applied
before (a repeat, or ``REQUEST_ID_REUSED`` with another action) and brings the
stored game, which judges the action again if the copy was off. A session
holds one of its player's open streams (:mod:`truc_game.streams`) until it
closes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Final

from truc_protocol.errors import (
    Aborted,
    FailedPrecondition,
    NotFound,
    ServiceError,
)
from truc_rules.actions import Action
from truc_rules.errors import IllegalAction
from truc_rules.registry import apply_action, view_for
from truc_service.tokens import Identity

from . import metrics
from .history import flattened, read_history
from .ports import (
    KEEP_DEADLINE,
    AlreadyApplied,
    Entry,
    GameMissing,
    GameStore,
    RateLimited,
    Snapshot,
    VersionConflict,
    VersionFeed,
)
from .service import (
    ActionReader,
    GameService,
    Rate,
    SeatView,
    Watch,
    actions_limited,
    applied,
    decoded,
    decoded_state,
    is_message,
    is_over,
    not_seated,
    read_in_pack,
    replayed_or_reused,
    request_key_of,
    versions_of,
)

__all__ = ["MAX_PENDING", "MAX_REPLIES", "Refused", "Repeated", "Session", "Update", "open_session"]

MAX_PENDING: Final = 256
"""Versions kept for a session that does not read, before they are dropped (and
read again from the log when it does)."""
MAX_REPLIES: Final = 32
"""Replies (refusals, repeats) waiting for a session that does not read, before
it stops reading actions."""
_CONFLICTS = metrics.CAS_CONFLICTS.labels("session")
_SENT = {kind: metrics.SESSION_MESSAGES.labels(kind) for kind in ("version", "coalesced")}
_REFUSED = metrics.SESSION_MESSAGES.labels("refused")
_REPEATED = metrics.SESSION_MESSAGES.labels("repeated")


@dataclass(frozen=True, slots=True)
class Update:
    """The seat's view at a new version, with the events of every version since
    the session's last update (``from_version`` .. ``seat_view.version``)."""

    from_version: int
    seat_view: SeatView
    request_id: str
    """The request id of the session player's action that made this version, or ""."""


@dataclass(frozen=True, slots=True)
class Refused:
    """An action refused: nothing changed."""

    version: int
    request_id: str
    error: ServiceError


@dataclass(frozen=True, slots=True)
class Repeated:
    """A request id applied before, at ``version``: nothing applied now."""

    version: int
    request_id: str


Reply = Refused | Repeated


async def open_session(
    service: GameService,
    *,
    store: GameStore,
    feed: VersionFeed,
    identity: Identity,
    game_id: str,
    after_version: int,
) -> Session | None:
    """A session of the caller on ``game_id`` resuming after ``after_version``;
    None if the match is over and the caller has seen its end. Raises the
    errors of :meth:`GameService.open_watch` (``OUT_OF_RANGE`` for an
    ``after_version`` past the game's version, RATE_LIMITED past the open
    streams' limits). The session holds one of the caller's open streams until
    it is closed."""
    watch = await service.open_watch(identity, game_id, after_version)
    try:
        if watch.over and after_version >= watch.version:
            await service.end_watch(watch)
            return None
        session = Session(
            service,
            store=store,
            feed=feed,
            identity=identity,
            game_id=game_id,
            watch=watch,
            after_version=after_version,
        )
        await feed.listen(game_id, session)
    except BaseException:
        await service.end_watch(watch)
        raise
    metrics.SESSIONS.inc()
    return session


class Session:
    """One open session (a :class:`~truc_game.ports.Listener` of the feed)."""

    def __init__(
        self,
        service: GameService,
        *,
        store: GameStore,
        feed: VersionFeed,
        identity: Identity,
        game_id: str,
        watch: Watch,
        after_version: int,
    ) -> None:
        self._service = service
        self._store = store
        self._feed = feed
        self._identity = identity
        self.game_id = game_id
        self.seat = watch.seat
        self._watch = watch
        self._meta = watch.meta
        self._mine = identity.player + "\x00"
        self._sent = after_version
        """The version of the last update handed out."""
        self._pending: list[Entry] = []
        self._reread = after_version < watch.version
        """Read the log after ``_sent`` before the next update (a gap, a drop,
        or the versions a resuming session missed)."""
        self._replies: deque[Reply] = deque()
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._known: Entry | None = None
        """The newest version read by this session itself (a reload), if fresher
        than the feed's."""
        self._ended = False
        self._closed = False
        self._failure: Exception | None = None
        self._own: dict[int, str] = {}
        """Version -> request id of the actions this session applied (a version
        read back from the log carries only its request id's digest)."""
        if self._reread:
            self._wake.set()

    # ------------------------------------------------------------------ feed side

    def deliver(self, entry: Entry | None) -> None:
        if entry is None:
            self._reread = True
        elif entry.version > self._sent:
            if len(self._pending) >= MAX_PENDING:
                self._pending.clear()
                self._reread = True
            else:
                self._pending.append(entry)
        else:
            return
        self._wake.set()

    def fail(self, error: Exception) -> None:
        """End the session with ``error`` (the client broke the protocol, or the
        replica is stopping): the next :meth:`next` raises it."""
        self._failure = error
        self._wake.set()

    async def close(self) -> None:
        """Leave the feed and give the open stream back (the stream ended)."""
        if not self._closed:
            self._closed = True
            metrics.SESSIONS.dec()
            try:
                await self._feed.unlisten(self.game_id, self)
            finally:
                await self._service.end_watch(self._watch)

    # ------------------------------------------------------------------ read side

    async def next(self) -> Update | Reply | None:
        """The next message for the client: a reply, or an update; None once
        the update of the version that finished the match was handed out. Raises
        what :meth:`fail` was given."""
        while True:
            if self._failure is not None:
                raise self._failure
            if self._replies:
                return self._next_reply()
            if self._ended:
                return None
            if self._reread:
                self._reread = False
                await self._read_log()
            update = self._take()
            if update is not None:
                return update
            self._wake.clear()
            if not (self._replies or self._reread or self._failure or self._ready()):
                await self._wake.wait()

    async def reply(self) -> Reply:
        """The next reply (refusal or repeat), waiting for one (after the end)."""
        while not self._replies:
            self._wake.clear()
            await self._wake.wait()
        return self._next_reply()

    def pending_reply(self) -> Reply | None:
        """A reply waiting to be sent, if any."""
        return self._next_reply() if self._replies else None

    def _next_reply(self) -> Reply:
        reply = self._replies.popleft()
        self._room.set()
        return reply

    def _ready(self) -> bool:
        return bool(self._pending) and self._pending[0].version <= self._sent + 1

    async def _read_log(self) -> None:
        """Fill what is pending from the game's log. Pending versions that still
        leave a gap after it are dropped (heard of, then lost by Redis; or
        published after the read with one between still unheard: read at the
        next gap), so a gap never makes the session read the log in a loop."""
        found = (await read_history(self._store, self.game_id)).entries_after(self._sent)
        newest = found[-1].version if found else self._sent
        if found:
            self._feed.announce(self.game_id, found[-1])  # the replica's copy, if it had none
        after = [e for e in self._pending if e.version > newest]
        if after and after[0].version != newest + 1:
            after = []
        self._pending = found + after

    def _take(self) -> Update | None:
        """The update of the contiguous versions pending after the last one sent
        (up to and including the first made by this session's player)."""
        chunk: list[Entry] = []
        expect = self._sent + 1
        used = 0
        for entry in self._pending:
            if entry.version < expect:
                used += 1
                continue
            if entry.version > expect:
                self._reread = True  # a version was missed: read the log for it
                break
            chunk.append(entry)
            used += 1
            expect += 1
            if entry.version in self._own or entry.request.startswith(self._mine):
                break
        del self._pending[:used]
        if not chunk:
            return None
        last = chunk[-1]
        if len(chunk) == 1:
            seat_view = self._service.entry_view(self.game_id, self.seat, last, self._meta)
            _SENT["version"].inc()
        else:
            seat_view = self._coalesced(chunk)
            _SENT["coalesced"].inc()
        self._sent = last.version
        if is_over(seat_view.view):
            self._ended = True
        request_id = self._own.pop(last.version, "")
        if not request_id and last.request.startswith(self._mine):
            request_id = last.request[len(self._mine) :]
        return Update(chunk[0].version, seat_view, request_id)

    def _coalesced(self, chunk: list[Entry]) -> SeatView:
        last = chunk[-1]
        state, _ = decoded(last)
        events, versions = flattened((entry.version, decoded(entry)[1]) for entry in chunk)
        view = view_for(state, self.seat, events)
        return SeatView(
            self.game_id,
            self.seat,
            last.version,
            view,
            versions_of(view.events, events, versions),
            self._meta,
            last.deadline_ms,
            last,
            self._service.absent(last.missed),
        )

    # ------------------------------------------------------------------ act side

    async def room(self) -> None:
        """Wait until the client has read enough replies to take another action."""
        await self._room.wait()

    def _reply(self, reply: Reply) -> None:
        self._replies.append(reply)
        if len(self._replies) >= MAX_REPLIES:
            self._room.clear()
        (_REFUSED if isinstance(reply, Refused) else _REPEATED).inc()
        self._wake.set()

    async def refuse(self, request_id: str, error: ServiceError) -> None:
        """Answer an action the transport could not read (a bad action message):
        counted as an action (past the rate, refused RATE_LIMITED instead)."""
        try:
            await self._service.load_counted(
                self.game_id, "", self._service.rate_of(self._identity, None)
            )
        except ServiceError as counted:
            error = counted
        self._reply(Refused(self._sent, request_id, error))

    async def act(
        self, action: Action, *, etag: str, request_id: str, read_in: ActionReader | None
    ) -> None:
        """Apply one action for the session's seat. Its answer comes as a message
        (:meth:`next`): the update of the version it made (with its request id),
        a :class:`Refused` or a :class:`Repeated`."""
        try:
            await self._act(action, etag=etag, request_id=request_id, read_in=read_in)
        except ServiceError as error:
            self._reply(Refused(self._sent, request_id, error))

    async def _act(
        self, action: Action, *, etag: str, request_id: str, read_in: ActionReader | None
    ) -> None:
        """Every action is counted at the player's rate once, in Redis: by the
        commit, or, for one refused on this replica's copy of the game, by the
        LOAD that also checks the copy and the request id (one round trip)."""
        first = self._service.rate_of(self._identity, action)
        try:
            request = request_key_of(self._identity, request_id, etag)
        except ServiceError:
            await self._service.load_counted(self.game_id, "", first)
            raise
        seat = self.seat
        if seat is None:
            await self._service.load_counted(self.game_id, "", first)
            raise not_seated(self._identity, self.game_id)
        kind = first[1]
        rate: Rate | None = first  # None once this action is counted
        for attempt in (1, 2):
            current = self._current() or await self._reload()
            state = decoded_state(current)
            chosen = read_in_pack(state, action, read_in)
            refusal: ServiceError | None = None
            if etag and etag != str(current.version):
                refusal = Aborted(
                    "STALE_ETAG",
                    f"the game is at version {current.version}, not the etag sent; "
                    "wait for the next version and retry",
                )
            else:
                try:
                    transition = apply_action(state, seat, chosen)
                except IllegalAction as exc:
                    refusal = FailedPrecondition(exc.reason.value, exc.detail)
            if refusal is not None:
                if rate is None:
                    raise refusal  # counted already, and judged on the stored game
                loaded = await self._service.load_counted(self.game_id, request, rate)
                rate = None
                if loaded.prior_version is not None:
                    # A retry whose original made the version it is refused against.
                    replayed_or_reused(loaded.prior_action, seat, chosen)
                    self._reply(Repeated(loaded.prior_version, request_id))
                    return
                if attempt == 1 and self._adopt(loaded.snapshot).version != current.version:
                    continue  # this replica's copy was off (behind, or ahead after a rewind)
                raise refusal
            new_state = transition.state
            try:
                entry = await self._service.commit(
                    self.game_id,
                    current.version,
                    new_state,
                    transition.events,
                    seat=seat,
                    action=chosen,
                    request=request,
                    deadline_ms=KEEP_DEADLINE
                    if is_message(chosen)
                    else self._service.deadline_for(new_state, self._meta.turn_seconds),
                    current_deadline_ms=current.deadline_ms,
                    rate=rate,
                )
            except VersionConflict:
                _CONFLICTS.inc()
                rate = None  # the commit counted it
                if attempt == 1:
                    await self._reload()
                    continue
                raise Aborted(
                    "CONFLICT", "another action changed the game first; wait and retry"
                ) from None
            except AlreadyApplied as exc:
                replayed_or_reused(exc.action, seat, chosen)
                self._reply(Repeated(exc.version, request_id))
                return
            except RateLimited as exc:
                raise actions_limited(kind, exc.retry_after_ms) from None
            except GameMissing:
                raise NotFound("GAME_NOT_FOUND", f"no game {self.game_id!r}") from None
            applied(chosen, "session", state, new_state, entry.version)
            if request_id and entry.version > self._sent:
                self._own[entry.version] = request_id
            return

    def _current(self) -> Entry | None:
        """The newest version this replica holds of the game: the feed's, unless
        this session's own reload is fresher."""
        latest = self._feed.latest(self.game_id)
        known = self._known
        if latest is None or (known is not None and known.version > latest.version):
            return known
        return latest

    async def _reload(self) -> Entry:
        """Read the game as stored now (this replica's copy was behind), and have
        the versions it brings read from the log for the client."""
        try:
            snapshot = await self._store.read(self.game_id)
        except GameMissing:
            raise NotFound("GAME_NOT_FOUND", f"no game {self.game_id!r}") from None
        return self._adopt(snapshot)

    def _adopt(self, snapshot: Snapshot) -> Entry:
        """Take ``snapshot``, the game as stored now, as this session's copy."""
        self._known = Entry(snapshot.version, snapshot.state, b"", snapshot.deadline_ms)
        # Redis may have lost writes: the store is the truth, even when older.
        self._feed.rewound(self.game_id, self._known)
        if snapshot.version > self._sent:
            self._reread = True
            self._wake.set()
        return self._known
