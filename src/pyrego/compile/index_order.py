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
every input (:meth:`RuleIndex.walk_order`); a function of one value stops
at its first definition that succeeds (codegen.tiers), as a complete rule
does. Where the order of two definitions depends on the input (requiring
different members of one collection, ``"a" in input.roles``; an ``else``
branch or a value of ``x in [...]`` placed on both sides of another
definition), the code looks OPA's index up at each evaluation
(``rt_first_found``): only there, since that costs more than the rule itself.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.base import FUNCTION, RuleNode, iter_rule_chain
from pyrego.compile.eval_order import NEVER_FAILS
from pyrego.compile.index_guards import node_index
from pyrego.compile.rule_index import one_constant_value

#: Calls that can neither raise nor print once their operands are evaluated:
#: eval_order's builtins that never fail, print aside (what it prints shows the order).
_QUIET_CALLS = NEVER_FAILS - {"print"}


def definition_order(node: RuleNode, root: RuleNode, arity: Callable[[str], int | None]) -> tuple[tuple[int, ...] | None, bool]:
    """Where ``node`` has one constant value and a body can raise or print:
    the positions of its definitions in the order OPA tries them, where that
    order is fixed and not the source order (else None), and whether the
    input decides it (no one order serves every input: it is then looked up
    per evaluation). Elsewhere (None, False)."""
    if len(node.rules) < 2 or not one_constant_value(node):
        return None, False
    chains = [iter_rule_chain(rule) for rule in node.rules]
    noisy = [any(_may_raise(b.body) or _may_raise(b.head.value) for b in chain) for chain in chains]
    if not any(noisy):
        return None, False
    index = node_index(node, root, arity)
    if index is None:
        return None, False  # (a body OPA's form cannot be made of: the source order)
    order, input_decides = index.walk_order(noisy.__getitem__)
    if order is None:
        return None, True
    return (None if order == list(range(len(chains))) else tuple(order)), input_decides


def merged_order(node: RuleNode, root: RuleNode, arity: Callable[[str], int | None]) -> list[int | str] | None:
    """The order in which OPA evaluates a partial object's own definitions
    (``o[k] := v``, by position) and its children's documents (``o[null] :=
    0``, by child name) where it differs from pyrego's (its own, then each
    child), and a body can raise or print; else None.

    OPA's rule tree holds a rule with only constants in its path below the
    node (a child), yet a node with rules of its own is indexed, and its
    whole document evaluated, with the rules below it: its own first, then
    each child's (in Go's map order, which varies; taken here in the order of
    the children's names). The index returns those it does not test first,
    so an untested child can come before the node's own definitions."""
    children = [(name, child) for name, child in sorted(node.children.items()) if child.kind != FUNCTION]
    rules = list(node.rules)
    owner: list[int | str] = list(range(len(rules)))
    for name, child in children:
        for below in child.walk():
            if below.kind != FUNCTION:
                rules += below.rules
                owner += [name] * len(below.rules)
    if len(rules) == len(node.rules):
        return None
    if not any(_may_raise(b.body) or _may_raise(b.head) for rule in rules for b in iter_rule_chain(rule)):
        return None
    index = node_index(RuleNode(node.path, -1, node.kind, rules), root, arity)
    if index is None:
        return None
    order: list[int | str] = []
    for position in index.order():
        item = owner[position]
        if item not in order:
            order.append(item)
    usual: list[int | str] = [*range(len(node.rules)), *[name for name, _ in children]]
    if order == [item for item in usual if item in order]:
        return None  # (its own first, then the children: as pyrego does)
    return order


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


__all__ = ["definition_order", "merged_order"]
