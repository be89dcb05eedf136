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
from typing import TYPE_CHECKING, Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.base import PARTIAL_SET
from pyrego.runtime.helpers import MISS, rt_get
from pyrego.runtime.values import equal, freeze, thaw

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import RuleNode

_SCALARS = (str, int, float, bool, type(None))


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


def _may_match(pattern: Any, value: Any) -> bool:
    """Whether a key of ``pattern``'s shape can unify with ``value``."""
    if pattern is None:
        return True
    tp = type(pattern)
    if tp is tuple:
        return equal(pattern[0], value)
    if tp is list:
        return type(value) is list and len(value) == len(pattern) and all(_may_match(p, v) for p, v in zip(pattern, value))
    if type(value) is not dict or len(value) != len(pattern):
        return False
    return all(k in value and _may_match(p, value[k]) for k, p in pattern.items())


def skips_rules(node: RuleNode) -> bool:
    """Whether a membership lookup in ``node``'s partial set can skip one of its rules."""
    return node.kind == PARTIAL_SET and node.default is None and any(_pattern(r.head.key) is not None for r in node.rules)


def member_reader_name(gen: ModuleGen, node: RuleNode) -> str:
    """The name of ``SM<id>(ctx, key)``: ``data.<node>[key]`` (the member, or
    UNDEF), running only the rules whose key can be ``key``."""
    name = f"SM{node.id}"
    if name not in gen.namespace:
        keys = {f"D{node.id}_{i}": _pattern(rule.head.key) for i, rule in enumerate(node.rules)}
        gen.namespace[name] = _member_reader(weakref.ref(gen), gen.namespace, node.id, keys)
    return name


def _member_reader(gen_ref: Callable[[], ModuleGen | None], namespace: dict[str, Any], node_id: int, keys: dict[str, Any]) -> Callable[[Any, Any], Any]:
    whole = f"R{node_id}"

    def read(ctx: Any, key: Any) -> Any:
        c = ctx.cache
        value = c.get(node_id, MISS)
        if value is not MISS:  # (evaluated whole, or replaced by ``with``)
            return rt_get(value, key)
        gen = gen_ref()
        if gen is not None:
            gen.load(whole)  # (a deferred rule is planned on its first read)
        wrapper = gen.wrappers.get(whole) if gen is not None else None
        if wrapper is None or wrapper.kind != "set":
            return rt_get(namespace[whole](ctx), key)
        memo = (whole, key if type(key) is str else freeze(key))
        found = c.get(memo, MISS)
        if found is MISS:
            acc: set[Any] = set()
            plain = key if type(key) in _SCALARS else thaw(freeze(key))
            for d in wrapper.defs:
                if _may_match(keys.get(d), plain):
                    namespace[d](ctx, acc)
            found = c[memo] = rt_get(acc, key)
        return found

    return read


__all__ = ["member_reader_name", "skips_rules"]
