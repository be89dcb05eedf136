"""Which optional engine capabilities the test runner can use in this build.

Coverage (``Engine.set_enable_coverage`` / ``get_coverage_report``) and the
evaluation trace are engine features that ``--coverage``, ``--threshold``
and ``--explain`` need; the command refuses those flags, with a message,
where the engine lacks them.
"""

from __future__ import annotations


def coverage_available() -> bool:
    from pyrego.engine import Engine

    return all(hasattr(Engine, m) for m in ("set_enable_coverage", "get_coverage_report", "clear_coverage_data"))


def trace_available() -> bool:
    from pyrego.engine import Engine

    return hasattr(Engine, "eval_rule_with_trace")
