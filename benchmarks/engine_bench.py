"""Engine benchmark (``make bench``): the pure rules engine on one core.

Prints random legal actions applied per second (listing the legal actions
before every step), full hands per second, the size of the stored state and
the time of an encode + decode round trip, and the cost of a per-seat view.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from truc_rules import (
    Action,
    GameState,
    PlayCard,
    SendDirective,
    SendSignal,
    apply_action,
    decode_state,
    encode_state,
    legal_actions,
    new_game,
    view_for,
)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
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

    figures = {
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
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)


if __name__ == "__main__":
    main()
