"""The terms partial evaluation works with, and conversions to and from values.

While a body is partially evaluated, a term is one of:

- :class:`Known`: a value known now (a Python runtime value, see
  :mod:`pyrego.runtime.values`), with the source spelling of a number literal
  when it came from one (the SQL translation prints numbers as written);
- an ``ast.Var`` with a *global* name (see :mod:`pyrego.partial.bindings`):
  unbound, or *unknown* (bound by a saved expression to something unknown);
- an ``ast.Ref`` rooted at ``input``/``data`` or at an unknown variable: a
  value only known when the unknowns are;
- an ``ast.Call`` with an unknown operand, a comprehension that reads
  unknowns, or an ``ast.Array``/``Object``/``SetTerm`` with such parts.

Everything but :class:`Known` is *residual*: it ends up in the output as
Rego. :func:`to_ast` turns a term into plain AST (known values as literals).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Union

from pyrego.ast import nodes as ast
from pyrego.runtime.numbers import format_number
from pyrego.runtime.values import freeze, sorted_values, thaw


class Known:
    """A known value. ``text``: a number literal's spelling (``1.0``, ``0.1e3``);
    ``term``: for a composite made of such literals, the literal as written."""

    __slots__ = ("value", "text", "term")

    def __init__(self, value: Any, text: str | None = None, term: ast.Term | None = None) -> None:
        self.value = value
        self.text = text
        self.term = term

    def __repr__(self) -> str:
        return f"Known({self.value!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Known:
            return False
        from pyrego.runtime.values import equal

        return equal(self.value, other.value)

    def __hash__(self) -> int:
        return hash(freeze(self.value))


#: A term during partial evaluation (see the module docstring).
PTerm = Union[Known, ast.Term]

TRUE = Known(True)
FALSE = Known(False)

_COMPOSITES = (ast.Array, ast.Object, ast.SetTerm)
_CLOSURES = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)


def number_text(value: Any, text: str | None = None) -> str:
    """A number as OPA's AST spells it: the literal's text, else OPA's JSON form."""
    if text is not None:
        return text
    return format_number(value)


def scalar(value: Any, text: str | None = None, location: ast.Location = ast.NO_LOCATION) -> ast.Scalar:
    if text is None and type(value) in (int, float, Decimal):
        text = format_number(value)
    return ast.Scalar(value, location, text)


def value_to_ast(value: Any, text: str | None = None, location: ast.Location = ast.NO_LOCATION) -> ast.Term:
    """A runtime value as an AST literal (sets in OPA's order, object keys thawed)."""
    t = type(value)
    if t is list or t is tuple:
        return ast.Array(tuple([value_to_ast(v, None, location) for v in value]), location)
    if t is dict:
        pairs = [(thaw(k), v) for k, v in value.items()]
        return ast.Object(tuple([(value_to_ast(k, None, location), value_to_ast(v, None, location)) for k, v in pairs]), location)
    if t is set or t is frozenset:
        return ast.SetTerm(tuple([value_to_ast(v, None, location) for v in sorted_values(value)]), location)
    return scalar(value, text, location)


def to_ast(t: Any) -> Any:
    """``t`` with every known value (at any depth) written as an AST literal."""
    tt = type(t)
    if tt is Known:
        return t.term if t.term is not None else value_to_ast(t.value, t.text)
    if tt is ast.Array:
        return ast.Array(tuple([to_ast(x) for x in t.items]), t.location)
    if tt is ast.SetTerm:
        return ast.SetTerm(tuple([to_ast(x) for x in t.items]), t.location)
    if tt is ast.Object:
        return ast.Object(tuple([(to_ast(k), to_ast(v)) for k, v in t.items]), t.location)
    if tt is ast.Ref:
        return ast.Ref(to_ast(t.head), tuple([to_ast(p) for p in t.path]), t.location)
    if tt is ast.Call:
        return ast.Call(t.op, tuple([to_ast(a) for a in t.args]), t.location, t.op_ref)
    return t


def collapse(t: Any) -> Any:
    """A composite whose parts are all known, as one :class:`Known`; else ``t``.

    Number spellings inside are kept (as the literal, in ``Known.term``)."""
    tt = type(t)
    if tt is ast.Array:
        if all(type(x) is Known for x in t.items):
            return Known([x.value for x in t.items], None, _spelled(t))
    elif tt is ast.SetTerm:
        if all(type(x) is Known for x in t.items):
            return Known(frozenset([freeze(x.value) for x in t.items]), None, _spelled(t))
    elif tt is ast.Object:
        if all(type(k) is Known and type(v) is Known for k, v in t.items):
            return Known({freeze(k.value): v.value for k, v in t.items}, None, _spelled(t))
    return t


def _spelled(t: Any) -> ast.Term | None:
    """``t`` as a literal when a part keeps a spelling of its own, else None."""
    parts: list[Any] = [x for kv in t.items for x in kv] if type(t) is ast.Object else list(t.items)
    if not any(p.text is not None or p.term is not None for p in parts):
        return None
    if type(t) is ast.SetTerm:
        # Sets print in OPA's order.
        from pyrego.runtime.values import sort_key

        items: list[Any] = sorted(t.items, key=lambda k: sort_key(k.value))
        return ast.SetTerm(tuple(to_ast(x) for x in _dedup(items)), t.location)
    return to_ast(t)


def _dedup(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    seen: set[Any] = set()
    for x in items:
        k = freeze(x.value)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


def literal(t: Any) -> Known | None:
    """The value of a ground literal term (scalars and composites of them), or None."""
    tt = type(t)
    if tt is ast.Scalar:
        return Known(t.value, t.text if type(t.value) in (int, float, Decimal) else None)
    if tt in _COMPOSITES:
        parts: list[Any] = []
        if tt is ast.Object:
            for k, v in t.items:  # type: ignore[union-attr]
                kk, vv = literal(k), literal(v)
                if kk is None or vv is None:
                    return None
                parts.append((kk.value, vv.value))
            return Known({freeze(k): v for k, v in parts})
        for x in t.items:  # type: ignore[union-attr]
            xx = literal(x)
            if xx is None:
                return None
            parts.append(xx.value)
        if tt is ast.Array:
            return Known(parts)
        return Known(frozenset([freeze(v) for v in parts]))
    return None


def term_vars(t: Any, out: set[str]) -> set[str]:
    """The (global) variable names in a residual term, closures included."""
    tt = type(t)
    if tt is ast.Var:
        if t.name not in ("input", "data"):
            out.add(t.name)
    elif tt is ast.Ref:
        term_vars(t.head, out)
        for p in t.path:
            term_vars(p, out)
    elif tt is ast.Call:
        for a in t.args:
            term_vars(a, out)
    elif tt in (ast.Array, ast.SetTerm):
        for x in t.items:
            term_vars(x, out)
    elif tt is ast.Object:
        for k, v in t.items:
            term_vars(k, out)
            term_vars(v, out)
    elif tt in _CLOSURES:
        from pyrego.compile.safety import term_vars as ast_vars

        ast_vars(t, out, closures=True)
    return out


