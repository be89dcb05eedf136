"""Support rules: the parts of a partial evaluation result that cannot be inlined.

A rule with a ``default``, a whole partial set or object, a function with a
``default``, and a negation too large to expand become rules of their own
under ``data.partial`` (OPA's *support modules*); the residual queries refer
to them (``data.partial.filters.include``). Each support rule's body is one
solution of the original rule's body, partially evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.partial.terms import Known
from pyrego.runtime.values import compare


@dataclass
class SupportRule:
    """One support rule: its full path (``("partial", "filters", "include")``), head and body."""

    path: tuple[str, ...]
    value: Any  # a term (Known or residual), or None for a partial set member
    body: list[ast.Expr]
    default: bool = False
    key: Any = None  # partial sets and objects: the key term
    args: tuple[Any, ...] | None = None  # functions


@dataclass
class Support:
    """The support rules made so far, by package."""

    namespace: str = "partial"
    rules: list[SupportRule] = field(default_factory=list)
    _paths: set[tuple[str, ...]] = field(default_factory=set)
    _negations: int = 0

    def exists(self, path: tuple[str, ...]) -> bool:
        return path in self._paths

    def reserve(self, path: tuple[str, ...]) -> None:
        self._paths.add(path)

    def add(self, rule: SupportRule) -> None:
        self._paths.add(rule.path)
        self.rules.append(rule)

    def defined(self, path: tuple[str, ...]) -> bool:
        return any(r.path == path for r in self.rules)

    def negation(self, queries: list[list[ast.Expr]], live: set[str], location: ast.Location) -> ast.Expr:
        """Support rules ``__notN__`` for a negation whose result cannot be expanded
        inline; returns the saved expression ``not data.partial.__notN__(args)``."""
        self._negations += 1
        name = f"__not{self._negations}__"
        used: set[str] = set()
        for query in queries:
            for e in query:
                _stmt_vars(e.statement, used)
        args = tuple(ast.Var(v) for v in sorted(used & live))
        path = (self.namespace, name)
        for query in queries:
            self.add(SupportRule(path, Known(True), list(query), args=args or None))
        ref = ast.Ref(ast.Var("data", location), tuple(ast.Scalar(p, location) for p in path), location)
        stmt: Any = ast.Call(".".join(("data",) + path), args, location, ref) if args else ref
        return ast.Expr(stmt, True, (), location)

    def modules(self) -> list[tuple[tuple[str, ...], list[SupportRule]]]:
        """The support rules by package, each package's rules in OPA's order."""
        by_package: dict[tuple[str, ...], list[SupportRule]] = {}
        for rule in self.rules:
            pkg = rule.path[:-1]
            by_package.setdefault(pkg, []).append(rule)
        out = []
        for pkg in sorted(by_package):
            rules = sorted(by_package[pkg], key=_rule_sort_key)
            out.append((pkg, rules))
        return out


def _stmt_vars(s: Any, out: set[str]) -> None:
    from pyrego.partial.terms import term_vars

    if isinstance(s, (ast.Unify, ast.Assign)):
        term_vars(s.lhs, out)
        term_vars(s.rhs, out)
    elif isinstance(s, ast.Call):
        for a in s.args:
            term_vars(a, out)
    else:
        term_vars(s, out)


class _Cmp:
    """Orders values by Rego's total order, residual terms after known ones."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Cmp) and not self < other and not other < self

    def __hash__(self) -> int:
        return 0

    def __lt__(self, other: _Cmp) -> bool:
        a, b = self.v, other.v
        if type(a) is Known and type(b) is Known:
            return compare(a.value, b.value) < 0
        return type(a) is Known and type(b) is not Known


def _rule_sort_key(rule: SupportRule) -> tuple[Any, ...]:
    # OPA sorts a support module's rules: by head (path, then value), then
    # rules before default rules.
    return (rule.path, _Cmp(rule.value), rule.default)
