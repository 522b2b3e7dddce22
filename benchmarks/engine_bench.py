"""Engine benchmark (``make bench``): the pure rules engine on one core.

Prints random legal actions applied per second (listing the legal actions
before every step), full hands per second, the size of the stored state and
the time of an encode + decode round trip, and the cost of a per-seat view.

Then, for every rule set (Truc y Flou and the four of variants.md), through
:mod:`truc_rules.registry` as the game service calls the engine: random legal
actions per second (legal list + apply; per wall-clock and per CPU second of
the process, which stays meaningful when other work shares the machine),
beside the floor of :data:`ACTIONS_FLOOR`, and the stored state's size,
typical in the middle of a hand (median) and the largest seen in 40 matches.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Final

from truc_rules import (
    Action,
    GameState,
    Phase,
    PlayCard,
    SendDirective,
    SendSignal,
    apply_action,
    decode_state,
    encode_state,
    legal_actions,
    new_game,
    registry,
    view_for,
)
from truc_rules.family import FamilyState
from truc_rules.family import Phase as FamilyPhase
from truc_rules.rule_set import RuleSet

ACTIONS_FLOOR: Final = 50_000
RUNS: Final = 5
"""Timed runs per rule set: the best shows what the engine does on a core of its own."""
"""Random legal actions per second (legal list + apply) each rule set must reach."""


def random_play(seconds: float, seed: int) -> tuple[int, int, int, list[GameState]]:
    """Random legal play for ``seconds``: (actions, hands, matches, sampled states)."""
    rng = random.Random(seed)
    state = new_game(seed=seed).state
    actions = hands = matches = 0
    samples: list[GameState] = []
    deadline = time.perf_counter() + seconds
    while True:
        for _ in range(1000):
            seat = state.to_act
            if seat is None:
                hands += state.hands_played
                matches += 1
                state = new_game(seed=rng.getrandbits(62)).state
                seat = state.to_act
                assert seat is not None
            legal = legal_actions(state, seat)
            plays = [a for a in legal if type(a) is PlayCard]
            action: Action
            if plays and rng.random() < 0.8:
                action = rng.choice(plays)
            else:
                moves = [a for a in legal if not isinstance(a, SendSignal | SendDirective)]
                action = rng.choice(moves)
            state = apply_action(state, seat, action).state
            actions += 1
            if actions % 97 == 0:
                samples.append(state)
        if time.perf_counter() >= deadline:
            return actions, hands + state.hands_played, matches, samples


def choose(rng: random.Random, legal: tuple[Action, ...]) -> Action:
    """As :func:`random_play` chooses: a card 80% of the time when one is legal,
    else any move but a message (which would not pass the turn)."""
    plays = [a for a in legal if type(a) is PlayCard]
    if plays and rng.random() < 0.8:
        return rng.choice(plays)
    return rng.choice([a for a in legal if not isinstance(a, SendSignal | SendDirective)])


def rule_set_play(rule_set: RuleSet, seconds: float, seed: int) -> tuple[int, float, float]:
    """Random legal play of ``rule_set`` through the registry for ``seconds``
    (listing the legal actions before every step): (actions, elapsed seconds,
    CPU seconds of this process: on a busy machine the rate per CPU second is
    what the engine does on a core of its own)."""
    options = registry.default_options(rule_set)
    rng = random.Random(seed)
    state = registry.new_game(options, seed=seed).state
    legal_actions_of = registry.legal_actions
    apply = registry.apply_action
    actions = 0
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            seat = state.to_act
            if seat is None:
                state = registry.new_game(options, seed=rng.getrandbits(62)).state
                seat = state.to_act
                assert seat is not None
            state = apply(state, seat, choose(rng, legal_actions_of(state, seat))).state
            actions += 1
        now = time.perf_counter()
        if now >= deadline:
            return actions, now - start, time.process_time() - cpu


def mid_hand(state: registry.AnyState) -> bool:
    """A hand is under way: a card is on the table or a trick is done."""
    playing = FamilyPhase.PLAY if isinstance(state, FamilyState) else Phase.PLAY
    return state.phase == playing and bool(state.tricks or state.trick_cards)


def state_sizes(rule_set: RuleSet, matches: int, seed: int) -> tuple[float, int, int]:
    """The stored size of every state of ``matches`` random matches (untimed):
    (median mid-hand size, largest seen, states measured)."""
    options = registry.default_options(rule_set)
    rng = random.Random(seed)
    middle: list[int] = []
    largest = 0
    count = 0
    for _ in range(matches):
        state = registry.new_game(options, seed=rng.getrandbits(62)).state
        while True:
            size = len(registry.encode_state(state))
            largest = max(largest, size)
            count += 1
            if mid_hand(state):
                middle.append(size)
            seat = state.to_act
            if seat is None:
                break
            action = choose(rng, registry.legal_actions(state, seat))
            state = registry.apply_action(state, seat, action).state
    return round(float(statistics.median(middle)), 1), largest, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rule-set-seconds", type=float, default=5.0, help="timed play per rule set"
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    start = time.perf_counter()
    actions, hands, matches, samples = random_play(args.seconds, args.seed)
    elapsed = time.perf_counter() - start

    sizes = [len(encode_state(s)) for s in samples]
    blobs = [encode_state(s) for s in samples]
    t0 = time.perf_counter()
    for s in samples:
        decode_state(encode_state(s))
    round_trip_us = (time.perf_counter() - t0) / len(samples) * 1e6
    t0 = time.perf_counter()
    for blob in blobs:
        decode_state(blob)
    decode_us = (time.perf_counter() - t0) / len(blobs) * 1e6
    t0 = time.perf_counter()
    for s in samples:
        view_for(s, s.to_act if s.to_act is not None else 0)
    view_us = (time.perf_counter() - t0) / len(samples) * 1e6

    figures: dict[str, object] = {
        "actions_per_second": round(actions / elapsed),
        "hands_per_second": round(hands / elapsed),
        "matches_per_second": round(matches / elapsed, 1),
        "us_per_action": round(elapsed / actions * 1e6, 2),
        "state_bytes_mean": round(statistics.mean(sizes), 1),
        "state_bytes_max": max(sizes),
        "codec_round_trip_us": round(round_trip_us, 2),
        "decode_us": round(decode_us, 2),
        "view_for_us": round(view_us, 2),
    }
    print(f"engine: {actions:,} random legal actions in {elapsed:.1f} s on one core")
    print(f"  actions/s (legal list + apply) {figures['actions_per_second']:>10,}")
    print(f"  µs per action                  {figures['us_per_action']:>10}")
    print(f"  full hands/s                   {figures['hands_per_second']:>10,}")
    print(f"  matches/s                      {figures['matches_per_second']:>10}")
    print(f"  state size, bytes (mean / max) {figures['state_bytes_mean']:>6} / {max(sizes)}")
    print(f"  encode+decode round trip, µs   {figures['codec_round_trip_us']:>10}")
    print(f"  decode alone, µs               {figures['decode_us']:>10}")
    print(f"  view_for, µs                   {figures['view_for_us']:>10}")

    print(
        f"rule sets: random legal play through truc_rules.registry, {RUNS} runs of "
        f"{args.rule_set_seconds / RUNS:.1f} s each on one core; the best run and the median "
        f"(floor {ACTIONS_FLOOR:,} actions/s: this machine's other work only ever slows a run)"
    )
    print("  rule set          best/s  median/s  per CPU s  µs/action  state bytes mid-hand / max")
    per_rule_set: dict[str, dict[str, float | int | bool]] = {}
    for rule_set in registry.RULE_SETS:
        runs = [
            rule_set_play(rule_set, args.rule_set_seconds / RUNS, args.seed + run)
            for run in range(RUNS)
        ]
        rates = sorted(done / spent for done, spent, _cpu in runs)
        best, median = round(rates[-1]), round(statistics.median(rates))
        cpu_rate = round(max(done / cpu for done, _spent, cpu in runs))
        typical, largest, _measured = state_sizes(rule_set, 40, args.seed)
        per_rule_set[rule_set.value] = {
            "actions_per_second": best,
            "actions_per_second_median": median,
            "actions_per_cpu_second": cpu_rate,
            "us_per_action": round(1e6 / best, 2),
            "state_bytes_mid_hand": typical,
            "state_bytes_max": largest,
            "meets_floor": max(best, cpu_rate) >= ACTIONS_FLOOR,
        }
        verdict = "" if max(best, cpu_rate) >= ACTIONS_FLOOR else "  below the floor"
        print(
            f"  {rule_set.value:<17}{best:>7,}{median:>10,}{cpu_rate:>11,}{1e6 / best:>11.2f}"
            f"{typical:>11g} / {largest}{verdict}"
        )
    figures["rule_sets"] = per_rule_set
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)


if __name__ == "__main__":
    main()
