"""pyrego's benchmark suite: pyrego against regorus, OPA and rego-cpp, from Python.

Modules: :mod:`.workloads` (the seed, allow-path and ACI workloads, read from
files), :mod:`.engines` (one adapter per engine), :mod:`.runner` (agreement
check and timing over threads and processes), :mod:`.report` (JSON, Markdown,
PNG plots) and :mod:`.cli` (``main(argv)``, behind ``python benchmarks/run.py``
and ``pyrego bench``).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark suite (see :func:`pyrego.bench.cli.main`)."""
    from pyrego.bench.cli import main as cli_main

    return cli_main(argv)


__all__ = ["main"]
