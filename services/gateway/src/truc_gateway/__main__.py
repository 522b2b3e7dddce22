"""``python -m truc_gateway``: run the gateway (see :mod:`truc_gateway.server`)."""

import sys

from .server import main

sys.exit(main())
