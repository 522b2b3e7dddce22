"""The ``truc`` command.

* ``truc scenario FILE...`` plays scenario files against the engine, prints one
  result object per scenario as a JSON line, and exits 1 if any expectation
  does not hold (the differences go to stderr), 2 if a file is malformed.
* ``truc demo [--seed N]`` plays a seeded match between engine bots and prints
  it as it happens.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .demo import play_demo
from .scenarios import ScenarioError, run_scenario

__all__ = ["main"]


def _scenario(paths: Sequence[str]) -> int:
    status = 0
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            run = run_scenario(doc)
        except (OSError, ValueError) as exc:  # JSON errors and ScenarioError are ValueErrors
            kind = "malformed scenario" if isinstance(exc, ScenarioError) else "cannot read"
            print(f"ERROR {path}: {kind}: {exc}", file=sys.stderr)
            status = 2
            continue
        print(json.dumps(run.result, ensure_ascii=False))
        if run.problems:
            print(f"FAIL {path}: {run.result['name']}", file=sys.stderr)
            for problem in run.problems:
                print(f"  {problem}", file=sys.stderr)
            status = max(status, 1)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="truc", description="Truc y Flou tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    scenario = commands.add_parser("scenario", help="play scenario files against the engine")
    scenario.add_argument("files", nargs="+", metavar="FILE")
    demo = commands.add_parser("demo", help="play a seeded match between engine bots")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--hands", type=int, default=0, help="stop after this many hands (0: all)")
    args = parser.parse_args(argv)
    if args.command == "scenario":
        return _scenario(args.files)
    return play_demo(seed=args.seed, max_hands=args.hands, out=sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
