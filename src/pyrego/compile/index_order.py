"""The order in which OPA tries the definitions of a document of one value.

Where every definition of a complete rule or function (``else`` branches
included) has the same constant value, OPA stops at the first definition that
succeeds ("early exit"), trying them in the order its rule index
(:mod:`pyrego.compile.rule_index`) returns them: definitions its index does
not test (no indexed condition, or a ``print`` in the body) first, then down
the trie, those without a condition on a ref before those requiring it
defined, before those requiring a value of it. A definition that raises (a
builtin error, a conflict in a rule it reads) or prints therefore raises or
prints in OPA only where no definition before it in that order succeeds.

pyrego's code tries definitions in the order it is given them: for such
documents, where a body can raise or print (elsewhere the order changes
nothing but speed), it is given them in OPA's order where one order serves
every input (:meth:`RuleIndex.static_order`); a function of one value stops
at its first definition that succeeds (codegen.tiers), as a complete rule
does. Where the order of two definitions depends on the input (requiring
different members of one collection, ``"a" in input.roles``; an ``else``
branch or a value of ``x in [...]`` placed on both sides of another
definition) those two keep their source order: looking the index up at each
evaluation would cost more than the rule itself, and would keep a prepared
rule from becoming one function of the input.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from pyrego.ast import nodes as ast
from pyrego.compile.base import RuleNode, iter_rule_chain
from pyrego.compile.index_guards import data_is_virtual
from pyrego.compile.opa_form import OpaForm, PieceTable
from pyrego.compile.rule_index import IndexedRule, RuleIndex, head_value, one_constant_value
from pyrego.compile.safety import reorder_body, stmt_vars, term_vars
from pyrego.errors import RegoError

#: Calls that cannot raise when their operands are evaluated (comparisons, membership).
_QUIET_CALLS = frozenset({"equal", "neq", "lt", "gt", "lte", "gte", "internal.member_2"})


T = TypeVar("T")


def in_opa_order(node: RuleNode, defs: tuple[T, ...], root: RuleNode, arity: Callable[[str], int | None]) -> tuple[T, ...]:
    """``defs`` (one per definition of ``node``, in source order) in the order
    OPA tries them, where that can change an answer (:func:`definition_order`)."""
    if len(defs) < 2:
        return defs
    order = definition_order(node, root, arity)
    return defs if order is None else tuple(defs[i] for i in order)


def definition_order(node: RuleNode, root: RuleNode, arity: Callable[[str], int | None]) -> tuple[int, ...] | None:
    """The positions of ``node``'s definitions in the order OPA tries them,
    where ``node`` has one constant value, a body can raise or print, and
    that order is fixed and not the source order; else None."""
    if len(node.rules) < 2 or not one_constant_value(node):
        return None
    chains = [iter_rule_chain(rule) for rule in node.rules]
    noisy = [any(_may_raise(b.body) or _may_raise(b.head.value) for b in chain) for chain in chains]
    if not any(noisy):
        return None
    form = OpaForm(PieceTable(), lambda _file: None)
    indexed: list[IndexedRule] = []
    for c, chain in enumerate(chains):
        for b, branch in enumerate(chain):
            body = _opa_body(form, branch, b > 0, arity)
            if body is None:
                return None  # (a body OPA's form cannot be made of: the source order)
            has, ground, value = head_value(branch)
            indexed.append(IndexedRule(c, b, body, tuple(branch.head.args or ()), True, has, ground, value))
    index = RuleIndex(indexed, lambda path: data_is_virtual(root, path))
    order = index.static_order(noisy.__getitem__)
    if order is None or order == list(range(len(chains))):
        return None
    return tuple(order)


def _may_raise(node: Any) -> bool:
    """Whether a branch (or a part of one) calls anything but a comparison,
    reads ``data`` (a rule there can raise) or has a ``with``: anything that
    may raise (under strict builtin errors) or print."""
    t = type(node)
    if t is ast.Scalar or t is ast.Var:
        return False
    if t is ast.Call and node.op not in _QUIET_CALLS:
        return True
    if t is ast.Expr and node.with_mods:
        return True
    if t is ast.Ref and type(node.head) is ast.Var and node.head.name == "data":
        return True
    if t is tuple or t is list:
        return any(_may_raise(x) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(_may_raise(getattr(node, f)) for f in fields if f != "location")


def _has_call(node: Any) -> bool:
    if type(node) is ast.Call:
        return True
    if type(node) is tuple:
        return any(_has_call(x) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(_has_call(getattr(node, f)) for f in fields if f != "location")


def _opa_body(form: OpaForm, rule: ast.Rule, else_branch: bool, arity: Callable[[str], int | None]) -> ast.Body | None:
    """The branch's body as OPA's compiler leaves it (its index reads that form;
    None where it cannot be made)."""
    head_calls = _has_call(rule.head.value) or _has_call(rule.head.key)
    if not rule.body and not head_calls:
        return ()
    bound: set[str] = set()
    for a in rule.head.args or ():
        term_vars(a, bound)
    try:
        split = form.split(form.rule(rule, else_branch=else_branch).body if head_calls else rule.body)
        own = set(bound).union(*[stmt_vars(e.statement, set()) for e in split])
        ordered, _ = reorder_body(split, set(bound), own, arity, bind_operands=False)
        return form.bind(ordered)
    except (RegoError, RecursionError):
        return None


__all__ = ["definition_order", "in_opa_order", "one_constant_value"]
