"""``make run``: start Redis, the game service and the lobby, then play a whole
match of scripted clients through them, told hand by hand.

``make run ARGS="..."`` passes ``ARGS`` to this script (``tools/run.py``):

* rule options, as ``truc play`` takes them (one definition,
  :func:`truc_client.terminal.add_rule_arguments`): ``--ruleset NAME`` (a
  table of that game: two clients for French and Sackson Truc, four for
  partnership and Catalan Truc, six for Truc y Flou), ``--target-score N``,
  ``--manches N``, ``--seats N``, ``--trick-order``, ``--perique-trick-rank``,
  ``--play-out-all-tricks``, ``--ace-value``, ``--responder``, ``--cut``.
  They are checked as the service checks them (an option the rule set does
  not have, or a value it refuses, is an error naming the option; exit 2);
* ``--pace SECONDS``: the pause after each hand (default ``$RUN_PACE``, else
  1; 0 prints the match at once).

``make run PLAY=1`` (``--play``) starts the same services and lets a human
take one seat in the terminal against bots (:mod:`truc_client.terminal`), with
the same rule options and any other ``truc play`` option (``--name``,
``--bot-think``...). ``RULESET=NAME`` is ``--ruleset NAME``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from stack import running_stack
from truc_client import terminal
from truc_client.demo import play_demo_match
from truc_protocol.errors import InvalidArgument
from truc_telemetry.logs import redacted_url

DEFAULT_PACE = 1.0


def _pace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seconds, a number (not {text!r})") from None
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"0 to 60 seconds (not {text})")
    return value


def _default_pace() -> float:
    text = os.environ.get("RUN_PACE", "")
    if not text:
        return DEFAULT_PACE
    try:
        return _pace(text)
    except argparse.ArgumentTypeError as error:
        raise SystemExit(f"run.py: RUN_PACE: {error}") from None


def _without(argv: list[str], flag: str, *, takes_value: bool) -> list[str]:
    """``argv`` without ``flag`` (and its value): what goes on to ``truc play``."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == flag:
            skip = takes_value
        elif not (takes_value and arg.startswith(flag + "=")):
            kept.append(arg)
    return kept


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--play", action="store_true", help="take one seat in the terminal")
    parser.add_argument(
        "--pace",
        type=_pace,
        default=None,
        metavar="SECONDS",
        help=f"pause after each hand (default $RUN_PACE, else {DEFAULT_PACE:g})",
    )
    terminal.add_rule_arguments(parser)
    args, play_args = parser.parse_known_args(argv)
    if play_args and not args.play:
        parser.error(f"unrecognized arguments: {' '.join(play_args)}")
    try:
        options, _ = terminal.checked_options(args)
    except InvalidArgument as error:
        print(f"run.py: {terminal.option_problem(error)}", file=sys.stderr)
        return 2
    pace = args.pace if args.pace is not None else _default_pace()
    with running_stack(game_port=0, lobby_port=0, quiet=True) as (addresses, _):
        print(
            f"services up: game {addresses.game}, lobby {addresses.lobby},"
            f" redis {redacted_url(addresses.redis)}",
            flush=True,
        )
        if args.play:
            rest = _without(_without(argv, "--play", takes_value=False), "--pace", takes_value=True)
            return terminal.main(["--lobby", addresses.lobby, "--game", addresses.game, *rest])
        return asyncio.run(
            play_demo_match(
                addresses.lobby, addresses.game, out=sys.stdout, options=options, pace=pace
            )
        )


if __name__ == "__main__":
    sys.exit(main())
