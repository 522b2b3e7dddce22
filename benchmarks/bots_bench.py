"""Bots benchmark: the heuristic policy against random play, per rule set.

Plays ``--matches`` (500) whole matches per rule set in this process: the
engine (:mod:`truc_rules.registry`), each seat's view through the protocol's
converter (the ``truc.v1.GameView`` the service would send, which is all a
policy sees) and the policies of :mod:`truc_bots` (:mod:`truc_bots.arena`).
The heuristic holds team A's seats in even matches and team B's in odd ones.
Prints, per rule set, the heuristic's win rate, matches and actions per
second, and the average actions of a match; ``--json`` writes them too.

    .venv/bin/python benchmarks/bots_bench.py [--matches 500] [--rule-sets french_truc ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from truc_bots import HeuristicPolicy, RandomPolicy
from truc_bots.arena import duel
from truc_rules.registry import options_from_mapping, seat_count
from truc_rules.rule_set import RuleSet

TABLES = (
    "french_truc",
    "sackson_truc",
    "partnership_truc",
    "catalan_truc",
    "catalan_truc:2",
)
"""The tables measured by default: every variants.md rule set (``catalan_truc:2``
is Catalan Truc at two seats). ``truc_y_flou`` may be named too."""


def _options(table: str) -> tuple[RuleSet, dict[str, object]]:
    name, _, seats = table.partition(":")
    values: dict[str, object] = {"seats": int(seats)} if seats else {}
    return RuleSet(name), values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=500, help="matches per rule set")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rule-sets",
        nargs="+",
        default=list(TABLES),
        metavar="NAME[:SEATS]",
        help=f"the tables to measure (default: {' '.join(TABLES)})",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    figures: dict[str, dict[str, float]] = {}
    print(f"heuristic vs random, {args.matches} matches per rule set")
    for table in args.rule_sets:
        rule_set, values = _options(table)
        options = options_from_mapping(rule_set, values)
        result = duel(HeuristicPolicy, RandomPolicy, options, args.matches, seed=args.seed)
        figures[table] = {
            "seats": seat_count(options),
            "matches": result.matches,
            "wins": result.wins,
            "win_rate": round(result.rate, 4),
            "matches_per_second": round(result.per_second, 2),
            "actions_per_second": round(result.actions / result.seconds, 1),
            "actions_per_match": round(result.actions / result.matches, 1),
        }
        print(
            f"  {table:<18} {seat_count(options)} seats  heuristic wins "
            f"{result.wins:>4}/{result.matches} = {result.rate:6.1%}   "
            f"{result.per_second:6.1f} matches/s  "
            f"{result.actions / result.seconds:7.0f} actions/s  "
            f"{result.actions / result.matches:5.0f} actions/match",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
