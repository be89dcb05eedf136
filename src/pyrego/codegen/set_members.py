"""Membership lookups in a partial set that run only the rules that can match.

OPA reads ``data.p.s[k]`` for a known ``k`` (a constant, or a variable
bound before) by evaluating each of the set's rules with its head's key
unified with ``k`` first: a rule whose key is a constant other than ``k``
is never evaluated, so its body's errors (strict builtin errors, a
conflicting function it calls) do not reach the lookup. ``k in data.p.s``
and every other read of the set evaluate all of its rules.

The reader here does that where the set has a rule with a constant key: the
whole set where this evaluation has it already (or a ``with`` put it in
place), else only the rules whose key is not a constant other than ``k``.
(Rules with variable keys run with the key unbound, as before.)
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import PARTIAL_SET
from pyrego.runtime.members import member_reader

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import RuleNode

def _pattern(term: ast.Term | None) -> Any:
    """What a rule's key says of the members it can add: a scalar constant,
    a list or dict of such patterns (arrays, objects with constant keys),
    or None for any value (a variable, a call, ...)."""
    if type(term) is ast.Scalar:
        return (term.value,)
    if type(term) is ast.Array:
        return [_pattern(t) for t in term.items]
    if type(term) is ast.Object:
        keys = [k for k, _ in term.items if isinstance(k, ast.Scalar)]
        if len(keys) == len(term.items):
            return {k.value: _pattern(v) for k, (_, v) in zip(keys, term.items)}
    return None


def skips_rules(node: RuleNode) -> bool:
    """Whether a membership lookup in ``node``'s partial set can skip one of its rules."""
    return node.kind == PARTIAL_SET and node.default is None and any(_pattern(r.head.key) is not None for r in node.rules)


def member_reader_name(gen: ModuleGen, node: RuleNode) -> str:
    """The name of ``SM<id>(ctx, key)``: ``data.<node>[key]`` (the member, or
    UNDEF), running only the rules whose key can be ``key``."""
    name = f"SM{node.id}"
    if name not in gen.namespace:
        keys = {f"D{node.id}_{i}": _pattern(rule.head.key) for i, rule in enumerate(node.rules)}
        gen.member_readers[name] = keys
        gen_ref = weakref.ref(gen)
        whole = f"R{node.id}"

        def definitions() -> tuple[str, ...] | None:
            gen = gen_ref()
            if gen is None:
                return None
            gen.load(whole)  # (a deferred rule is planned on its first read)
            wrapper = gen.wrappers.get(whole)
            return wrapper.defs if wrapper is not None and wrapper.kind == "set" else None

        gen.namespace[name] = member_reader(gen.namespace, node.id, definitions, keys)
    return name


def plain_pattern(pattern: Any) -> bool:
    """Whether a key pattern is written as it is by ``repr`` (what an artifact holds)."""
    if pattern is None:
        return True
    if type(pattern) is tuple:
        return type(pattern[0]) in (str, int, bool, type(None))
    if type(pattern) is list:
        return all(plain_pattern(p) for p in pattern)
    return all(type(k) is str and plain_pattern(p) for k, p in pattern.items())


__all__ = ["member_reader_name", "plain_pattern", "skips_rules"]
