"""What is unknown: the unknown refs, and which rules depend on them.

Unknowns are refs rooted at ``input`` or ``data`` (``input.tickets``,
``input``, ``data.users``). A ref *overlaps* an unknown when one is a prefix
of the other (OPA's save set): ``input.tickets.a`` and ``input`` both
overlap ``input.tickets``; ``input.user`` does not.

A rule *depends on* the unknowns (OPA's ``saveRequired``) when something in
it (head or body, any ``else``) reads an overlapping ref, reads or calls a
rule that depends on them, has a ``with`` modifier, or calls a
nondeterministic builtin while those are not evaluated. Such rules are
inlined (or turned into support rules); the others are evaluated as usual.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree, RuleNode, iter_rule_chain
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_term

UnknownPath = tuple[Any, ...]  # ("input", "tickets") / ("data", "users")


class UnknownsError(RegoError):
    """An unknown that is not a ref rooted at ``input`` or ``data``."""

    code = "invalid_unknown"


def parse_unknowns(unknowns: Any) -> list[UnknownPath]:
    """``["input.tickets", "data.x"]`` as paths; each must be a ground ref under input or data."""
    if isinstance(unknowns, str):
        unknowns = [unknowns]
    out: list[UnknownPath] = []
    for text in unknowns:
        if not isinstance(text, str):
            raise UnknownsError(f"unknowns must be strings: {text!r}")
        try:
            term = parse_term(text)
        except RegoError as exc:
            raise UnknownsError(f"unknowns must be valid refs: {text}") from exc
        path = ground_path(term)
        if path is None or path[0] not in ("input", "data"):
            raise UnknownsError(f"unknowns must be prefixed with `input` or `data`: {text}")
        out.append(path)
    return out


def ground_path(t: ast.Term) -> UnknownPath | None:
    if isinstance(t, ast.Var):
        return (t.name,)
    if isinstance(t, ast.Ref) and isinstance(t.head, ast.Var):
        parts: list[Any] = [t.head.name]
        for p in t.path:
            if not isinstance(p, ast.Scalar):
                return None
            parts.append(p.value)
        return tuple(parts)
    return None


def path_overlaps(unknowns: list[UnknownPath], path: UnknownPath, whole: bool) -> bool:
    """OPA's save-set test for a ref whose leading ground part is ``path``.

    ``whole``: the ref is all ground. A ref that stops being ground after
    ``path`` overlaps an unknown only if the unknown is a prefix of ``path``
    (OPA compares term by term, and a variable never equals a string)."""
    for u in unknowns:
        if whole:
            n = min(len(u), len(path))
            if u[:n] == path[:n]:
                return True
        elif len(path) >= len(u) and path[: len(u)] == u:
            return True
    return False


def ref_ground_path(ref: ast.Ref) -> tuple[UnknownPath, bool]:
    """A ref's leading ground path and whether that is all of it."""
    head = ref.head
    if not isinstance(head, ast.Var):
        return (), False
    parts: list[Any] = [head.name]
    for p in ref.path:
        if isinstance(p, ast.Scalar):
            parts.append(p.value)
        else:
            return tuple(parts), False
    return tuple(parts), True


def static_overlap(unknowns: list[UnknownPath], ref: ast.Ref) -> bool:
    """:func:`path_overlaps` for a ref as written."""
    path, whole = ref_ground_path(ref)
    return path_overlaps(unknowns, path, whole)


class Dependencies:
    """Which rule nodes depend on the unknowns (memoised per node)."""

    def __init__(self, tree: CompiledTree, unknowns: list[UnknownPath], *, eval_nondeterministic: bool) -> None:
        self.tree = tree
        self.unknowns = unknowns
        self.eval_nondeterministic = eval_nondeterministic
        self._memo: dict[int, bool] = {}

    def node(self, node: RuleNode) -> bool:
        """Whether the rules of ``node`` depend on the unknowns."""
        got = self._memo.get(node.id)
        if got is not None:
            return got
        self._memo[node.id] = False  # a cycle (dynamic refs) reads as independent
        found = False
        rules = node.rules + ([node.default] if node.default is not None else [])
        for rule in rules:
            for branch in iter_rule_chain(rule):
                if self._rule(branch):
                    found = True
                    break
            if found:
                break
        if not found:
            found = self._data_unknown(("data",) + node.path)
        self._memo[node.id] = found
        return found

    def subtree(self, node: RuleNode) -> bool:
        """Whether any rule at or below ``node`` depends on the unknowns."""
        return any(self.node(n) for n in node.walk() if n.has_rules())

    def _data_unknown(self, path: UnknownPath) -> bool:
        return any(u[0] == "data" and (u[: len(path)] == path[: len(u)]) for u in self.unknowns)

    def _rule(self, rule: ast.Rule) -> bool:
        head = rule.head
        terms: list[Any] = list(head.ref.path)
        for t in (head.key, head.value):
            if t is not None:
                terms.append(t)
        terms.extend(head.args or ())
        return any(self.term(t) for t in terms) or self.body(rule.body)

    def body(self, body: ast.Body) -> bool:
        return any(self.expr(e) for e in body)

    def expr(self, e: ast.Expr, var_unknown: Callable[[str], bool] | None = None) -> bool:
        """Whether expression ``e`` needs saving; ``var_unknown`` tells the call site's unknown variables."""
        if e.with_mods:
            return True
        s = e.statement
        if isinstance(s, (ast.Assign, ast.Unify)):
            terms: list[Any] = [s.lhs, s.rhs]
        elif isinstance(s, ast.SomeIn):
            terms = [x for x in (s.key, s.value, s.collection) if x is not None]
        elif isinstance(s, ast.Every):
            return self.term(s.domain, var_unknown) or self.body_with(s.body, var_unknown)
        elif isinstance(s, ast.SomeVars):
            return False
        else:
            terms = [s]
        return any(self.term(t, var_unknown) for t in terms)

    def body_with(self, body: ast.Body, var_unknown: Callable[[str], bool] | None) -> bool:
        return any(self.expr(e, var_unknown) for e in body)

    def term(self, t: Any, var_unknown: Callable[[str], bool] | None = None) -> bool:
        tt = type(t)
        if tt is ast.Scalar:
            return False
        if tt is ast.Var:
            if t.name == "input":
                return static_overlap(self.unknowns, ast.Ref(t, ()))
            if t.name == "data":
                return self.data_ref(ast.Ref(t, ()))
            return var_unknown(t.name) if var_unknown is not None else False
        if tt is ast.Ref:
            head = t.head
            if isinstance(head, ast.Var) and head.name == "data":
                if self.data_ref(t):
                    return True
            elif isinstance(head, ast.Var) and head.name == "input":
                if static_overlap(self.unknowns, t):
                    return True
            elif self.term(head, var_unknown):
                return True
            return any(self.term(p, var_unknown) for p in t.path)
        if tt is ast.Call:
            if not self.eval_nondeterministic:
                b = self.tree.builtin(t.op)
                if b is not None and b.nondeterministic:
                    return True
            fn = self.tree.functions.get(t.op)
            if fn is not None and self.node(fn):
                return True
            return any(self.term(a, var_unknown) for a in t.args)
        if tt in (ast.Array, ast.SetTerm):
            return any(self.term(x, var_unknown) for x in t.items)
        if tt is ast.Object:
            return any(self.term(k, var_unknown) or self.term(v, var_unknown) for k, v in t.items)
        if tt in (ast.ArrayCompr, ast.SetCompr):
            return self.term(t.term, var_unknown) or self.body_with(t.body, var_unknown)
        if tt is ast.ObjectCompr:
            return self.term(t.key, var_unknown) or self.term(t.value, var_unknown) or self.body_with(t.body, var_unknown)
        if tt is ast.TemplateString:
            return any(self.term(p, var_unknown) for p in t.parts if not isinstance(p, str))
        return False

    def data_ref(self, ref: ast.Ref) -> bool:
        """Whether ``data.<path>`` reads a rule that depends on the unknowns (a
        variable in the path matches every child, as OPA's dynamic rule lookup)."""
        path, _ = ref_ground_path(ref)
        if self._data_unknown(path):
            return True
        frontier = [self.tree.root]
        for p in ref.path:
            nxt: list[RuleNode] = []
            for node in frontier:
                if node.has_rules():
                    if self.node(node):
                        return True
                    continue
                if isinstance(p, ast.Scalar):
                    child = node.children.get(p.value) if isinstance(p.value, str) else None
                    if child is not None:
                        nxt.append(child)
                else:
                    nxt.extend(node.children.values())
            frontier = nxt
            if not frontier:
                return False
        return any(self.subtree(node) for node in frontier)
