"""Cheaper construction of the AST nodes the parser makes most often.

The AST classes are frozen, slotted dataclasses: calling one runs a Python
``__init__`` that sets each field through its slot descriptor (a C call with
an argument tuple per field), which makes a node cost two to three times as
much as a plain slotted object. The parser makes a hundred or so per policy,
most of them vars, scalars, refs, calls and expressions, so these makers build
each (and the rules and their heads) as an instance of a mutable twin class with the same slots, filled with
plain attribute stores, and then give it its real class (CPython allows
``__class__`` assignment between classes of the same layout). The result is
an ordinary instance of the AST class, equal to one made by calling it.

(No ``typing.cast`` on the way out: it is a function call, at run time.)

A twin whose slots no longer match its class (a field added or renamed in
:mod:`pyrego.ast.nodes`) makes that assignment raise TypeError on first use, and
the import-time check below says so earlier.
"""

from __future__ import annotations

from decimal import Decimal

from pyrego.ast import nodes as ast
from pyrego.errors import Location


class ScalarTwin:
    """The mutable twin of ``ast.Scalar`` (public for the parser's hottest
    loops, which make scalars and vars inline, as new_scalar does)."""

    __slots__ = ("value", "location", "text")
    value: None | bool | int | float | Decimal | str
    location: Location
    text: str | None


class VarTwin:
    """The mutable twin of ``ast.Var`` (see ScalarTwin)."""

    __slots__ = ("name", "location")
    name: str
    location: Location


class RefTwin:
    """The mutable twin of ``ast.Ref`` (see ScalarTwin)."""

    __slots__ = ("head", "path", "location")
    head: ast.Term
    path: tuple[ast.Term, ...]
    location: Location


class _CallTwin:
    __slots__ = ("op", "args", "location", "op_ref")
    op: str
    args: tuple[ast.Term, ...]
    location: Location
    op_ref: ast.Ref | None


class ExprTwin:
    """The mutable twin of ``ast.Expr`` (see ScalarTwin)."""

    __slots__ = ("statement", "negated", "with_mods", "location")
    statement: ast.Statement
    negated: bool
    with_mods: tuple[ast.With, ...]
    location: Location


class _RuleHeadTwin:
    __slots__ = ("ref", "value", "key", "args", "assign", "location")
    ref: ast.Ref
    value: ast.Term | None
    key: ast.Term | None
    args: tuple[ast.Term, ...] | None
    assign: bool
    location: Location


class _RuleTwin:
    __slots__ = ("head", "body", "default", "else_", "location", "module_file")
    head: ast.RuleHead
    body: ast.Body
    default: bool
    else_: ast.Rule | None
    location: Location
    module_file: str


for _twin, _cls in (
    (_RuleHeadTwin, ast.RuleHead),
    (_RuleTwin, ast.Rule),
    (ScalarTwin, ast.Scalar),
    (VarTwin, ast.Var),
    (RefTwin, ast.Ref),
    (_CallTwin, ast.Call),
    (ExprTwin, ast.Expr),
):
    if _twin.__slots__ != _cls.__slots__:  # type: ignore[attr-defined]
        raise ImportError(f"{_twin.__name__} does not match the fields of ast.{_cls.__name__}")


def new_scalar(
    value: None | bool | int | float | Decimal | str, location: Location, text: str | None = None
) -> ast.Scalar:
    """``ast.Scalar(value, location, text)``."""
    node = ScalarTwin()
    node.value = value
    node.location = location
    node.text = text
    node.__class__ = ast.Scalar  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_var(name: str, location: Location) -> ast.Var:
    """``ast.Var(name, location)``."""
    node = VarTwin()
    node.name = name
    node.location = location
    node.__class__ = ast.Var  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_ref(head: ast.Term, path: tuple[ast.Term, ...], location: Location) -> ast.Ref:
    """``ast.Ref(head, path, location)``."""
    node = RefTwin()
    node.head = head
    node.path = path
    node.location = location
    node.__class__ = ast.Ref  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_call(op: str, args: tuple[ast.Term, ...], location: Location, op_ref: ast.Ref | None = None) -> ast.Call:
    """``ast.Call(op, args, location, op_ref)``."""
    node = _CallTwin()
    node.op = op
    node.args = args
    node.location = location
    node.op_ref = op_ref
    node.__class__ = ast.Call  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_expr(statement: ast.Statement, negated: bool, with_mods: tuple[ast.With, ...], location: Location) -> ast.Expr:
    """``ast.Expr(statement, negated, with_mods, location)``."""
    node = ExprTwin()
    node.statement = statement
    node.negated = negated
    node.with_mods = with_mods
    node.location = location
    node.__class__ = ast.Expr  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_rule_head(
    ref: ast.Ref,
    value: ast.Term | None,
    key: ast.Term | None,
    args: tuple[ast.Term, ...] | None,
    assign: bool,
    location: Location,
) -> ast.RuleHead:
    """``ast.RuleHead(ref, value, key, args, assign, location)``."""
    node = _RuleHeadTwin()
    node.ref = ref
    node.value = value
    node.key = key
    node.args = args
    node.assign = assign
    node.location = location
    node.__class__ = ast.RuleHead  # type: ignore[assignment]
    return node  # type: ignore[return-value]


def new_rule(
    head: ast.RuleHead, body: ast.Body, default: bool, else_: ast.Rule | None, location: Location, module_file: str
) -> ast.Rule:
    """``ast.Rule(head, body, default, else_, location, module_file)``."""
    node = _RuleTwin()
    node.head = head
    node.body = body
    node.default = default
    node.else_ = else_
    node.location = location
    node.module_file = module_file
    node.__class__ = ast.Rule  # type: ignore[assignment]
    return node  # type: ignore[return-value]
