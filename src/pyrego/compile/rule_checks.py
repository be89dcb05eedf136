"""Every recursive rule and every unsafe variable of a rule head, as OPA's compiler reports them.

The compiler stops at the first cycle it meets; OPA reports them all. When
the compiler finds one, these functions work out the whole list in OPA's
words, for the compiler to raise (the first error, with all of them, up to
OPA's ten, in ``errors``):

- ``rule data.p.a is recursive: data.p.a -> data.p.b -> data.p.a`` for each
  rule on a cycle, at that rule (OPA's CheckRecursion);
- ``var x is unsafe`` for a head's variable its body does not bind (OPA's
  CheckSafetyRuleHeads).

Rule conflicts are :mod:`pyrego.compile.rule_conflicts`. Errors are ordered
by location (OPA walks its rule tree in map order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree, Uses, ground_prefix
from pyrego.compile.checks import first_with_all, import_name
from pyrego.compile.graph import node_dependencies
from pyrego.compile.head_terms import needs_eval
from pyrego.compile.local_vars import all_vars
from pyrego.compile.safety import stmt_vars, term_vars, unsafe_var_message
from pyrego.errors import Location, RegoError, RegoRecursionError, RegoUnsafeVarError

__all__ = ["head_safety_errors", "raise_all", "recursion_errors"]


def raise_all(errors: list[RegoError], *, sort: bool = True) -> None:
    """Raise ``errors`` (ordered by location unless ``sort`` is false), cut at
    OPA's limit, if there are any."""
    if errors:
        raise first_with_all(errors, sort=sort)


def _rule_name(rule: ast.Rule) -> str:
    head = rule.head.ref.head
    return head.name if type(head) is ast.Var else ""


def head_safety_errors(
    modules: Sequence[ast.Module], packages: Sequence[tuple[str, ...]], var_free: dict[int, ast.Rule] | None = None
) -> list[RegoError]:
    """OPA's CheckSafetyRuleHeads: a variable of a rule's head (key, value, ref)
    that neither its arguments nor its body (outside closures) mention is
    unsafe, reported at the rule before any unsafe variable of a body.
    ``var_free``: rules known to have no local variable (CompiledTree.var_free_rules)."""
    rule_names: dict[tuple[str, ...], set[str]] = {}  # (made for the first head that has a variable)
    errors: list[RegoError] = []
    for module, pkg in sorted(zip(modules, packages), key=lambda mp: mp[0].file):
        globals_: set[str] | None = None  # (made for the first head that has a variable)
        for rule in module.rules:
            branch: ast.Rule | None = rule
            while branch is not None:
                head = branch.head
                # Most heads hold no variable at all (``allow if``, ``x := 1``):
                # a value that is a scalar, no key, a path of scalars.
                path = head.ref.path
                if (head.key is not None or type(head.value) is not ast.Scalar or (path and any(type(p) is ast.Var for p in path))) and (
                    var_free is None or var_free.get(id(branch)) is not branch
                ):
                    if globals_ is None:
                        if not rule_names:
                            for m, p in zip(modules, packages):
                                rule_names.setdefault(p, set()).update([_rule_name(r) for r in m.rules])
                        globals_ = rule_names[pkg] | {import_name(i) for i in module.imports} | {"input", "data"}
                    errors.extend(_unsafe_head_vars(branch, globals_))
                branch = branch.else_
    return errors


def _unsafe_head_vars(rule: ast.Rule, globals_: set[str]) -> list[RegoError]:
    head = rule.head
    # Terms that need evaluating (refs, calls, closures) are moved into the
    # body by OPA before this check: their variables count as the body's.
    in_head: set[str] = set()
    evaluated: list[ast.Term] = []
    for t in (head.key, head.value, *head.ref.path):
        if t is None or type(t) is ast.Scalar:
            continue
        if needs_eval(t):
            evaluated.append(t)
        else:
            all_vars(t, in_head)
    candidates = list(in_head - globals_)
    if not candidates:
        return []  # (most heads: nothing that could be unsafe, no need to walk the body)
    safe: set[str] = set()
    for a in head.args or ():
        all_vars(a, safe)
    for e in rule.body:  # closures left out, as OPA's safety visitor leaves them
        stmt_vars(e.statement, safe)
        for w in e.with_mods:
            term_vars(w.value, safe)
    for t in evaluated:
        term_vars(t, safe)
    unsafe = sorted(v for v in candidates if v not in safe)
    return [RegoUnsafeVarError(unsafe_var_message(v), rule.location) for v in unsafe]


def _rule_uses(rule: ast.Rule) -> Uses:
    """The calls and the refs rooted at ``data`` in one branch of a resolved
    rule (its head and body: each ``else`` branch is a rule of its own in
    OPA's graph, which a rule reading this document depends on)."""
    calls: list[ast.Call] = []
    refs: list[ast.Ref] = []
    stack: list[object] = [rule.head, rule.body]
    while stack:
        x = stack.pop()
        if x is None or isinstance(x, (str, int, float, bool, Location)):
            continue
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, ast.Call):
            calls.append(x)
        elif isinstance(x, ast.Ref) and isinstance(x.head, ast.Var) and x.head.name == "data":
            refs.append(x)
        slots = getattr(type(x), "__slots__", ())
        stack.extend(getattr(x, f) for f in slots if f != "location")
    return Uses(calls, refs)


def recursion_errors(tree: CompiledTree, uses: dict[int, Uses]) -> list[RegoError]:
    """An error for every rule that, through the rules it reads, reads itself."""
    by_id = {n.id: n for n in tree.nodes.values()}
    memo: dict[tuple[Any, ...], list[int]] = {}
    graph = {nid: node_dependencies(tree, node_uses, memo) for nid, node_uses in uses.items()}
    errors: list[RegoError] = []
    label = _RuleLabels(tree)
    for node in tree.nodes.values():
        for rule in node.rules:
            branch: ast.Rule | None = rule
            while branch is not None:
                for dep in sorted(node_dependencies(tree, _rule_uses(branch), memo)):
                    back = _path(graph, dep, node.id)
                    if back is not None:
                        own = label.of_rule(node.name, branch)
                        names = " -> ".join([own] + [label.of_node(by_id[i]) for i in back[:-1]] + [own])
                        errors.append(RegoRecursionError(f"rule {own} is recursive: {names}", branch.location))
                        break
                branch = branch.else_
    return errors


class _RuleLabels:
    """A rule as OPA's recursion errors name it: its ref, with the variables
    in it renamed as OPA's compiler renames local variables
    (``data.p.f[__local2__]`` for ``f[x] := 1 if { some x in xs }``)."""

    def __init__(self, tree: CompiledTree) -> None:
        self.tree = tree
        self.numbers: Any = None

    def of_node(self, node: Any) -> str:
        return self.of_rule(node.name, node.rules[0]) if node.rules else node.name

    def of_rule(self, name: str, rule: ast.Rule) -> str:
        suffix = ground_prefix(rule.head.ref.path)[1]
        if not suffix or rule.head.args is not None:
            return name
        from pyrego.compile.void_calls import opa_term_text
        from pyrego.typecheck.some_vars import LocalVarNumbers

        if self.numbers is None:
            self.numbers = LocalVarNumbers(self.tree)
        return name + opa_term_text(ast.Ref(ast.Var("x"), suffix), self.numbers.shown_name)[1:]


def _path(graph: dict[int, set[int]], start: int, goal: int) -> list[int] | None:
    """The first path (in id order) from ``start`` to ``goal``, both included."""
    if start == goal:
        return [start]
    seen = {start}
    stack: list[tuple[int, list[int]]] = [(start, [start])]
    while stack:
        nid, path = stack.pop()
        for dep in sorted(graph.get(nid, ()), reverse=True):
            if dep == goal:
                return [*path, dep]
            if dep not in seen:
                seen.add(dep)
                stack.append((dep, [*path, dep]))
    return None
