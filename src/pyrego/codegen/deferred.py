"""Rules planned on their first call instead of when the program is built.

A fresh engine on a never-seen policy usually evaluates one rule, which
reads a few others; the rest (helpers of other decisions, rules a failing
body never reaches) would be planned into closures (:mod:`pyrego.codegen.closures`)
for nothing (in the ACI policies, 2,000 lines, a query reaches a few of the
84 documents deferred here). So a document whose rules have the shapes
checked here gets no plan at build: its function ``R<id>`` (``F<id>``) is the
generator's stand-in, which plans it (closures, or code where the planner
declines) on its first call and puts the real function in its place (see
``ModuleGen.load``). That happens under the program's load lock, checked
again once held: threads making the first call at once wait for the one
that plans, then call what it made; the table ends with one plan.

Compile errors must not move to evaluation. The code generator is where
body safety is checked (OPA's ``check_safety``): planning a rule, or
writing its code, orders each body and raises when a variable cannot be
bound. A rule is deferred only where that outcome is settled at build
without planning it:

- its bodies (every definition, every ``else`` branch) hold no ``with`` and
  no ``rego.metadata.*`` call (the planner reads the annotations then), and
  no statement with variables holds a nested body (comprehensions,
  ``every``) or a pattern (an array or object with variables on one side of
  ``=``, ``:=`` or in ``some ... in``); a function's arguments are plain
  variables;
- each body that is not already in order is ordered here, with the
  arguments the planner gives :func:`reorder_body` (the same order and
  bound variables the code generator finds). What the planner would work
  out again (the order, each expression's variables) is kept for it in
  ``ModuleGen.body_orders``, keyed by the body, until the rule is planned.

Such a rule's only compile error is an unsafe variable that
:func:`reorder_body` reports; a rule for which it reports one, or that has
another shape, is planned at build as before, and the generator raises its
errors with their usual text and order. Defaults with variables
(``default_value``'s check) and documents with parts defined at several
levels are never deferred.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.codegen.closures import LONGEST_BODY, order_body
from pyrego.compile.base import COMPLETE, FUNCTION, PARTIAL_OBJECT, PARTIAL_SET, RuleNode, iter_rule_chain, rule_suffix
from pyrego.compile.ground import is_ground
from pyrego.compile.safety import ROOTS, term_vars
from pyrego.errors import RegoError

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen

#: Whether rules may be planned on first call (a switch for tests).
ENABLED = True

_COMPOSITES = (ast.Array, ast.Object, ast.SetTerm)
# Calls the planner evaluates itself, from the policy's annotations: reading
# them can raise a compile error (a NaN in METADATA), which must not wait for
# the rule's first call.
_READ_WHEN_PLANNED = frozenset(("rego.metadata.chain", "rego.metadata.rule"))
_NO_VARS: frozenset[str] = frozenset()


def can_defer(gen: ModuleGen, node: RuleNode) -> bool:
    """Whether ``node``'s document may be planned on its first call: its rules
    can raise no compile error but the unsafe variables checked here (and
    they have none). Orders the bodies that need it, for the planner."""
    kind = node.kind
    if kind == COMPLETE:
        default = node.default
        if default is not None and not (default.head.value is not None and is_ground(default.head.value)):
            return False
    elif kind == PARTIAL_SET or kind == PARTIAL_OBJECT:
        if node.default is not None or (kind == PARTIAL_OBJECT and gen._rules_below_children(node)):
            return False
    elif kind == FUNCTION:
        if node.default is not None:
            return False
    else:
        return False
    orders: dict[int, Any] = {}
    # (Name resolution found no comprehension and no rego.* call in the
    # rules: no term of theirs needs the search for one.)
    nested = gen.tree.nested_nodes
    plain = nested is not None and node.id not in nested
    try:
        for rule in node.rules:
            chain = iter_rule_chain(rule)
            if len(chain) > 1 and kind != COMPLETE and kind != FUNCTION:
                return False
            if sum(len(r.body) for r in chain) > LONGEST_BODY:
                return False
            for branch in chain:
                if not _branch_settled(gen, node, branch, orders, plain):
                    return False
    except RegoError:
        return False  # (planned at build, where the generator reports it)
    gen.body_orders.update(orders)
    return True


def _branch_settled(gen: ModuleGen, node: RuleNode, rule: ast.Rule, orders: dict[int, Any], plain: bool) -> bool:
    """``plain``: no term of ``rule`` holds a comprehension or a call the
    planner evaluates itself (see _plain)."""
    head = rule.head
    bound: set[str] = set()
    required: set[str] = set()
    body = rule.body
    var_free = gen.tree.var_free_rules
    if plain and head.args is None and var_free is not None and var_free.get(id(rule)) is rule:
        # (No variable in head or body: no pattern, nothing the head needs bound.)
        for e in body:
            if e.with_mods:
                return False
        ordered, own, outer = order_body(gen, body, bound, set(), required, head.location)
        orders[id(body)] = (frozenset(), frozenset(), body, ordered, own, outer)
        return True
    if node.kind == FUNCTION:
        for a in head.args or ():
            if type(a) is not ast.Var or a.name in ROOTS:
                return False
            bound.add(a.name)
    elif head.args:
        return False
    for t in (head.key, head.value, *rule_suffix(0, rule)):
        if t is not None and type(t) is not ast.Scalar:
            if not plain and not _plain(t):
                return False
            term_vars(t, required)
    for e in body:
        if e.with_mods:
            return False
        if plain and type(e.statement) is ast.Call:
            continue  # (a call's operands are no pattern: nothing to check)
        if not _plain_statement(e.statement, plain):
            return False
    # As the planner orders it: an unsafe variable raises here.
    ordered, own, outer = order_body(gen, body, bound, set(bound), required, head.location)
    # What the planner would work out again (see closures._Planner.body).
    orders[id(body)] = (frozenset(bound), frozenset(required), body, ordered, own, outer)
    return True


def _plain_statement(s: Any, plain: bool) -> bool:
    """No nested body and no pattern in statement ``s`` (``plain``: its terms
    are known to hold no comprehension and no call the planner evaluates)."""
    t = type(s)
    if t is ast.Assign or t is ast.Unify:
        for side in (s.lhs, s.rhs):
            if type(side) in _COMPOSITES and term_vars(side, set()):
                return False
        return plain or (_plain(s.lhs) and _plain(s.rhs))
    if t is ast.SomeIn:
        for p in (s.key, s.value):
            if p is not None and type(p) is not ast.Var and (not (plain or _plain(p)) or term_vars(p, set())):
                return False
        return plain or _plain(s.collection)
    if t is ast.SomeVars:
        return True
    if t is ast.Every:
        return False
    return plain or _plain(s)


def _plain(t: Any) -> bool:
    """Whether term ``t`` holds no comprehension (no body inside it) and no
    call the planner evaluates itself."""
    tt = type(t)
    if tt is ast.Scalar or tt is ast.Var:
        return True
    if tt is ast.Ref:
        if not _plain(t.head):
            return False
        items: Any = t.path
    elif tt is ast.Call:
        if t.op in _READ_WHEN_PLANNED:
            return False
        items = t.args
    elif tt is ast.Array or tt is ast.SetTerm:
        items = t.items
    elif tt is ast.Object:
        for k, v in t.items:
            if not (_plain(k) and _plain(v)):
                return False
        return True
    elif tt is ast.TemplateString:
        items = [p for p in t.parts if type(p) is not str]
    else:
        return False  # (comprehensions)
    for x in items:
        if type(x) is not ast.Scalar and not _plain(x):
            return False
    return True


def plan(gen: ModuleGen, name: str, closures: bool) -> None:
    """Plan deferred document ``name``: its closures (``closures``; else its
    code only), its chunk and wrapper, and the functions its code reads that
    were not made yet (materializers). Under the program's load lock."""
    node = gen.deferred.get(name)
    if node is None:
        return
    saved, gen.closures = gen.closures, closures and gen.closures
    lines = gen.lines
    start = len(lines)
    try:
        wrapper = gen.rule_node(node)
    finally:
        gen.closures = saved
    gen.chunks[name] = lines[start:]
    del lines[start:]
    for rule in node.rules:
        for branch in iter_rule_chain(rule):
            gen.body_orders.pop(id(branch.body), None)  # (planned: the order is not needed again)
    if wrapper is not None:
        gen.wrappers[name] = wrapper
    del gen.deferred[name]
    gen.flush_materializers()  # (kept in lines: shown with the source)
    if len(lines) > start:
        gen.exec_lines(lines[start:])


__all__ = ["ENABLED", "can_defer", "plan"]
