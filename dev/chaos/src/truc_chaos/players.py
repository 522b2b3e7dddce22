"""The scripted players: the suite's own player loop over a :class:`Transport`.

A player signs in as a guest, queues a ticket, watches it until it is matched,
then plays the match: it follows the game with ``WatchGame`` and, whenever the
newest version says its seat is to act, asks a :class:`~truc_bots.HeuristicPolicy`
and sends the action with ``SubmitAction``. When the match ends it queues again.
Everything it gets is written to the :class:`~truc_chaos.records.Journal`.

How it copes (each wait is bounded):

* UNAVAILABLE, DEADLINE_EXCEEDED (and the cancellations it causes itself): the
  same ``SubmitAction`` again, **the same request id**, with a backoff;
  RESOURCE_EXHAUSTED: after the time the service asks;
* ABORTED (a stale etag, a lost race): ``GetGame`` and decide again with a new
  request id; FAILED_PRECONDITION ``NOT_YOUR_TURN``: wait for the next version;
* a watch that fails, ends, or is silent for ``idle`` seconds: ``GetGame``, then
  watch again after **the last version it received** (so it sees every version
  once);
* a game whose version went backward (Redis lost writes): noted as a
  :class:`~truc_chaos.records.Rewind`, and the game is watched again from its
  first version (a new epoch of the watch log); a game that is gone (NOT_FOUND):
  noted, and the player queues again;
* ``ALREADY_QUEUED``: its previous ticket is looked at (still queued: watched
  again; matched to another game: played), else retried; a player blocked for
  longer than ``blocked_seconds`` signs in as a new guest (noted).

And it causes trouble on purpose (``drop_rate``, seeded): it cancels a
``SubmitAction`` a few milliseconds after sending it (then retries it with the
same request id), and drops its connections in the middle of a watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Final, Protocol

import grpc
from truc.v1 import game_pb2, lobby_pb2

from truc_bots import HeuristicPolicy
from truc_protocol.views import game_version, is_over

from .records import Ack, Finish, Journal, TicketLog, WatchLog
from .views import public_digest

__all__ = ["CallError", "Player", "PlayerSettings", "Transport", "deadline_ms"]

RETRIED: Final = frozenset(
    (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
    )
)
_TICKET_STATES: Final = {
    lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION: "AWAITING",
    lobby_pb2.TICKET_STATE_QUEUED: "QUEUED",
    lobby_pb2.TICKET_STATE_MATCHED: "MATCHED",
    lobby_pb2.TICKET_STATE_CANCELLED: "CANCELLED",
    lobby_pb2.TICKET_STATE_EXPIRED: "EXPIRED",
}


class CallError(Exception):
    """A failed call of either transport, as a gRPC status code and ErrorInfo reason."""

    def __init__(self, code: grpc.StatusCode, reason: str = "", message: str = "") -> None:
        super().__init__(f"{code.name}{'/' + reason if reason else ''}: {message}")
        self.code = code
        self.reason = reason


class _GameGone(Exception):
    """The game is not there any more (NOT_FOUND): Redis lost it."""


class Transport(Protocol):
    """The public API as a player uses it (gRPC, or REST and SSE through the gateway).
    Every call raises :class:`CallError` on failure."""

    via: str

    async def sign_in(self, name: str) -> tuple[str, str]:
        """(player id, token)."""
        ...

    async def create_ticket(
        self, token: str, options: game_pb2.RuleOptions
    ) -> lobby_pb2.Ticket: ...

    def watch_ticket(self, token: str, ticket: str) -> AsyncGenerator[lobby_pb2.Ticket, None]: ...

    async def get_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket: ...

    async def cancel_ticket(self, token: str, ticket: str) -> lobby_pb2.Ticket: ...

    async def get_game(self, token: str, game: str) -> game_pb2.GameView: ...

    def watch_game(
        self, token: str, game: str, after_version: int
    ) -> AsyncGenerator[tuple[int, game_pb2.GameView], None]: ...

    async def submit(
        self,
        token: str,
        game: str,
        action: game_pb2.Action,
        *,
        etag: str,
        request_id: str,
        timeout: float,
    ) -> int:
        """The version the action produced (the answer's etag)."""
        ...

    async def list_games(self, token: str) -> list[str]:
        """Every game of the caller's history (``ListGames``, all pages), in order."""
        ...

    async def reconnect(self) -> None:
        """Drop every connection (calls in flight fail) and open new ones."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    options: game_pb2.RuleOptions
    think: float = 0.1
    """Seconds before each action (the pace of a match)."""
    drop_rate: float = 0.02
    """Chance of a cancelled SubmitAction per action, of a dropped connection per version."""
    call_timeout: float = 3.0
    idle: float = 5.0
    seat_timeout: float = 40.0
    blocked_seconds: float = 30.0
    match_timeout: float = 300.0


def deadline_ms(view: game_pb2.GameView) -> int | None:
    """A view's turn deadline in ms (None if nobody is to act)."""
    return view.deadline.ToMilliseconds() if view.HasField("deadline") else None


class Player:
    """One scripted player; :meth:`run` plays matches until ``stopping`` is set."""

    def __init__(
        self,
        index: int,
        transport: Transport,
        journal: Journal,
        settings: PlayerSettings,
        *,
        seed: int,
        matches: int | None = None,
        name: str = "",
    ) -> None:
        self.index = index
        self._name = name
        self.transport = transport
        self.journal = journal
        self.settings = settings
        self.matches = matches
        self.rng = random.Random(seed)
        self.player = ""
        self.token = ""
        self.played = 0
        self.finished_last = False
        self._last_ticket = ""
        self._last_game = ""

    @property
    def name(self) -> str:
        return self._name or f"{self.transport.via}{self.index}"

    # ------------------------------------------------------------------ the loop

    async def run(self, stopping: asyncio.Event) -> None:
        """Queue and play until ``stopping`` (or ``matches`` played), then queue
        once more and cancel at once (so the lobby records the last result now)."""
        try:
            while not stopping.is_set() and (self.matches is None or self.played < self.matches):
                try:
                    if not self.token:
                        await self._sign_in()
                    ticket = await self._queue(stopping)
                    if ticket is None:
                        continue
                    await self._play(ticket)
                except CallError as error:
                    self.journal.note(self.player, "call failed", str(error))
                    await asyncio.sleep(1.0)
                except Exception as error:  # the suite's own bug, or an answer it cannot read
                    self.journal.note(
                        self.player, "player error", f"{type(error).__name__}: {error}"
                    )
                    await asyncio.sleep(1.0)
            if self.finished_last:
                await self._final_ticket()
        finally:
            await self.transport.close()

    async def _sign_in(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                self.player, self.token = await self.transport.sign_in(self.name)
                break
            except CallError as error:
                if error.code not in RETRIED or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
        self.journal.players[self.player] = self.token
        self.journal.vias[self.player] = self.transport.via
        self.journal.names[self.player] = self.name

    # ------------------------------------------------------------------ tickets

    async def _create(
        self, options: game_pb2.RuleOptions, stopping: asyncio.Event
    ) -> lobby_pb2.Ticket | None:
        """CreateTicket, retried; None when the player stays blocked (then signed in
        anew) or the run is stopping."""
        blocked_since: float | None = None
        wait = 0.1
        while True:
            if stopping.is_set() and blocked_since is not None:
                return None
            try:
                return await self.transport.create_ticket(self.token, options)
            except CallError as error:
                now = time.monotonic()
                blocked_since = blocked_since or now
                if error.code == grpc.StatusCode.ALREADY_EXISTS:
                    resumed = await self._resume_last_ticket()
                    if resumed is not None:
                        return resumed
                elif error.code not in RETRIED and error.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                if now - blocked_since > self.settings.blocked_seconds:
                    self.journal.note(
                        self.player,
                        "blocked",
                        f"could not queue for {self.settings.blocked_seconds:g} s ({error}; "
                        f"last ticket {self._last_ticket or '-'}, "
                        f"last game {self._last_game or '-'}): signed in as a new guest",
                    )
                    self.token = ""
                    return None
            await asyncio.sleep(wait)
            wait = min(1.0, wait * 2)

    async def _resume_last_ticket(self) -> lobby_pb2.Ticket | None:
        """The previous ticket if it is still queued or matched to a game not played yet."""
        if not self._last_ticket:
            return None
        try:
            ticket = await self.transport.get_ticket(self.token, self._last_ticket)
        except CallError:
            return None
        state = _TICKET_STATES.get(ticket.state, "?")
        log = self.journal.tickets.get(self._last_ticket)
        if state == "QUEUED" or (state == "MATCHED" and ticket.game != self._last_game):
            if log is not None:
                log.state(f"resumed {state}", ticket.game)
            return ticket
        return None

    async def _queue(self, stopping: asyncio.Event) -> lobby_pb2.Ticket | None:
        """A matched ticket, or None (stopping, blocked, closed)."""
        ticket = await self._create(self.settings.options, stopping)
        if ticket is None:
            return None
        name = ticket.name
        log = self.journal.tickets.get(name)
        if log is None:
            log = self.journal.tickets[name] = TicketLog(
                name, self.player, self.transport.via, time.time()
            )
        log.state(_TICKET_STATES.get(ticket.state, "?"), ticket.game)
        self._last_ticket = name
        if ticket.state == lobby_pb2.TICKET_STATE_MATCHED and ticket.game != self._last_game:
            return ticket
        deadline = time.monotonic() + self.settings.seat_timeout
        while time.monotonic() < deadline and not stopping.is_set():
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    async for update in self.transport.watch_ticket(self.token, name):
                        state = _TICKET_STATES.get(update.state, "?")
                        if not log.states or log.states[-1][1] != state:
                            log.state(state, update.game)
                        if state == "MATCHED":
                            return update
                        if state in ("CANCELLED", "EXPIRED"):
                            self.journal.note(self.player, "ticket closed", f"{name}: {state}")
                            return None
                        if stopping.is_set():
                            break
            except TimeoutError:
                break
            except CallError as error:
                if error.code not in RETRIED:
                    raise
            await asyncio.sleep(0.2)
        if not stopping.is_set():
            self.journal.note(
                self.player,
                "not seated",
                f"{name} not matched within {self.settings.seat_timeout:g} s: "
                "cancelled it and signed in as a new guest",
            )
        matched = await self._cancel(name, log)
        if matched is not None:
            return matched  # matched meanwhile: a seated player plays
        if not stopping.is_set():
            self.token = ""
        return None

    async def _cancel(self, name: str, log: TicketLog) -> lobby_pb2.Ticket | None:
        """Cancel the ticket; the ticket if it turned out to be matched meanwhile."""
        for _ in range(5):
            try:
                ticket = await self.transport.cancel_ticket(self.token, name)
                log.state(_TICKET_STATES.get(ticket.state, "?"), ticket.game)
                return None
            except CallError as error:
                if error.code not in RETRIED:
                    log.state(f"cancel refused: {error.reason or error.code.name}")
                    break
                await asyncio.sleep(0.3)
        for _ in range(5):
            try:
                ticket = await self.transport.get_ticket(self.token, name)
            except CallError:
                await asyncio.sleep(0.3)
                continue
            state = _TICKET_STATES.get(ticket.state, "?")
            log.state(state, ticket.game)
            return ticket if state == "MATCHED" else None
        return None

    async def _final_ticket(self) -> None:
        """Queue once more with options nobody else asks for, then cancel: the lobby
        records the player's last game as it frees the player (CreateTicket)."""
        options = game_pb2.RuleOptions()
        options.CopyFrom(self.settings.options)
        options.target_score = 100 + self.index % 100
        for _ in range(10):
            try:
                ticket = await self.transport.create_ticket(self.token, options)
            except CallError as error:
                if error.code in RETRIED:
                    await asyncio.sleep(0.5)
                    continue
                self.journal.note(self.player, "final ticket refused", str(error))
                return
            log = self.journal.tickets[ticket.name] = TicketLog(
                ticket.name, self.player, self.transport.via, time.time(), final=True
            )
            log.state(_TICKET_STATES.get(ticket.state, "?"))
            await self._cancel(ticket.name, log)
            return

    # ------------------------------------------------------------------ a match

    async def _play(self, ticket: lobby_pb2.Ticket) -> None:
        game, seat, token = ticket.game, ticket.seat, ticket.game_token
        self._last_game = game
        self.finished_last = False
        match = _Match(self, game, seat, token)
        try:
            async with asyncio.timeout(self.settings.match_timeout):
                finished = await match.play()
        except TimeoutError:
            self.journal.note(self.player, "match too long", f"{game} not over after timeout")
            finished = False
        except _GameGone as gone:
            self.journal.note(self.player, "game gone", f"{game}: {gone}")
            finished = False
        self.played += 1
        self.finished_last = finished


class _Match:
    """One player's seat in one game: the watch, the view and the actions."""

    def __init__(self, owner: Player, game: str, seat: int, token: str) -> None:
        self.owner = owner
        self.game = game
        self.seat = seat
        self.token = token
        self.settings = owner.settings
        self.transport = owner.transport
        self.journal = owner.journal
        self.rng = owner.rng
        self.policy = HeuristicPolicy(owner.rng.randrange(1 << 30))
        self.log: WatchLog = owner.journal.watch(game, owner.player, seat, owner.transport.via)
        self.view = game_pb2.GameView()
        self.version = 0
        """The newest version known (from any call)."""
        self.watched = 0
        """The last version the watch delivered (the next watch resumes after it)."""
        self.acted: set[int] = set()
        self.rewound = False

    def _finish(self) -> bool:
        self.journal.finishes.append(Finish(self.game, self.owner.player, time.time()))
        return True

    async def play(self) -> bool:
        """True once the match is over."""
        failures = 0
        while True:
            await self._refresh()
            if is_over(self.view):
                return self._finish()
            await self._act()
            try:
                if await self._watch():
                    return self._finish()
                failures = 0
            except CallError as error:
                if error.code == grpc.StatusCode.NOT_FOUND:
                    raise _GameGone(str(error)) from None
                if error.code not in RETRIED and error.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                failures += 1
                await asyncio.sleep(min(2.0, 0.1 * 2**failures))
            self.log.reconnects += 1

    def _rewind(self, to_version: int) -> None:
        self.journal.note(
            self.owner.player,
            "rewind",
            f"{self.game}: version {to_version} after {self.watched} was watched",
        )
        self.log.rewind(self.watched, to_version)
        self.watched = 0
        self.version = to_version
        self.acted = {v for v in self.acted if v < to_version}
        self.rewound = True

    async def _refresh(self) -> None:
        """GetGame (retried): the newest view; a rewind if it is behind the watch."""
        wait = 0.1
        deadline = time.monotonic() + 60
        while True:
            try:
                view = await self.transport.get_game(self.token, self.game)
                break
            except CallError as error:
                if error.code == grpc.StatusCode.NOT_FOUND:
                    raise _GameGone(str(error)) from None
                if error.code not in RETRIED or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(wait)
                wait = min(1.0, wait * 2)
        version = game_version(view)
        if version < self.watched:
            self._rewind(version)
            self.view = view
        elif version >= self.version:
            self.view = view
            self.version = version

    async def _watch(self) -> bool:
        """One watch stream, until it fails, ends, idles, is dropped or needs a restart
        after a rewind; True once the match is over."""
        self.rewound = False
        stream = self.transport.watch_game(self.token, self.game, self.watched)
        try:
            while True:
                try:
                    async with asyncio.timeout(self.settings.idle):
                        version, view = await anext(stream)
                except StopAsyncIteration:
                    return False
                except TimeoutError:
                    return False
                self.log.seen(version, deadline_ms(view), digest=public_digest(view))
                if version <= self.watched:
                    continue  # a duplicate: the watch log shows it to the checks
                self.watched = version
                if version >= self.version:
                    self.view = view
                    self.version = version
                if is_over(view):
                    return True
                if version == self.version:
                    await self._act()
                    if self.rewound:
                        return False
                if self.rng.random() < self.settings.drop_rate:
                    self.journal.drops["watch connection dropped"] += 1
                    await self.transport.reconnect()
                    return False
        finally:
            with contextlib.suppress(Exception):
                await stream.aclose()

    async def _act(self) -> None:
        """Act while the newest view says it is this seat's turn (bounded)."""
        for _ in range(10):
            view = self.view
            if is_over(view) or not view.HasField("to_act") or view.to_act != self.seat:
                return
            at = self.version
            if at in self.acted:
                return
            action = self.policy.choose(view)
            if self.settings.think > 0:
                await asyncio.sleep(self.settings.think * (0.5 + self.rng.random()))
            self.acted.add(at)
            outcome = await self._submit(action, view.etag)
            if outcome in {"applied", "wait"}:
                return
            await self._refresh()
            if self.rewound:
                return

    async def _submit(self, action: game_pb2.Action, etag: str) -> str:
        """ "applied", "wait" (stale view) or "refresh"; the same request id on every retry."""
        request_id = uuid.uuid4().hex
        wait = 0.05
        deadline = time.monotonic() + 40
        while True:
            timeout = self.settings.call_timeout
            cut_after: float | None = None  # a client dropping the call in flight
            if self.rng.random() < self.settings.drop_rate:
                self.journal.drops["SubmitAction cancelled in flight"] += 1
                cut_after = 0.001 + self.rng.random() * 0.02
            try:
                async with asyncio.timeout(cut_after):
                    version = await self.transport.submit(
                        self.token,
                        self.game,
                        action,
                        etag=etag,
                        request_id=request_id,
                        timeout=timeout,
                    )
            except TimeoutError:
                continue  # our own cancellation: send it again, same request id
            except CallError as error:
                code = error.code
                if code == grpc.StatusCode.NOT_FOUND:
                    raise _GameGone(str(error)) from None
                if code == grpc.StatusCode.ABORTED:
                    return "refresh"
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    return "wait" if error.reason == "NOT_YOUR_TURN" else "refresh"
                if time.monotonic() > deadline:
                    raise
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    await asyncio.sleep(0.5)
                    continue
                if code not in RETRIED:
                    raise
                await asyncio.sleep(wait)
                wait = min(1.0, wait * 2)
                continue
            self.journal.acks.append(
                Ack(
                    self.game,
                    self.owner.player,
                    self.seat,
                    request_id,
                    version,
                    time.time(),
                    self.transport.via,
                )
            )
            if version < self.watched:
                self._rewind(version)  # applied below what was watched: Redis lost writes
            return "applied"
