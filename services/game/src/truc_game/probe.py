"""``python -m truc_game.probe [ADDRESS]``: the container health check.

Exits 0 if and only if the game service at ADDRESS (default ``127.0.0.1:50051``)
answers gRPC health SERVING (which it does only while Redis answers too); see
:mod:`truc_client.probe`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from truc_client import probe

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    return probe.main(argv, prog="truc_game.probe", default_address="127.0.0.1:50051")


if __name__ == "__main__":
    sys.exit(main())
