"""``python -m truc_game``: run the game server (see :mod:`truc_game.server`)."""

import sys

from .server import main

sys.exit(main())
