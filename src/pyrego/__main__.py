"""``python -m pyrego``: the command line (see :mod:`pyrego.cli`)."""

import sys

from pyrego.cli import main

sys.exit(main())
