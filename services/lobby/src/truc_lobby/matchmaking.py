"""Matchmaking: turn a queue of tickets into tables of two teams.

A *ticket* is one player or a party of friends (the leader first) with an
opaque rule-options key and the number of seats of the table it waits for:
six (Truc y Flou: two teams of three), four (partnership and Catalan Truc: two
of two) or two (French, Sackson and two-seat Catalan Truc: one against one).
A party holds at most a team: three, two or one players. Tickets of one
options key always ask for one table size (the key says the rule set and its
seats). One call of :func:`form_tables` is one matchmaking round: it is pure
(no clock, no I/O, no randomness; ``now`` is a parameter) and deterministic
(the same queue, in any order, gives the same tables).

Table shape. Teams alternate around the table: team A holds the even seats
and team B the odd ones (rules §1.1-1.2, variants.md V1.1). Each team's seats
in seating order (:data:`TABLE_SEATS`) are, for six seats, A 0, 2, 4 and B 3,
5, 1 (the captains at seats 0 and 3, then play order); for four, A 0, 2 and
B 1, 3; for two, A 0 and B 1. A team is any set of whole parties of the team's
size, so a six-seat table is one of six compositions, 3|3, 3|2+1, 3|1+1+1,
2+1|2+1, 2+1|1+1+1 and 1+1+1|1+1+1; a four-seat one of three, 2|2, 2|1+1 and
1+1|1+1; a two-seat one is 1|1. A party is never split and always sits on one
team. On each team the first seat (the captain's, in Truc y Flou) goes to the
leader of the team's party (a party of two or more), else to the team's
highest-rated player (ties: the older ticket, then the player id); the other
seats follow in seating order with the leader's party-mates first, then the
others, each by rating in the same way. Team A is the team holding the
table's oldest ticket.

Balance. The gap of a table is ``|mean(A) - mean(B)|`` over the player
ratings. A table is valid when its gap is at most
``policy.allowed_gap(now - enqueued_at of the table's oldest ticket)``: the
allowance starts at ``base_gap`` and widens with the waiting time up to
``max_gap``. Among the valid tables tried for an anchor the matcher keeps, in
this order of preference: (six seats) one that does not use up solo players
the group's pairs still need (a pair can only sit with a solo there, so a
table of six solos while pairs outnumber the spare solos would strand pairs;
at four seats a pair is a whole team and needs nobody), then the smallest
gap, then the smallest rating spread, then the oldest tickets.

Algorithm, per round:

1. Sort the tickets by age (``enqueued_at``, then ticket id) and group them by
   options key; inside a group, bucket them by party size (1, 2, 3) and sort
   each bucket by mean rating (ties by age). Each bucket has two "next unused
   position" arrays (left and right), a union-find with path compression, so
   that matched tickets are skipped without rescanning them.
2. Take each still unmatched ticket as the *anchor*, oldest first. Look up,
   with one ``bisect`` per bucket, the unmatched tickets whose mean rating is
   nearest the anchor's: of each party size, one more than any composition of
   the group's table size needs besides the anchor (six seats: 6 solos, 3 pairs
   and 2 parties of three; four: 4 solos and 2 pairs; two: 2 solos), so the
   nearest ones of every kind are always among them.
3. Try every composition that contains the anchor, with every choice of the
   needed tickets among those candidates, and every split of the players
   into two teams that keeps parties whole (at most 10 splits). Keep the best
   valid table; if there is one, seat it and mark its tickets used.

Complexity: O(n log n) per call in the number n of queued tickets. Sorting
and grouping cost O(n log n). Each anchor costs one ``bisect`` per bucket
(O(log n)), at most 6 + 3 + 2 + 1 + 6 nearest-unused look-ups in the
union-find (the candidates, the skipped anchor and the two starting points
per bucket; amortised O(log n) each with path compression, however many
tickets are matched in between), and a constant number of candidate
evaluations (at most 372 team splits at six seats, fewer at four and two,
independent of n). There are at most n anchors and each ticket is marked used
once. The optional :class:`MatchStats` counts the anchors, the team splits
evaluated and the union-find steps, so tests can check the bound by counting
work rather than timing it.

Guarantees:

* Every table has as many distinct players as its tickets' seats, of one
  options key, in two teams of equal size; each ticket is used at most once
  and its members sit together on one team; the gap is within the policy for
  the table's oldest ticket; first seats follow the rule above.
* Progress, oldest first: when a ticket is taken as anchor (in particular the
  oldest ticket of each options group, which is taken before any other ticket
  of its group is matched), it is matched whenever its group still holds
  unmatched tickets that complete a table with it in which every ticket's mean
  rating lies within ``allowed_gap(its wait) / 2`` of the anchor's mean rating
  (both team means then lie in that band, so any split is valid, and the
  nearest candidates of each kind are at least as close).

Limits: the search is local. A valid table that balances far-apart ratings
(say 1000 + 2000 + 1500 against 1500 x 3) is found only if those tickets are
among the anchor's nearest candidates, so in a sparse queue a valid table can
be missed in one round; the next
round tries again (the allowance widens as tickets wait). The matcher is
greedy (oldest first), not a global optimum over all possible tables, and a
malformed queue (a player in two tickets, a party larger than its team, one
options key with two table sizes, say) is rejected with ``ValueError`` rather
than matched around.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

__all__ = [
    "CAPTAIN_SEATS",
    "SEAT_COUNTS",
    "TABLE_SEATS",
    "TEAM_SEATS",
    "MatchPolicy",
    "MatchStats",
    "Member",
    "QueuedTicket",
    "Table",
    "form_tables",
    "table_counts",
]

SEAT_COUNTS: Final = (2, 4, 6)
"""The table sizes: 1 v 1, 2 v 2 and 3 v 3."""
TABLE_SEATS: Final[dict[int, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    6: ((0, 2, 4), (3, 5, 1)),
    4: ((0, 2), (1, 3)),
    2: ((0,), (1,)),
}
"""By table size: the seats of team A and of team B in seating order (the first
seat first, then play order). Teams alternate: A even seats, B odd ones."""
#: Seats of each team of a six-seat table in seating order: the captain first, then play order.
TEAM_SEATS: tuple[tuple[int, int, int], tuple[int, int, int]] = ((0, 2, 4), (3, 5, 1))
#: The captain's seat of team A (0) and team B (1) at a six-seat table.
CAPTAIN_SEATS: tuple[int, int] = (0, 3)

# Search slack for the fast (rounded) gap before the exact check.
_SLACK = 1e-9


def _splits(sizes: Sequence[int], team_size: int) -> tuple[tuple[int, ...], ...]:
    """Every team of ``team_size`` players that holds position 0 of ``sizes``
    (party sizes), as positions; the other positions make the other team."""
    return tuple(
        (0, *chosen)
        for r in range(len(sizes))
        for chosen in combinations(range(1, len(sizes)), r)
        if sizes[0] + sum(sizes[j] for j in chosen) == team_size
    )


def table_counts(seat_count: int) -> tuple[tuple[int, int, int], ...]:
    """The full tables of ``seat_count`` seats as counts of (solos, pairs,
    parties of three): those whose parties make two whole teams. Six seats:
    3|3, 3|2+1, 3|1+1+1, 2+1|2+1, 2+1|1+1+1, 1+1+1|1+1+1; four: 2|2, 2|1+1,
    1+1|1+1; two: 1|1."""
    if seat_count not in SEAT_COUNTS:
        raise ValueError(f"no table of {seat_count} seats (2, 4 or 6)")
    team = seat_count // 2
    counts: list[tuple[int, int, int]] = []
    for triples in range(seat_count // 3 if team >= 3 else 0, -1, -1):
        for pairs in range((seat_count - 3 * triples) // 2 if team >= 2 else 0, -1, -1):
            solos = seat_count - 3 * triples - 2 * pairs
            if _splits((*[3] * triples, *[2] * pairs, *[1] * solos), team):
                counts.append((solos, pairs, triples))
    return tuple(counts)


_Composition = tuple[tuple[int, int, int], tuple[tuple[int, ...], ...]]


def _compositions() -> dict[tuple[int, int], tuple[_Composition, ...]]:
    """For each (table size, anchor size): (needed solos, pairs, triples; team
    splits) per composition.

    A chosen set is ordered [anchor, solos..., pairs..., triples...]; a split is
    the positions of the team that holds the anchor (position 0).
    """
    table: dict[tuple[int, int], tuple[_Composition, ...]] = {}
    for seat_count in SEAT_COUNTS:
        team = seat_count // 2
        for anchor_size in range(1, team + 1):
            entries: list[_Composition] = []
            for counts in table_counts(seat_count):
                if counts[anchor_size - 1] == 0:
                    continue
                need = list(counts)
                need[anchor_size - 1] -= 1
                sizes = (anchor_size, *([1] * need[0]), *([2] * need[1]), *([3] * need[2]))
                entries.append(((need[0], need[1], need[2]), _splits(sizes, team)))
            table[seat_count, anchor_size] = tuple(entries)
    return table


_COMPOSITIONS: Final = _compositions()


def _candidate_counts() -> dict[int, tuple[int, int, int]]:
    """How many nearest unmatched tickets of each party size (1, 2, 3) an anchor
    looks at, by table size: the most any composition needs besides the
    anchor, plus one spare of each size for balancing (six seats: 6, 3, 2)."""
    counts: dict[int, tuple[int, int, int]] = {}
    for seat_count in SEAT_COUNTS:
        needs = [
            need
            for (size, _), entries in _COMPOSITIONS.items()
            if size == seat_count
            for need, _ in entries
        ]
        most = [max(need[k] for need in needs) for k in range(3)]
        counts[seat_count] = (
            most[0] + 1 if most[0] else 0,
            most[1] + 1 if most[1] else 0,
            most[2] + 1 if most[2] else 0,
        )
    return counts


_CANDIDATES: Final = _candidate_counts()


@dataclass(frozen=True, slots=True)
class Member:
    """One player of a ticket and their rating."""

    player: str
    rating: float


@dataclass(frozen=True, slots=True)
class QueuedTicket:
    """A queued ticket: players who must sit on one team (at most a team)."""

    ticket: str
    members: tuple[Member, ...]  # 1 to the team size, the leader first
    options: str  # an opaque key: tickets match only with equal keys
    enqueued_at: float  # seconds
    seats: int = 6  # the table size: 6, 4 or 2 (one per options key)


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """How far apart the two teams' mean ratings may be, by waiting time."""

    base_gap: float = 50.0
    gap_per_second: float = 10.0
    max_gap: float = 400.0

    def allowed_gap(self, waited: float) -> float:
        """The largest allowed ``|mean(A) - mean(B)|`` after ``waited`` seconds.

        ``base_gap + gap_per_second * waited``, capped at ``max_gap``; a negative
        wait (a ticket stamped after ``now``) counts as zero.
        """
        return min(self.max_gap, self.base_gap + self.gap_per_second * max(0.0, waited))


@dataclass(frozen=True, slots=True)
class Table:
    """A formed table: its seated players, the tickets used and the rating gap."""

    options: str
    seats: tuple[Member, ...]  # seat 0 first: six, four or two
    tickets: tuple[str, ...]  # the tickets seated here, oldest first
    rating_gap: float  # |mean(team A) - mean(team B)|

    @property
    def seat_count(self) -> int:
        """6, 4 or 2."""
        return len(self.seats)

    @staticmethod
    def team(seat: int, seat_count: int = 6) -> int:
        """The team of a seat: 0 for team A (even seats), 1 for team B (odd ones)."""
        if seat_count not in SEAT_COUNTS:
            raise ValueError(f"no table of {seat_count} seats (2, 4 or 6)")
        if not 0 <= seat < seat_count:
            raise ValueError(f"no seat {seat} at a {seat_count}-seat table")
        return seat % 2

    def team_members(self, team: int) -> tuple[Member, ...]:
        """The members of team 0 (A) or 1 (B) in seating order: the first seat
        (the captain's, at six seats) first, then play order."""
        return tuple(self.seats[s] for s in TABLE_SEATS[len(self.seats)][team])

    def captain(self, team: int) -> Member:
        """The player in team 0's (A) or 1's (B) first seat: the captain at six
        seats (seat 0 or 3); seat 0 or 1 at four and two."""
        return self.seats[TABLE_SEATS[len(self.seats)][team][0]]

    def mean_rating(self, team: int) -> float:
        """The mean rating of team 0 (A) or 1 (B)."""
        return _mean(self.team_members(team))


@dataclass(slots=True)
class MatchStats:
    """Work counters of :func:`form_tables` (added to, so one object can sum rounds)."""

    anchors: int = 0  # tickets taken as anchor
    candidate_evaluations: int = 0  # team splits evaluated
    index_probes: int = 0  # bisects and union-find steps in the rating index


def _mean(members: Sequence[Member]) -> float:
    # fsum is exactly rounded, so the result does not depend on the order.
    return math.fsum(m.rating for m in members) / len(members)


def _gap(team_a: Sequence[Member], team_b: Sequence[Member]) -> float:
    return abs(_mean(team_a) - _mean(team_b))


class _Bucket:
    """Tickets of one options key and one party size, sorted by mean rating.

    ``right[p]`` / ``left[p + 1]`` lead to the nearest unused position at or
    after / at or before ``p`` (union-find with path compression).
    """

    __slots__ = ("alive", "items", "keys", "left", "right")

    def __init__(self, items: list[int], means: Sequence[float]) -> None:
        items.sort(key=lambda i: (means[i], i))
        self.items = items
        self.keys = [means[i] for i in items]
        self.right = list(range(len(items) + 1))  # sentinel len(items): none
        self.left = list(range(len(items) + 1))  # index p + 1 is position p; 0: none
        self.alive = len(items)

    @staticmethod
    def _find(parent: list[int], x: int, stats: MatchStats) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
            stats.index_probes += 1
        while parent[x] != root:
            parent[x], x = root, parent[x]
        stats.index_probes += 1
        return root

    def remove(self, position: int) -> None:
        self.alive -= 1
        self.right[position] = position + 1
        self.left[position + 1] = position

    def nearest(self, target: float, count: int, exclude: int, stats: MatchStats) -> list[int]:
        """Up to ``count`` unused tickets nearest ``target`` in mean rating, nearest first."""
        keys = self.keys
        end = len(keys)
        start = bisect_left(keys, target)
        stats.index_probes += max(1, end.bit_length())
        right = self._find(self.right, start, stats)
        left = self._find(self.left, start, stats) - 1
        found: list[int] = []
        while len(found) < count and (right < end or left >= 0):
            if right < end and (left < 0 or keys[right] - target <= target - keys[left]):
                position = right
                right = self._find(self.right, right + 1, stats)
            else:
                position = left
                left = self._find(self.left, left, stats) - 1
            item = self.items[position]
            if item != exclude:
                found.append(item)
        return found


def _validate(queue: Sequence[QueuedTicket]) -> None:
    tickets: set[str] = set()
    players: set[str] = set()
    seats_of: dict[str, int] = {}
    for t in queue:
        if t.seats not in SEAT_COUNTS:
            raise ValueError(f"ticket {t.ticket!r} waits for {t.seats} seats (2, 4 or 6)")
        if seats_of.setdefault(t.options, t.seats) != t.seats:
            raise ValueError(f"options {t.options!r} are queued for two table sizes")
        if not 1 <= len(t.members) <= t.seats // 2:
            raise ValueError(
                f"ticket {t.ticket!r} has {len(t.members)} members"
                f" (1-{t.seats // 2} allowed at {t.seats} seats)"
            )
        if t.ticket in tickets:
            raise ValueError(f"ticket {t.ticket!r} is queued twice")
        tickets.add(t.ticket)
        if not math.isfinite(t.enqueued_at):
            raise ValueError(f"ticket {t.ticket!r} has a non-finite enqueue time")
        for m in t.members:
            if m.player in players:
                raise ValueError(f"player {m.player!r} is in two queued tickets")
            players.add(m.player)
            if not math.isfinite(m.rating):
                raise ValueError(f"player {m.player!r} has a non-finite rating")


def _seat_team(tickets: Sequence[QueuedTicket]) -> list[Member]:
    """One team's members (``tickets`` oldest first) in seating order: the
    first seat's player (the captain, at six seats) first, then the others."""
    age = {m.player: rank for rank, t in enumerate(tickets) for m in t.members}

    def by_rating(m: Member) -> tuple[float, int, str]:
        return (-m.rating, age[m.player], m.player)

    parties = [t for t in tickets if len(t.members) >= 2]
    if parties:  # a team of three or fewer holds at most one party of two or more
        party = parties[0]
        others = sorted((m for t in tickets if t is not party for m in t.members), key=by_rating)
        return [party.members[0], *sorted(party.members[1:], key=by_rating), *others]
    return sorted((m for t in tickets for m in t.members), key=by_rating)


def form_tables(
    queue: Sequence[QueuedTicket],
    now: float,
    policy: MatchPolicy = MatchPolicy(),
    stats: MatchStats | None = None,
) -> list[Table]:
    """Form as many valid tables as this round can; see the module docstring.

    Returns the tables in the order they were formed (by the age of the ticket
    each was formed around). Raises ``ValueError`` for a malformed queue: a
    table size other than 2, 4 or 6, one options key queued for two sizes, a
    party of 0 or more than its team size, a ticket id or a player queued
    twice, a non-finite rating or enqueue time. O(n log n) in the number of
    tickets.
    """
    _validate(queue)
    if not math.isfinite(now):
        raise ValueError("now must be finite")
    counter = stats if stats is not None else MatchStats()
    tickets = sorted(queue, key=lambda t: (t.enqueued_at, t.ticket))  # index = age rank
    n = len(tickets)
    sizes = [len(t.members) for t in tickets]
    sums = [math.fsum(m.rating for m in t.members) for t in tickets]
    means = [s / k for s, k in zip(sums, sizes, strict=True)]
    lows = [min(m.rating for m in t.members) for t in tickets]
    highs = [max(m.rating for m in t.members) for t in tickets]

    members_by_group: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for i, t in enumerate(tickets):
        members_by_group.setdefault(t.options, ([], [], []))[sizes[i] - 1].append(i)
    buckets: dict[str, tuple[_Bucket, _Bucket, _Bucket]] = {
        key: (_Bucket(lists[0], means), _Bucket(lists[1], means), _Bucket(lists[2], means))
        for key, lists in members_by_group.items()
    }
    position = [0] * n
    for group in buckets.values():
        for bucket in group:
            for p, i in enumerate(bucket.items):
                position[i] = p

    used = [False] * n
    tables: list[Table] = []
    for anchor in range(n):
        if used[anchor]:
            continue
        counter.anchors += 1
        group = buckets[tickets[anchor].options]
        seat_count = tickets[anchor].seats
        team_size = seat_count // 2
        target = means[anchor]
        wanted = _CANDIDATES[seat_count]
        candidates = [
            group[k].nearest(target, wanted[k], anchor, counter) if wanted[k] else []
            for k in range(3)
        ]
        best: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        best_key: tuple[int, float, float, tuple[int, ...]] | None = None
        # Six seats: pairs still needing a solo, beyond solos (at four a pair is a
        # whole team and needs nobody; at two there are no pairs).
        deficit = group[1].alive - group[0].alive if team_size == 3 else 0
        for (need1, need2, need3), splits in _COMPOSITIONS[seat_count, sizes[anchor]]:
            if (
                len(candidates[0]) < need1
                or len(candidates[1]) < need2
                or len(candidates[2]) < need3
            ):
                continue
            solos_used = need1 + (sizes[anchor] == 1)
            pairs_used = need2 + (sizes[anchor] == 2)
            starve = (
                max(0, deficit + solos_used - pairs_used) - max(0, deficit) if team_size == 3 else 0
            )
            if best_key is not None and starve > best_key[0]:
                continue
            for solos in combinations(candidates[0], need1):
                for pairs in combinations(candidates[1], need2):
                    for triples in combinations(candidates[2], need3):
                        chosen = (anchor, *solos, *pairs, *triples)
                        weights = [sums[i] for i in chosen]
                        total = math.fsum(weights)
                        split_gap = math.inf
                        split: tuple[int, ...] = ()
                        for candidate_split in splits:
                            side = 0.0
                            for j in candidate_split:
                                side += weights[j]
                            gap = abs(2.0 * side - total) / team_size
                            if gap < split_gap:
                                split_gap, split = gap, candidate_split
                        counter.candidate_evaluations += len(splits)
                        allowance = policy.allowed_gap(now - tickets[min(chosen)].enqueued_at)
                        if split_gap > allowance + _SLACK or (
                            best_key is not None
                            and starve == best_key[0]
                            and split_gap > best_key[1] + _SLACK
                        ):
                            continue
                        side_a = [m for j in split for m in tickets[chosen[j]].members]
                        side_b = [
                            m
                            for j in range(len(chosen))
                            if j not in split
                            for m in tickets[chosen[j]].members
                        ]
                        exact = _gap(side_a, side_b)
                        if exact > allowance:
                            continue
                        spread = max(highs[i] for i in chosen) - min(lows[i] for i in chosen)
                        key = (starve, exact, spread, tuple(sorted(chosen)))
                        if best_key is None or key < best_key:
                            best_key, best = key, (chosen, split)
        if best is None:
            continue
        chosen, split = best
        oldest = min(chosen)
        team_x = [chosen[j] for j in split]
        team_y = [i for i in chosen if i not in team_x]
        team_a, team_b = (team_x, team_y) if oldest in team_x else (team_y, team_x)
        seats: list[Member | None] = [None] * seat_count
        for team, indices in enumerate((team_a, team_b)):
            ordered = _seat_team([tickets[i] for i in sorted(indices)])
            for seat, member in zip(TABLE_SEATS[seat_count][team], ordered, strict=True):
                seats[seat] = member
        seated = tuple(m for m in seats if m is not None)
        assert len(seated) == seat_count
        group = buckets[tickets[anchor].options]
        for i in chosen:
            used[i] = True
            group[sizes[i] - 1].remove(position[i])
        tables.append(
            Table(
                options=tickets[anchor].options,
                seats=seated,
                tickets=tuple(tickets[i].ticket for i in sorted(chosen)),
                rating_gap=_gap(seated[0::2], seated[1::2]),
            )
        )
    return tables
