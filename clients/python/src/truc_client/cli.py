"""The ``truc`` command.

* ``truc scenario FILE...`` plays scenario files against the engine, prints one
  result object per scenario as a JSON line, and exits 1 if any expectation
  does not hold (the differences go to stderr), 2 if a file is malformed.
  With ``--via HOST:PORT`` it plays them through a running game service instead
  (see :mod:`truc_client.remote_scenarios`).
* ``truc demo [--seed N] [--ruleset NAME]`` plays a seeded match between engine
  bots and prints it as it happens.
* ``truc play --lobby HOST:PORT --game HOST:PORT [--ruleset NAME]`` takes one
  seat of a match of any rule set (``truc_y_flou``, ``french_truc``,
  ``sackson_truc``, ``partnership_truc``, ``catalan_truc``) in the terminal
  against bots, over a ``Play`` session (:mod:`truc_client.terminal`;
  ``truc play -h``).
* ``truc load [flags]`` drives scripted players through a running lobby and
  game service and measures them, over ``Play`` sessions unless ``--transport
  unary`` (:mod:`truc_client.load`; ``truc load --help``).

Scenario files are read by :mod:`truc_client.scenarios` (pydantic: every error
names the field) and played by the runner core of the rules library
(:mod:`truc_rules.scenario`). The game service itself is started with
``make serve`` or the ``truc-game`` command of the game service's package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import grpc

from truc_protocol.tokens import DEV_SECRET
from truc_rules.rule_set import RuleSet
from truc_rules.scenario import ScenarioError, run_scenario

from .engine_demo import play_demo
from .remote_scenarios import run_scenario_via
from .scenarios import parse_scenario

__all__ = ["main"]


def _scenario(paths: Sequence[str], via: str | None, secret: str | None) -> int:
    channel = None
    if via is not None:
        channel = grpc.insecure_channel(via)
        secret = secret or os.environ.get("TRUC_JWT_SECRET") or DEV_SECRET
    status = 0
    for path in paths:
        try:
            scenario = parse_scenario(json.loads(Path(path).read_text(encoding="utf-8")))
            if channel is None:
                run = run_scenario(scenario)
            else:
                assert secret is not None
                run = run_scenario_via(scenario, channel, secret=secret)
        except (OSError, ValueError) as exc:  # JSON errors and ScenarioError are ValueErrors
            kind = "malformed scenario" if isinstance(exc, ScenarioError) else "cannot read"
            print(f"ERROR {path}: {kind}: {exc}", file=sys.stderr)
            status = 2
            continue
        print(json.dumps(run.result.to_json(), ensure_ascii=False))
        if run.problems:
            print(f"FAIL {path}: {run.result.name}", file=sys.stderr)
            for problem in run.problems:
                print(f"  {problem}", file=sys.stderr)
            status = max(status, 1)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="truc", description="Tools of the Truc family of games.")
    commands = parser.add_subparsers(dest="command", required=True)
    scenario = commands.add_parser("scenario", help="play scenario files against the engine")
    scenario.add_argument("files", nargs="+", metavar="FILE")
    scenario.add_argument(
        "--via",
        metavar="HOST:PORT",
        help="play through a running game service (started with TRUC_ALLOW_FIXED_DEALS=1)",
    )
    scenario.add_argument(
        "--secret", help="the service's JWT secret (default: $TRUC_JWT_SECRET, else the dev key)"
    )
    commands.add_parser(
        "load",
        help="drive scripted players through a running lobby and game service, and measure",
        add_help=False,
    )
    demo = commands.add_parser("demo", help="play a seeded match between engine bots")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--hands", type=int, default=0, help="stop after this many hands (0: all)")
    demo.add_argument(
        "--ruleset",
        default=RuleSet.TRUC_Y_FLOU.value,
        choices=[r.value for r in RuleSet],
        help="the game of the family (default truc_y_flou)",
    )
    commands.add_parser(
        "play",
        help="take one seat of a match in the terminal (--ruleset NAME: any game of the family)",
        add_help=False,
    )
    args, rest = parser.parse_known_args(argv)
    if args.command == "play":
        from truc_client.terminal import main as play  # noqa: PLC0415 (imports rich)

        return play(rest)
    if args.command == "load":
        from truc_client.load import main as load  # noqa: PLC0415 (only this command needs it)

        return load(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "scenario":
        return _scenario(args.files, args.via, args.secret)
    return play_demo(
        seed=args.seed, max_hands=args.hands, out=sys.stdout, rule_set=RuleSet(args.ruleset)
    )


if __name__ == "__main__":
    sys.exit(main())
