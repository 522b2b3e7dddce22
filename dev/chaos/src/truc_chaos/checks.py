"""The invariants, checked after a run: the journal (what the players were told and
saw) against Redis (:class:`~truc_chaos.store_state.StoreState`) and the public API.

Each check is a pure function returning :class:`Violation`\\ s (and, for losses a
simulated crash explains, :class:`Excused` entries); :func:`check_all` runs them
all. A violation names the check, its subject (a game, a ticket, a player), what
was found and the component it points at.

* ``log``: every game's event log is versions 1..N (stream ids ``<v>-0``), N its version;
* ``acks``: every acknowledged action is in the log at its version with its request
  id (with ``appendfsync everysec``, only acks inside a simulated crash's window
  may be missing: excused and counted); no request id answered with two versions
  and no version produced by two request ids (nothing applied twice);
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
  saw last agrees with the log (what it saw after the last crash must; versions it
  saw before a crash that the crash rewrote, without ever being shown the rewritten
  ones, are excused and counted: version numbers are reused after a loss);
* ``vanished``: a game a player was playing disappeared without a crash to explain it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .aof import Truncation
from .records import Ack, Journal
from .store_state import GameState, StoreState

__all__ = ["CheckInput", "Excused", "Violation", "check_all"]

_STALL_MS = 8000.0
"""An unfinished game's deadline overdue by more than this is stuck (the claim
lease is 5 s and the sweep polls every 200 ms)."""
_RATING_TOLERANCE = 1e-6
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


def check_logs(store: StoreState) -> list[Violation]:
    found: list[Violation] = []
    for game in store.games.values():
        ids = [e.entry_id for e in game.log]
        expected = [f"{v}-0" for v in range(1, game.version + 1)]
        if ids == expected:
            continue
        have = set(ids)
        missing = [v for v in range(1, game.version + 1) if f"{v}-0" not in have]
        extra = [i for i in ids if i not in set(expected)]
        parts = []
        if missing:
            parts.append(f"versions {_ranges(missing)} missing")
        if extra:
            parts.append(f"unexpected entries {extra[:5]}")
        if not parts:
            parts.append("entries out of order")
        found.append(
            Violation(
                "log-gap",
                f"games/{game.game}",
                f"event log of version {game.version} has {len(ids)} entries: " + "; ".join(parts),
                "game service (commit script)",
            )
        )
    return found


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


def lost_acks(store: StoreState, acks: Iterable[Ack]) -> list[Ack]:
    """The acknowledged actions that are not in the log at their version with their id."""
    lost: list[Ack] = []
    for ack in acks:
        game = store.games.get(_id(ack.game))
        key = f"{ack.player}\x00{ack.request_id}"
        if game is None or game.requests.get(key) != ack.version or game.entry(ack.version) is None:
            lost.append(ack)
    return lost


def check_acks(data: CheckInput) -> tuple[list[Violation], list[Excused]]:
    store, journal = data.store, data.journal
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
    for game in store.games.values():
        counts = Counter(game.requests.values())
        for version, n in counts.items():
            if n > 1:
                ids = [k.replace("\x00", " ") for k, v in game.requests.items() if v == version]
                found.append(
                    Violation(
                        "applied-twice",
                        f"games/{game.game}",
                        f"version {version} recorded for {n} request ids: {ids}",
                        "game service (request ids)",
                    )
                )
            if version > game.version:
                found.append(
                    Violation(
                        "request-beyond-log",
                        f"games/{game.game}",
                        f"a request id maps to version {version} > the game's {game.version}",
                        "game service (commit script)",
                    )
                )
    for ack in lost_acks(store, journal.acks):
        cut = _in_window(ack.at, data.truncations)
        held = store.games.get(_id(ack.game))
        if held is None and data.expired(ack.game):
            continue  # finished, and kept no longer than the service's retention
        if held is None:
            where = "the game is gone"
        else:
            key = f"{ack.player}\x00{ack.request_id}"
            state = "absent" if key not in held.requests else "at another version"
            where = f"the log is at version {held.version}, request id {state}"
        detail = (
            f"{ack.via} ack of request {ack.request_id} (seat {ack.seat}) at version "
            f"{ack.version}: {where}"
        )
        if cut is not None:
            excused.append(Excused("lost-ack", ack.game, detail, ack.at))
        else:
            found.append(Violation("lost-ack", ack.game, detail, "store (durability)"))
    return found, excused


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


def check_watchers(data: CheckInput) -> tuple[list[Violation], list[Excused]]:
    store, truncations = data.store, data.truncations
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
        stale = []
        for seen in log.epochs[-1]:
            entry = game.entry(seen.version)
            if entry is not None and entry.deadline_ms != seen.deadline_ms:
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
    violations = check_logs(data.store)
    ack_violations, excused = check_acks(data)
    violations += ack_violations
    violations += check_moving(data.store)
    ticket_violations, ticket_excused = check_tickets(data)
    excused += ticket_excused
    violations += check_one_game(data, affected_games(data, excused))
    violations += ticket_violations
    violations += check_results(data)
    watch_violations, watch_excused = check_watchers(data)
    violations += watch_violations
    excused += watch_excused
    violations += check_vanished(data)
    violations += check_health(data)
    return violations, excused
