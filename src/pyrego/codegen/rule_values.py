"""How a document's (or a function's) definitions combine into one value:
OPA's conflict text, where a conflict is reported (the definition, or the
``else`` branch that gave the differing value), and the test of whether
OPA's rule index stops at the first value for an evaluation."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pyrego.ast import nodes as ast
from pyrego.compile.base import FUNCTION, RuleNode, iter_rule_chain
from pyrego.compile.index_guards import early_exit_test, program_can_conflict
from pyrego.compile.rule_index import one_constant_value
from pyrego.errors import RegoError, RegoUnsafeVarError
from pyrego.runtime.definitions import ElseLocations

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen


def conflict_message(node: RuleNode) -> str:
    """OPA's conflict text, with the rule's name so users can find it."""
    if node.kind == FUNCTION:
        return f"functions must not produce multiple outputs for same inputs (function {node.name} produced conflicting values for the same inputs)"
    return f"complete rules must not produce multiple outputs (rule {node.name} produced conflicting values)"


def each_definition(make: Callable[[int, ast.Rule], str], rules: Sequence[ast.Rule]) -> tuple[str, ...]:
    """``make(i, rule)`` for every definition of a document; the unsafe
    variables of each are reported, not only the first's (OPA checks the
    safety of every rule), the first raised with all in its ``errors``."""
    from pyrego.compile.rule_checks import raise_all

    made: list[str] = []
    unsafe: list[RegoError] = []
    for i, rule in enumerate(rules):
        try:
            made.append(make(i, rule))
        except RegoUnsafeVarError as err:
            unsafe.extend(getattr(err, "errors", None) or [err])
    raise_all(unsafe)
    return tuple(made)


def conflict_locations(gen: ModuleGen, node: RuleNode, order: tuple[int, ...]) -> tuple[Any, ...]:
    """Where a conflict with each of ``node``'s definitions (in ``order``)
    is reported: where the differing value came from, as in OPA: the
    definition's location, or for one with ``else`` branches the branch's
    (found by a copy of the definition giving its branch's position with
    its value, which runs only then: ElseLocations)."""
    out: list[Any] = []
    for i in order:
        rule = node.rules[i]
        chain = iter_rule_chain(rule)
        if len(chain) == 1 or len(order) < 2 or not gen.index_lookups:
            out.append(rule.location)
            continue
        # (named after the definitions: D<id>_<n + i>)
        which = gen.definition_or_closure(node, _with_branch_numbers(rule), len(node.rules) + i)
        out.append(ElseLocations(gen.namespace, which, tuple(b.location for b in chain)))
    return tuple(out)


def _with_branch_numbers(rule: ast.Rule, n: int = 0) -> ast.Rule:
    """``rule`` (an ``else`` chain) with each branch's value ``v`` made ``[n, v]``, n its position."""
    value = rule.head.value
    assert value is not None
    head = dataclasses.replace(rule.head, value=ast.Array((ast.Scalar(n), value), value.location))
    rest = _with_branch_numbers(rule.else_, n + 1) if rule.else_ is not None else None
    return dataclasses.replace(rule, head=head, else_=rest)


def early_exit_name(gen: ModuleGen, node: RuleNode, order: tuple[int, ...], input_decides: bool) -> str | None:
    """The constant holding the test of whether OPA's index makes ``node``
    (a complete document or function computing all its definitions, in
    ``order``) stop at its first value for an evaluation (see
    rt_all_defs_early); None where nothing but a value can come of a
    definition OPA skips. ``input_decides``: whether the input decides the
    order of ``node``'s definitions of one value (ModuleGen.definitions)."""
    if not gen.index_lookups:
        return None
    if one_constant_value(node):
        # (OPA stops at the first that succeeds: its order matters where it
        # depends on the input, and a body can raise or print)
        if not input_decides:
            return None
    elif not (gen.strict_errors or program_can_conflict(gen.tree.root)):
        return None
    exits = early_exit_test(node, gen.tree.root, gen.arity, order)
    return gen.const(exits) if exits is not None else None


__all__ = ["conflict_locations", "conflict_message", "each_definition", "early_exit_name"]
