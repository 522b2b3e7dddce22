"""``make run``: start Redis, the game service and the lobby, then play a whole
match of scripted clients through them, printed as it happens.

``make run RULESET=french_truc`` (``tools/run.py --ruleset french_truc``) plays
a match of that rule set instead of Truc y Flou: a table of its size (two
clients for French and Sackson Truc, four for partnership and Catalan Truc).
``make run PLAY=1`` (``tools/run.py --play``) starts the same services and lets
a human take one seat in the terminal against bots (:mod:`truc_client.terminal`),
of the rule set ``RULESET`` names too.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from stack import running_stack
from truc_client import terminal
from truc_client.demo import play_demo_match
from truc_telemetry.logs import redacted_url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--play", action="store_true", help="take one seat in the terminal")
    parser.add_argument(
        "--ruleset",
        default="truc_y_flou",
        choices=terminal.RULE_SETS,
        help="the game of the family (default truc_y_flou)",
    )
    args, play_args = parser.parse_known_args(argv)
    with running_stack(game_port=0, lobby_port=0, quiet=True) as (addresses, _):
        print(
            f"services up: game {addresses.game}, lobby {addresses.lobby},"
            f" redis {redacted_url(addresses.redis)}",
            flush=True,
        )
        if args.play:
            return terminal.main(
                [
                    "--lobby",
                    addresses.lobby,
                    "--game",
                    addresses.game,
                    "--ruleset",
                    args.ruleset,
                    *play_args,
                ]
            )
        options = terminal.rule_options(args.ruleset)
        return asyncio.run(
            play_demo_match(addresses.lobby, addresses.game, out=sys.stdout, options=options)
        )


if __name__ == "__main__":
    sys.exit(main())
