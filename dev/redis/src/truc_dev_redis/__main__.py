"""``python -m truc_dev_redis``: run one bundled Redis in the foreground."""

import sys

from . import main

sys.exit(main())
