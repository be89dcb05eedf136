"""The documents a query depends on (``opa deps``; OPA's ``dependencies`` package).

Dependencies are of two kinds: base documents, data loaded from outside (and
``input``), and virtual documents, the rules a query reaches. Both come from
OPA's analysis, done here on pyrego's resolved rules:

- each rule (and the query, read as a rule whose head holds all its
  variables) yields the refs it uses: refs rooted at ``data`` or ``input``,
  and refs through variables bound by ``x = ref`` (or ``x := ref``) to the
  refs those stand for. A variable bound to a ref that is never used again
  contributes only the refs inside that ref, as in OPA; so do the refs of
  ``else`` branches, which OPA's analysis does not visit;
- the refs are deduplicated, sorted, and any ref that extends another one in
  the list is dropped (OPA's ``Minimal``);
- each is cut at its first non-constant part; the rules it refers to (rules
  at or under it, or a rule defining a prefix of it) are followed in turn.
  A ref no rule defines is a base document; every rule reached is a virtual
  document, named by its package and the ground prefix of its head.

Refs are lists of terms in OPA's JSON form (:mod:`pyrego.ast.opa_json`), sorted
with :func:`pyrego.ast.json_order.compare_terms`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.ast.json_order import compare_terms
from pyrego.ast.json_order import op_term_json as _op_term
from pyrego.ast.json_order import ref_terms_json as _ref_terms
from pyrego.compile.base import CompiledTree, RuleNode

__all__ = ["Dependencies", "query_dependencies", "ref_text"]

Term = dict[str, Any]
RefT = tuple[Any, ...]  # a ref: a tuple of JSON terms (hashable by their frozen form)

_ROOTS = ("data", "input")


def _freeze(x: Any) -> Any:
    if isinstance(x, dict):
        return tuple((k, _freeze(v)) for k, v in x.items())
    if isinstance(x, list):
        return tuple(_freeze(v) for v in x)
    return x


class _Ref:
    """A ref: its terms (JSON form) and a hashable key."""

    __slots__ = ("terms", "key")

    def __init__(self, terms: list[Term]) -> None:
        self.terms = terms
        self.key = _freeze(terms)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ref) and self.key == other.key

    def has_prefix(self, other: _Ref) -> bool:
        n = len(other.terms)
        return len(self.terms) >= n and _freeze(self.terms[:n]) == other.key

    def constant_prefix(self) -> _Ref:
        for i, t in enumerate(self.terms[1:], start=1):
            if not _constant(t):
                return _Ref(self.terms[:i])
        return self


def _constant(t: Term) -> bool:
    kind = t["type"]
    if kind in ("null", "boolean", "number", "string"):
        return True
    if kind in ("array", "set"):
        return all(_constant(x) for x in t["value"])
    if kind == "object":
        return all(_constant(k) and _constant(v) for k, v in t["value"])
    return False


def _compare_refs(a: _Ref, b: _Ref) -> int:
    for x, y in zip(a.terms, b.terms):
        c = compare_terms(x, y)
        if c:
            return c
    return (len(a.terms) > len(b.terms)) - (len(a.terms) < len(b.terms))


def _dedup(refs: Iterable[_Ref]) -> list[_Ref]:
    out: list[_Ref] = []
    for r in sorted(refs, key=functools.cmp_to_key(_compare_refs)):
        if not out or out[-1] != r:
            out.append(r)
    return out


# ---------------------------------------------------------------- terms


# ---------------------------------------------------------------- walking


def _children(node: Any) -> Iterator[Any]:
    """The AST nodes directly under ``node`` (statements, terms, bodies, withs)."""
    if isinstance(node, tuple):
        yield from node
        return
    if isinstance(node, ast.Expr):
        yield node.statement
        yield from node.with_mods
        return
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return
    for name in fields:
        if name in ("location", "op_ref", "text"):
            continue
        value = getattr(node, name)
        if isinstance(value, tuple):
            for v in value:
                if isinstance(v, tuple):
                    yield from v
                else:
                    yield v
        elif value is not None and hasattr(value, "__dataclass_fields__"):
            yield value


def _walk_refs(node: Any) -> Iterator[ast.Ref | ast.Call]:
    """Every ref under ``node`` (refs inside refs too), and every call of a
    rule (OPA's compiled calls name their function by a ``data`` ref)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Ref):
            yield n
        elif isinstance(n, ast.Call) and n.op.startswith("data."):
            yield n
        stack.extend(reversed(list(_children(n))))


def _vars(node: Any, skip_ref_head: bool = False) -> set[str]:
    """Variable names under ``node`` (OPA's VarVisitor; ``skip_ref_head``
    leaves out the variable a ref starts with)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Var):
            out.add(n.name)
            continue
        if isinstance(n, ast.Ref):
            if not (skip_ref_head and isinstance(n.head, ast.Var)):
                stack.append(n.head)
            stack.extend(n.path)
            continue
        if isinstance(n, ast.Call) and not skip_ref_head:
            out.add(n.op.split(".")[0])
        stack.extend(_children(n))
    return out


def _as_ref(x: ast.Ref | ast.Call) -> _Ref | None:
    if isinstance(x, ast.Call):
        return _Ref(_op_term(x.op)["value"])
    head = x.head
    while isinstance(head, ast.Ref):
        head = head.head
    if not isinstance(head, ast.Var):
        return None  # a ref into a call's result or a literal: nothing to follow
    return _Ref(_ref_terms(x))


# ---------------------------------------------------------------- one rule


class _RuleRefs:
    """OPA's ruleDeps: the refs one rule (or query) uses."""

    def __init__(self, head_vars: set[str], body: ast.Body, extra_eqs: list[tuple[str, ast.Ref]]) -> None:
        self.head_vars = head_vars
        self.body = body
        self.extra_eqs = extra_eqs

    def refs(self, extra_others: list[Any]) -> list[_Ref]:
        bound: dict[str, list[_Ref]] = {v: [] for v in _vars(self.body)}
        others: list[Any] = []
        for expr in self.body:
            pair = _equality(expr)
            if pair is None:
                others.append(expr)
                continue
            var, ref = pair
            r = _as_ref(ref)
            if r is None:
                others.append(expr)
                continue
            bound.setdefault(var, []).append(r)
        for var, ref in self.extra_eqs:
            r = _as_ref(ref)
            if r is not None:
                bound.setdefault(var, []).append(r)
        others.extend(extra_others)
        joined = _join(bound)

        resolved: list[_Ref] = []

        def expand(r: _Ref) -> list[_Ref]:
            head = r.terms[0]
            if head["type"] != "var":
                return []
            if head["value"] in _ROOTS:
                return [r]
            return [_Ref(j.terms + r.terms[1:]) for j in joined.get(head["value"], ())]

        head_refs: list[_Ref] = []
        leftover: list[Any] = []
        for expr in others:
            stmt = expr.statement if isinstance(expr, ast.Expr) else None
            if isinstance(expr, ast.Expr) and not expr.negated and not expr.with_mods and isinstance(stmt, ast.Ref):
                last = stmt.path[-1] if stmt.path else stmt.head
                r = _as_ref(stmt)
                if isinstance(last, ast.Var) and last.name in self.head_vars and r is not None:
                    head_refs.extend(expand(r))
                    continue
            leftover.append(expr)

        used: set[str] = set()
        for expr in leftover:
            for x in _walk_refs(expr):
                r = _as_ref(x)
                if r is not None:
                    resolved.extend(expand(r))
            used |= _vars(expr, skip_ref_head=True)

        for r in head_refs:
            if not any(x.has_prefix(r) for x in resolved):
                resolved.append(r)
            resolved.extend(self._nested(r, expand))

        for x in _walk_refs(self.body):
            if isinstance(x, ast.Ref):
                used |= {p.name for p in x.path if isinstance(p, ast.Var)}

        for var, refs in joined.items():
            whole = var in self.head_vars or len(refs) > 1 or var in used
            for r in refs:
                if whole:
                    resolved.append(r)
                resolved.extend(self._nested(r, expand))
        return resolved

    @staticmethod
    def _nested(r: _Ref, expand: Any) -> list[_Ref]:
        """The refs inside ``r``'s terms (``data.a[input.b]``: ``input.b``)."""
        out: list[_Ref] = []
        stack = list(r.terms[1:])
        while stack:
            t = stack.pop()
            if not isinstance(t, dict):
                continue
            if t.get("type") == "ref":
                out.extend(expand(_Ref(t["value"])))
            value = t.get("value")
            if isinstance(value, list):
                for v in value:
                    stack.extend(v if isinstance(v, list) else [v])
        return out


def _equality(expr: ast.Expr) -> tuple[str, ast.Ref] | None:
    """``x = ref`` / ``ref = x`` (``:=`` included): the var and the ref."""
    stmt = expr.statement
    if expr.negated or not isinstance(stmt, (ast.Assign, ast.Unify)):
        return None
    lhs, rhs = stmt.lhs, stmt.rhs
    if isinstance(lhs, ast.Var) and isinstance(rhs, ast.Ref):
        return lhs.name, rhs
    if isinstance(rhs, ast.Var) and isinstance(lhs, ast.Ref):
        return rhs.name, lhs
    return None


def _join(bound: dict[str, list[_Ref]]) -> dict[str, list[_Ref]]:
    """Each variable's refs rooted at data/input, following var-headed refs."""
    joined: dict[str, dict[_Ref, None]] = {v: {} for v in bound}
    changed = True
    while changed:
        changed = False
        for var, refs in bound.items():
            for r in refs:
                head = r.terms[0]
                if head["type"] != "var":
                    continue
                if head["value"] in _ROOTS:
                    if r not in joined[var]:
                        joined[var][r] = None
                        changed = True
                    continue
                for j in list(joined.get(head["value"], {})):
                    ext = _Ref(j.terms + r.terms[1:])
                    if ext not in joined[var]:
                        joined[var][ext] = None
                        changed = True
    return {v: list(rs) for v, rs in joined.items()}


def _head_parts(rule: ast.Rule) -> tuple[set[str], list[tuple[str, ast.Ref]], list[Any]]:
    """Head variables, and the refs and calls of the head as OPA's compiler
    moves them into the body (``__local = ref`` equalities, call expressions)."""
    head = rule.head
    head_vars: set[str] = set()
    for a in head.args or ():
        head_vars |= _vars(a)
    for p in head.ref.path:
        head_vars |= _vars(p)
    eqs: list[tuple[str, ast.Ref]] = []
    others: list[Any] = []
    counter = itertools.count()

    def visit(t: Any) -> None:
        if isinstance(t, ast.Ref):
            name = f"$head{next(counter)}"
            head_vars.add(name)
            eqs.append((name, t))
        elif isinstance(t, (ast.Call, ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
            others.append(t)
        elif isinstance(t, ast.Var):
            head_vars.add(t.name)
        else:
            for c in _children(t):
                visit(c)

    for t in (head.key, head.value):
        if t is not None:
            visit(t)
    return head_vars, eqs, others


def _minimal(refs: list[_Ref]) -> list[_Ref]:
    out: list[_Ref] = []
    for r in _dedup(refs):
        if out and r.has_prefix(out[-1]):
            continue
        out.append(r)
    return out


# ---------------------------------------------------------------- the rule tree


class Dependencies:
    """Base and virtual dependencies over a compiled rule tree."""

    def __init__(self, tree: CompiledTree) -> None:
        self.tree = tree
        self.paths: dict[int, tuple[str, ...]] = {}
        for node in tree.nodes.values():
            for rule in _node_rules(node):
                self.paths[id(rule)] = node.path

    def rule_refs(self, rule: ast.Rule) -> list[_Ref]:
        head_vars, eqs, others = _head_parts(rule)
        return _minimal(_RuleRefs(head_vars, rule.body, eqs).refs(others))

    def rules_for(self, ref: _Ref) -> list[ast.Rule]:
        """OPA's GetRules: rules defining a prefix of ``ref``, and rules at or under it."""
        terms = ref.terms
        if not terms or terms[0] != {"type": "var", "value": "data"}:
            return []
        names: list[str] = []
        for t in terms[1:]:
            if t["type"] != "string":
                break
            names.append(t["value"])
        complete = len(names) == len(terms) - 1
        found: dict[int, ast.Rule] = {}
        nodes = self.tree.nodes
        for i in range(1, len(names) + 1):
            node = nodes.get(tuple(names[:i]))
            if node is None:
                break
            rules = _node_rules(node)
            if rules:
                found.update((id(r), r) for r in rules)
                break
        node = nodes.get(tuple(names)) if complete else None
        if node is not None:
            for n in node.walk():
                found.update((id(r), r) for r in _node_rules(n))
        return list(found.values())

    def base(self, refs: list[_Ref]) -> list[_Ref]:
        out: set[_Ref] = set()
        seen: set[int] = set()
        stack = [refs]
        while stack:
            for r in stack.pop():
                r = r.constant_prefix()
                rules = self.rules_for(r)
                if not rules:
                    out.add(r)
                for rule in rules:
                    if id(rule) not in seen:
                        seen.add(id(rule))
                        stack.append(self.rule_refs(rule))
        return _dedup(out)

    def virtual(self, refs: list[_Ref]) -> list[_Ref]:
        out: set[_Ref] = set()
        seen: set[int] = set()
        stack = [refs]
        while stack:
            for r in stack.pop():
                for rule in self.rules_for(r.constant_prefix()):
                    if id(rule) in seen:
                        continue
                    seen.add(id(rule))
                    stack.append(self.rule_refs(rule))
                    path = self.paths.get(id(rule), ())
                    out.add(_Ref([{"type": "var", "value": "data"}] + [{"type": "string", "value": p} for p in path]))
        return _dedup(out)


def _node_rules(node: RuleNode) -> list[ast.Rule]:
    return node.rules + ([node.default] if node.default is not None else [])


def query_dependencies(tree: CompiledTree, query: ast.Body) -> tuple[list[list[Term]], list[list[Term]]]:
    """The base and virtual documents ``query`` depends on, as sorted lists of refs (JSON terms)."""
    deps = Dependencies(tree)
    head_vars = {v for v in _vars(query) if not v.startswith("$")}
    refs = _minimal(_RuleRefs(head_vars, query, []).refs([]))
    return [r.terms for r in deps.base(refs)], [r.terms for r in deps.virtual(refs)]


def ref_text(terms: list[Term]) -> str:
    """A ref as OPA prints it (``data.a.b``, ``input["x-y"]``, ``data.a[0]``)."""
    from pyrego.ast.pretty import ref_string

    head = terms[0]
    out = str(head["value"]) if head["type"] == "var" else "?"
    for t in terms[1:]:
        if t["type"] == "string":
            out = ref_string([t["value"]], out)
        elif t["type"] == "number":
            out += f"[{t['value']}]"
        elif t["type"] in ("boolean", "null"):
            out += "[" + ("null" if t["type"] == "null" else ("true" if t["value"] else "false")) + "]"
        else:
            out += "[...]"
    return out
