"""``make run``: start Redis, the game service and the lobby, then play a whole
match of six scripted clients through them, printed as it happens.

``make run PLAY=1`` (``tools/run.py --play``) starts the same services and lets
a human take one seat in the terminal against five bots (:mod:`truc_client.terminal`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from stack import running_stack
from truc_client import terminal
from truc_client.demo import play_demo_match


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--play", action="store_true", help="take one seat in the terminal")
    args, play_args = parser.parse_known_args(argv)
    with running_stack(game_port=0, lobby_port=0, quiet=True) as (addresses, _):
        print(
            f"services up: game {addresses.game}, lobby {addresses.lobby}, redis {addresses.redis}",
            flush=True,
        )
        if args.play:
            return terminal.main(["--lobby", addresses.lobby, "--game", addresses.game, *play_args])
        return asyncio.run(play_demo_match(addresses.lobby, addresses.game, out=sys.stdout))


if __name__ == "__main__":
    sys.exit(main())
