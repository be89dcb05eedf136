"""OPA's rule conflict check (its CheckRuleConflicts stage), over OPA's own rule tree.

OPA holds each rule at the node of its ref's ground prefix: the package, the
rule's name, then the ref's terms up to its first variable (a number is a
key like a string: ``a[1].x := 1`` is held at ``a.1.x``). At each node that
holds rules it reports, in this order of precedence, one error:

- ``rule data.p.a conflicts with:`` followed by a line ``rule <ref> at
  <file>:<row>`` for each rule below the node, when one of the node's rules
  has a ref without variables (``a := 1`` beside ``a.b := 2`` or ``a[k].c``),
  else for each function below it (``a[k] := 1`` beside ``a.b.c(x) := 2``);
- ``conflicting rules data.p.a[k] found`` when its rules are of two kinds
  (``contains`` and ``:=``), two arities, or some have variables in their
  refs and some not (``a := 1`` or ``a contains 1`` beside ``a[k] := 2``);
- ``multiple default rules data.p.a found at x.rego:3, x.rego:5``.

The rule named is the node's last rule (its ref as written, variables
included), the location its first rule's (the default's package for the
last one). Then, for each rule whose ref has no variables, a package whose
path is that ref is refused (``package p.a conflicts with rule a defined at
x.rego:3``). pyrego's own rule tree (:mod:`pyrego.compile.compiler`) keys
documents by strings only, so where it finds nothing it cannot tell apart,
:func:`may_conflict` says so and this check is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import FUNCTION, PARTIAL_OBJECT, CompiledTree, rule_suffix, scalar_key
from pyrego.compile.checks import location_key, ref_text
from pyrego.compile.local_vars import all_vars
from pyrego.compile.safety import is_wildcard
from pyrego.errors import RegoError, RegoTypeError

__all__ = ["may_conflict", "rule_conflict_errors"]


def may_conflict(tree: CompiledTree) -> bool:
    """Whether OPA's check can find anything in ``tree`` (built without a
    conflict): a document of rules without variables in their refs that has
    documents or packages inside it, a partial object of several rules
    (which OPA's tree may hold at several nodes, of different kinds) or with
    a function inside it, or functions with constant keys (``f[1](x)``)."""
    functions: list[tuple[str, ...]] | None = None
    for node in tree.nodes.values():
        if node.kind == PARTIAL_OBJECT:
            if len(node.rules) > 1 or (node.rules and node.default is not None):
                return True
            if node.children:
                if functions is None:
                    functions = [n.path for n in tree.nodes.values() if n.kind == FUNCTION]
                n = len(node.path)
                if any(len(f) > n and f[:n] == node.path for f in functions):
                    return True
        elif node.children and node.has_rules():
            return True
        elif node.kind == FUNCTION and len(node.rules) > 1 and any(rule_suffix(0, r) for r in node.rules):
            return True  # (f[1](x) and f(x): two nodes in OPA's tree)
    return False


class _Node:
    __slots__ = ("children", "rules")

    def __init__(self) -> None:
        self.rules: list[_Held] = []
        self.children: dict[Any, _Node] = {}

    def below(self) -> list[_Held]:
        """The rules of the nodes below this one, parents before children."""
        out: list[_Held] = []
        stack = list(reversed(self.children.values()))
        while stack:
            node = stack.pop()
            out.extend(node.rules)
            stack.extend(reversed(node.children.values()))
        return out


class _Held:
    """A rule with what OPA compares it by."""

    __slots__ = ("arity", "ground", "module", "multi", "order", "pkg", "rule", "sort_key")

    def __init__(self, rule: ast.Rule, pkg: tuple[str, ...], module: ast.Module, order: int) -> None:
        head = rule.head
        self.rule, self.pkg, self.module, self.order = rule, pkg, module, order
        self.ground = all(type(p) is ast.Scalar for p in head.ref.path)
        self.multi = head.args is None and head.key is not None and head.value is None
        self.arity = len(head.args or ())
        # The ref as OPA orders refs: by term, a variable after every constant.
        name = head.ref.head.name if type(head.ref.head) is ast.Var else ""
        declared = _declared(rule) if not self.ground else set()
        self.sort_key = tuple(_term_key(t, order, declared) for t in (*[ast.Scalar(p) for p in pkg], ast.Scalar(name), *head.ref.path))


_RANKS = {type(None): 0, bool: 1, int: 2, float: 2, Decimal: 2, str: 3}


def _term_key(term: ast.Term, order: int, declared: set[str]) -> tuple[Any, ...]:
    if type(term) is ast.Scalar:
        v = term.value
        return (_RANKS.get(type(v), 2), 0 if v is None else v)
    if type(term) is ast.Var:
        # A variable the body declares is renamed apart by OPA (``__local3__``,
        # numbered in the order of files and rules), one it binds otherwise
        # keeps its name: two ``a[k]`` of two rules are then one ref.
        return (4, "__local", order) if term.name in declared else (4, term.name, -1)
    return (5, "", order)


def _declared(rule: ast.Rule) -> set[str]:
    """The variables the body of ``rule`` declares (``:=``, ``some``)."""
    out: set[str] = set()
    for expr in rule.body:
        st = expr.statement
        if type(st) is ast.Assign:
            all_vars(st.lhs, out)
        elif type(st) is ast.SomeVars:
            out.update(v.name for v in st.vars)
        elif type(st) is ast.SomeIn:
            if st.key is not None:
                all_vars(st.key, out)
            all_vars(st.value, out)
    return out


def _text(held: _Held, absolute: bool = True) -> str:
    """The rule's ref as OPA writes it (``data.p.a[k]``; ``a[k]`` relative to its package)."""
    head = held.rule.head.ref.head
    name = head.name if type(head) is ast.Var else ""
    # (A wildcard in the ref reads ``_``, as written.)
    written = tuple(ast.Var("_") if type(t) is ast.Var and is_wildcard(t.name) else t for t in held.rule.head.ref.path)
    if not absolute:
        return ref_text(ast.Ref(ast.Var(name), written))
    path = (*(ast.Scalar(p) for p in held.pkg), ast.Scalar(name), *written)
    return ref_text(ast.Ref(ast.Var("data"), path))


def _at(held: _Held) -> str:
    return f"{held.rule.location.file}:{held.rule.location.row}"


def rule_conflict_errors(modules: Sequence[ast.Module], packages: Sequence[tuple[str, ...]]) -> list[RegoError]:
    """OPA's errors for ``modules`` (of ``packages``): those of its rule tree,
    by location, then those of packages inside a rule."""
    root = _Node()
    # OPA adds the rules of parent packages first, a package's modules by file name.
    ordered = sorted(zip(modules, packages), key=lambda mp: (len(mp[1]), mp[1], mp[0].location.file))
    # OPA numbers the variables it renames in the order of files, then rules.
    by_file = sorted(modules, key=lambda m: m.location.file)
    orders = {id(r): i for i, r in enumerate(r for m in by_file for r in m.rules)}
    for module, pkg in ordered:
        node = root
        for p in pkg:
            node = node.children.setdefault(("str", p), _Node())
        for rule in module.rules:
            held = _Held(rule, pkg, module, orders[id(rule)])
            at = node
            head = rule.head.ref.head
            at = at.children.setdefault(("str", head.name if type(head) is ast.Var else ""), _Node())
            for t in rule.head.ref.path:
                key = scalar_key(t)
                if key is None:
                    break
                at = at.children.setdefault(key, _Node())
            at.rules.append(held)
    errors: list[RegoError] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        if node.rules:
            err = _node_error(node)
            if err is not None:
                errors.append(err)
    errors.sort(key=location_key)
    return errors + _package_errors(modules, packages)


def _node_error(node: _Node) -> RegoError | None:
    rules = node.rules
    first, name = rules[0].rule.location, _text(rules[-1])
    if node.children:
        # Below a rule without variables in its ref, no rule; below one with, no function.
        inside = _flatten(node, functions_only=not any(h.ground for h in rules))
        if inside:
            lines = "".join(f"\n  rule {_text(h)} at {_at(h)}" for h in inside)
            return RegoTypeError(f"rule {name} conflicts with:{lines}", first)
    if len({h.multi for h in rules}) > 1 or len({h.arity for h in rules}) > 1 or len({h.ground for h in rules}) > 1:
        return RegoTypeError(f"conflicting rules {name} found", first)
    defaults = [h for h in rules if h.rule.default]
    if len(defaults) > 1:
        at = ", ".join(_at(h) for h in defaults)
        return RegoTypeError(f"multiple default rules {name} found at {at}", defaults[0].module.location)
    return None


def _flatten(node: _Node, functions_only: bool) -> list[_Held]:
    """The rules (or functions) below ``node``, but those whose refs have
    another one's as a prefix (OPA lists ``a.b`` for ``a.b`` and ``a.b.c``),
    in OPA's order of refs."""
    kept: list[_Held] = []
    for h in node.below():
        if functions_only and h.rule.head.args is None:
            continue
        key = h.sort_key
        if not any(key[: len(k.sort_key)] == k.sort_key for k in kept):
            # (and a rule kept before whose ref this one's is a prefix of goes)
            kept = [k for k in kept if k.sort_key[: len(key)] != key]
            kept.append(h)
    kept.sort(key=lambda h: h.sort_key)
    return kept


def _package_errors(modules: Sequence[ast.Module], packages: Sequence[tuple[str, ...]]) -> list[RegoError]:
    """A package whose path is the ref of a rule without variables (OPA's
    module tree check), at the rule's package."""
    by_path: dict[tuple[str, ...], list[ast.Module]] = {}
    for module, pkg in zip(modules, packages):
        by_path.setdefault(pkg, []).append(module)
    deepest = max(map(len, packages), default=0)
    errors: list[RegoError] = []
    for module, pkg in sorted(zip(modules, packages), key=lambda mp: (mp[1], mp[0].location.file)):
        if len(pkg) >= deepest:
            continue  # (no package can be inside a rule of this one)
        for rule in module.rules:
            keys: list[str] = []
            for p in rule.head.ref.path:
                if type(p) is not ast.Scalar or type(p.value) is not str:
                    break  # (a variable: not checked; a number: OPA cannot look it up)
                keys.append(p.value)
            else:
                head = rule.head.ref.head
                doc = (*pkg, head.name if type(head) is ast.Var else "", *keys)
                if doc in by_path:
                    held = _Held(rule, pkg, module, 0)
                    name = ref_text(ast.Ref(ast.Var("data"), tuple(ast.Scalar(p) for p in doc)))[5:]
                    for _ in by_path[doc]:  # (one error for each module of that package)
                        msg = f"package {name} conflicts with rule {_text(held, absolute=False)} defined at {_at(held)}"
                        errors.append(RegoTypeError(msg, module.location))
    return errors
