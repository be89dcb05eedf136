"""What the parts of the partial evaluator share: its state, and the methods
one part calls in another (declared here so each module type-checks alone).

:class:`~pyrego.partial.evaluator.Evaluator` combines the parts:
:class:`~pyrego.partial.refs.RefsMixin`, :class:`~pyrego.partial.rules.RulesMixin`
and :class:`~pyrego.partial.calls.CallsMixin`, each a subclass of
:class:`EvalBase`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree, RuleNode
from pyrego.errors import RegoError
from pyrego.partial.bindings import Env, Scope
from pyrego.partial.known import KnownDocuments
from pyrego.partial.support import Support
from pyrego.partial.unknowns import Dependencies, UnknownPath


class PartialEvalError(RegoError):
    """Something partial evaluation does not handle (the message says what)."""

    code = "pe_unsupported_error"


class EvalBase:
    """The evaluator's state and its cross-module methods."""

    tree: CompiledTree
    known: KnownDocuments
    unknowns: list[UnknownPath]
    input: Any
    deps: Dependencies
    env: Env
    frames: list[list[ast.Expr]]
    support: Support
    where: list[ast.Location]

    # -- evaluator.py
    def body(self, body: Sequence[ast.Expr], scope: Scope, i: int = 0) -> Iterator[None]:
        raise NotImplementedError

    def expr(self, e: ast.Expr, scope: Scope) -> Iterator[None]:
        raise NotImplementedError

    def ordered(self, body: ast.Body, scope: Scope, outer: set[str], required: set[str] | None = None) -> ast.Body:
        raise NotImplementedError

    def unify(self, a: Any, b: Any) -> Iterator[None]:
        raise NotImplementedError

    def save_unify(self, a: Any, b: Any) -> Iterator[None]:
        raise NotImplementedError

    def save(self, expr: ast.Expr, terms: Sequence[Any]) -> Iterator[None]:
        raise NotImplementedError

    def _each(self, terms: list[Any], scope: Scope, i: int, done: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        raise NotImplementedError

    def _bind(self, name: str, t: Any) -> Iterator[None]:
        raise NotImplementedError

    def fresh(self, prefix: str = "__local") -> ast.Var:
        raise NotImplementedError

    # -- refs.py
    def ref(self, t: ast.Ref, scope: Scope, against: Any = None) -> Iterator[Any]:
        raise NotImplementedError

    def input_ref(self, path: tuple[ast.Term, ...], scope: Scope) -> Iterator[Any]:
        raise NotImplementedError

    def data_ref(self, path: tuple[ast.Term, ...], scope: Scope, against: Any = None) -> Iterator[Any]:
        raise NotImplementedError

    def walk_parts(self, base: Any, parts: tuple[Any, ...], i: int) -> Iterator[Any]:
        raise NotImplementedError

    # -- rules.py
    def rule_document(self, node: RuleNode, rest: tuple[Any, ...], scope: Scope, against: Any, site: ast.Location) -> Iterator[Any]:
        raise NotImplementedError

    def call_function(self, node: RuleNode, op: str, args: list[Any], statement: bool, location: ast.Location) -> Iterator[Any]:
        raise NotImplementedError

    def function_into(self, node: RuleNode, call: ast.Call, out: ast.Term, scope: Scope) -> Iterator[None]:
        raise NotImplementedError

    # -- calls.py
    def term(self, t: Any, scope: Scope, against: Any = None) -> Iterator[Any]:
        raise NotImplementedError

    def call(self, t: ast.Call, scope: Scope, statement: bool) -> Iterator[Any]:
        raise NotImplementedError

    def instantiate(self, node: Any, scope: Scope) -> Any:
        raise NotImplementedError

    def with_known(self, e: ast.Expr, scope: Scope) -> Iterator[Any]:
        raise NotImplementedError
