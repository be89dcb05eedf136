"""Rule definitions as closures, for a program's first evaluations.

A fresh engine often evaluates a policy it has never seen once or a few times
(a one-off check, a scan, an engine per request). For such an evaluation,
writing a rule's Python source and compiling it with :func:`compile` costs
more than the evaluation itself. So the definitions of a complete rule, in the
shapes handled here, first run as closures put together straight from the
checked AST: no source text, nothing for Python's compiler. When the program
turns hot (``codegen_tiers.PROMOTE_AFTER`` rule computations), their code is
generated and compiled in the fast form like any other rule's.

The closures take the generated code's steps, in its order, with its runtime
helpers: the body as ``reorder_body`` orders it; a call's operands ranked as
``BodyEmitter.terms_in_order`` ranks them (those that iterate first); lookups
with ``rt_get`` (``rt_data_get`` for non-string keys of base data); builtins
through the same call-site callers (``C<n>``); a deadline check on every
iteration. Whatever else a rule holds (``with``, ``else``, ``every``,
comprehensions, patterns, output arguments, dynamic keys into rule documents,
mocked or relation builtins, ``print``, metadata) leaves the rule to the code
generator, which also raises every compile error: a definition is planned
here only where the generator's own checks pass.

Protocol: a *step* is ``step(ctx, env) -> result``; ``env`` is the list of
one evaluation's variable and operand slots. A step returns UNDEF to let the
search go on, anything else to end it with that result. Steps are composed
while planning, from the end of a body back to its start, so nothing is
allocated per evaluation but ``env``. The functions made here take what
they use as default arguments, not as closure cells: one tuple per function
instead of a cell per name, so fewer objects to make, free and scan for the
cyclic collector (a program is kept in a cache after its engine is gone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from . import ast
from .codegen_body import COMPARE_OPS, ground_value, is_ground
from .compiler import COMPLETE, FUNCTION, PARTIAL_OBJECT, PARTIAL_SET, RuleNode, iter_rule_chain, rule_suffix
from .errors import RegoError
from .runtime.helpers import (
    rt_check_deadline,
    rt_conflict,
    rt_data_get,
    rt_ge,
    rt_get,
    rt_gt,
    rt_items,
    rt_items_sorted,
    rt_le,
    rt_lt,
    rt_member,
    rt_member3,
    rt_ne,
    rt_obj_put,
    rt_obj_put_path,
    rt_object,
    rt_set,
    rt_values,
    rt_values_sorted,
)
from .runtime.values import UNDEF, equal, freeze
from .safety import ROOTS, ref_outputs, reorder_body, stmt_vars, term_vars

if TYPE_CHECKING:
    from .codegen import ModuleGen

#: Whether complete rules' definitions run as closures before their code is
#: compiled (a switch for tests, which run every case both ways).
ENABLED = True

Step = Callable[[Any, list[Any]], Any]
Compute = Callable[[Any, list[Any]], Any]  # (ctx, operand values) -> value
_TESTS: dict[str, Callable[[Any, Any], bool]] = {"equal": equal, "neq": rt_ne, "lt": rt_lt, "lte": rt_le, "gt": rt_gt, "gte": rt_ge}
_FOUND = object()  # the result of a negation's inner body when it has a solution


class _Unsupported(Exception):
    """A shape left to the code generator."""


class _Operand(NamedTuple):
    """A term's producer: ``value(ctx, env)`` (UNDEF when undefined), or, for a
    term that binds variables by iterating, ``make(k)``: a step that stores
    each of the term's defined values in ``env[slot]`` and runs step ``k``."""

    value: Callable[[Any, list[Any]], Any] | None
    make: Callable[[Step], Step] | None
    slot: int


def plan_definition(gen: ModuleGen, node: RuleNode, rule: ast.Rule, conflict: str) -> Callable[..., Any] | None:
    """``D<id>_<n>`` as a closure; None where the code generator must write it.

    A complete rule's definition (with its ``else`` chain) takes ``ctx`` and
    returns a value or UNDEF; a partial set's or object's takes ``(ctx, acc)``
    and adds to ``acc``. ``conflict``: the error message when one definition
    gives two values."""
    head = rule.head
    if head.args:
        return None
    try:
        if node.kind == COMPLETE and head.key is None:
            return _Planner(gen).complete(iter_rule_chain(rule), conflict)
        if node.kind in (PARTIAL_SET, PARTIAL_OBJECT) and rule.else_ is None:
            return _Planner(gen).partial(node.kind, rule)
    except (_Unsupported, RegoError, RecursionError):
        pass
    return None


def _value_step(value: Callable[[Any, list[Any]], Any], slot: int, nxt: Step) -> Step:
    def step(ctx: Any, env: list[Any], value: Any = value, slot: int = slot, nxt: Step = nxt) -> Any:
        v = value(ctx, env)
        if v is UNDEF:
            return UNDEF
        env[slot] = v
        return nxt(ctx, env)

    return step


class _Planner:
    def __init__(self, gen: ModuleGen) -> None:
        self.gen = gen
        self.ns = gen.namespace
        self.slots: dict[str, int] = {}  # variable -> slot
        self.bound: set[str] = set()
        self.nslots = 0
        self.loops = 0
        # As BodyEmitter: iterate in OPA's sorted order inside array
        # comprehensions (where order shows); every variable visible from
        # enclosing scopes (for reorder_body's closure captures).
        self.ordered = False
        self.outer: set[str] = set()

    def slot(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    def bind(self, name: str) -> int:
        s = self.slots.get(name)
        if s is None:
            s = self.slots[name] = self.slot()
        self.bound.add(name)
        return s

    # -- rules and bodies ------------------------------------------------------------

    def complete(self, chain: list[ast.Rule], conflict: str) -> Callable[[Any], Any]:
        """A complete rule's definition: the value of its first branch that has one."""
        runs = [self.branch(rule, conflict) for rule in chain]
        n = self.nslots
        if len(runs) == 1:
            run = runs[0]

            def definition(ctx: Any, run: Step = run, n: int = n) -> Any:
                return run(ctx, [UNDEF] * n)

            return definition

        def with_else(ctx: Any, runs: list[Step] = runs, n: int = n) -> Any:
            env = [UNDEF] * n
            for run in runs:
                v = run(ctx, env)
                if v is not UNDEF:
                    return v
            return UNDEF

        return with_else

    def branch(self, rule: ast.Rule, conflict: str) -> Step:
        """One branch of a complete rule: ``run(ctx, env)``, its value or UNDEF."""
        self.bound, self.loops = set(), 0
        head = rule.head
        value_t = head.value
        if value_t is None:
            raise _Unsupported("a rule without a value")
        result = self.slot()
        required = self.head_vars(rule)
        builders = self.body(rule.body, required, head.location)
        read = self.head_value(value_t)
        where = rule.location
        if self.loops == 0 or not term_vars(value_t, set()):
            # The first solution's value ends the search.
            return self.chain(builders, read)

        def every_value(ctx: Any, env: list[Any], read: Any = read, result: int = result, conflict: str = conflict, where: Any = where) -> Any:
            v = read(ctx, env)
            if v is not UNDEF:
                r = env[result]
                if r is UNDEF:
                    env[result] = v
                elif not equal(r, v):
                    rt_conflict(conflict, where)
            return UNDEF  # every solution must agree: search on

        first = self.chain(builders, every_value)

        def all_solutions(ctx: Any, env: list[Any], first: Step = first, result: int = result) -> Any:
            env[result] = UNDEF
            first(ctx, env)
            return env[result]

        return all_solutions

    def partial(self, kind: str, rule: ast.Rule) -> Callable[[Any, Any], None]:
        """A partial set's or object's definition: adds each solution's key (and value) to ``acc``."""
        head = rule.head
        acc = self.slot()
        builders = self.body(rule.body, self.head_vars(rule), head.location)
        last: Step
        if kind == PARTIAL_SET:
            if head.key is None:
                raise _Unsupported("a set rule without a key")
            key = self.head_value(head.key)

            def add(ctx: Any, env: list[Any], key: Any = key, acc: int = acc) -> Any:
                k = key(ctx, env)
                if k is not UNDEF:
                    env[acc].add(k if type(k) is str else freeze(k))
                return UNDEF

            last = add
        else:
            if head.value is None:
                raise _Unsupported("sets at an object's leaves")
            keys = [self.head_value(k) for k in rule_suffix(0, rule)]
            value = self.head_value(head.value)
            where = head.location

            def put(ctx: Any, env: list[Any], keys: list[Any] = keys, value: Any = value, acc: int = acc, where: Any = where) -> Any:
                ks = []
                for key in keys:
                    k = key(ctx, env)
                    if k is UNDEF:
                        return UNDEF
                    ks.append(k)
                v = value(ctx, env)
                if v is UNDEF:
                    return UNDEF
                if len(ks) == 1:
                    rt_obj_put(env[acc], ks[0], v, where)
                else:
                    rt_obj_put_path(env[acc], tuple(ks), v, where)
                return UNDEF

            last = put
        first = self.chain(builders, last)
        n = self.nslots

        def definition(ctx: Any, into: Any, first: Step = first, n: int = n, acc: int = acc) -> None:
            env = [UNDEF] * n
            env[acc] = into
            first(ctx, env)

        return definition

    @staticmethod
    def head_vars(rule: ast.Rule) -> set[str]:
        """The variables the head reads, which the body must bind."""
        head = rule.head
        required: set[str] = set()
        for t in [head.key, head.value, *rule_suffix(0, rule)]:
            if t is not None:
                term_vars(t, required)
        return required

    def head_value(self, t: ast.Term) -> Callable[[Any, list[Any]], Any]:
        operand = self.operand(t)
        if operand.value is None:
            raise _Unsupported("an iterating head term")
        return operand.value

    @staticmethod
    def chain(builders: list[Callable[[Step], Step]], last: Step) -> Step:
        step = last
        for build in reversed(builders):
            step = build(step)
        return step

    def body(self, body: ast.Body, required: set[str] | None, location: ast.Location | None) -> list[Callable[[Step], Step]]:
        saved_outer = self.outer
        self.outer = (self.outer | self.bound).union(*(stmt_vars(e.statement, set()) for e in body))
        ordered, _ = reorder_body(body, set(self.bound), self.outer, self.gen.arity, required=required, location=location)
        builders = [b for e in ordered for b in self.expr(e)]
        self.outer = saved_outer
        return builders

    def expr(self, e: ast.Expr) -> list[Callable[[Step], Step]]:
        if e.with_mods:
            raise _Unsupported("with")
        if e.negated:
            return [self.negation(e)]
        s = e.statement
        if isinstance(s, (ast.Assign, ast.Unify)):
            return [self.unify(s.lhs, s.rhs)]
        if isinstance(s, ast.SomeVars):
            return []
        if isinstance(s, ast.SomeIn):
            return [self.some_in(s)]
        if isinstance(s, ast.Every):
            raise _Unsupported("every")
        return [self.term_statement(s)]

    def negation(self, e: ast.Expr) -> Callable[[Step], Step]:
        saved = set(self.bound), self.loops
        inner_builders = self.expr(ast.Expr(e.statement, False, (), e.location))
        self.bound, self.loops = saved

        def found(ctx: Any, env: list[Any]) -> Any:
            return _FOUND

        inner = self.chain(inner_builders, found)

        def build(nxt: Step) -> Step:
            def step(ctx: Any, env: list[Any], inner: Step = inner, nxt: Step = nxt) -> Any:
                if inner(ctx, env) is _FOUND:
                    return UNDEF
                return nxt(ctx, env)

            return step

        return build

    # -- statements -------------------------------------------------------------------

    def term_statement(self, t: ast.Term) -> Callable[[Step], Step]:
        if isinstance(t, ast.Call) and t.op in COMPARE_OPS and len(t.args) == 2:
            test = _TESTS[t.op]
            order = self.ranked(t.args)
            operands = self.operands(t.args, order)

            def build_compare(nxt: Step) -> Step:
                def compare(ctx: Any, env: list[Any], x: Any, y: Any, test: Any = test, nxt: Step = nxt) -> Any:
                    return nxt(ctx, env) if test(x, y) else UNDEF

                return self.gather2(operands, compare, order)

            return build_compare
        if isinstance(t, ast.Call) and t.op == "internal.member_2" and len(t.args) == 2 and not self.has_unbound(t.args[0]):
            const = self.gen.const_member_set(t.args[1])
            if const is not None:
                members: frozenset[Any] = self.ns[const[0]]
                all_str = const[1]
                x = self.operand(t.args[0])
                read = x.value
                assert read is not None

                def build_const_member(nxt: Step) -> Step:
                    def member(ctx: Any, env: list[Any], read: Any = read, all_str: bool = all_str, members: Any = members, nxt: Step = nxt) -> Any:
                        v = read(ctx, env)
                        if all_str:
                            if type(v) is not str or v not in members:
                                return UNDEF
                        elif v is UNDEF or freeze(v) not in members:
                            return UNDEF
                        return nxt(ctx, env)

                    return member

                return build_const_member
            operands = self.operands(t.args, [0, 1])

            def build_member(nxt: Step) -> Step:
                def member(ctx: Any, env: list[Any], x: Any, coll: Any, nxt: Step = nxt) -> Any:
                    return nxt(ctx, env) if rt_member(x, coll) else UNDEF

                return self.gather2(operands, member)

            return build_member
        if isinstance(t, ast.Scalar):
            if t.value is False:
                return lambda nxt: _fail
            return lambda nxt: nxt
        operand = self.operand(t)

        def build_truthy(nxt: Step) -> Step:
            def truthy(ctx: Any, env: list[Any], v: Any, nxt: Step = nxt) -> Any:
                return UNDEF if v is False else nxt(ctx, env)

            return self.gather1(operand, truthy)

        return build_truthy

    def unify(self, a: ast.Term, b: ast.Term) -> Callable[[Step], Step]:
        for target, source in ((a, b), (b, a)):
            if self.is_unbound(target):
                if self.has_unbound(source) and not self.iterable_only(source):
                    raise _Unsupported("unsafe")
                operand = self.operand(source)
                assert isinstance(target, ast.Var)
                slot = self.bind(target.name)

                def build_bind(nxt: Step, operand: _Operand = operand, slot: int = slot) -> Step:
                    def bind(ctx: Any, env: list[Any], v: Any, slot: int = slot, nxt: Step = nxt) -> Any:
                        env[slot] = v
                        return nxt(ctx, env)

                    return self.gather1(operand, bind)

                return build_bind
        if self.has_unbound(a) or self.has_unbound(b):
            raise _Unsupported("a pattern")
        operands = self.operands((a, b), [0, 1])

        def build_equal(nxt: Step) -> Step:
            def same(ctx: Any, env: list[Any], x: Any, y: Any, nxt: Step = nxt) -> Any:
                return nxt(ctx, env) if equal(x, y) else UNDEF

            return self.gather2(operands, same)

        return build_equal

    def some_in(self, s: ast.SomeIn) -> Callable[[Step], Step]:
        coll = self.operand(s.collection)
        self.loops += 1
        key = self.pattern(s.key) if s.key is not None else None
        value = self.pattern(s.value)
        values, items = (rt_values_sorted, rt_items_sorted) if self.ordered else (rt_values, rt_items)

        def build(nxt: Step) -> Step:
            def loop(ctx: Any, env: list[Any], c: Any, key: Any = key, value: Any = value, nxt: Step = nxt, values: Any = values, items: Any = items) -> Any:
                if key is None:
                    for v in values(c):
                        rt_check_deadline(ctx)
                        if value(ctx, env, v):
                            r = nxt(ctx, env)
                            if r is not UNDEF:
                                return r
                else:
                    for k, v in items(c):
                        rt_check_deadline(ctx)
                        if key(ctx, env, k) and value(ctx, env, v):
                            r = nxt(ctx, env)
                            if r is not UNDEF:
                                return r
                return UNDEF

            return self.gather1(coll, loop)

        return build

    def pattern(self, p: ast.Term) -> Callable[[Any, list[Any], Any], bool]:
        """``match(ctx, env, v)``: bind or test ``p`` against each iterated value."""
        if isinstance(p, ast.Var) and p.name not in ROOTS:
            if p.name not in self.bound:
                slot = self.bind(p.name)

                def bind(ctx: Any, env: list[Any], v: Any, slot: int = slot) -> bool:
                    env[slot] = v
                    return True

                return bind
            bound_slot = self.slots[p.name]

            def equal_bound(ctx: Any, env: list[Any], v: Any, s: int = bound_slot) -> bool:
                return equal(env[s], v)

            return equal_bound
        if self.has_unbound(p):
            raise _Unsupported("a pattern")
        operand = self.operand(p)
        read = operand.value
        if read is None:
            raise _Unsupported("an iterating pattern")

        def same(ctx: Any, env: list[Any], v: Any, read: Any = read) -> bool:
            y = read(ctx, env)
            return y is not UNDEF and equal(v, y)

        return same

    # -- operands ---------------------------------------------------------------------

    def is_unbound(self, t: ast.Term) -> bool:
        return isinstance(t, ast.Var) and t.name not in ROOTS and t.name not in self.bound

    def has_unbound(self, t: ast.Term) -> bool:
        # Scalars, variables and refs (most terms) are answered without a set.
        tt = type(t)
        if tt is ast.Scalar:
            return False
        if tt is ast.Var:
            return t.name not in self.bound and t.name not in ROOTS  # type: ignore[union-attr]
        if tt is ast.Ref:
            return self.has_unbound(t.head) or any(self.has_unbound(p) for p in t.path)  # type: ignore[union-attr]
        return bool(term_vars(t, set()) - self.bound)

    def iterable_only(self, t: ast.Term) -> bool:
        return term_vars(t, set()) - self.bound <= ref_outputs(t, self.bound, set(), self.gen.arity)

    def ranked(self, terms: tuple[ast.Term, ...]) -> list[int]:
        """Evaluation order of ``terms``: those that bind variables by iterating first."""
        iterating = [i for i, t in enumerate(terms) if self.has_unbound(t)]
        if not iterating:
            return list(range(len(terms)))
        if not all(self.iterable_only(terms[i]) for i in iterating):
            raise _Unsupported("unsafe")
        return iterating + [i for i in range(len(terms)) if i not in iterating]

    def operands(self, terms: tuple[ast.Term, ...], order: list[int]) -> list[_Operand]:
        """Plan ``terms`` in evaluation ``order``; returned by position."""
        out: list[_Operand | None] = [None] * len(terms)
        for i in order:
            out[i] = self.operand(terms[i])
        return out  # type: ignore[return-value]

    def gather1(self, operand: _Operand, finish: Callable[[Any, list[Any], Any], Any]) -> Step:
        """A step: evaluate ``operand`` (each value, where it iterates), then ``finish(ctx, env, v)``."""
        read = operand.value
        if read is not None:

            def step(ctx: Any, env: list[Any], read: Any = read, finish: Any = finish) -> Any:
                v = read(ctx, env)
                return UNDEF if v is UNDEF else finish(ctx, env, v)

            return step
        assert operand.make is not None
        slot = operand.slot

        def stored(ctx: Any, env: list[Any], f: Any = finish, s: int = slot) -> Any:
            return f(ctx, env, env[s])

        return operand.make(stored)

    def gather2(self, operands: list[_Operand], finish: Callable[[Any, list[Any], Any, Any], Any], order: list[int] | None = None) -> Step:
        a, b = operands
        ra, rb = a.value, b.value
        if ra is not None and rb is not None:

            def step(ctx: Any, env: list[Any], ra: Any = ra, rb: Any = rb, finish: Any = finish) -> Any:
                x = ra(ctx, env)
                if x is UNDEF:
                    return UNDEF
                y = rb(ctx, env)
                return UNDEF if y is UNDEF else finish(ctx, env, x, y)

            return step

        def both(ctx: Any, env: list[Any], vals: list[Any], f: Any = finish) -> Any:
            return f(ctx, env, vals[0], vals[1])

        return self.gather(operands, order or [0, 1], both)

    def gather(self, operands: list[_Operand], order: list[int], finish: Callable[[Any, list[Any], list[Any]], Any]) -> Step:
        """A step: evaluate ``operands`` in ``order`` into slots, then ``finish(ctx, env, values)``."""
        slots = [op.slot if op.make is not None else self.slot() for op in operands]

        def last(ctx: Any, env: list[Any], finish: Any = finish, slots: list[int] = slots) -> Any:
            return finish(ctx, env, [env[s] for s in slots])

        step: Step = last
        for i in reversed(order):
            op = operands[i]
            if op.make is not None:
                step = op.make(step)
            else:
                assert op.value is not None
                step = _value_step(op.value, slots[i], step)
        return step

    def operand(self, t: ast.Term) -> _Operand:
        tt = type(t)
        if tt is ast.Ref:
            return self.ref(t)  # type: ignore[arg-type]
        if tt is ast.Scalar:
            v = t.value  # type: ignore[union-attr]
            return _Operand(_constant(v), None, -1)
        if isinstance(t, ast.Var):
            if t.name == "input":
                return _Operand(lambda ctx, env: ctx.input, None, -1)
            if t.name in ROOTS or t.name not in self.bound:
                raise _Unsupported("data or an unbound variable")
            slot = self.slots[t.name]
            return _Operand(_variable(slot), None, -1)
        if is_ground(t):
            const = ground_value(t)
            return _Operand(_constant(const), None, -1)
        if isinstance(t, ast.Call):
            return self.call(t)
        if isinstance(t, ast.Array):
            return self.composite(list(t.items), _built(list))
        if isinstance(t, ast.SetTerm):
            return self.composite(list(t.items), _built(rt_set))
        if isinstance(t, ast.Object):
            flat = [x for kv in t.items for x in kv]
            if all(isinstance(k, ast.Scalar) and isinstance(k.value, str) for k, _ in t.items) and len({k.value for k, _ in t.items}) == len(t.items):  # type: ignore[union-attr]
                return self.composite(flat, _built(_pairs))
            where = t.location
            return self.composite(flat, _object(where))
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
            return self.comprehension(t)
        raise _Unsupported(type(t).__name__)

    def comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> _Operand:
        """A comprehension's value: its body's solutions collected (variables bound inside stay inside)."""
        saved = set(self.bound), self.loops, self.ordered
        self.ordered = self.ordered or isinstance(t, ast.ArrayCompr)
        acc = self.slot()
        builders = self.body(t.body, None, None)
        last: Step
        new: Callable[[], Any]
        if isinstance(t, ast.ObjectCompr):
            key, value, where = self.head_value(t.key), self.head_value(t.value), t.location

            def put(ctx: Any, env: list[Any], key: Any = key, value: Any = value, acc: int = acc, where: Any = where) -> Any:
                k = key(ctx, env)
                if k is not UNDEF:
                    v = value(ctx, env)
                    if v is not UNDEF:
                        rt_obj_put(env[acc], k, v, where)
                return UNDEF

            last, new = put, dict
        else:
            item = self.head_value(t.term)
            array = isinstance(t, ast.ArrayCompr)

            def add(ctx: Any, env: list[Any], item: Any = item, acc: int = acc, array: bool = array) -> Any:
                v = item(ctx, env)
                if v is not UNDEF:
                    if array:
                        env[acc].append(v)
                    else:
                        env[acc].add(freeze(v))
                return UNDEF

            last, new = add, list if array else set
        first = self.chain(builders, last)
        self.bound, self.loops, self.ordered = saved

        def collect(ctx: Any, env: list[Any], first: Step = first, acc: int = acc, new: Any = new) -> Any:
            env[acc] = new()
            first(ctx, env)
            return env[acc]

        return _Operand(collect, None, -1)

    def composite(self, items: list[ast.Term], compute: Compute) -> _Operand:
        # Items in written order (as the generated code evaluates them).
        operands = [self.operand(x) for x in items]
        return self.computed(operands, list(range(len(items))), compute)

    def computed(self, operands: list[_Operand], order: list[int], compute: Callable[[Any, list[Any]], Any]) -> _Operand:
        """The operand ``compute(ctx, values of operands)``; it iterates where an operand does."""
        if all(op.make is None for op in operands):
            reads = [op.value for op in operands]

            def value(ctx: Any, env: list[Any], reads: Any = reads, compute: Any = compute) -> Any:
                vals = []
                for read in reads:
                    v = read(ctx, env)  # type: ignore[misc]
                    if v is UNDEF:
                        return UNDEF
                    vals.append(v)
                return compute(ctx, vals)

            return _Operand(value, None, -1)
        out = self.slot()

        def make(k: Step) -> Step:
            def finish(ctx: Any, env: list[Any], vals: list[Any], k: Step = k, compute: Any = compute, out: int = out) -> Any:
                v = compute(ctx, vals)
                if v is UNDEF:
                    return UNDEF
                env[out] = v
                return k(ctx, env)

            return self.gather(operands, order, finish)

        return _Operand(None, make, out)

    def call(self, t: ast.Call) -> _Operand:
        op = t.op
        gen = self.gen
        if op in COMPARE_OPS and len(t.args) == 2:
            test = _TESTS[op]
            return self.computed(self.operands(t.args, order := self.ranked(t.args)), order, _tested(test))
        arity = gen.arity(op)
        if arity is None or len(t.args) != arity or op in gen.mockable or op in ("print", "internal.print") or op.startswith("rego.metadata."):
            raise _Unsupported(op)
        order = self.ranked(t.args)
        operands = self.operands(t.args, order)
        if op == "internal.member_2":
            return self.computed(operands, order, lambda ctx, vals: rt_member(vals[0], vals[1]))
        if op == "internal.member_3":
            return self.computed(operands, order, lambda ctx, vals: rt_member3(vals[0], vals[1], vals[2]))
        ns = self.ns
        node = gen.tree.functions.get(op)
        if node is not None:
            name = gen.function_name(node)
            return self.computed(operands, order, _function_call(ns, name))
        b = gen.builtin(op)
        if b is None or b.relation:
            raise _Unsupported(op)
        caller = ns[gen.builtin_site(op, t.location)]
        return self.computed(operands, order, _builtin_call(caller))

    # -- references ---------------------------------------------------------------------

    def ref(self, t: ast.Ref) -> _Operand:
        head, path = t.head, t.path
        if isinstance(head, ast.Var) and head.name == "data":
            return self.data_ref(path)
        base = self.operand(head)
        if base.make is not None:
            raise _Unsupported("an iterating ref head")
        return self.walk(base.value, path, rt_get)  # type: ignore[arg-type]

    def data_ref(self, path: tuple[ast.Term, ...]) -> _Operand:
        """``data.<path>`` as ModuleGen.data_ref reads it: a rule's document, then a path into it; or base data."""
        gen = self.gen
        cur = gen.tree.root
        i = 0
        while i < len(path):
            p = path[i]
            if isinstance(p, ast.Scalar) and isinstance(p.value, str) and p.value in cur.children:
                cur = cur.children[p.value]
                i += 1
                nxt = path[i] if i < len(path) else None
                if (
                    cur.has_rules()
                    and isinstance(nxt, ast.Scalar)
                    and isinstance(nxt.value, str)
                    and nxt.value in cur.children
                    and gen._has_rules_below(cur.children[nxt.value])
                ):
                    continue
                if cur.has_rules():
                    if cur.kind == FUNCTION:
                        return _Operand(lambda ctx, env: UNDEF, None, -1)
                    return self.walk(_document(self.ns, f"R{cur.id}"), path[i:], rt_get)
                continue
            if isinstance(p, ast.Scalar):
                break
            if gen._has_rules_below(cur):
                raise _Unsupported("a dynamic key into rule documents")
            break
        else:
            if gen._has_rules_below(cur):
                raise _Unsupported("a document holding rules")
        return self.walk(lambda ctx, env: ctx.data, path, rt_data_get)

    def walk(self, base: Callable[[Any, list[Any]], Any], path: tuple[ast.Term, ...], getter: Callable[[Any, Any], Any]) -> _Operand:
        """``base`` looked up along ``path``; an unbound variable in it iterates."""
        # Each step: (a literal string key, or the key's read; or, to
        # iterate, the items function), then the iterated variable's slot.
        steps: list[tuple[Any, int | None]] = []
        for p in path:
            if isinstance(p, ast.Scalar):
                key = p.value
                steps.append((key, None) if isinstance(key, str) else (_constant(key), None))
            elif self.is_unbound(p):
                assert isinstance(p, ast.Var)
                self.loops += 1
                steps.append((rt_items_sorted if self.ordered else rt_items, self.bind(p.name)))
            else:
                if self.has_unbound(p):
                    raise _Unsupported("a pattern in a ref")
                operand = self.operand(p)
                steps.append((operand.value, None))
        if all(s is None for _, s in steps):
            return _Operand(self._lookups(base, steps, getter), None, -1)
        out = self.slot()

        def make(k: Step) -> Step:
            def stored(ctx: Any, env: list[Any], v: Any, k: Step = k, out: int = out) -> Any:
                if v is UNDEF:
                    return UNDEF
                env[out] = v
                return k(ctx, env)

            walk: Callable[[Any, list[Any], Any], Any] = stored
            for key, slot in reversed(steps):
                walk = self._walk_step(key, slot, getter, walk)

            def start(ctx: Any, env: list[Any], walk: Any = walk, base: Any = base) -> Any:
                return walk(ctx, env, base(ctx, env))

            return start

        return _Operand(None, make, out)

    @staticmethod
    def _lookups(base: Callable[[Any, list[Any]], Any], steps: list[tuple[Any, int | None]], getter: Callable[[Any, Any], Any]) -> Callable[[Any, list[Any]], Any]:
        keys = [k for k, _ in steps]
        if all(type(k) is str for k in keys):
            if len(keys) == 1:
                key = keys[0]

                def one_key(ctx: Any, env: list[Any], base: Any = base, key: str = key) -> Any:
                    return rt_get(base(ctx, env), key)

                return one_key

            def literal_path(ctx: Any, env: list[Any], base: Any = base, keys: list[Any] = keys) -> Any:
                cur = base(ctx, env)
                for key in keys:
                    cur = rt_get(cur, key)
                return cur

            return literal_path

        def path_value(ctx: Any, env: list[Any], base: Any = base, keys: list[Any] = keys, getter: Any = getter) -> Any:
            cur = base(ctx, env)
            for key in keys:
                if type(key) is str:
                    cur = rt_get(cur, key)
                else:
                    kv = key(ctx, env)
                    if kv is UNDEF:
                        return UNDEF
                    cur = getter(cur, kv)
            return cur

        return path_value

    @staticmethod
    def _walk_step(key: Any, slot: int | None, getter: Callable[[Any, Any], Any], nxt: Callable[[Any, list[Any], Any], Any]) -> Callable[[Any, list[Any], Any], Any]:
        if slot is not None:

            def iterate(ctx: Any, env: list[Any], cur: Any, items: Any = key, slot: int = slot, nxt: Any = nxt) -> Any:
                for k, v in items(cur):
                    rt_check_deadline(ctx)
                    env[slot] = k
                    r = nxt(ctx, env, v)
                    if r is not UNDEF:
                        return r
                return UNDEF

            return iterate
        if type(key) is str:

            def literal_key(ctx: Any, env: list[Any], cur: Any, nxt: Any = nxt, key: str = key) -> Any:
                return nxt(ctx, env, rt_get(cur, key))

            return literal_key

        def lookup(ctx: Any, env: list[Any], cur: Any, key: Any = key, getter: Any = getter, nxt: Any = nxt) -> Any:
            kv = key(ctx, env)
            if kv is UNDEF:
                return UNDEF
            return nxt(ctx, env, getter(cur, kv))

        return lookup


def _document(ns: dict[str, Any], name: str) -> Callable[[Any, list[Any]], Any]:
    """The value of the rule document ``name`` (looked up each time: a hot
    program's code replaces the function)."""

    def document(ctx: Any, env: list[Any], ns: dict[str, Any] = ns, name: str = name) -> Any:
        return ns[name](ctx)

    return document


def _constant(value: Any) -> Callable[[Any, list[Any]], Any]:
    def constant(ctx: Any, env: list[Any], value: Any = value) -> Any:
        return value

    return constant


def _variable(slot: int) -> Callable[[Any, list[Any]], Any]:
    def variable(ctx: Any, env: list[Any], slot: int = slot) -> Any:
        return env[slot]

    return variable


# What ``computed`` operands compute from their operands' values.
def _pairs(vals: list[Any]) -> dict[Any, Any]:
    return dict(zip(vals[::2], vals[1::2]))


def _object(where: Any) -> Compute:
    def obj(ctx: Any, vals: list[Any], where: Any = where) -> Any:
        return rt_object(zip(vals[::2], vals[1::2]), where)

    return obj


def _built(build: Callable[[list[Any]], Any]) -> Compute:
    def built(ctx: Any, vals: list[Any], build: Callable[[list[Any]], Any] = build) -> Any:
        return build(vals)

    return built


def _tested(test: Callable[[Any, Any], bool]) -> Compute:
    def tested(ctx: Any, vals: list[Any], test: Callable[[Any, Any], bool] = test) -> Any:
        return test(vals[0], vals[1])

    return tested


def _function_call(ns: dict[str, Any], name: str) -> Compute:
    def function_call(ctx: Any, vals: list[Any], ns: dict[str, Any] = ns, name: str = name) -> Any:
        return ns[name](ctx, *vals)

    return function_call


def _builtin_call(caller: Callable[..., Any]) -> Compute:
    def builtin_call(ctx: Any, vals: list[Any], caller: Callable[..., Any] = caller) -> Any:
        return caller(ctx, *vals)

    return builtin_call


def _fail(ctx: Any, env: list[Any]) -> Any:
    return UNDEF


__all__ = ["plan_definition"]
