"""Comprehensions in generated code: a body's solutions collected into a value.

A comprehension whose head reads a variable only a ref of that head binds
(``[xs[i] | not f(ys[i])]``) is safe in OPA, whose compiler moves the head's
terms into the body: such a comprehension is written in that form
(:func:`pyrego.compile.body_order.with_head_in_body`).
"""

from __future__ import annotations

from pyrego.ast import nodes as ast
from pyrego.codegen.strict_blocks import StrictBlocks
from pyrego.compile.body_order import check_head_vars, naming_term_vars, with_head_in_body
from pyrego.errors import RegoUnsafeVarError


class ComprehensionWriter(StrictBlocks):
    """The part of :class:`pyrego.codegen.body.BodyEmitter` that writes comprehensions."""

    ordered: bool
    outer: set[str]
    # The expression being written: OPA names a comprehension head's unbound
    # variable at the expression holding the comprehension.
    expr_at: ast.Location | None = None

    def term(self, t: ast.Term, check: bool = True) -> str:
        raise NotImplementedError

    def begin_once(self) -> None:
        raise NotImplementedError

    def body(self, body: ast.Body, *, required: set[str] | None = None, location: ast.Location | None = None, record: dict[int, str] | None = None) -> None:
        raise NotImplementedError

    def comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> str:
        start, st, outer, ordered = len(self.lines), self.state(), self.outer, self.ordered
        try:
            return self.comprehension_as_written(t)
        except RegoUnsafeVarError:
            moved = with_head_in_body(t, self.bound, outer | self.bound, self.gen.arity)
            if moved is None:
                raise
        # (The failed attempt's code and bindings are dropped.)
        del self.lines[start:]
        self.restore(st)
        self.outer, self.ordered = outer, ordered
        return self.comprehension_as_written(moved)

    def comprehension_as_written(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> str:
        acc = self.tmp("acc")
        if isinstance(t, ast.ArrayCompr):
            self.w(f"{acc} = []")
        elif isinstance(t, ast.SetCompr):
            self.w(f"{acc} = set()")
        else:
            self.w(f"{acc} = {{}}")
        st = self.state()
        ordered = self.ordered
        # An array's order is visible: iterate as OPA does (sorted sets and objects).
        self.ordered = ordered or isinstance(t, ast.ArrayCompr)
        self.begin_once()
        naming_term_vars(t, self.comprehension_body(t), self.body, self.bound, self.outer | self.bound, self.gen.arity)
        check_head_vars(t, self.bound, self.expr_at or t.location)
        if isinstance(t, ast.ArrayCompr):
            self.w(f"{acc}.append({self.term(t.term)})")
        elif isinstance(t, ast.SetCompr):
            v = self.term(t.term)
            self.w(f"{acc}.add(freeze({v}))")
        else:
            k = self.term(t.key)
            v = self.term(t.value)
            # OPA places a key conflict at the comprehension's key term.
            self.w(f"rt_obj_put({acc}, {k}, {v}, {self.gen.loc(t.key.location or t.location)})")
        ctx = self.ctx
        self.ordered = ordered
        self.restore(st)
        self.ctx = ctx
        return acc
