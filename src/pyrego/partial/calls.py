"""Partial evaluation of terms: literals, variables, composites, calls, closures.

``term(t, scope)`` yields the values of a source term, one per solution (a
ref with a variable in it, or a call of a function with several
definitions, has several). A builtin called with an unknown operand is not
called: the call itself, with its known operands plugged in, is the value.
A comprehension that reads something unknown is kept as it is (with the
known variables it reads replaced by their values); others are evaluated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import FuncRef
from pyrego.errors import EvalError
from pyrego.partial.base import EvalBase, PartialEvalError
from pyrego.partial.bindings import ROOTS, Scope
from pyrego.partial.terms import TRUE, Known, collapse
from pyrego.runtime.helpers import rt_template
from pyrego.runtime.values import UNDEF, freeze

_PRINT = frozenset({"print", "internal.print"})
_NUMBERS = (int, float, Decimal)


class CallsMixin(EvalBase):
    """Term evaluation (mixed into the evaluator)."""

    def term(self, t: Any, scope: Scope, against: Any = None) -> Iterator[Any]:
        tt = type(t)
        if tt is ast.Scalar:
            v = t.value
            yield Known(v, t.text if type(v) in _NUMBERS else None)
        elif tt is ast.Var:
            name = t.name
            if name == "input":
                yield from self.input_ref((), scope)
            elif name == "data":
                yield from self.data_ref((), scope, against)
            else:
                yield self.env.plug(ast.Var(scope.var(name), t.location))
        elif tt is ast.Ref:
            yield from self.ref(t, scope, against)
        elif tt is ast.Call:
            yield from self.call(t, scope, statement=False)
        elif tt is ast.Array or tt is ast.SetTerm:
            for items in self._each(list(t.items), scope, 0, ()):
                yield collapse(tt(items, t.location))
        elif tt is ast.Object:
            flat = [x for kv in t.items for x in kv]
            for items in self._each(flat, scope, 0, ()):
                pairs = tuple(zip(items[::2], items[1::2]))
                yield collapse(ast.Object(pairs, t.location))
        elif tt in (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr):
            yield from self.comprehension(t, scope)
        elif tt is ast.TemplateString:
            yield from self.template(t, scope)
        elif tt is FuncRef:
            raise EvalError(f"{t.name} is a function, not a value", t.location)
        else:
            yield t  # already a partial evaluation term (Known or residual)

    def _each(self, terms: list[Any], scope: Scope, i: int, done: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        """The values of ``terms``, evaluated in order, one tuple per combination."""
        if i == len(terms):
            yield done
            return
        for v in self.term(terms[i], scope):
            yield from self._each(terms, scope, i + 1, done + (v,))

    # -- calls -------------------------------------------------------------------------------

    def call(self, t: ast.Call, scope: Scope, statement: bool) -> Iterator[Any]:
        op = t.op
        if op in _PRINT:
            yield TRUE  # print has no effect on what the residual queries say
            return
        node = self.tree.functions.get(op)
        for args in self._each(list(t.args), scope, 0, ()):
            plugged = [self.env.plug(a) for a in args]
            if node is not None:
                yield from self.call_function(node, op, plugged, statement, t.location)
                continue
            b = self.tree.builtin(op)
            if b is None:
                raise PartialEvalError(f"undefined function {ast.call_name_text(op)}", t.location)
            if all(type(a) is Known for a in plugged):
                value = self.known.call_builtin(op, [a.value for a in plugged], t.location)
                if value is UNDEF:
                    continue
                if b.relation:
                    for v in value:
                        yield Known(v)
                else:
                    yield Known(value)
                continue
            yield ast.Call(op, tuple(plugged), t.location, t.op_ref)

    # -- closures ----------------------------------------------------------------------------

    def closure_unknown(self, t: Any, scope: Scope) -> bool:
        env = self.env

        def var_unknown(name: str) -> bool:
            g = scope.var(name)
            return env.contains_unknown(ast.Var(g)) if (g in env.binds or env.is_unknown(g)) else False

        return self.deps.term(t, var_unknown)

    def comprehension(self, t: Any, scope: Scope) -> Iterator[Any]:
        if self.closure_unknown(t, scope):
            yield from self._residual_closure(self.instantiate(t, scope))
            return
        body = self.ordered(t.body, scope, set())
        tt = type(t)
        items: list[Any] = []
        residual = False
        for _ in self.body(body, scope):
            if tt is ast.ObjectCompr:
                for k in self.term(t.key, scope):
                    for v in self.term(t.value, scope):
                        k, v = self.env.plug(k), self.env.plug(v)
                        if type(k) is not Known or type(v) is not Known:
                            residual = True
                        items.append((k, v))
            else:
                for v in self.term(t.term, scope):
                    v = self.env.plug(v)
                    if type(v) is not Known:
                        residual = True
                    items.append(v)
        if residual:
            yield from self._residual_closure(self.instantiate(t, scope))
            return
        if tt is ast.ArrayCompr:
            yield Known([v.value for v in items])
        elif tt is ast.SetCompr:
            yield Known(frozenset([freeze(v.value) for v in items]))
        else:
            out: dict[Any, Any] = {}
            for k, v in items:
                fk = freeze(k.value)
                if fk in out and not _same(out[fk], v.value):
                    raise EvalError("object keys must be unique", t.location, code="eval_conflict_error")
                out[fk] = v.value
            yield Known(out)

    def _residual_closure(self, closure: Any) -> Iterator[Any]:
        """A comprehension that reads unknowns: saved bound to a variable of its
        own, which stands for it (OPA's compiler gives it one first)."""
        var = self.fresh()
        for _ in self.save_unify(var, closure):
            yield var

    def template(self, t: ast.TemplateString, scope: Scope) -> Iterator[Any]:
        terms = [p for p in t.parts if not isinstance(p, str)]
        for values in self._each(terms, scope, 0, ()):
            if any(type(v) is not Known for v in values):
                raise PartialEvalError("a template string with an unknown value", t.location)
            it = iter(values)
            parts = [p if isinstance(p, str) else next(it).value for p in t.parts]
            yield Known(rt_template(parts))

    # -- residual copies of source nodes -----------------------------------------------------

    def instantiate(self, node: Any, scope: Scope) -> Any:
        """A source node (term, statement, body) with its variables given their
        global names and the bound ones replaced by their values."""
        t = type(node)
        if t is ast.Var:
            if node.name in ROOTS:
                return node
            return self.env.plug(ast.Var(scope.var(node.name), node.location))
        if t is tuple:
            return tuple(self.instantiate(x, scope) for x in node)
        if t is Known or t is ast.Scalar or node is None or isinstance(node, (str, int, float, bool, ast.Location)):
            return node
        if dataclasses.is_dataclass(node) and t is not FuncRef:
            changes = {f.name: self.instantiate(getattr(node, f.name), scope) for f in dataclasses.fields(node) if f.name not in ("location", "op_ref", "text", "op", "raw")}
            return dataclasses.replace(node, **changes)  # type: ignore[type-var]
        return node

    def with_known(self, e: ast.Expr, scope: Scope) -> Iterator[Any]:
        """``expr with input... as v / data... as v``, everything known: evaluated with the replaced values."""
        new_input = self.input
        for w in e.with_mods:
            target = w.target
            head = target.head
            if not (isinstance(head, ast.Var) and head.name == "input") or not all(isinstance(p, ast.Scalar) for p in target.path):
                raise PartialEvalError("`with` on anything but input is not partially evaluated", w.location)
            values = [v for v in self.term(w.value, scope)]
            if len(values) != 1 or type(values[0]) is not Known:
                raise PartialEvalError("`with` of an unknown value", w.location)
            new_input = _replaced(new_input, [p.value for p in target.path], values[0].value)  # type: ignore[union-attr]
        old = self.input, self.known
        new = new_input, self.known.with_input(new_input)
        inner = ast.Expr(e.statement, False, (), e.location)
        self.input, self.known = new
        try:
            for _ in self.expr(inner, scope):
                # The replacement holds for this expression only.
                self.input, self.known = old
                try:
                    yield
                finally:
                    self.input, self.known = new
        finally:
            self.input, self.known = old


def _same(a: Any, b: Any) -> bool:
    from pyrego.runtime.values import equal

    return equal(a, b)


def _replaced(doc: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    base = dict(doc) if type(doc) is dict else {}
    key = path[0]
    base[freeze(key)] = _replaced(base.get(freeze(key), UNDEF), path[1:], value)
    return base


__all__ = ["CallsMixin"]
