"""Tests of the pure matchmaker (truc_lobby.matchmaking): table shape at six,
four and two seats, parties, captains (first seats), balance against the
waiting-time policy, oldest-first progress, determinism, and the amount of work
per round (counted, not timed)."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truc_lobby.matchmaking import (
    CAPTAIN_SEATS,
    TABLE_SEATS,
    TEAM_SEATS,
    MatchPolicy,
    MatchStats,
    Member,
    QueuedTicket,
    Table,
    form_tables,
    table_counts,
)

POLICIES = (
    MatchPolicy(),
    MatchPolicy(base_gap=0.0, gap_per_second=2.0, max_gap=150.0),
    MatchPolicy(base_gap=20.0, gap_per_second=0.0, max_gap=20.0),
    MatchPolicy(base_gap=400.0, gap_per_second=0.0, max_gap=1000.0),
)

# Full tables as counts of (solos, pairs, parties of three), by table size.
TABLE_COUNTS = {
    6: ((0, 0, 2), (1, 1, 1), (3, 0, 1), (2, 2, 0), (4, 1, 0), (6, 0, 0)),
    4: ((0, 2, 0), (2, 1, 0), (4, 0, 0)),  # 2|2, 2|1+1, 1+1|1+1
    2: ((2, 0, 0),),  # 1|1
}
# Each team's seats in seating order, by table size: teams alternate around the table.
SEATING = {6: ((0, 2, 4), (3, 5, 1)), 4: ((0, 2), (1, 3)), 2: ((0,), (1,))}


def solo(
    ticket: str, rating: float, at: float = 0.0, options: str = "std", seats: int = 6
) -> QueuedTicket:
    return QueuedTicket(ticket, (Member(f"{ticket}.p", rating),), options, at, seats)


def party(
    ticket: str, ratings: Sequence[float], at: float = 0.0, options: str = "std", seats: int = 6
) -> QueuedTicket:
    members = tuple(Member(f"{ticket}.p{k}", r) for k, r in enumerate(ratings))
    return QueuedTicket(ticket, members, options, at, seats)


def team_mean(members: Sequence[Member]) -> float:
    return math.fsum(m.rating for m in members) / len(members)


def ticket_mean(t: QueuedTicket) -> float:
    return math.fsum(m.rating for m in t.members) / len(t.members)


@st.composite
def queues(draw: st.DrawFn, seat_counts: Sequence[int] = (6,)) -> list[QueuedTicket]:
    """1-40 tickets: 1-3 option keys, each for a table size of ``seat_counts``;
    parties of 1 to the team size, ratings 800-2200, enqueue times."""
    keys = draw(st.integers(1, 3))
    sizes = [draw(st.sampled_from(seat_counts)) for _ in range(keys)]
    coarse = draw(st.booleans())  # a coarse rating grid makes ties and exact balance likely
    rating = (
        st.integers(8, 22).map(lambda r: r * 100.0)
        if coarse
        else st.floats(800.0, 2200.0, allow_nan=False)
    )
    count = draw(st.integers(1, 40))
    queue = []
    for i in range(count):
        key = draw(st.integers(0, keys - 1))
        size = draw(st.integers(1, sizes[key] // 2))
        members = tuple(Member(f"p{i}.{k}", draw(rating)) for k in range(size))
        at = float(draw(st.integers(0, 60)))  # whole seconds: equal times test the tie-breaks
        queue.append(QueuedTicket(f"t{i:02}", members, f"opt{key}", at, sizes[key]))
    return queue


ANY_TABLE = (2, 4, 6)


def check_tables(
    queue: Sequence[QueuedTicket], tables: Sequence[Table], now: float, policy: MatchPolicy
) -> None:
    """Every invariant a round's output must satisfy."""
    by_id = {t.ticket: t for t in queue}
    owner = {m.player: t for t in queue for m in t.members}
    seen_tickets: set[str] = set()
    seen_players: set[str] = set()
    for table in tables:
        used = [by_id[t] for t in table.tickets]
        seat_count = used[0].seats
        team_size = seat_count // 2
        assert len(table.seats) == table.seat_count == seat_count
        players = [m.player for m in table.seats]
        assert len(set(players)) == seat_count, "a player twice at one table"
        assert not seen_players & set(players), "a player in two tables"
        seen_players |= set(players)
        assert len(set(table.tickets)) == len(table.tickets)
        assert not seen_tickets & set(table.tickets), "a ticket in two tables"
        seen_tickets |= set(table.tickets)

        # Exactly the members of the table's tickets are seated, each one once.
        assert sorted(players) == sorted(m.player for t in used for m in t.members)
        assert {t.options for t in used} == {table.options}, "options must match exactly"
        assert list(table.tickets) == [
            t.ticket for t in sorted(used, key=lambda t: (t.enqueued_at, t.ticket))
        ]
        # Parties sit on one team; seat s is on team s % 2.
        for t in used:
            seats = [players.index(m.player) for m in t.members]
            assert len({Table.team(s, seat_count) for s in seats}) == 1, f"party {t.ticket} split"
        # Balance within the policy, for the oldest ticket's wait; teams alternate.
        team_a = list(table.seats[0::2])
        team_b = list(table.seats[1::2])
        assert len(team_a) == len(team_b) == team_size
        gap = abs(team_mean(team_a) - team_mean(team_b))
        assert table.rating_gap == gap
        assert table.mean_rating(0) == team_mean(team_a)
        assert table.mean_rating(1) == team_mean(team_b)
        oldest = min(t.enqueued_at for t in used)
        assert gap <= policy.allowed_gap(now - oldest)
        # Team A holds the oldest ticket.
        first = by_id[table.tickets[0]]
        assert Table.team(players.index(first.members[0].player), seat_count) == 0
        # Captains (first seats).
        for team in (0, 1):
            members = table.team_members(team)
            assert [table.seats[s] for s in SEATING[seat_count][team]] == list(members)
            assert table.captain(team) == table.seats[SEATING[seat_count][team][0]] == members[0]
            tickets = {owner[m.player].ticket: owner[m.player] for m in members}.values()
            parties = [t for t in tickets if len(t.members) >= 2]
            assert len(parties) <= 1
            if parties:
                assert members[0] == parties[0].members[0], "the party leader captains"
                # The party sits together: captain, then the party-mates.
                assert set(members[: len(parties[0].members)]) == set(parties[0].members)
            else:
                assert members[0].rating == max(m.rating for m in members)


def band_table_exists(anchor: QueuedTicket, group: Sequence[QueuedTicket], gap: float) -> bool:
    """The documented sufficient condition: other tickets of the group complete a
    table with ``anchor`` and all have mean ratings within gap / 2 of its mean
    (with a margin, so float rounding cannot decide)."""
    radius = gap / 2 - 1e-6
    if radius < 0:
        return False
    centre = ticket_mean(anchor)
    near = Counter(
        len(t.members) for t in group if t is not anchor and abs(ticket_mean(t) - centre) <= radius
    )
    for counts in TABLE_COUNTS[anchor.seats]:
        need = list(counts)
        if need[len(anchor.members) - 1] == 0:
            continue
        need[len(anchor.members) - 1] -= 1
        if all(near[size] >= need[size - 1] for size in (1, 2, 3)):
            return True
    return False


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    queue=queues(ANY_TABLE),
    now=st.floats(0.0, 120.0, allow_nan=False),
    policy=st.sampled_from(POLICIES),
)
def test_every_table_is_valid(queue: list[QueuedTicket], now: float, policy: MatchPolicy) -> None:
    tables = form_tables(queue, now, policy)
    check_tables(queue, tables, now, policy)


@settings(max_examples=300, deadline=None)
@given(
    queue=queues(ANY_TABLE),
    now=st.floats(0.0, 120.0, allow_nan=False),
    policy=st.sampled_from(POLICIES),
)
def test_oldest_ticket_of_each_group_is_served_when_a_close_table_exists(
    queue: list[QueuedTicket], now: float, policy: MatchPolicy
) -> None:
    matched = {t for table in form_tables(queue, now, policy) for t in table.tickets}
    for options in {t.options for t in queue}:
        group = [t for t in queue if t.options == options]
        oldest = min(group, key=lambda t: (t.enqueued_at, t.ticket))
        if band_table_exists(oldest, group, policy.allowed_gap(now - oldest.enqueued_at)):
            assert oldest.ticket in matched


@settings(max_examples=150, deadline=None)
@given(
    queue=queues(ANY_TABLE),
    now=st.floats(0.0, 120.0, allow_nan=False),
    seed=st.integers(0, 2**32 - 1),
)
def test_deterministic_and_independent_of_queue_order(
    queue: list[QueuedTicket], now: float, seed: int
) -> None:
    tables = form_tables(queue, now)
    assert form_tables(queue, now) == tables
    shuffled = list(queue)
    random.Random(seed).shuffle(shuffled)
    assert form_tables(shuffled, now) == tables


@settings(max_examples=150, deadline=None)
@given(queue=queues(ANY_TABLE), now=st.floats(0.0, 60.0, allow_nan=False))
def test_waiting_longer_never_makes_the_oldest_ticket_unmatchable(
    queue: list[QueuedTicket], now: float
) -> None:
    """The allowance only widens with time: a close table found now is found later."""
    policy = MatchPolicy()
    for later in (now, now + 10.0, now + 100.0):
        matched = {t for table in form_tables(queue, later, policy) for t in table.tickets}
        for options in {t.options for t in queue}:
            group = [t for t in queue if t.options == options]
            oldest = min(group, key=lambda t: (t.enqueued_at, t.ticket))
            wait = policy.allowed_gap(now - oldest.enqueued_at)
            if band_table_exists(oldest, group, wait):
                assert oldest.ticket in matched


def test_six_solos_form_exactly_one_table() -> None:
    queue = [solo(f"s{i}", 1500.0 + 10 * i, at=float(i)) for i in range(6)]
    tables = form_tables(queue, now=10.0)
    assert len(tables) == 1
    assert set(tables[0].tickets) == {t.ticket for t in queue}
    check_tables(queue, tables, 10.0, MatchPolicy())
    # The best split of 1500..1550 in steps of 10 is 1500+1530+1540 / 1510+1520+1550.
    assert tables[0].rating_gap == pytest.approx(10.0 / 3)


def test_oldest_solo_is_seated_and_the_youngest_waits() -> None:
    queue = [solo(f"s{i}", 1500.0, at=float(10 - i)) for i in range(7)]  # s6 is the oldest
    tables = form_tables(queue, now=10.0)
    assert len(tables) == 1
    assert "s6" in tables[0].tickets
    assert "s0" not in tables[0].tickets  # the youngest of seven equal players waits
    assert tables[0].rating_gap == 0.0
    assert tables[0].seats[0].player == "s6.p"  # all equal: the oldest captains team A


def test_two_parties_of_three_form_one_table_with_their_leaders_as_captains() -> None:
    queue = [party("a", [1600.0, 1400.0, 1500.0]), party("b", [1500.0, 1450.0, 1550.0], at=1.0)]
    tables = form_tables(queue, now=1.0)
    assert len(tables) == 1
    table = tables[0]
    check_tables(queue, tables, 1.0, MatchPolicy())
    assert table.tickets == ("a", "b")
    assert table.captain(0) == Member("a.p0", 1600.0)
    assert table.captain(1) == Member("b.p0", 1500.0)
    assert {m.player for m in table.team_members(0)} == {"a.p0", "a.p1", "a.p2"}
    assert table.rating_gap == 0.0


def test_party_of_two_and_four_solos() -> None:
    queue = [
        party("duo", [1400.0, 1700.0]),
        solo("s1", 1500.0, at=1.0),
        solo("s2", 1600.0, at=2.0),
        solo("s3", 1450.0, at=3.0),
        solo("s4", 1550.0, at=4.0),
    ]
    tables = form_tables(queue, now=4.0)
    assert len(tables) == 1
    table = tables[0]
    check_tables(queue, tables, 4.0, MatchPolicy())
    # The party's leader captains team A (the party is the oldest ticket) even
    # though the partner is rated higher; the partner sits beside in seat 2.
    assert table.captain(0) == Member("duo.p0", 1400.0)
    assert table.seats[2] == Member("duo.p1", 1700.0)
    # Team B is three solos: the highest rated captains.
    team_b = table.team_members(1)
    assert table.captain(1).rating == max(m.rating for m in team_b)
    assert [m.rating for m in team_b] == sorted((m.rating for m in team_b), reverse=True)


def test_party_of_three_against_a_pair_and_a_solo() -> None:
    queue = [
        solo("s", 1500.0, at=2.0),
        party("trio", [1500.0, 1500.0, 1500.0], at=1.0),
        party("duo", [1450.0, 1550.0], at=0.0),
    ]
    tables = form_tables(queue, now=2.0)
    assert len(tables) == 1
    check_tables(queue, tables, 2.0, MatchPolicy())
    table = tables[0]
    assert table.captain(0).player == "duo.p0"  # the oldest ticket's team is team A
    assert table.captain(1).player == "trio.p0"


@pytest.mark.parametrize(
    "queue",
    [
        [solo(f"s{i}", 1500.0) for i in range(5)],
        [party("duo", [1500.0, 1500.0]), *(solo(f"s{i}", 1500.0) for i in range(3))],
        [party("trio", [1500.0] * 3), party("duo", [1500.0, 1500.0])],
        [party("trio", [1500.0] * 3), *(solo(f"s{i}", 1500.0) for i in range(2))],
        # Six players but no way to seat them: two pairs and a pair can't make teams of three.
        [party(f"d{i}", [1500.0, 1500.0]) for i in range(3)],
    ],
    ids=["five-solos", "pair+3", "trio+pair", "trio+2", "three-pairs"],
)
def test_too_few_players_form_nothing(queue: list[QueuedTicket]) -> None:
    assert form_tables(queue, now=1000.0) == []


def test_options_are_matched_exactly() -> None:
    queue = [solo(f"a{i}", 1500.0, options="fast") for i in range(3)]
    queue += [solo(f"b{i}", 1500.0, options="slow") for i in range(3)]
    assert form_tables(queue, now=1000.0) == []
    queue += [solo(f"c{i}", 1500.0, options="slow") for i in range(3)]
    tables = form_tables(queue, now=1000.0)
    assert len(tables) == 1
    assert tables[0].options == "slow"
    assert all(t.startswith(("b", "c")) for t in tables[0].tickets)


def test_a_wide_gap_waits_until_the_allowance_has_grown() -> None:
    policy = MatchPolicy(base_gap=50.0, gap_per_second=10.0, max_gap=400.0)
    # Two parties of three 300 apart: only one split, gap 300, allowed after 25 s.
    parties = [party("low", [1200.0] * 3, at=100.0), party("high", [1500.0] * 3, at=105.0)]
    assert form_tables(parties, now=100.0, policy=policy) == []
    assert form_tables(parties, now=124.9, policy=policy) == []
    tables = form_tables(parties, now=125.0, policy=policy)
    assert len(tables) == 1
    assert tables[0].rating_gap == 300.0
    # Solos can be mixed: 1000 x 3 and 1300 x 3 balance to a gap of 100 (5 s).
    solos = [solo(f"l{i}", 1000.0, at=0.0) for i in range(3)]
    solos += [solo(f"h{i}", 1300.0, at=3.0) for i in range(3)]
    assert form_tables(solos, now=4.0, policy=policy) == []
    tables = form_tables(solos, now=5.0, policy=policy)
    assert len(tables) == 1
    assert tables[0].rating_gap == 100.0
    check_tables(solos, tables, 5.0, policy)
    # Past max_gap no wait is enough.
    far = [party("low", [800.0] * 3), party("high", [2200.0] * 3)]
    assert form_tables(far, now=1e9, policy=policy) == []


def test_pairs_are_not_stranded_by_tables_of_six_solos() -> None:
    """Six solos and three pairs, all equal: a table of the six (oldest) solos
    would leave three pairs that can never sit; the matcher keeps the solos the
    pairs need and seats everybody (2+1 | 2+1, then 2+1 | 1+1+1)."""
    queue = [solo(f"s{i}", 1500.0, at=float(i)) for i in range(6)]
    queue += [party(f"d{i}", [1500.0, 1500.0], at=10.0 + i) for i in range(3)]
    tables = form_tables(queue, now=20.0)
    check_tables(queue, tables, 20.0, MatchPolicy())
    assert len(tables) == 2


def test_policy_allowed_gap() -> None:
    policy = MatchPolicy(base_gap=50.0, gap_per_second=10.0, max_gap=400.0)
    assert policy.allowed_gap(0.0) == 50.0
    assert policy.allowed_gap(10.0) == 150.0
    assert policy.allowed_gap(35.0) == 400.0
    assert policy.allowed_gap(1e6) == 400.0
    assert policy.allowed_gap(-5.0) == 50.0  # a ticket stamped after `now`


def test_table_team() -> None:
    assert [Table.team(s) for s in range(6)] == [0, 1, 0, 1, 0, 1]
    assert [Table.team(s, 4) for s in range(4)] == [0, 1, 0, 1]
    assert [Table.team(s, 2) for s in range(2)] == [0, 1]
    with pytest.raises(ValueError, match="seat"):
        Table.team(6)
    with pytest.raises(ValueError, match="seat"):
        Table.team(4, 4)
    with pytest.raises(ValueError, match="seats"):
        Table.team(0, 3)


def test_table_shapes_by_size() -> None:
    for seats, counts in TABLE_COUNTS.items():
        assert table_counts(seats) == counts
        assert TABLE_SEATS[seats] == SEATING[seats]
    assert TABLE_SEATS[6] == TEAM_SEATS and CAPTAIN_SEATS == (0, 3)
    with pytest.raises(ValueError, match="seats"):
        table_counts(8)


def test_two_solos_make_a_one_against_one_table() -> None:
    queue = [solo("old", 1500.0, at=0.0, seats=2), solo("new", 1540.0, at=1.0, seats=2)]
    queue += [solo("late", 1520.0, at=2.0, seats=2)]
    tables = form_tables(queue, now=2.0)
    check_tables(queue, tables, 2.0, MatchPolicy())
    assert len(tables) == 1
    (table,) = tables
    # The oldest ticket and its nearest-rated opponent; the oldest sits at seat 0 (team A).
    assert table.seats == (Member("old.p", 1500.0), Member("late.p", 1520.0))
    assert table.tickets == ("old", "late") and table.rating_gap == 20.0
    assert table.captain(1) == Member("late.p", 1520.0)
    # Two-seat tickets never fill a six-seat table, nor the other way round.
    other = [solo(f"s{i}", 1500.0, options="big", seats=6) for i in range(5)]
    assert {t.options for t in form_tables([*other, *queue], now=2.0)} == {"std"}


def test_four_seats_seat_a_pair_as_one_team_facing_a_pair_or_two_solos() -> None:
    pairs = [party("a", [1600.0, 1400.0], seats=4), party("b", [1450.0, 1550.0], 1.0, seats=4)]
    tables = form_tables(pairs, now=1.0)
    check_tables(pairs, tables, 1.0, MatchPolicy())
    (table,) = tables
    assert table.seats == (
        Member("a.p0", 1600.0),  # A's leader at seat 0, their partner opposite at seat 2
        Member("b.p0", 1450.0),
        Member("a.p1", 1400.0),
        Member("b.p1", 1550.0),
    )
    assert table.rating_gap == 0.0
    mixed = [
        solo("s1", 1700.0, at=0.0, seats=4),
        party("duo", [1500.0, 1500.0], at=1.0, seats=4),
        solo("s2", 1300.0, at=2.0, seats=4),
    ]
    tables = form_tables(mixed, now=2.0)
    check_tables(mixed, tables, 2.0, MatchPolicy())
    (table,) = tables
    # The two solos are team A (the oldest ticket), the higher rated first.
    assert [m.player for m in table.team_members(0)] == ["s1.p", "s2.p"]
    assert [m.player for m in table.team_members(1)] == ["duo.p0", "duo.p1"]


def test_four_solos_fill_four_seats_and_do_not_wait_for_pairs() -> None:
    """At six seats solos are kept for the pairs that need them; at four a pair
    is a whole team, so the four oldest solos sit at once and the pairs wait for
    another pair."""
    queue = [solo(f"s{i}", 1500.0, at=float(i), seats=4) for i in range(4)]
    queue += [party("d", [1500.0, 1500.0], at=10.0, seats=4)]
    tables = form_tables(queue, now=20.0)
    check_tables(queue, tables, 20.0, MatchPolicy())
    assert [t.tickets for t in tables] == [("s0", "s1", "s2", "s3")]


@pytest.mark.parametrize(
    "queue",
    [
        [solo("one", 1500.0, seats=2)],
        [party("duo", [1500.0, 1500.0], seats=4)],
        [party("duo", [1500.0, 1500.0], seats=4), solo("s", 1500.0, seats=4)],
        [solo(f"s{i}", 1500.0, seats=4) for i in range(3)],
    ],
    ids=["one-of-two", "pair-of-four", "pair+1-of-four", "three-of-four"],
)
def test_too_few_players_for_a_smaller_table_form_nothing(queue: list[QueuedTicket]) -> None:
    assert form_tables(queue, now=1000.0) == []


@pytest.mark.parametrize(
    ("queue", "message"),
    [
        ([solo("t", 1500.0), solo("t", 1500.0)], "queued twice"),
        ([solo("a", 1500.0), QueuedTicket("b", (Member("a.p", 1500.0),), "std", 0.0)], "player"),
        ([party("big", [1500.0] * 4)], "members"),
        ([QueuedTicket("empty", (), "std", 0.0)], "members"),
        ([solo("nan", math.nan)], "rating"),
        ([party("pair", [1500.0] * 2, seats=2)], "members"),  # more than a team of one
        ([party("trio", [1500.0] * 3, seats=4)], "members"),
        ([solo("a", 1500.0, seats=4), solo("b", 1500.0, seats=2)], "two table sizes"),
        ([solo("odd", 1500.0, seats=3)], "seats"),
    ],
)
def test_malformed_queues_are_rejected(queue: list[QueuedTicket], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        form_tables(queue, now=0.0)


def mixed_queue(tickets: int, seed: int, keys: int = 3) -> list[QueuedTicket]:
    rng = random.Random(seed)
    queue = []
    for i in range(tickets):
        size = rng.choice((1, 1, 1, 2, 2, 3))
        ratings = [min(2200.0, max(800.0, rng.gauss(1500.0, 300.0))) for _ in range(size)]
        queue.append(party(f"t{i}", ratings, at=rng.uniform(0.0, 60.0), options=f"o{i % keys}"))
    return queue


# Work per ticket, in units of log2(n). The matcher's constants: at most 372
# team splits per anchor (independent of n), and a bisect plus a few
# union-find steps per nearest-candidate lookup.
EVALUATIONS_PER_TICKET = 400
PROBES_PER_TICKET_LOG = 8


def assert_n_log_n(stats: MatchStats, n: int) -> None:
    log_n = math.log2(n)
    assert stats.anchors <= n
    assert stats.candidate_evaluations <= EVALUATIONS_PER_TICKET * n  # O(n), so O(n log n)
    assert stats.index_probes <= PROBES_PER_TICKET_LOG * n * log_n


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_work_per_round_is_n_log_n(n: int) -> None:
    queue = mixed_queue(n, seed=n)
    stats = MatchStats()
    tables = form_tables(queue, now=60.0, stats=stats)
    assert_n_log_n(stats, n)
    assert len(tables) * 6 >= 0.9 * sum(len(t.members) for t in queue)  # and it does match


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_work_per_round_is_n_log_n_with_every_table_size(n: int) -> None:
    """Keys of six, four and two seats in one queue (as the lobby's rule sets)."""
    rng = random.Random(n + 1)
    queue = []
    for i in range(n):
        seats = (6, 4, 2)[i % 3]
        size = rng.randint(1, seats // 2)
        ratings = [min(2200.0, max(800.0, rng.gauss(1500.0, 300.0))) for _ in range(size)]
        at = rng.uniform(0.0, 60.0)
        queue.append(party(f"t{i}", ratings, at=at, options=f"o{seats}", seats=seats))
    stats = MatchStats()
    tables = form_tables(queue, now=60.0, stats=stats)
    assert_n_log_n(stats, n)
    assert {t.seat_count for t in tables} == {2, 4, 6}
    assert sum(t.seat_count for t in tables) >= 0.9 * sum(len(t.members) for t in queue)


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_work_stays_n_log_n_when_matched_tickets_pile_up(n: int) -> None:
    """The worst case for a naive index: a big block of equal ratings matched
    first, then many young tickets at that same rating that can't be matched
    (the allowance is zero and they are unbalanced); each of their lookups must
    skip the matched block without walking it."""
    block = (n // 2) // 6 * 6
    queue = [solo(f"old{i}", 1500.0, at=0.0) for i in range(block)]
    queue += [
        party(f"young{i}", [1500.0 + 0.001 * (i + 1)] * 3, at=1.0 + i) for i in range(n - block)
    ]
    stats = MatchStats()
    tables = form_tables(queue, now=0.0, policy=MatchPolicy(0.0, 0.0, 0.0), stats=stats)
    assert len(tables) == block // 6
    assert_n_log_n(stats, n)


def test_stats_add_up_across_rounds() -> None:
    queue = [solo(f"s{i}", 1500.0) for i in range(12)]
    stats = MatchStats()
    form_tables(queue, now=0.0, stats=stats)
    first = (stats.anchors, stats.candidate_evaluations, stats.index_probes)
    assert first[0] == 2
    form_tables(queue, now=0.0, stats=stats)
    assert (stats.anchors, stats.candidate_evaluations, stats.index_probes) == tuple(
        2 * x for x in first
    )
