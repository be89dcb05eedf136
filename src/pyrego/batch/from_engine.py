"""A :class:`~pyrego.batch.prepared.PreparedRule` from an engine's compiled program."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyrego.batch.prepared import PreparedRule
from pyrego.engine_support import ProgramSource, rule_path
from pyrego.errors import ArgumentError
from pyrego.runtime.values import UNDEF


def prepare_from_engine(engine: ProgramSource, path: str) -> PreparedRule:
    """A :class:`PreparedRule` for ``path`` of ``engine``: compiles the policies
    now (raising their compile errors) and resolves the rule once."""
    parts = rule_path(path)
    compiled = engine.program()
    program = compiled.code
    name = program.rule_functions.get(parts)  # type: ignore[arg-type]
    eval_rule = getattr(engine, "eval_rule", None)
    if name is None:
        if eval_rule is None:
            raise ArgumentError(f"{path} is not a rule")

        def by_engine(value: Any) -> Any:
            return eval_rule(path, input=value)

        return PreparedRule(None, (), UNDEF, compiled.context, compiled.attach_source, fallback=by_engine)
    program.function(name)  # compiled now: evaluations find the real function
    entry = program.entry(name)
    refresh = None
    if entry is None:  # not hot yet: the memoising function (its memo is fresh per input)
        entry = (program.namespace[name], (), UNDEF)

        def refresh() -> tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any] | None:
            return program.entry(name)

    def where() -> Any:
        node = program.tree.nodes.get(parts)  # type: ignore[arg-type]
        rule = (node.rules[0] if node.rules else node.default) if node is not None else None
        return rule.location if rule is not None else None

    return PreparedRule(entry[0], entry[1], entry[2], compiled.context, compiled.attach_source, refresh, where=where)


__all__ = ["prepare_from_engine"]
