"""The invariants, checked after a run: the journal (what the players were told and
saw) against Redis (:class:`~truc_chaos.store_state.StoreState`) and the public API.

Each check is a pure function returning :class:`Violation`\\ s (and, for losses a
simulated crash explains, :class:`Excused` entries); :func:`check_all` runs them
all. A violation names the check, its subject (a game, a ticket, a player), what
was found and the component it points at.

* ``log``: every game's log holds one whole record per version after the first
  (version - 1 of them), decodes, and replayed from version 1's state gives
  exactly the stored current state (the service's own rebuild,
  :func:`truc_game.history.replayed`, agrees), and its last record's deadline is
  the game's;
* ``acks``: every acknowledged action is in the log at its version: that version's
  record holds the digest of the player's request id and is an action of the
  player's seat (not one the service took for it at a deadline); with
  ``appendfsync everysec``, only acks inside a simulated crash's window may be
  missing: excused and counted. No request id answered with two versions, and no
  request id's digest in two records (nothing applied twice);
* ``ended``: every finished game has exactly one entry in its shard's ended-games
  stream, with its winner; no unfinished game has one;
* ``moving``: every unfinished game has a turn deadline that is not overdue (the
  deadline index agrees);
* ``one-game``: no human player seated in two games live at the same time; no game
  created for players that no ticket was seated in (an orphan game);
* ``tickets``: every ticket ended matched to exactly one game, back in the queue,
  cancelled or expired (none left MATCHING);
* ``results``: each finished game the lobby seated has its result once: a summary,
  in each of its players' histories, and ratings that equal the default plus the
  sum of the player's recorded changes (a result applied twice would not); the
  public ``ListGames`` lists each game once and agrees with Redis;
* ``watch``: each watcher saw versions 1, 2, 3... once each, in order, across its
  reconnects; it went backward only after a simulated crash (a rewind); and what it
  saw last agrees with the log: each version's deadline is the one its record
  keeps, and its view's public part the replayed version's (what it saw after the
  last crash must agree; versions it saw before a crash that the crash rewrote,
  without ever being shown the rewritten ones, are excused and counted: version
  numbers are reused after a loss);
* ``vanished``: a game a player was playing disappeared without a crash to explain it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from truc_game.history import replayed
from truc_game.ports import (
    FINISHED_RECORD_BYTES,
    RECORD_BYTES,
    GameLog,
    GameMeta,
    Snapshot,
    parse_record,
    request_digest,
)
from truc_protocol.errors import Internal
from truc_rules.action_codec import ActionRecord, decode_records
from truc_rules.registry import AnyState, decode_state, encode_state
from truc_rules.replay import replay

from .aof import Truncation
from .records import Ack, Journal
from .store_state import GameState, StoreState
from .views import replayed_digest

__all__ = ["CheckInput", "Excused", "Violation", "check_all"]

_STALL_MS = 8000.0
"""An unfinished game's deadline overdue by more than this is stuck (the claim
lease is 5 s and the sweep polls every 200 ms)."""
_RATING_TOLERANCE = 1e-6
_NO_REQUEST = request_digest("")
"""A record's request digest when no request id made it (a deadline's action)."""
_CLOCK_SLACK_MS = 20.0
"""Start and end times come from the replicas' clocks and TTLs (one machine: ms)."""


@dataclass(frozen=True, slots=True)
class Violation:
    check: str
    subject: str
    detail: str
    component: str

    def line(self) -> str:
        return f"[{self.check}] ({self.component}) {self.subject}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Excused:
    """A loss a simulated machine crash explains (``appendfsync everysec``)."""

    check: str
    subject: str
    detail: str
    at: float
    """When the lost thing was acknowledged or seen."""


@dataclass(slots=True)
class CheckInput:
    store: StoreState
    journal: Journal
    default_rating: float = 1500.0
    listed: dict[str, list[str]] = field(default_factory=dict)
    """Player -> the game names ``ListGames`` returned, for the players asked."""
    health: dict[str, str] = field(default_factory=dict)
    """Process -> its health at the end (``SERVING`` when healthy)."""
    finished_ttl_seconds: float | None = None
    """How long the game service keeps a finished game (None: longer than the run).
    A game a player saw finish more than this before the read may be gone."""

    def expired(self, game: str) -> bool:
        """The game was seen finished long enough ago for its retention to end."""
        if self.finished_ttl_seconds is None:
            return False
        ends = [f.at for f in self.journal.finishes if _id(f.game) == _id(game)]
        return bool(ends) and min(ends) + self.finished_ttl_seconds < self.store.read_at

    @property
    def truncations(self) -> list[Truncation]:
        return self.journal.truncations


def _id(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def _in_window(at: float, truncations: Sequence[Truncation]) -> Truncation | None:
    """The crash whose window covers ``at``: acknowledged after the instant the disk
    kept, before Redis answered again (an answer on its way at the kill arrives late)."""
    for cut in truncations:
        if cut.cut_to_at <= at <= cut.ends_at:
            return cut
    return None


def _crashed_between(start: float, end: float, truncations: Sequence[Truncation]) -> bool:
    return any(start <= cut.killed_at <= end for cut in truncations)


# --------------------------------------------------------------------------- log


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A game's log, decoded and replayed: what the other checks compare with."""

    records: list[ActionRecord]
    """The action of each version after the first (record ``i``: version ``i + 2``)."""
    deadlines: list[int | None]
    """The deadline each version set, version 1 first."""
    requests: list[bytes]
    """The request digest of each version after the first (zeros: none)."""
    states: list[AnyState]
    """The state of each version, version 1 first."""
    compacted: bool = False
    """A finished game's log: its records keep no deadline."""

    def record_of(self, version: int) -> ActionRecord | None:
        """The action that made ``version`` (None for version 1 or past the log)."""
        return self.records[version - 2] if 2 <= version <= len(self.records) + 1 else None

    def version_of(self, request: str) -> list[int]:
        """The versions whose record holds the digest of ``request`` (player NUL
        request id)."""
        digest = request_digest(request)
        return [i + 2 for i, held in enumerate(self.requests) if held == digest]


@dataclass(frozen=True, slots=True)
class Unsound:
    """Why a game's log cannot be rebuilt."""

    check: str
    detail: str


def rebuild(game: GameState) -> Rebuilt | Unsound:
    """The game's every version, replayed from its stored log; or why it cannot be:
    the log is not one whole record per version after the first, does not decode,
    is refused by the rules (here, or by the service's own rebuild,
    :func:`truc_game.history.replayed`), or does not lead to the stored current
    state."""
    log = game.log
    size = FINISHED_RECORD_BYTES if game.compacted else RECORD_BYTES
    if game.compacted and not game.finished:
        return Unsound("log-corrupt", "the log was compacted, but the game is not over")
    if len(log) % size:
        return Unsound(
            "log-corrupt",
            f"the log ({len(log)} bytes) ends in a partial record ({size} bytes each)",
        )
    count = len(log) // size
    if count != game.version - 1:
        missing = game.version - 1 - count
        return Unsound(
            "log-gap",
            f"the log holds {count} records for version {game.version}, which has "
            f"{game.version - 1} actions: "
            + (f"{missing} missing" if missing > 0 else f"{-missing} too many"),
        )
    actions, deadlines, requests = b"", [game.first_deadline_ms], []
    for at in range(0, len(log), size):
        record = log[at : at + size]
        action, deadline = parse_record(record)
        actions += action
        deadlines.append(deadline)
        requests.append(record[size - 8 :])
    try:
        records = decode_records(actions)
        states = [decode_state(game.first_state)]
        states += [t.state for t in replay(states[0], records)]
        last = encode_state(states[-1])
    except Exception as error:  # any failure is the finding
        return Unsound("log-corrupt", f"the log does not replay from version 1: {error}")
    if last != game.state:
        return Unsound(
            "log-replay-mismatch",
            f"replaying the log from version 1 gives a version {game.version} other than "
            f"the stored state ({len(last)} bytes, stored {len(game.state)})",
        )
    snapshot = Snapshot(
        game.version, game.state, GameMeta(game.players, game.turn_seconds), game.deadline_ms
    )
    try:  # what GetGame, a resumed watch and a replay are built from agrees
        history = replayed(
            GameLog(
                snapshot,
                game.first_state,
                game.first_events,
                game.first_deadline_ms,
                log,
                game.compacted,
            ),
            game.game,
        )
    except Internal as error:
        return Unsound("log-corrupt", f"the service's rebuild refuses the log: {error}")
    if list(history.deadlines) != deadlines:
        return Unsound("log-corrupt", "the service's rebuild reads other deadlines")
    return Rebuilt(records, deadlines, requests, states, game.compacted)


def check_logs(store: StoreState) -> tuple[list[Violation], dict[str, Rebuilt]]:
    """Each game's log against its version, state and deadline; the games rebuilt
    (those whose log is sound)."""
    found: list[Violation] = []
    rebuilt: dict[str, Rebuilt] = {}
    for game in store.games.values():
        subject = f"games/{game.game}"
        found += [
            Violation("store-unreadable", subject, problem, "game service (commit script)")
            for problem in game.unreadable
        ]
        outcome = rebuild(game)
        if isinstance(outcome, Unsound):
            found.append(
                Violation(outcome.check, subject, outcome.detail, "game service (commit script)")
            )
            continue
        rebuilt[game.game] = outcome
        if outcome.deadlines[-1] != game.deadline_ms:
            found.append(
                Violation(
                    "deadline-mismatch",
                    subject,
                    f"the game's deadline is {game.deadline_ms}, but the log says version "
                    f"{game.version} set {outcome.deadlines[-1]}",
                    "game service (commit script)",
                )
            )
    return found, rebuilt


def _ranges(values: Sequence[int]) -> str:
    out: list[str] = []
    start = prev = values[0]
    for value in values[1:]:
        if value == prev + 1:
            prev = value
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = value
    out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


# --------------------------------------------------------------------------- acks


def why_lost(game: GameState | None, rebuilt: Rebuilt | None, ack: Ack) -> str | None:
    """Why the acknowledged action ``ack`` is not in the game as stored (None: it is):
    its version must be in the log, made by the request's digest, as an action of
    the player's seat that the service did not take for it at a deadline. (Of a log
    that does not rebuild, reported by ``log``, only the version is checked.)"""
    if game is None:
        return "the game is gone"
    if not 2 <= ack.version <= game.version:
        return f"the log is at version {game.version}"
    if rebuilt is None:
        return None
    versions = rebuilt.version_of(f"{ack.player}\x00{ack.request_id}")
    if versions != [ack.version]:
        where = f"at version(s) {versions}" if versions else "absent"
        return f"the log is at version {game.version}, request id {where}"
    record = rebuilt.record_of(ack.version)
    seat = game.seat_of(ack.player)
    if record is not None and (record.seat != seat or record.timed_out):
        by = "the service at a deadline for " if record.timed_out else ""
        return (
            f"the log's version {ack.version} is an action of {by}seat {record.seat}, "
            f"not of the player's seat {seat}"
        )
    return None


def check_acks(
    data: CheckInput, rebuilt: dict[str, Rebuilt] | None = None
) -> tuple[list[Violation], list[Excused]]:
    store, journal = data.store, data.journal
    rebuilt = rebuilt if rebuilt is not None else {}
    found: list[Violation] = []
    excused: list[Excused] = []
    by_request: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for ack in journal.acks:
        by_request[(ack.game, ack.player, ack.request_id)].add(ack.version)
    for (name, player, request_id), versions in by_request.items():
        if len(versions) > 1:
            found.append(
                Violation(
                    "applied-twice",
                    name,
                    f"request id {request_id} of {player} acknowledged with versions "
                    f"{sorted(versions)}",
                    "game service (request ids)",
                )
            )
    for game_id, game in rebuilt.items():
        counts = Counter(r for r in game.requests if r != _NO_REQUEST)
        twice = sorted(v + 2 for v, r in enumerate(game.requests) if counts[r] > 1)
        if twice:
            found.append(
                Violation(
                    "applied-twice",
                    f"games/{game_id}",
                    f"versions {_ranges(twice)} were made by a request id already applied "
                    "(one digest in two records)",
                    "game service (request ids)",
                )
            )
    for ack in journal.acks:
        held = store.games.get(_id(ack.game))
        where = why_lost(held, rebuilt.get(_id(ack.game)), ack)
        if where is None:
            continue
        if held is None and data.expired(ack.game):
            continue  # finished, and kept no longer than the service's retention
        cut = _in_window(ack.at, data.truncations)
        detail = (
            f"{ack.via} ack of request {ack.request_id} (seat {ack.seat}) at version "
            f"{ack.version}: {where}"
        )
        if cut is not None:
            excused.append(Excused("lost-ack", ack.game, detail, ack.at))
        else:
            found.append(Violation("lost-ack", ack.game, detail, "store (durability)"))
    return found, excused


# --------------------------------------------------------------------------- ended


def check_ended(store: StoreState) -> list[Violation]:
    """Each game's entries in its shard's ended-games stream (read before and after
    the games: a game read unfinished had not ended by the first read, one read
    finished had by the second)."""
    found: list[Violation] = []
    for game in store.games.values():
        subject = f"games/{game.game}"
        ends = store.ended.get(game.game, [])
        if not game.finished:
            if game.game in store.ended_before:
                found.append(
                    Violation(
                        "end-of-unfinished-game",
                        subject,
                        f"in the ended-games stream, but at version {game.version} it is "
                        f"unfinished (phase {game.phase})",
                        "game service (commit script)",
                    )
                )
            continue
        if not ends:
            found.append(
                Violation(
                    "end-unannounced",
                    subject,
                    f"finished at version {game.version} but not in its shard's ended-games "
                    "stream (the lobby learns of it only from its sweep)",
                    "game service (commit script)",
                )
            )
            continue
        if len(ends) > 1:
            found.append(
                Violation(
                    "ended-twice",
                    subject,
                    f"{len(ends)} entries in the ended-games stream",
                    "game service (commit script)",
                )
            )
        winner = "" if game.winner is None else "AB"[game.winner]
        wrong = sorted({e.winner for e in ends if e.winner != winner})
        if wrong:
            found.append(
                Violation(
                    "end-wrong-winner",
                    subject,
                    f"the ended-games stream says winner {wrong}, the state {winner or 'none'}",
                    "game service (commit script)",
                )
            )
    return found


# --------------------------------------------------------------------------- moving


def check_moving(store: StoreState) -> list[Violation]:
    now_ms = store.read_at * 1000
    found: list[Violation] = []
    for game in store.games.values():
        if game.finished:
            continue
        subject = f"games/{game.game}"
        if game.deadline_ms is None:
            found.append(
                Violation(
                    "game-stuck",
                    subject,
                    f"version {game.version}, phase {game.phase}: unfinished with no turn deadline",
                    "game service (deadlines)",
                )
            )
        elif game.deadline_ms < now_ms - _STALL_MS:
            found.append(
                Violation(
                    "game-stuck",
                    subject,
                    f"version {game.version}: its turn deadline passed "
                    f"{(now_ms - game.deadline_ms) / 1000:.1f} s ago and nobody acted",
                    "game service (deadlines)",
                )
            )
        elif game.indexed_deadline is None:
            found.append(
                Violation(
                    "game-stuck",
                    subject,
                    f"version {game.version}: deadline set but the game is not in the "
                    "deadline index (no replica will act for a late seat)",
                    "game service (deadlines)",
                )
            )
    return found


# --------------------------------------------------------------------------- one game


def _end_ms(game: GameState, journal: Journal, now_ms: float) -> float:
    """When the game stopped being live: the commit of its last version (told by its
    time to live), else the first time a player saw it over, else now."""
    if not game.finished:
        return now_ms
    if game.last_commit_ms is not None:
        return game.last_commit_ms
    name = f"games/{game.game}"
    seen = [f.at * 1000 for f in journal.finishes if f.game == name]
    return min(seen) if seen else now_ms


def affected_games(data: CheckInput, excused: Sequence[Excused]) -> set[str]:
    """Games (ids) a simulated crash rewrote or removed."""
    if not data.truncations:
        return set()
    games = {_id(e.subject) for e in excused}
    for log in data.journal.watches.values():
        if log.rewinds:
            games.add(_id(log.game))
    games |= {_id(g.game) for g in data.journal.lost_games}
    return games


def check_one_game(data: CheckInput, affected: set[str]) -> list[Violation]:
    store, journal = data.store, data.journal
    now_ms = store.read_at * 1000
    seated_in: dict[str, set[str]] = defaultdict(set)
    for ticket in store.tickets.values():
        if ticket.state == "MATCHED" and ticket.game:
            for _, player, bot in ticket.table:
                if not bot:
                    seated_in[ticket.game].add(player)
    found: list[Violation] = []
    spans: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for game in store.games.values():
        start = game.created_ms
        if start is None:
            continue
        end = _end_ms(game, journal, now_ms)
        for player in game.humans:
            spans[player].append((start, end, game.game))
        orphans = [p for p in game.humans if p not in seated_in.get(game.game, set())]
        if orphans and game.game not in affected and not _created_in_window(start, data):
            found.append(
                Violation(
                    "orphan-game",
                    f"games/{game.game}",
                    f"created at {_clock(start)} for {len(orphans)} player(s) no ticket was "
                    f"seated in ({', '.join(orphans[:6])}): CreateGame succeeded but the lobby "
                    f"never recorded the table ({'finished' if game.finished else 'live'}, "
                    f"version {game.version})",
                    "lobby (matching round)",
                )
            )
    for player, games in spans.items():
        games.sort()
        for i, (start1, end1, game1) in enumerate(games):
            for start2, end2, game2 in games[i + 1 :]:
                if start2 >= end1 - _CLOCK_SLACK_MS:
                    continue
                if game1 in affected or game2 in affected:
                    continue
                found.append(
                    Violation(
                        "two-live-games",
                        player,
                        f"seated in games/{game1} (live {_clock(start1)}-{_clock(end1)}) and "
                        f"games/{game2} (live {_clock(start2)}-{_clock(end2)}) at once",
                        "lobby (matching round)",
                    )
                )
    return found


def _created_in_window(start_ms: float, data: CheckInput) -> bool:
    return any(
        cut.cut_to_at * 1000 - 500 <= start_ms <= cut.ends_at * 1000 + 500
        for cut in data.truncations
    )


def _clock(ms: float) -> str:
    import time  # noqa: PLC0415 - formatting only

    return time.strftime("%H:%M:%S", time.localtime(ms / 1000)) + f".{int(ms % 1000):03d}"


# --------------------------------------------------------------------------- tickets


def check_tickets(data: CheckInput) -> tuple[list[Violation], list[Excused]]:
    store, journal = data.store, data.journal
    found: list[Violation] = []
    excused: list[Excused] = []
    for ticket in store.tickets.values():
        if ticket.state == "MATCHING":
            recorded = journal.tickets.get(f"tickets/{ticket.ticket}")
            since = f" since {_clock(recorded.created_at * 1000)}" if recorded else ""
            ghosts = [
                g.game
                for g in store.games.values()
                if ticket.members and set(ticket.members) <= set(g.players)
            ]
            lease = store.claims.get(ticket.claim) if ticket.claim else None
            held = (
                f"; its claim {ticket.claim} "
                + (
                    f"has a lease until {_clock(lease)}"
                    if lease is not None
                    else "is not in the claims index"
                )
                if ticket.claim
                else ""
            )
            found.append(
                Violation(
                    "ticket-stuck-matching",
                    f"tickets/{ticket.ticket}",
                    f"claimed by a matching round{since} and never seated or put back "
                    f"(players {', '.join(ticket.members)}; games created for them: "
                    f"{', '.join(ghosts) if ghosts else 'none'}{held}); "
                    "its players cannot queue again",
                    "lobby (matching round)",
                )
            )
        elif ticket.state == "QUEUED" and ticket.ticket not in store.queue:
            found.append(
                Violation(
                    "ticket-lost-from-queue",
                    f"tickets/{ticket.ticket}",
                    "state QUEUED but not in the queue",
                    "lobby (store)",
                )
            )
        elif ticket.state == "MATCHED":
            game = store.games.get(ticket.game)
            if game is None:
                continue  # the game expired or a crash lost it: counted by the acks
            absent = [m for m in ticket.members if m not in game.players]
            if absent:
                found.append(
                    Violation(
                        "ticket-wrong-game",
                        f"tickets/{ticket.ticket}",
                        f"matched to games/{ticket.game}, which does not seat {absent}",
                        "lobby (matching round)",
                    )
                )
    for name, log in journal.tickets.items():
        stored = store.tickets.get(_id(name))
        if stored is None:
            cut = _in_window(log.created_at, data.truncations)
            if cut is not None:
                excused.append(
                    Excused("lost-ticket", name, "created inside a crash window", log.created_at)
                )
            else:
                found.append(
                    Violation(
                        "ticket-missing",
                        name,
                        f"created at {_clock(log.created_at * 1000)} by {log.player} and gone "
                        f"(states seen: {[s for _, s in log.states]})",
                        "lobby (store)",
                    )
                )
        if len(log.games) > 1:
            crashed = _crashed_between(log.created_at, data.store.read_at, data.truncations)
            detail = f"seen matched to {len(log.games)} games: {log.games}"
            if crashed:
                excused.append(Excused("ticket-two-games", name, detail, log.created_at))
            else:
                found.append(Violation("ticket-two-games", name, detail, "lobby (matching round)"))
    return found, excused


# --------------------------------------------------------------------------- results


def check_results(data: CheckInput) -> list[Violation]:
    store = data.store
    found: list[Violation] = []
    seated: dict[str, set[str]] = defaultdict(set)
    for ticket in store.tickets.values():
        if ticket.state == "MATCHED":
            seated[ticket.game] |= set(ticket.members)
    for game in store.games.values():
        if not game.finished or not game.humans or game.game not in seated:
            continue  # unfinished, bots only, or an orphan (reported as such)
        subject = f"games/{game.game}"
        summary = store.summaries.get(game.game)
        if summary is None:
            pending = game.game in store.active or game.game in store.tracked
            found.append(
                Violation(
                    "result-missing",
                    subject,
                    "finished but its result was never recorded"
                    + (
                        " (still followed: the results follower did not see it end)"
                        if pending
                        else ""
                    ),
                    "lobby (results)",
                )
            )
            continue
        for player in game.humans:
            if game.game not in store.history.get(player, []):
                found.append(
                    Violation(
                        "history-missing",
                        player,
                        f"{subject} is recorded but not in the player's history",
                        "lobby (results)",
                    )
                )
    players = set(store.ratings) | set(store.history)
    for player in sorted(players):
        games = store.history.get(player, [])
        changes = 0.0
        for game_id in games:
            summary = store.summaries.get(game_id)
            if summary is None:
                found.append(
                    Violation(
                        "history-without-summary",
                        player,
                        f"history lists games/{game_id} but its summary is gone",
                        "lobby (results)",
                    )
                )
                continue
            changes += summary.changes.get(player, 0.0)
        expected = data.default_rating + changes
        actual = store.ratings.get(player, data.default_rating)
        if abs(actual - expected) > _RATING_TOLERANCE * max(1, len(games)) + 1e-6:
            found.append(
                Violation(
                    "rating-mismatch",
                    player,
                    f"rating {actual:.4f} but default + recorded changes of {len(games)} "
                    f"game(s) = {expected:.4f} (a result applied twice, or lost)",
                    "lobby (results)",
                )
            )
    for player, listed in data.listed.items():
        names = [_id(g) for g in listed]
        duplicates = sorted(g for g, n in Counter(names).items() if n > 1)
        if duplicates:
            found.append(
                Violation(
                    "history-duplicate",
                    player,
                    f"ListGames lists {duplicates} more than once",
                    "lobby (ListGames)",
                )
            )
        stored = set(store.history.get(player, []))
        if set(names) != stored:
            found.append(
                Violation(
                    "history-api-mismatch",
                    player,
                    f"ListGames: {sorted(set(names) - stored)} not in Redis, "
                    f"{sorted(stored - set(names))} not listed",
                    "lobby (ListGames)",
                )
            )
    return found


# --------------------------------------------------------------------------- watch


def check_watchers(
    data: CheckInput, rebuilt: dict[str, Rebuilt] | None = None
) -> tuple[list[Violation], list[Excused]]:
    store, truncations = data.store, data.truncations
    rebuilt = rebuilt if rebuilt is not None else {}
    digests: dict[tuple[str, int], bytes] = {}
    found: list[Violation] = []
    excused: list[Excused] = []
    last_crash = max((cut.ends_at for cut in truncations), default=None)
    for log in data.journal.watches.values():
        subject = f"{log.game} seat {log.seat} ({log.via} {log.player})"
        for index, epoch in enumerate(log.epochs):
            expected = 1
            for seen in epoch:
                if seen.version == expected:
                    expected += 1
                    continue
                if seen.version > expected:
                    found.append(
                        Violation(
                            "watch-gap",
                            subject,
                            f"epoch {index}: got version {seen.version} after {expected - 1} "
                            f"(versions {expected}-{seen.version - 1} never delivered)",
                            "game service (WatchGame)",
                        )
                    )
                    expected = seen.version + 1
                else:
                    found.append(
                        Violation(
                            "watch-duplicate",
                            subject,
                            f"epoch {index}: got version {seen.version} again after {expected - 1}",
                            "game service (WatchGame)",
                        )
                    )
        previous = log.epochs[0][0].at if log.epochs and log.epochs[0] else data.journal.started
        for rewind in log.rewinds:
            if not _crashed_between(previous - 1, rewind.at, truncations):
                found.append(
                    Violation(
                        "rewind-without-crash",
                        subject,
                        f"the game went back from version {rewind.from_version} to "
                        f"{rewind.to_version} with no Redis crash to explain it",
                        "store (durability)",
                    )
                )
            previous = rewind.at
        game = store.games.get(_id(log.game))
        if game is None or not log.epochs[-1]:
            continue
        # Was each version seen the one the log holds under its number? Each
        # version's record keeps the deadline it set (a time: it tells two
        # histories apart even where their states agree; until the game ends and
        # its log is compacted), and replaying the log
        # gives its state, whose public part the view must show (it tells apart
        # two histories whose deadlines agree). Versions past the log, or in a
        # log that does not rebuild (reported by ``log``), are not compared.
        replay = rebuilt.get(game.game)
        if replay is None:
            continue
        stale = []
        for seen in log.epochs[-1]:
            if seen.version > len(replay.states):
                continue
            # A finished game's log keeps no deadlines (compacted at the end):
            # only the replayed state tells its versions apart then.
            if not replay.compacted and seen.deadline_ms != replay.deadlines[seen.version - 1]:
                stale.append(seen)
            elif seen.digest:
                key = (game.game, seen.version)
                if key not in digests:
                    digests[key] = replayed_digest(replay.states[seen.version - 1], game.players)
                if digests[key] != seen.digest:
                    stale.append(seen)
        if not stale:
            continue
        before_crash = [s for s in stale if last_crash is not None and s.at <= last_crash]
        if before_crash:
            excused.append(
                Excused(
                    "watch-kept-lost-versions",
                    subject,
                    f"kept versions {_ranges([s.version for s in before_crash])} as they were "
                    "before the Redis crash: the log now holds other versions under those "
                    "numbers, which the watch never delivered (it resumed after a version "
                    "number the game reached again; nothing tells a client a number was reused)",
                    before_crash[0].at,
                )
            )
        after = [s for s in stale if s not in before_crash]
        if after:
            found.append(
                Violation(
                    "watch-diverged",
                    subject,
                    f"versions {_ranges([s.version for s in after])} differ from the log",
                    "game service (WatchGame)",
                )
            )
    return found, excused


# --------------------------------------------------------------------------- the rest


def check_vanished(data: CheckInput) -> list[Violation]:
    found: list[Violation] = []
    for note in data.journal.notes:
        if note.kind != "game gone":
            continue
        if _crashed_between(data.journal.started, note.at, data.truncations):
            continue
        found.append(Violation("game-vanished", note.player, note.detail, "store (durability)"))
    return found


def check_health(data: CheckInput) -> list[Violation]:
    return [
        Violation("unhealthy", name, f"health at the end: {status}", name)
        for name, status in sorted(data.health.items())
        if status != "SERVING"
    ]


def check_all(data: CheckInput) -> tuple[list[Violation], list[Excused]]:
    """Every check; the violations and the excused (crash-window) losses."""
    violations, rebuilt = check_logs(data.store)
    ack_violations, excused = check_acks(data, rebuilt)
    violations += ack_violations
    violations += check_ended(data.store)
    violations += check_moving(data.store)
    ticket_violations, ticket_excused = check_tickets(data)
    excused += ticket_excused
    violations += check_one_game(data, affected_games(data, excused))
    violations += ticket_violations
    violations += check_results(data)
    watch_violations, watch_excused = check_watchers(data, rebuilt)
    violations += watch_violations
    excused += watch_excused
    violations += check_vanished(data)
    violations += check_health(data)
    return violations, excused
