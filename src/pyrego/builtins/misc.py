"""Runtime and tracing builtins: ``opa.runtime``, ``trace``, ``internal.test_case``."""

from __future__ import annotations

import os
from typing import Any

from pyrego.builtins.registry import builtin, operand_error

VERSION = "1.20.2"


@builtin("opa.runtime", 0, needs_context=True)
def opa_runtime(ctx: Any) -> dict[str, Any]:
    """Runtime information: the engine's ``runtime`` option, else an empty object.

    As with OPA embedded as a library, nothing about the host (environment
    variables, version) is exposed unless the embedding program supplies it
    (``Engine.set_runtime(...)``; the CLI does, like ``opa eval``)."""
    configured = ctx.options.get("runtime") if ctx is not None else None
    if type(configured) is dict:
        return configured
    return {}


def cli_runtime() -> dict[str, Any]:
    """What ``opa eval`` reports from ``opa.runtime()``: environment and version."""
    return {"env": dict(os.environ), "version": VERSION, "commit": ""}


@builtin("trace", 1, needs_context=True)
def trace(ctx: Any, note: Any) -> bool:
    """Record a note for tracing (OPA's explain output); always true."""
    if type(note) is not str:
        raise operand_error(1, note, "string")
    if ctx is not None:
        notes = ctx.cache_for("trace").setdefault("notes", [])
        notes.append(note)
    return True


@builtin("internal.test_case", 1)
def internal_test_case(case: Any) -> bool:
    """Marks a parameterised test case for ``opa test`` (no effect on evaluation)."""
    return True
