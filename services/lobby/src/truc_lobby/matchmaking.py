"""Matchmaking: turn a queue of tickets into six-seat tables of two teams of three.

A *ticket* is one player or a party of two or three friends (the leader
first) with an opaque rule-options key. One call of :func:`form_tables` is one
matchmaking round: it is pure (no clock, no I/O, no randomness; ``now`` is a
parameter) and deterministic (the same queue, in any order, gives the same
tables).

Table shape (rules §1.1-1.2). Team A sits at seats 0, 2, 4 and team B at
seats 1, 3, 5; the captains sit at seat 0 (A) and seat 3 (B). A team is a party
of three, a party of two with one solo player, or three solo players, so a
table is one of six compositions: 3|3, 3|2+1, 3|1+1+1, 2+1|2+1, 2+1|1+1+1 and
1+1+1|1+1+1. A party is never split and always sits on one team. On each team
the captain is the leader of the team's party (party of two or three), else the
team's highest-rated player (ties: the older ticket, then the player id); the
two other seats follow in play order (A: 2 then 4; B: 5 then 1) with the
captain's party-mates first, then the others, each by rating in the same way.
Team A is the team holding the table's oldest ticket.

Balance. The gap of a table is ``|mean(A) - mean(B)|`` over the six player
ratings. A table is valid when its gap is at most
``policy.allowed_gap(now - enqueued_at of the table's oldest ticket)``: the
allowance starts at ``base_gap`` and widens with the waiting time up to
``max_gap``. Among the valid tables tried for an anchor the matcher keeps, in
this order of preference: one that does not use up solo players the group's
pairs still need (a pair can only sit with a solo, so a table of six solos
while pairs outnumber the spare solos would strand pairs), then the smallest
gap, then the smallest rating spread, then the oldest tickets.

Algorithm, per round:

1. Sort the tickets by age (``enqueued_at``, then ticket id) and group them by
   options key; inside a group, bucket them by party size (1, 2, 3) and sort
   each bucket by mean rating (ties by age). Each bucket has two "next unused
   position" arrays (left and right), a union-find with path compression, so
   that matched tickets are skipped without rescanning them.
2. Take each still unmatched ticket as the *anchor*, oldest first. Look up,
   with one ``bisect`` per bucket, the unmatched tickets whose mean rating is
   nearest the anchor's: at most 6 solos, 3 pairs and 2 parties of three (the
   most any composition needs, so the nearest ones of every kind are always
   among them).
3. Try every composition that contains the anchor, with every choice of the
   needed tickets among those candidates, and every split of the six players
   into two teams that keeps parties whole (at most 10 splits). Keep the best
   valid table; if there is one, seat it and mark its tickets used.

Complexity: O(n log n) per call in the number n of queued tickets. Sorting
and grouping cost O(n log n). Each anchor costs one ``bisect`` per bucket
(O(log n)), at most 6 + 3 + 2 + 1 + 6 nearest-unused look-ups in the
union-find (the candidates, the skipped anchor and the two starting points
per bucket; amortised O(log n) each with path compression, however many
tickets are matched in between), and a constant number of candidate
evaluations (at most 372 team splits, independent of n). There are at most n anchors and
each ticket is marked used once. The optional :class:`MatchStats` counts the
anchors, the team splits evaluated and the union-find steps, so tests can check
the bound by counting work rather than timing it.

Guarantees:

* Every table has six distinct players of one options key in two teams of
  three; each ticket is used at most once and its members sit together on one
  team; the gap is within the policy for the table's oldest ticket; captains
  follow the rule above.
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
malformed queue (a player in two tickets, say) is rejected with ``ValueError``
rather than matched around.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

__all__ = [
    "CAPTAIN_SEATS",
    "TEAM_SEATS",
    "MatchPolicy",
    "MatchStats",
    "Member",
    "QueuedTicket",
    "Table",
    "form_tables",
]

#: Seats of each team in seating order: the captain first, then play order.
TEAM_SEATS: tuple[tuple[int, int, int], tuple[int, int, int]] = ((0, 2, 4), (3, 5, 1))
#: The captain's seat of team A (0) and team B (1).
CAPTAIN_SEATS: tuple[int, int] = (0, 3)

# How many nearest unmatched tickets of each party size (1, 2, 3) an anchor
# looks at: the most any composition needs (five solos, two pairs, one party of
# three besides the anchor) plus one spare solo for balancing.
_CANDIDATES: tuple[int, int, int] = (6, 3, 2)

# Full tables as counts of (solos, pairs, parties of three).
_TABLE_COUNTS: tuple[tuple[int, int, int], ...] = (
    (0, 0, 2),  # 3 | 3
    (1, 1, 1),  # 3 | 2+1
    (3, 0, 1),  # 3 | 1+1+1
    (2, 2, 0),  # 2+1 | 2+1
    (4, 1, 0),  # 2+1 | 1+1+1
    (6, 0, 0),  # 1+1+1 | 1+1+1
)

# Search slack for the fast (rounded) gap before the exact check.
_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class Member:
    """One player of a ticket and their rating."""

    player: str
    rating: float


@dataclass(frozen=True, slots=True)
class QueuedTicket:
    """A queued ticket: one to three players who must sit on one team."""

    ticket: str
    members: tuple[Member, ...]  # 1-3, the leader first
    options: str  # an opaque key: tickets match only with equal keys
    enqueued_at: float  # seconds


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
    """A formed table: six seated players, the tickets used and the rating gap."""

    options: str
    seats: tuple[Member, ...]  # six, seat 0..5
    tickets: tuple[str, ...]  # the tickets seated here, oldest first
    rating_gap: float  # |mean(team A) - mean(team B)|

    @staticmethod
    def team(seat: int) -> int:
        """The team of a seat: 0 for team A (seats 0, 2, 4), 1 for team B (1, 3, 5)."""
        if not 0 <= seat < 6:
            raise ValueError(f"no seat {seat} at a six-seat table")
        return seat % 2

    def team_members(self, team: int) -> tuple[Member, Member, Member]:
        """The members of team 0 (A) or 1 (B), the captain first, then play order."""
        first, second, third = TEAM_SEATS[team]
        return self.seats[first], self.seats[second], self.seats[third]

    def captain(self, team: int) -> Member:
        """The captain of team 0 (A, seat 0) or 1 (B, seat 3)."""
        return self.seats[CAPTAIN_SEATS[team]]

    def mean_rating(self, team: int) -> float:
        """The mean rating of team 0 (A) or 1 (B)."""
        return _mean(self.team_members(team))


@dataclass(slots=True)
class MatchStats:
    """Work counters of :func:`form_tables` (added to, so one object can sum rounds)."""

    anchors: int = 0  # tickets taken as anchor
    candidate_evaluations: int = 0  # team splits of six players evaluated
    index_probes: int = 0  # bisects and union-find steps in the rating index


def _mean(members: Sequence[Member]) -> float:
    # fsum is exactly rounded, so the result does not depend on the order.
    return math.fsum(m.rating for m in members) / 3.0


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


def _compositions() -> dict[
    int, tuple[tuple[tuple[int, int, int], tuple[tuple[int, ...], ...]], ...]
]:
    """For each anchor size: (needed solos, pairs, triples; team splits) per composition.

    A chosen set is ordered [anchor, solos..., pairs..., triples...]; a split is
    the positions of the team that holds the anchor (position 0).
    """
    table: dict[int, tuple[tuple[tuple[int, int, int], tuple[tuple[int, ...], ...]], ...]] = {}
    for anchor_size in (1, 2, 3):
        entries: list[tuple[tuple[int, int, int], tuple[tuple[int, ...], ...]]] = []
        for counts in _TABLE_COUNTS:
            if counts[anchor_size - 1] == 0:
                continue
            need = list(counts)
            need[anchor_size - 1] -= 1
            sizes = (anchor_size, *([1] * need[0]), *([2] * need[1]), *([3] * need[2]))
            splits = tuple(
                (0, *chosen)
                for r in range(len(sizes))
                for chosen in combinations(range(1, len(sizes)), r)
                if anchor_size + sum(sizes[j] for j in chosen) == 3
            )
            entries.append(((need[0], need[1], need[2]), splits))
        table[anchor_size] = tuple(entries)
    return table


_COMPOSITIONS = _compositions()


def _validate(queue: Sequence[QueuedTicket]) -> None:
    tickets: set[str] = set()
    players: set[str] = set()
    for t in queue:
        if not 1 <= len(t.members) <= 3:
            raise ValueError(f"ticket {t.ticket!r} has {len(t.members)} members (1-3 allowed)")
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
    """One team's three members (``tickets`` oldest first): the captain first,
    then the two other seats."""
    age = {m.player: rank for rank, t in enumerate(tickets) for m in t.members}

    def by_rating(m: Member) -> tuple[float, int, str]:
        return (-m.rating, age[m.player], m.player)

    parties = [t for t in tickets if len(t.members) >= 2]
    if parties:  # a team of three holds at most one party of two or three
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
    party of 0 or more than 3, a ticket id or a player queued twice, a
    non-finite rating or enqueue time. O(n log n) in the number of tickets.
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
        target = means[anchor]
        candidates = [group[k].nearest(target, _CANDIDATES[k], anchor, counter) for k in range(3)]
        best: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        best_key: tuple[int, float, float, tuple[int, ...]] | None = None
        deficit = group[1].alive - group[0].alive  # pairs still needing a solo, beyond solos
        for (need1, need2, need3), splits in _COMPOSITIONS[sizes[anchor]]:
            if (
                len(candidates[0]) < need1
                or len(candidates[1]) < need2
                or len(candidates[2]) < need3
            ):
                continue
            solos_used = need1 + (sizes[anchor] == 1)
            pairs_used = need2 + (sizes[anchor] == 2)
            starve = max(0, deficit + solos_used - pairs_used) - max(0, deficit)
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
                            gap = abs(2.0 * side - total) / 3.0
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
        seats: list[Member | None] = [None] * 6
        for team, indices in enumerate((team_a, team_b)):
            ordered = _seat_team([tickets[i] for i in sorted(indices)])
            for seat, member in zip(TEAM_SEATS[team], ordered, strict=True):
                seats[seat] = member
        seated = tuple(m for m in seats if m is not None)
        assert len(seated) == 6
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
