"""A body's expressions with the steps OPA's order needs under strict builtin errors.

Index guards and builtin calls evaluated first (:mod:`pyrego.compile.eval_order`)
that matter only with strict builtin errors, a setting of the evaluation and
not of the code, are written in a block ``if ctx.cfg.strict:``: an evaluation
without strict errors skips them at the cost of one test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.codegen.lines import LineWriter
from pyrego.compile.eval_order import comprehension_body, strict_calls_first, strict_only
from pyrego.compile.rewrite import bind_iterating_operands, iterates_in_collection

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen


class StrictBlocks(LineWriter):
    """The part of :class:`pyrego.codegen.body.BodyEmitter` that writes those blocks."""

    ctx: str
    bound: set[str]
    gen: ModuleGen
    in_query: bool

    def tmp(self, prefix: str = "t") -> str:
        raise NotImplementedError

    def state(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def restore(self, st: tuple[Any, ...]) -> None:
        raise NotImplementedError

    def expr(self, e: ast.Expr, record_as: str | None = None) -> None:
        raise NotImplementedError

    def exprs_in_order(self, ordered: ast.Body) -> None:
        """Write ``ordered`` (a body in its order), each run of strict-only
        expressions in one block, and before each expression the builtin
        calls OPA evaluates first under strict errors."""
        run: list[ast.Expr] = []
        pending = list(ordered)
        at = 0
        while at < len(pending):
            e = pending[at]
            at += 1
            if iterates_in_collection(e, self.bound):
                # (Decided here, where what is bound is known exactly.)
                pending[at:at] = bind_iterating_operands(e, equality_unifies=not self.in_query, stage=self.tmp("i"))
                continue
            if strict_only(e):
                run.append(e)
                continue
            if self.gen.strict_errors:
                run += strict_calls_first(e, self.bound)
            if run:
                self.strict_guards(run)
                run = []
            self.expr(e)
        if run:
            self.strict_guards(run)

    def query_exprs_in_order(self, ordered: ast.Body, body: ast.Body, record: dict[int, str]) -> None:
        """Write a query's ``ordered`` body, each expression recording its
        value in the name ``record`` gives its index in ``body``."""
        index = {id(e): i for i, e in enumerate(body)}
        for e in ordered:
            # Those made for a negation record nothing (a negation's own record is True, as preset).
            record_as = record.get(index.get(id(e), -1))
            pieces = [e]
            if iterates_in_collection(e, self.bound):
                pieces = bind_iterating_operands(e, equality_unifies=False, stage=self.tmp("i"))
            for piece in pieces:
                self.calls_first(piece)
                self.expr(piece, record_as=record_as if piece is pieces[-1] else None)

    def comprehension_body(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> ast.Body:
        """``t``'s body; in code for strict errors, with the calls of its
        term after it (:func:`pyrego.compile.eval_order.comprehension_body`)."""
        return comprehension_body(t) if self.gen.strict_errors else t.body

    def calls_first(self, e: ast.Expr) -> None:
        """Before a query's expression (written alone: its value is
        recorded), the builtin calls OPA evaluates first under strict errors
        (its query compiler moves nested calls out too)."""
        if self.gen.strict_errors:
            pre = strict_calls_first(e, self.bound)
            if pre:
                self.strict_guards(pre)

    def strict_guards(self, guards: list[ast.Expr]) -> None:
        """Expressions needed only with strict builtin errors: run in such
        evaluations alone. What they bind and look up is theirs: the code
        after the block knows none of it."""
        st = self.state()
        self.w(f"if {self.ctx}.cfg.strict:")
        self.indent += 1
        start = len(self.lines)
        for e in guards:
            self.expr(e)
        if len(self.lines) == start:
            self.w("pass")
        self.restore(st)
        self.end_block()


__all__ = ["StrictBlocks"]
