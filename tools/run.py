"""``make run``: start Redis, the game service and the lobby, then play a whole
match of six scripted clients through them, printed as it happens."""

from __future__ import annotations

import asyncio
import sys

from stack import running_stack
from truc_client.demo import play_demo_match


def main() -> int:
    with running_stack(game_port=0, lobby_port=0, quiet=True) as (addresses, _):
        print(
            f"services up: game {addresses.game}, lobby {addresses.lobby}, redis {addresses.redis}",
            flush=True,
        )
        return asyncio.run(play_demo_match(addresses.lobby, addresses.game, out=sys.stdout))


if __name__ == "__main__":
    sys.exit(main())
