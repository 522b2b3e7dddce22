"""``python -m truc_lobby``: run the lobby (see :mod:`truc_lobby.server`)."""

import sys

from .server import main

sys.exit(main())
