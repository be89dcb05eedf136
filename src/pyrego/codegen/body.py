"""Code generation for rule bodies, expressions and terms.

A body becomes straight-line Python: each expression adds guards (``if
<fails>: <fail>``) and, where it iterates, a ``for`` loop; the rest of the body
is written inside. ``self.fail`` is the statement that abandons the current
solution: ``continue`` inside a loop, ``break`` at the top of a ``for _ in
ONCE`` block. Nothing from the policy text reaches the output except through
``repr()`` of a checked str/int/float or the constants table (DESIGN.md §3);
every Python name is the generator's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.builtins.rego import metadata_value
from pyrego.codegen.comprehensions import ComprehensionWriter
from pyrego.codegen.docs import some_in_collection
from pyrego.codegen.key_order import query_var_names, rule_var_names
from pyrego.codegen.lines import LineWriter
from pyrego.codegen.rule_calls import document_call
from pyrego.compile.base import FuncRef, RuleNode, data_function_name
from pyrego.compile.body_order import reorder_body
from pyrego.compile.ground import KeyNames, ground_value, in_build_order, is_ground, iterated_as_built
from pyrego.compile.optimize import hoist_checks
from pyrego.compile.rewrite import bind_negated_operands
from pyrego.compile.safety import ROOTS, has_unbound, iterable_only, stmt_vars, term_vars, unsafe_var_message
from pyrego.compile.with_checks import with_targets
from pyrego.errors import RegoCompileError, RegoTypeError, RegoUnsafeVarError
from pyrego.runtime.helpers import INDEX_TEXT
from pyrego.runtime.values import equal

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen

COMPARE_OPS = {"equal": "==", "neq": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_CMP_HELPER = {"==": "rt_eq", "!=": "rt_ne", "<": "rt_lt", "<=": "rt_le", ">": "rt_gt", ">=": "rt_ge"}


class BodyEmitter(ComprehensionWriter, LineWriter):
    """Writes the code of one Python function (in the compact form where ``gen.compact``)."""

    #: Whether cheap tests move ahead of costlier expressions (off where each
    #: expression must run in OPA's order: the instrumented program).
    hoist = True
    prebound: set[str] | frozenset[str] = frozenset()  # (a rule's key bound before its body: codegen.set_members)
    var_names: KeyNames | None = None  # OPA's names of a query's variables (None: the rules', codegen.key_order)

    def __init__(self, gen: ModuleGen, indent: int = 1) -> None:
        super().__init__(indent, gen.compact)
        self.gen = gen
        self.ctx = "ctx"
        # The location constant of the expression being written (for deadline checks).
        self.where = "None"
        self.vars: dict[str, str] = {}
        self.bound: set[str] = set()
        self.loops = 0
        self._tmp = 0
        # Variables visible from enclosing scopes (closure capture analysis).
        self.outer: set[str] = set()
        # Queries of one expression without iteration report its value as is.
        self.capture_values = False
        self.in_query = False  # a query's bodies keep `==` a call (pyrego.compile.rewrite)
        # Iterate sets and objects in OPA's sorted order where order shows (strict errors: everywhere).
        self.ordered = gen.strict_errors
        # Lookups already computed on this code path: (base, key, ...) -> temp (input and bound
        # variables never change during an evaluation: a repeated ``input.user.x`` reuses it).
        self.cse: dict[tuple[str, ...], str] = {}
        # The rule being compiled (for rego.metadata.*) and its document, None in queries.
        self.rule: ast.Rule | None = None
        self.node: RuleNode | None = None
        # Whether a rule definition's code assigns its result variable ``r``.
        self.uses_r = False
        # Python names known not to be UNDEF on this code path (their test
        # was written already), and the names of lookups and calls whose
        # test was left to the one expression that uses them (see term()).
        self.checked: set[str] = set()
        self.unchecked: set[str] = set()

    # -- writing -----------------------------------------------------------

    def tmp(self, prefix: str = "t") -> str:
        self._tmp += 1
        return f"{prefix}{self._tmp}"

    def items_of(self, coll: str) -> str:
        """The code iterating ``coll``'s keys and values (in OPA's order where that shows)."""
        return f"rt_items_ordered({self.ctx}, {coll})" if self.ordered else f"rt_items({coll})"

    def values_of(self, coll: str) -> str:
        """The code iterating ``coll``'s values (in OPA's order where that shows)."""
        return f"rt_values_ordered({self.ctx}, {coll})" if self.ordered else f"rt_values({coll})"

    def open_loop(self, header: str) -> None:
        self.w(header)
        self.indent += 1
        self.loops += 1
        self.fail = "continue"
        self.deadline_check()

    def deadline_check(self) -> None:
        # Loops are where an evaluation can run long: honour the time limit there (compact form; hot code tests it inline).
        self.w(f"rt_check_deadline({self.ctx}, {self.where})")

    def check_defined(self, v: str) -> None:
        """Fail when ``v`` is UNDEF (unless that was tested on this path already)."""
        if v not in self.checked:
            self.guard(f"{v} is UNDEF")
            self.checked.add(v)

    def state(self) -> tuple[Any, ...]:
        return (self.indent, self.fail, self.loops, dict(self.vars), set(self.bound), self.ctx, dict(self.cse), set(self.checked))

    def restore(self, st: tuple[Any, ...]) -> None:
        self.indent, self.fail, self.loops, self.ctx = st[0], st[1], st[2], st[5]
        self.vars, self.bound, self.cse, self.checked = dict(st[3]), set(st[4]), dict(st[6]), set(st[7])

    def begin_once(self) -> None:
        """Open a ``for _ in ONCE`` block so ``break`` abandons the solution."""
        self.w("for _ in ONCE:")
        self.indent += 1
        self.fail = "break"

    # -- variables -------------------------------------------------------------

    def bind(self, name: str, expr: str) -> None:
        if expr.isidentifier():
            # A name the generator made (a temporary, loop variable or
            # parameter), assigned once on this path: use it as it is.
            self.vars[name] = expr
        else:
            py = self.vars.get(name)
            if py is None:
                py = self.vars[name] = self.tmp("v")
            self.w(f"{py} = {expr}")
        self.bound.add(name)

    def is_unbound(self, t: ast.Term) -> bool:
        return isinstance(t, ast.Var) and t.name not in ROOTS and t.name not in self.bound

    def has_unbound(self, t: ast.Term) -> bool:
        return has_unbound(t, self.bound)

    # -- bodies ------------------------------------------------------------------

    def body(self, body: ast.Body, *, required: set[str] | None = None, location: ast.Location | None = None, record: dict[int, str] | None = None) -> None:
        """Emit ``body`` (reordered for safety); on return we are at the innermost level."""
        outer = self.outer | self.bound
        # Each expression's variables, walked once here for hoist_checks too.
        own_vars = {id(e): stmt_vars(e.statement, set()) for e in body}
        saved_outer = self.outer
        self.outer = outer.union(*own_vars.values())
        if record is not None:  # (a query: its expressions keep their nested calls, each reporting its own value)
            self.in_query, self.var_names = True, self.var_names or query_var_names(body)
        functions = self.gen.functions if record is None else None
        now, self.prebound = self.bound - self.prebound, frozenset()  # (keys bound first: ordered as unbound, see set_members)
        ordered, _ = reorder_body(body, now, self.outer, self.gen.arity, required=required, location=location, bind_operands=False, functions=functions)
        for e in ordered if len(ordered) != len(body) else ():  # made for nested calls
            own_vars.setdefault(id(e), stmt_vars(e.statement, set()))
        if record is None and self.hoist:
            ordered = tuple(hoist_checks(ordered, now, self.gen.arity, self.gen.pure_data_ref, own_vars))
        # After hoist_checks, which would move these lookups ahead of cheaper checks.
        ordered = bind_negated_operands(ordered, equality_unifies=not self.in_query)
        if record is None:
            self.exprs_in_order(ordered)
        else:
            self.query_exprs_in_order(ordered, body, record)
        self.outer = saved_outer

    def expr(self, e: ast.Expr, record_as: str | None = None) -> None:
        saved_ctx, saved_at, self.expr_at = self.ctx, self.expr_at, e.location
        self.where = self.gen.loc(e.location)  # where a loop of this expression is cancelled
        if e.with_mods:
            self.with_mods(e)
        if e.negated:
            self.negation(e)
            if record_as:
                self.w(f"{record_as} = True")
        else:
            self.statement(e.statement, record_as)
        self.ctx, self.expr_at = saved_ctx, saved_at

    def statement(self, s: ast.Statement, record_as: str | None = None) -> None:
        if isinstance(s, ast.Assign) or isinstance(s, ast.Unify):
            self.unify(s.lhs, s.rhs, s.location)
            if record_as:
                self.w(f"{record_as} = True")
        elif isinstance(s, ast.SomeVars):
            if record_as:
                self.w(f"{record_as} = True")
        elif isinstance(s, ast.SomeIn):
            self.some_in(s)
            if record_as:
                self.w(f"{record_as} = True")
        elif isinstance(s, ast.Every):
            self.every(s)
            if record_as:
                self.w(f"{record_as} = True")
        else:
            self.term_statement(s, record_as)

    def term_statement(self, t: ast.Term, record_as: str | None) -> None:
        if record_as and self.capture_values:
            # A one-expression query reports its value, even false (OPA's value capture).
            if isinstance(t, ast.Scalar):
                self.w(f"{record_as} = {self.gen.literal(t.value)}")
            else:
                self.w(f"{record_as} = {self.term(t)}")
            return
        if isinstance(t, ast.Call) and t.op in COMPARE_OPS and len(t.args) == 2 and record_as is None and not self.mocked_compare(t.op, True):
            a, b = t.args
            self.compare(COMPARE_OPS[t.op], a, b)
            return
        if isinstance(t, ast.Call) and t.op == "internal.member_2" and len(t.args) == 2 and record_as is None and not self.has_unbound(t.args[0]):
            coll_t = t.args[1]
            const = self.gen.const_member_set(coll_t)
            if const is not None:
                name, all_str = const
                if all_str:
                    # UNDEF is no string: this test fails on it too (rt_in_strings:
                    # an object of no Rego type is compared as rt_member does).
                    x = self.term(t.args[0], check=False)
                    if isinstance(t.args[0], ast.Scalar):
                        # A literal: a string is looked up; any other value is in no array of strings.
                        self.guard(f"{x} not in {name}" if type(t.args[0].value) is str else "True")
                    else:
                        self.guard(f"type({x}) is not str and ({x} is UNDEF or type({x}) in PLAIN_TYPES or not rt_in_strings({x}, {name})) or {x} not in {name}")
                    self.checked.add(x)
                else:
                    x = self.term(t.args[0])
                    self.guard(f"freeze({x}) not in {name}")
                return
            x = self.term(t.args[0])
            # rt_member is false for an UNDEF collection: no test of its own.
            coll = self.term(coll_t, check=False)
            self.guard(f"not rt_member({x}, {coll})")
            self.checked.add(coll)
            return
        if isinstance(t, ast.Scalar):
            if record_as:
                self.w(f"{record_as} = {self.gen.literal(t.value)}")
            if t.value is False:  # recorded or not, a false expression fails
                self.w(self.fail)
            return
        if record_as:
            v = self.term(t)
            self.w(f"{record_as} = {v}")
            self.guard(f"{v} is False")
            return
        v = self.term(t, check=False)
        if v in self.unchecked and v not in self.checked:
            self.guard(f"{v} is UNDEF or {v} is False")
            self.checked.add(v)
        else:
            self.guard(f"{v} is False")

    def mocked_compare(self, op: str, statement: bool) -> bool:
        """Whether a comparison may be replaced by ``with``: OPA turns an
        expression that is only ``a == b`` into unification, which no
        ``with`` replaces."""
        return op in self.gen.mockable and not (statement and op == "equal")

    def terms_in_order(self, terms: tuple[ast.Term, ...] | list[ast.Term]) -> list[str]:
        """Compile ``terms``; ones that bind variables by iteration go first."""
        ranks = [(0 if self._iterable_only(t) else 2) if self.has_unbound(t) else 1 for t in terms]
        if all(r == 1 for r in ranks):
            return [self.term(t) for t in terms]
        out: list[str | None] = [None] * len(terms)
        for i in sorted(range(len(terms)), key=ranks.__getitem__):
            out[i] = self.term(terms[i])
        return out  # type: ignore[return-value]

    def compare(self, op: str, a: ast.Term, b: ast.Term) -> None:
        if op == "==" and self.require_literal(a, b):
            return
        if op == "!=" and self.refuse_literal(a, b):
            return
        x, y = self.terms_in_order((a, b))
        if op in ("==", "!="):
            cond = self.eq_expr(x, a, y, b)
            if op == "==":
                self.guard(f"not ({cond})")
            else:
                self.guard(f"{cond}")
            return
        self.guard(f"not {_CMP_HELPER[op]}({x}, {y})")

    @staticmethod
    def _literal_operand(a: ast.Term, b: ast.Term) -> tuple[Any, ast.Term] | None:
        """(literal value, other term) when exactly one of ``a``, ``b`` is a scalar literal."""
        if isinstance(b, ast.Scalar):
            return None if isinstance(a, ast.Scalar) else (b.value, a)
        if isinstance(a, ast.Scalar):
            return a.value, b
        return None

    def require_literal(self, a: ast.Term, b: ast.Term) -> bool:
        """``a == b`` where one side is a scalar literal: fail unless equal.

        The other side's UNDEF test is left out: no literal equals UNDEF, so
        the equality test fails on it as well. Returns False (writing
        nothing) when neither side, or both, are literals."""
        operands = self._literal_operand(a, b)
        if operands is None:
            return False
        lit, other = operands
        v = self.term(other, check=False)
        if isinstance(lit, str):
            self.guard(f"{v} != {self.gen.literal(lit)}")
        elif lit is True or lit is False or lit is None:
            self.guard(f"{v} is not {lit!r}")
        else:
            self.guard(f"not (type({v}) is not bool and {v} == {self.gen.literal(lit)})")
        self.checked.add(v)
        return True

    def refuse_literal(self, a: ast.Term, b: ast.Term) -> bool:
        """``a != b`` where one side is a scalar literal: fail when equal, or
        when the other side is UNDEF (one test for both)."""
        operands = self._literal_operand(a, b)
        if operands is None:
            return False
        lit, other = operands
        v = self.term(other, check=False)
        if isinstance(lit, str):
            cond = f"{v} == {self.gen.literal(lit)}"
        elif lit is True or lit is False or lit is None:
            cond = f"{v} is {lit!r}"
        else:
            cond = f"(type({v}) is not bool and {v} == {self.gen.literal(lit)})"
        if v in self.unchecked and v not in self.checked:
            cond = f"{v} is UNDEF or {cond}"
        self.guard(f"{cond}")
        self.checked.add(v)
        return True

    def eq_expr(self, x: str, a: ast.Term, y: str, b: ast.Term) -> str:
        """A Python condition for Rego equality, specialised on literal operands."""
        if isinstance(a, ast.Scalar) and isinstance(b, ast.Scalar):
            return repr(equal(a.value, b.value))
        for lit, other in ((b, x), (a, y)):
            if isinstance(lit, ast.Scalar):
                v = lit.value
                if isinstance(v, str):
                    return f"{other} == {self.gen.literal(v)}"
                if v is True or v is False or v is None:
                    return f"{other} is {v!r}"
                return f"(type({other}) is not bool and {other} == {self.gen.literal(v)})"
        return f"rt_eq({x}, {y})"

    # -- unification --------------------------------------------------------------

    def unify(self, a: ast.Term, b: ast.Term, location: ast.Location) -> None:
        if self.is_unbound(a):
            if self.has_unbound(b) and not self._iterable_only(b):
                raise RegoUnsafeVarError(_unsafe(a), location)
            self.bind(a.name, self.term(b))  # type: ignore[union-attr]
            return
        if self.is_unbound(b):
            if self.has_unbound(a) and not self._iterable_only(a):
                raise RegoUnsafeVarError(_unsafe(b), location)
            self.bind(b.name, self.term(a))  # type: ignore[union-attr]
            return
        if isinstance(a, ast.Array) and isinstance(b, ast.Array):
            if len(a.items) != len(b.items):
                self.w(self.fail)
                return
            self._unify_pairs(list(zip(a.items, b.items)), location)
            return
        if isinstance(a, ast.Object) and isinstance(b, ast.Object) and (self.has_unbound(a) or self.has_unbound(b)):
            if not all(is_ground(k) for k, _ in a.items + b.items):
                raise RegoCompileError("object keys in patterns must be ground", location)
            ka = {repr(ground_value(k)): v for k, v in a.items}
            kb = {repr(ground_value(k)): v for k, v in b.items}
            if set(ka) != set(kb):
                self.w(self.fail)
                return
            self._unify_pairs([(ka[k], kb[k]) for k in ka], location)
            return
        if isinstance(a, _PATTERNS) and self.has_unbound(a):
            self.unify_value(a, self.term(b), location)
            return
        if isinstance(b, _PATTERNS) and self.has_unbound(b):
            self.unify_value(b, self.term(a), location)
            return
        if self.require_literal(a, b):
            return
        x = self.term(a)
        y = self.term(b)
        self.guard(f"not ({self.eq_expr(x, a, y, b)})")

    def _iterable_only(self, t: ast.Term) -> bool:
        return iterable_only(t, self.bound, self.gen.arity)

    def _unify_pairs(self, pairs: list[tuple[ast.Term, ast.Term]], location: ast.Location) -> None:
        pending = list(pairs)
        while pending:
            for i, (x, y) in enumerate(pending):
                if not (self.has_unbound(x) and self.has_unbound(y)) or (
                    isinstance(x, (ast.Array, ast.Object)) and isinstance(y, (ast.Array, ast.Object))
                ):
                    del pending[i]
                    self.unify(x, y, location)
                    break
                if self._iterable_only(x) or self._iterable_only(y):
                    del pending[i]
                    self.unify(x, y, location)
                    break
            else:
                raise RegoUnsafeVarError(_unsafe(next(iter(sorted(term_vars(pending[0][0], set()) - self.bound)))), location)

    def unify_value(self, pattern: ast.Term, value: str, location: ast.Location) -> None:
        """Destructure the Python value expression ``value`` against ``pattern``."""
        if isinstance(pattern, ast.Var) and pattern.name not in ROOTS:
            if pattern.name in self.bound:
                self.guard(f"not rt_eq({self.vars[pattern.name]}, {value})")
            else:
                self.bind(pattern.name, value)
            return
        if not self.has_unbound(pattern) or (not isinstance(pattern, (ast.Array, ast.Object)) and self._iterable_only(pattern)):
            # (A ref whose unbound variables its own iteration binds, as
            # ``input.a[i]`` inside ``{"k": input.a[i]} = v``, is compared
            # for each of its values.)
            y = self.term(pattern)
            self.guard(f"not ({self.eq_expr(value, ast.Var('$v'), y, pattern)})")
            return
        if not value.isidentifier():
            t = self.tmp()
            self.w(f"{t} = {value}")
            value = t
        if isinstance(pattern, ast.Array):
            n = len(pattern.items)
            self.guard(f"not rt_is_array({value}) or len({value}) != {n}")
            for i, item in enumerate(pattern.items):
                self.unify_value(item, f"{value}[{i}]", location)
            return
        if isinstance(pattern, ast.Object):
            n = len(pattern.items)
            self.guard(f"type({value}) is not dict or len({value}) != {n}")
            for k, v in pattern.items:
                if self.has_unbound(k):
                    raise RegoCompileError("object keys in patterns must be ground", location)
                key = self.term(k)
                kt = self.tmp()
                key_expr = key if isinstance(k, ast.Scalar) and isinstance(k.value, str) else f"freeze({key})"
                self.w(f"{kt} = {value}.get({key_expr}, UNDEF)")
                self.guard(f"{kt} is UNDEF")
                self.unify_value(v, kt, location)
            return
        raise RegoUnsafeVarError(_unsafe(sorted(term_vars(pattern, set()) - self.bound)[0]), location)

    # -- some / every / not --------------------------------------------------------

    def some_in(self, s: ast.SomeIn) -> None:
        coll = some_in_collection(self.gen, self, s)
        built = iterated_as_built(s.collection)
        if s.key is None:
            v = self.tmp("i")
            self.open_loop(f"for {v} in {f'rt_values_built({coll})' if built else self.values_of(coll)}:")
            self.unify_value(s.value, v, s.location)
        else:
            k = self.tmp("k")
            v = self.tmp("i")
            self.open_loop(f"for {k}, {v} in {f'rt_items_built({coll})' if built else self.items_of(coll)}:")
            self.unify_value(s.key, k, s.location)
            self.unify_value(s.value, v, s.location)

    def every(self, s: ast.Every) -> None:
        dom = self.tmp("d")
        self.w(f"{dom} = {self.term(s.domain)}")
        # A domain that is not a collection makes `every` undefined, not true.
        # (rt_plain: a caller's object of another type is an error, not undefined.)
        self.guard(f"type({dom}) not in COLLECTION_TYPES and rt_plain({dom})")
        ok = self.tmp("ev")
        self.w(f"{ok} = True")
        st = self.state()
        k = self.tmp("k")
        v = self.tmp("i")
        self.w(f"for {k}, {v} in {self.items_of(dom)}:")
        self.indent += 1
        self.loops += 1
        self.deadline_check()
        found = self.tmp("f")
        self.w(f"{found} = False")
        if s.key is not None:
            self.bind(s.key.name, k)
        self.bind(s.value.name, v)
        self.begin_once()
        inner = self.indent
        self.body(s.body)
        self.w(f"{found} = True")
        self.w("break")
        self.indent = inner - 1
        self.w(f"if not {found}:")
        self.w(f"    {ok} = False")
        self.w("    break")
        self.restore(st)
        self.guard(f"not {ok}")

    def negation(self, e: ast.Expr) -> None:
        flag = self.tmp("n")
        before = self.last_test()
        self.w(f"{flag} = True")
        start = len(self.lines) - 1
        st = self.state()
        self.begin_once()
        inner = ast.Expr(e.statement, False, (), e.location)
        # Only wildcards may be bound inside a negation; order them locally.
        self.body((inner,))
        # Compact code: a negated test is that test's condition negated.
        lone = self.lone_test(start, before)
        if lone is None:
            self.w(f"{flag} = False")
            self.w("break")
        ctx = self.ctx
        self.restore(st)
        self.ctx = ctx
        self.guard(f"not {flag}" if lone is None else f"not ({lone})")

    def with_mods(self, e: ast.Expr) -> None:
        entries = []
        for t in with_targets(self.gen, e, self.node):
            if t.kind == "func":
                entries.append(f"('func', {self.gen.literal(t.name)}, {self.function_replacement(t.mod.value)})")
                continue
            value = self.term(t.mod.value)
            if t.kind == "bad":
                self.w(f"rt_conflict('bad document path', {self.gen.loc(t.mod.location)})")
            else:
                entries.append(f"({t.kind!r}, {self.gen.const(t.path)}, {value})")
        wctx = self.tmp("w")
        self.w(f"{wctx} = WITH({self.ctx}, ({''.join(x + ', ' for x in entries)}))")
        self.ctx = wctx

    def function_replacement(self, term: ast.Term) -> str:
        """A callable ``(ctx, *args)`` that replaces a function under ``with``."""
        if isinstance(term, FuncRef):
            return self.gen.builtin_caller(term.name)
        if isinstance(term, ast.Ref) and isinstance(term.head, ast.Var):
            name = term.head.name + "".join("." + str(p.value) for p in term.path if isinstance(p, ast.Scalar))
            if term.head.name == "data":
                name = data_function_name(term.path) or name  # (a[1].x: named as its calls are)
            if name in self.gen.tree.functions:
                return self.gen.function_name(self.gen.tree.functions[name])
        return f"rt_const_fn({self.term(term)})"

    # -- terms ------------------------------------------------------------------------

    def term(self, t: ast.Term, check: bool = True) -> str:
        """A Python expression for ``t``'s value; emits guards that fail on undefined.

        ``check=False``: the caller's own test fails on UNDEF, so a lookup or
        call may leave its UNDEF test out (its name is then in ``unchecked``)."""
        if isinstance(t, ast.Scalar):
            return self.gen.literal(t.value)
        if isinstance(t, ast.Var):
            if t.name == "input":
                v = self.tmp()
                self.assign(v, f"{self.ctx}.input")
                self.guard(f"{v} is UNDEF")
                return v
            if t.name == "data":
                return self.gen.data_ref(self, ())
            if t.name not in self.bound:
                raise RegoUnsafeVarError(_unsafe(t), t.location)
            return self.vars[t.name]
        if isinstance(t, ast.Ref):
            return self.ref(t, check)
        if is_ground(t):
            return self.gen.const(ground_value(t))
        if isinstance(t, ast.Array):
            return "[" + ", ".join(self.term(x) for x in t.items) + "]"
        if isinstance(t, ast.SetTerm):
            items = [self.term(x) for x in t.items]
            return f"rt_set(({', '.join(items)}{',' if len(items) == 1 else ''}))"
        if isinstance(t, ast.Object):
            plain = all(isinstance(k, ast.Scalar) and isinstance(k.value, str) for k, _ in t.items) and len({k.value for k, _ in t.items}) == len(t.items)  # type: ignore[union-attr]
            pairs = [(self.term(k), self.term(v)) for k, v in (t.items if plain else in_build_order(t.items, self.var_names or rule_var_names(self.gen)))]
            if plain:
                return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
            return f"rt_object(({''.join(f'({k}, {v}), ' for k, v in pairs)}), {self.gen.loc(t.location)})"
        if isinstance(t, ast.Call):
            return self.call(t, check)
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
            return self.comprehension(t)
        if isinstance(t, ast.TemplateString):
            parts = []
            for p in t.parts:
                parts.append(self.gen.literal(p) if isinstance(p, str) else self.capture(p))
            return f"rt_template([{', '.join(parts)}])"
        raise RegoCompileError(f"cannot compile {type(t).__name__}", getattr(t, "location", None))

    def capture(self, t: ast.Term) -> str:
        """The value of ``t`` or UNDEF, without failing the body."""
        out = self.tmp("c")
        self.w(f"{out} = UNDEF")
        st = self.state()
        self.begin_once()
        v = self.term(t)
        self.w(f"{out} = {v}")
        self.restore(st)
        return out

    def ref(self, t: ast.Ref, check: bool = True) -> str:
        head = t.head
        path = t.path
        if isinstance(head, ast.Var) and head.name == "data":
            return self.gen.data_ref(self, path, check)
        input_ctx = None
        if isinstance(head, ast.Var) and head.name == "input":
            key: tuple[str, ...] = ("input", self.ctx)
            base = self.cse.get(key, "")
            if not base:
                # Assigned by walk_path, with the lookups that follow.
                base = self.cse[key] = self.tmp()
                input_ctx = self.ctx
        else:
            base = self.term(head)
            key = ("value", base)
        return self.walk_path(base, path, cse_key=key, check=check, input_ctx=input_ctx)

    def walk_path(
        self,
        base: str,
        path: tuple[ast.Term, ...],
        data_keys: bool = False,
        cse_key: tuple[str, ...] | None = None,
        check: bool = True,
        input_ctx: str | None = None,
    ) -> str:
        """Look up ``path`` under the value ``base``; unbound vars iterate.

        ``data_keys``: ``base`` is base data, whose objects are keyed by
        strings, so a number key also finds its string form (``data[2]``).
        ``input_ctx``: ``base`` is still to be assigned ``<input_ctx>.input``."""
        getter = "rt_data_get" if data_keys else "rt_get"
        cur = base
        # Literal-key lookups not written yet: one statement does a run of them.
        run_base, run = base, []
        for p in path:
            if cse_key is not None and isinstance(p, ast.Scalar) and isinstance(p.value, str):
                # Keyed by the name holding the prefix's value and this key: a
                # key of the whole prefix would make long refs quadratic.
                cse_key = (cur, p.value)
                known = self.cse.get(cse_key)
                if known is not None:
                    cur = run_base = known
                    continue
            else:
                cse_key = None
            nxt = self.tmp()
            if isinstance(p, ast.Scalar) and isinstance(p.value, str) and not (data_keys and INDEX_TEXT.fullmatch(p.value)):
                run.append((nxt, self.gen.literal(p.value)))
                if cse_key is not None:
                    self.cse[cse_key] = nxt
                cur = nxt
                continue
            if run or input_ctx is not None:
                self.write_lookups(run_base, run, input_ctx)
                run, input_ctx = [], None
            if isinstance(p, ast.Var) and p.name not in self.bound and p.name not in ROOTS:
                k = self.tmp("k")
                self.open_loop(f"for {k}, {nxt} in {self.items_of(cur)}:")
                self.checked.add(nxt)  # collections never hold UNDEF
                self.bind(p.name, k)
            elif isinstance(p, (ast.Array, ast.Object)) and self.has_unbound(p):
                k = self.tmp("k")
                self.open_loop(f"for {k}, {nxt} in {self.items_of(cur)}:")
                self.checked.add(nxt)
                self.unify_value(p, k, p.location)
            else:
                key = self.term(p)
                self.assign(nxt, f"{getter}({cur}, {key})")
            cur = run_base = nxt
        if run or input_ctx is not None:
            self.write_lookups(run_base, run, input_ctx)
        self.result_check(cur, check)
        return cur

    def write_lookups(self, base: str, run: list[tuple[str, str]], input_ctx: str | None) -> None:
        """Write consecutive literal-key lookups (``run``: result name, key
        literal) under ``base``, which ``input_ctx`` (when given) says to
        assign ``<input_ctx>.input`` first. Compact forms (one statement for
        them all); codegen_tiers expands each lookup inline for hot code."""
        names = "".join(f"{name}, " for name, _ in run)
        keys = "".join(f", {key}" for _, key in run)
        if input_ctx is not None:
            if run:
                self.w(f"{base}, {names[:-2]} = rt_dinput({input_ctx}{keys})")
            else:
                self.assign(base, f"{input_ctx}.input")
        elif len(run) == 1:
            self.assign(run[0][0], f"rt_dget({base}{keys})")
        else:
            self.w(f"{names[:-2]} = rt_dpath({base}{keys})")

    def result_check(self, v: str, check: bool) -> None:
        """Test ``v`` for UNDEF now, or (``check`` False) leave it to the caller."""
        if check:
            self.check_defined(v)
        elif v not in self.checked:
            self.unchecked.add(v)

    def call(self, t: ast.Call, check: bool = True) -> str:
        op = t.op
        gen = self.gen
        if op in ("print", "internal.print"):
            printed = [self.capture(a) for a in t.args]
            return f"rt_print({self.ctx}, [{', '.join(printed)}])"
        if op in ("rego.metadata.chain", "rego.metadata.rule") and self.rule is not None:
            return self.gen.const(metadata_value(self.gen.tree.metadata, op, self.rule))
        if op in COMPARE_OPS and len(t.args) == 2 and not self.mocked_compare(op, False):
            x, y = self.terms_in_order(t.args)
            if COMPARE_OPS[op] == "==":
                return f"({self.eq_expr(x, t.args[0], y, t.args[1])})"
            return f"{_CMP_HELPER[COMPARE_OPS[op]]}({x}, {y})"
        node = gen.tree.functions.get(op)
        arity = gen.arity(op)
        if arity is None:
            return document_call(self, t, check)
        args = t.args
        out_arg: ast.Term | None = None
        if len(args) == arity + 1:
            out_arg = args[-1]
            args = args[:-1]
        elif len(args) != arity:
            raise RegoTypeError(f"{op}: arity mismatch", t.location)
        vals = self.terms_in_order(args)
        res = self.tmp("r")
        if op == "internal.member_2":
            self.assign(res, f"rt_member({vals[0]}, {vals[1]})")
        elif op == "internal.member_3":
            self.assign(res, f"rt_member3({vals[0]}, {vals[1]}, {vals[2]})")
        elif op in gen.mockable:
            self.assign(res, f"CALL_MOCK({self.ctx}, {gen.literal(op)}, {gen.default_callable(op, t.location)}, ({''.join(v + ', ' for v in vals)}), {gen.loc(t.location)})")
            self.result_check(res, check or out_arg is not None)
        elif node is not None:
            self.assign(res, f"{gen.function_name(node)}({self.ctx}{''.join(', ' + v for v in vals)})")
            self.result_check(res, check or out_arg is not None)
        else:
            b = gen.builtin(op)
            assert b is not None
            if b.relation:
                fn = gen.builtin_global(op)
                call_args = ([self.ctx] if b.needs_context else []) + vals
                it = self.tmp("it")
                self.w("try:")
                self.w(f"    {it} = list({fn}({', '.join(call_args)}))")
                self.w("except (BuiltinError, BuiltinHalt) as exc:")
                self.w(f"    {it} = rt_builtin_error({self.ctx}, exc, {gen.literal(op)}, {gen.loc(t.location)}) or ()")
                self.open_loop(f"for {res} in {it}:")
            else:
                # Compact form; codegen_tiers expands it to an inline try for hot code.
                site = gen.builtin_site(op, t.location)
                self.assign(res, f"{site}({self.ctx}{''.join(', ' + a for a in vals)})")
                self.result_check(res, check or out_arg is not None)
        if out_arg is not None:
            self.unify_value(out_arg, res, t.location)
            return "True"
        return res


_PATTERNS = (ast.Var, ast.Array, ast.Object)  # terms unify_value destructures


def _unsafe(t: ast.Term | str) -> str:
    return unsafe_var_message(t if isinstance(t, str) else t.name if isinstance(t, ast.Var) else "?")
