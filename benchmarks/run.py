#!/usr/bin/env python
"""Run pyrego's benchmark suite: ``python benchmarks/run.py [--quick] [options]``.

See benchmarks/README.md; ``--help`` lists the options.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from pyrego.bench.cli import main
except ImportError:  # not installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from pyrego.bench.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
