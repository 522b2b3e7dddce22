"""The chaos suite's checker finds what it is meant to find (so a clean verdict is not
vacuous): a consistent, fabricated world passes, and each corruption of it (a gap
in an event log, a request applied twice, a lost acknowledgement, a player in two
games, a ticket stuck in MATCHING...) is reported by the check that owns it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace

import pytest

from truc_chaos.aof import Truncation
from truc_chaos.checks import CheckInput, check_all
from truc_chaos.records import Ack, Finish, Journal, TicketLog
from truc_chaos.store_state import GameState, LogEntry, StoreState, TicketState
from truc_lobby.history import GameRecord

pytestmark = pytest.mark.unit

T0 = 1_800_000_000.0
"""Seconds: when the fabricated run started."""
PLAYERS = [f"p{i}-000000000000" for i in range(6)]
TURN = 3


def _game(game: str, start: float, end: float | None, version: int) -> GameState:
    """A game created at ``start`` (s) whose versions come 0.5 s apart, finished at
    ``end`` (or live, its deadline pending)."""
    log = [
        LogEntry(f"{v}-0", int((start + 0.5 * (v - 1)) * 1000 + TURN * 1000))
        for v in range(1, version + 1)
    ]
    if end is not None:
        log[-1] = LogEntry(f"{version}-0", None)
    return GameState(
        game=game,
        version=version,
        players=tuple(PLAYERS),
        turn_seconds=TURN,
        deadline_ms=None if end is not None else int((T0 + 100) * 1000),
        finished=end is not None,
        phase="MATCH_OVER" if end is not None else "PLAY",
        log=log,
        requests={f"{PLAYERS[v % 6]}\x00r-{game}-{v}": v for v in range(2, version + 1)},
        indexed_deadline=None if end is not None else (T0 + 100) * 1000,
        last_commit_ms=None if end is None else end * 1000,
    )


def world() -> CheckInput:
    """Two consecutive finished matches of the same six players, all recorded once."""
    store = StoreState(read_at=T0 + 90)
    journal = Journal(started=T0)
    matches = (("g1", T0 + 1, T0 + 20), ("g2", T0 + 25, T0 + 45))
    changes = {p: (16.0 if i % 2 == 0 else -16.0) for i, p in enumerate(PLAYERS)}
    for index, (game, start, end) in enumerate(matches):
        store.games[game] = _game(game, start, end, 12)
        store.summaries[game] = GameRecord(
            game, tuple((s, p, False) for s, p in enumerate(PLAYERS)), 0, int(end * 1000), changes
        )
        for seat, player in enumerate(PLAYERS):
            ticket = f"t{index}{seat}"
            store.tickets[ticket] = TicketState(
                ticket,
                "MATCHED",
                (player,),
                game,
                tuple((s, p, False) for s, p in enumerate(PLAYERS)),
                int((start - 1) * 1000),
            )
            log = journal.tickets[f"tickets/{ticket}"] = TicketLog(
                f"tickets/{ticket}", player, "grpc", start - 1
            )
            log.state("QUEUED")
            log.state("MATCHED", f"games/{game}")
            watch = journal.watch(f"games/{game}", player, seat, "grpc")
            for entry in store.games[game].log:
                version = int(entry.entry_id.split("-")[0])
                watch.seen(version, entry.deadline_ms, start + 0.5 * version)
        for version in range(2, 13):
            player = PLAYERS[version % 6]
            journal.acks.append(
                Ack(
                    f"games/{game}",
                    player,
                    version % 6,
                    f"r-{game}-{version}",
                    version,
                    start + 0.5 * version,
                    "grpc",
                )
            )
    for player in PLAYERS:
        store.history[player] = ["g1", "g2"]
        store.ratings[player] = 1500.0 + 2 * changes[player]
        journal.players[player] = "token"
    listed = {player: ["games/g2", "games/g1"] for player in PLAYERS}
    health = {"game0": "SERVING", "lobby0": "SERVING", "gateway": "SERVING", "redis": "SERVING"}
    return CheckInput(store, journal, listed=listed, health=health)


def found(data: CheckInput) -> set[str]:
    violations, _ = check_all(data)
    return {v.check for v in violations}


def test_a_consistent_world_passes() -> None:
    violations, excused = check_all(world())
    assert violations == []
    assert excused == []


def _gap(w: CheckInput) -> None:
    del w.store.games["g1"].log[4]


def _applied_twice(w: CheckInput) -> None:
    first = w.journal.acks[0]
    w.journal.acks.append(replace(first, version=first.version + 1))


def _two_ids_one_version(w: CheckInput) -> None:
    w.store.games["g1"].requests["p0-000000000000\x00extra"] = 5


def _lost_ack(w: CheckInput) -> None:
    w.store.games["g2"].requests.pop(f"{PLAYERS[7 % 6]}\x00r-g2-7")


def _two_games(w: CheckInput) -> None:
    # g2 starts while g1 is still live: its players were seated twice.
    w.store.games["g2"] = _game("g2", T0 + 10, T0 + 45, 12)


def _stuck_matching(w: CheckInput) -> None:
    w.store.tickets["t00"] = replace(w.store.tickets["t00"], state="MATCHING", game="")


def _orphan(w: CheckInput) -> None:
    w.store.games["g3"] = _game("g3", T0 + 50, None, 4)


def _rating_twice(w: CheckInput) -> None:
    w.store.ratings[PLAYERS[0]] += 16.0


def _history_duplicate(w: CheckInput) -> None:
    w.listed[PLAYERS[1]] = ["games/g2", "games/g1", "games/g1"]


def _result_missing(w: CheckInput) -> None:
    del w.store.summaries["g2"]
    for player in PLAYERS:
        w.store.history[player] = ["g1"]
        w.store.ratings[player] -= 16.0 if PLAYERS.index(player) % 2 == 0 else -16.0
    w.listed = {p: ["games/g1"] for p in PLAYERS}


def _watch_gap(w: CheckInput) -> None:
    del w.journal.watches[("games/g1", PLAYERS[0])].epochs[0][3]


def _watch_duplicate(w: CheckInput) -> None:
    epoch = w.journal.watches[("games/g1", PLAYERS[0])].epochs[0]
    epoch.insert(4, epoch[3])


def _rewind_without_crash(w: CheckInput) -> None:
    log = w.journal.watches[("games/g2", PLAYERS[0])]
    log.rewind(12, 8, at=T0 + 40)
    for seen in log.epochs[0]:
        log.epochs[-1].append(seen)


def _stuck_game(w: CheckInput) -> None:
    game = w.store.games["g2"] = _game("g2", T0 + 25, None, 12)
    game.deadline_ms = int((T0 + 60) * 1000)  # 30 s overdue when Redis was read
    game.indexed_deadline = float(game.deadline_ms)


def _vanished(w: CheckInput) -> None:
    w.journal.note(PLAYERS[0], "game gone", "games/g2: NOT_FOUND")


def _unhealthy(w: CheckInput) -> None:
    w.health["lobby0"] = "NOT_SERVING"


CORRUPTIONS: dict[str, tuple[Callable[[CheckInput], None], str]] = {
    "a gap in an event log": (_gap, "log-gap"),
    "one request id acknowledged with two versions": (_applied_twice, "applied-twice"),
    "two request ids producing one version": (_two_ids_one_version, "applied-twice"),
    "an acknowledged action missing from the log": (_lost_ack, "lost-ack"),
    "players seated in two live games": (_two_games, "two-live-games"),
    "a ticket stuck in MATCHING": (_stuck_matching, "ticket-stuck-matching"),
    "a game no ticket was seated in": (_orphan, "orphan-game"),
    "a result applied twice to a rating": (_rating_twice, "rating-mismatch"),
    "ListGames listing a game twice": (_history_duplicate, "history-duplicate"),
    "a finished game without its result": (_result_missing, "result-missing"),
    "a watcher that missed a version": (_watch_gap, "watch-gap"),
    "a watcher that got a version twice": (_watch_duplicate, "watch-duplicate"),
    "a game going backward with no crash": (_rewind_without_crash, "rewind-without-crash"),
    "an unfinished game nobody acts in": (_stuck_game, "game-stuck"),
    "a game gone with no crash": (_vanished, "game-vanished"),
    "a process not healthy at the end": (_unhealthy, "unhealthy"),
}


@pytest.mark.parametrize("what", list(CORRUPTIONS))
def test_each_corruption_is_reported_by_its_check(what: str) -> None:
    corrupt, check = CORRUPTIONS[what]
    data = copy.deepcopy(world())
    corrupt(data)
    assert check in found(data), f"{what}: {check} not reported"


def test_a_ticket_stuck_matching_names_its_players_and_the_lobby() -> None:
    data = world()
    _stuck_matching(data)
    violations, _ = check_all(data)
    stuck = [v for v in violations if v.check == "ticket-stuck-matching"]
    assert len(stuck) == 1
    assert stuck[0].subject == "tickets/t00"
    assert PLAYERS[0] in stuck[0].detail
    assert stuck[0].component.startswith("lobby")


def test_a_loss_inside_a_crash_window_is_excused_and_outside_it_is_not() -> None:
    ack = next(a for a in world().journal.acks if a.game == "games/g2" and a.version == 7)
    inside = world()
    _lost_ack(inside)
    inside.journal.truncations.append(
        Truncation(
            killed_at=ack.at + 0.5,
            cut_to_at=ack.at - 0.5,
            file="x",
            size_before=9,
            size_after=5,
            back_at=ack.at + 1.0,
        )
    )
    violations, excused = check_all(inside)
    assert "lost-ack" not in {v.check for v in violations}
    assert [e.check for e in excused] == ["lost-ack"]
    outside = world()
    _lost_ack(outside)
    outside.journal.truncations.append(
        Truncation(
            killed_at=ack.at - 1.0,
            cut_to_at=ack.at - 2.0,
            file="x",
            size_before=9,
            size_after=5,
            back_at=ack.at - 0.5,
        )
    )
    assert "lost-ack" in found(outside)  # acknowledged after the crash: it had to last


def test_a_watcher_keeping_versions_a_crash_rewrote_is_excused_and_counted() -> None:
    data = world()
    watch = data.journal.watches[("games/g2", PLAYERS[2])]
    crash = watch.epochs[0][9].at + 0.1  # every watcher had seen versions 9 and 10
    data.journal.truncations.append(Truncation(crash, crash - 1.0, "x", 9, 5, back_at=crash + 0.1))
    game = data.store.games["g2"]
    for v in (9, 10):  # rewritten after the crash: other deadlines under the same numbers
        game.log[v - 1] = LogEntry(f"{v}-0", (game.log[v - 1].deadline_ms or 0) + 777)
    violations, excused = check_all(data)
    assert not [v for v in violations if v.check.startswith("watch")]
    assert "watch-kept-lost-versions" in {e.check for e in excused}
    # Seen after the crash, a version the log does not hold is a violation.
    late = watch.epochs[0][9]
    watch.epochs[0][9] = replace(late, at=crash + 1.0)
    assert "watch-diverged" in found(data)


def test_an_ack_of_a_game_gone_after_its_retention_is_no_loss() -> None:
    """The soak keeps finished games 60 s: a game seen finished longer ago than
    that may be gone. One gone sooner, or never seen finished, was lost."""
    data = world()
    del data.store.games["g1"]
    assert "lost-ack" in found(data)
    data.finished_ttl_seconds = 60
    assert "lost-ack" in found(data)  # nobody saw it finish
    data.journal.finishes.append(Finish("games/g1", PLAYERS[0], T0 + 20))
    assert "lost-ack" not in found(data)  # finished at +20 s, read at +90 s
    data.finished_ttl_seconds = 80
    assert "lost-ack" in found(data)  # it should still be there
