"""Matchmaking benchmark: one round of the pure matcher over a large queue.

Queues ``--players`` players (default 10,000) as tickets of mixed party sizes
(half solo, a third pairs, a sixth parties of three, by ticket), ratings
N(1500, 300) clipped to 800-2200, ``--keys`` rule-option keys, enqueue times
spread over the last minute. Prints the tables formed, the tickets matched per
second of matcher time (best of ``--repeat`` rounds on the same queue), the
work counters and the rating gaps produced.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from truc_lobby.matchmaking import MatchPolicy, MatchStats, Member, QueuedTicket, form_tables


def make_queue(players: int, keys: int, seed: int) -> list[QueuedTicket]:
    rng = random.Random(seed)
    queue: list[QueuedTicket] = []
    seated = 0
    while seated < players:
        size = min(rng.choice((1, 1, 1, 2, 2, 3)), players - seated)
        members = tuple(
            Member(f"p{seated + k}", min(2200.0, max(800.0, rng.gauss(1500.0, 300.0))))
            for k in range(size)
        )
        queue.append(
            QueuedTicket(
                ticket=f"t{len(queue)}",
                members=members,
                options=f"options-{rng.randrange(keys)}",
                enqueued_at=rng.uniform(0.0, 60.0),
            )
        )
        seated += size
    return queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--keys", type=int, default=3, help="distinct rule-option keys")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    queue = make_queue(args.players, args.keys, args.seed)
    now = 60.0
    policy = MatchPolicy()
    best = float("inf")
    stats = MatchStats()
    tables = []
    for _ in range(args.repeat):
        stats = MatchStats()
        start = time.perf_counter()
        tables = form_tables(queue, now, policy, stats)
        best = min(best, time.perf_counter() - start)

    tickets = sum(len(t.tickets) for t in tables)
    gaps = [t.rating_gap for t in tables]
    sizes = [len(t.members) for t in queue]
    figures = {
        "players_queued": args.players,
        "tickets_queued": len(queue),
        "tables_formed": len(tables),
        "tickets_matched": tickets,
        "players_seated": 6 * len(tables),
        "round_seconds": round(best, 4),
        "tickets_matched_per_second": round(tickets / best),
        "players_seated_per_second": round(6 * len(tables) / best),
        "mean_rating_gap": round(statistics.fmean(gaps), 3) if gaps else 0.0,
        "p99_rating_gap": round(sorted(gaps)[int(0.99 * (len(gaps) - 1))], 3) if gaps else 0.0,
        "max_rating_gap": round(max(gaps), 3) if gaps else 0.0,
        "anchors": stats.anchors,
        "candidate_evaluations": stats.candidate_evaluations,
        "index_probes": stats.index_probes,
    }
    print(
        f"matchmaking: {args.players:,} players queued in {len(queue):,} tickets "
        f"(solo/pair/trio {sizes.count(1)}/{sizes.count(2)}/{sizes.count(3)}), "
        f"{args.keys} option keys, best of {args.repeat} rounds"
    )
    print(f"  round time, ms                 {best * 1e3:>10.1f}")
    print(f"  tables formed                  {len(tables):>10,}")
    print(f"  tickets matched                {tickets:>10,}")
    print(f"  players seated                 {6 * len(tables):>10,}")
    print(f"  tickets matched/s              {figures['tickets_matched_per_second']:>10,}")
    print(f"  players seated/s               {figures['players_seated_per_second']:>10,}")
    print(f"  rating gap mean / p99 / max    {figures['mean_rating_gap']:>10} / ", end="")
    print(f"{figures['p99_rating_gap']} / {figures['max_rating_gap']}")
    print(f"  anchors / team splits / probes {stats.anchors:>10,} / ", end="")
    print(f"{stats.candidate_evaluations:,} / {stats.index_probes:,}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)


if __name__ == "__main__":
    main()
