"""Rule definitions as closures, for a program's first evaluations.

A fresh engine often evaluates a policy it has never seen once or a few times
(a one-off check, a scan, an engine per request). For such an evaluation,
writing a rule's Python source and compiling it with :func:`compile` costs
more than the evaluation itself. So the definitions of rules, functions and
partial sets and objects, in the shapes handled here, first run as closures
put together straight from the checked AST: no source text, nothing for
Python's compiler. When the program turns hot (``codegen_tiers.PROMOTE_AFTER``
rule computations), their code is generated and compiled in the fast form
like any other rule's.

The closures take the generated code's steps, in its order, with its runtime
helpers: the body as ``reorder_body`` orders it; a call's operands ranked as
``BodyEmitter.terms_in_order`` ranks them (those that iterate first); lookups
with ``rt_get`` (``rt_data_get`` for non-string keys of base data); builtins
through the same call-site callers (``C<n>``); a deadline check on every
iteration; sorted iteration inside array comprehensions. Whatever else a
rule holds (``with``, patterns in unification or in a function's arguments,
output arguments, dynamic keys into rule documents, mocked or relation
builtins, ``print``, metadata) leaves the rule to the code generator, which
also raises every compile error: a definition is planned here only where the
generator's own checks pass. Most documents are planned on their first call
(:mod:`pyrego.codegen.deferred`), not when the program is built.

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

from typing import TYPE_CHECKING, AbstractSet, Any, Callable

from pyrego.ast import nodes as ast
from pyrego.codegen import docs as codegen_docs
from pyrego.codegen.body import COMPARE_OPS
from pyrego.codegen.closure_terms import TESTS, Operand, Step, TermPlanner, Unsupported
from pyrego.codegen.key_order import rule_var_names
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    RuleNode,
    iter_rule_chain,
    rule_suffix,
)
from pyrego.compile.body_order import check_head_vars, naming_term_vars, reorder_body, with_head_in_body
from pyrego.compile.eval_order import comprehension_body, strict_calls_first, strict_only
from pyrego.compile.ground import iterated_as_built, iterated_terms
from pyrego.compile.rewrite import calls_function
from pyrego.compile.safety import ROOTS, stmt_has_vars, stmt_vars, term_vars
from pyrego.errors import RegoError, RegoUnsafeVarError
from pyrego.runtime.helpers import (
    COLLECTION_TYPES,
    rt_check_deadline,
    rt_conflict,
    rt_in_strings,
    rt_items,
    rt_items_built,
    rt_items_ordered,
    rt_member,
    rt_obj_add_path,
    rt_obj_put,
    rt_obj_put_path,
    rt_obj_put_value,
    rt_values,
    rt_values_built,
    rt_values_ordered,
)
from pyrego.runtime.values import PLAIN_TYPES, UNDEF, check_plain, equal, freeze

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen

#: Whether rules' definitions run as closures before their code is
#: compiled (a switch for tests, which run every case both ways).
ENABLED = True

#: Bodies longer than this get generated code: each expression of a closure
#: body is a nested call, so a body of thousands would run out of stack.
LONGEST_BODY = 200

_FOUND = object()  # the result of a negation's inner body when it has a solution
_NO_VARS: frozenset[str] = frozenset()


def plan_definition(gen: ModuleGen, node: RuleNode, rule: ast.Rule, conflict: Callable[[RuleNode], str]) -> Callable[..., Any] | None:
    """``D<id>_<n>`` as a closure; None where the code generator must write it.

    A complete rule's definition (with its ``else`` chain) takes ``ctx`` and
    returns a value or UNDEF, a function's takes ``(ctx, *args)``; a partial
    set's or object's takes ``(ctx, acc)`` and adds to ``acc``. ``conflict``:
    the error message when one definition gives two values, of the node
    (made only for a branch that can give two)."""
    head = rule.head
    chain = iter_rule_chain(rule)
    if (len(rule.body) if len(chain) == 1 else sum(len(r.body) for r in chain)) > LONGEST_BODY:
        return None
    try:
        if node.kind == FUNCTION:
            return _Planner(gen).complete(chain, node, conflict, node.arity or 0)
        if head.args:
            return None
        if node.kind == COMPLETE and head.key is None:
            return _Planner(gen).complete(chain, node, conflict)
        if node.kind in (PARTIAL_SET, PARTIAL_OBJECT) and rule.else_ is None:
            made = codegen_docs.path_made(gen, node, rule)
            if made is not None and made[0] == "rt_obj_add_leaf":
                return None  # (sets at an object's leaves: generated code)
            return _Planner(gen).partial(node.kind, rule, codegen_docs.tracks_values(gen, node), made)
    except (Unsupported, RegoError, RecursionError):
        pass
    return None


def order_body(
    gen: ModuleGen, body: ast.Body, bound: set[str], outer: set[str], required: set[str] | None, location: ast.Location | None
) -> tuple[ast.Body, dict[int, AbstractSet[str]], set[str]]:
    """``body`` in the order the planner evaluates it, with ``bound`` bound
    before it: the ordered body, each expression's variables (outside
    comprehensions; by ``id``) and ``outer`` with them added. Most
    expressions have none, comprehensions included: a body of only such
    expressions is in order as written (reorder_body would keep it).
    Raises the unsafe variable reorder_body finds."""
    own: dict[int, AbstractSet[str]] = {}
    as_written = True
    functions = gen.functions
    var_free = gen.tree.var_free_bodies
    if var_free is not None and var_free.get(id(body)) is body:
        # (No expression has a variable, none is nested: name resolution saw them all.)
        for e in body:
            own[id(e)] = _NO_VARS
            if e.negated or e.with_mods or (functions is not None and calls_function(e.statement, functions)):
                as_written = False
        if as_written and (not required or required <= bound):
            return body, own, outer
        ordered, _ = reorder_body(body, bound, outer, gen.arity, required=required, location=location, functions=functions)
        return ordered, own, outer
    for e in body:
        if functions is not None and calls_function(e.statement, functions):
            as_written = False
        if not e.negated and not e.with_mods and not stmt_has_vars(e.statement):
            own[id(e)] = _NO_VARS
            continue
        as_written = False
        names = own[id(e)] = stmt_vars(e.statement, set())
        outer |= names
    if as_written and (not required or required <= bound):
        return body, own, outer
    # (reorder_body copies ``bound`` before it adds to it.)
    ordered, _ = reorder_body(body, bound, outer, gen.arity, required=required, location=location, functions=functions)
    return ordered, own, outer


class _Planner(TermPlanner):
    """Plans rule definitions, bodies and statements."""

    expr_at: ast.Location | None = None  # (the expression being planned)

    # -- rules and bodies ------------------------------------------------------------

    def complete(self, chain: list[ast.Rule], node: RuleNode, conflict: Callable[[RuleNode], str], arity: int = 0) -> Callable[..., Any]:
        """A complete rule's or function's definition: the value of its first
        branch that has one. A function's arguments are in its first slots."""
        arg_slots = [self.slot() for _ in range(arity)]
        runs = [self.branch(rule, node, conflict, arg_slots) for rule in chain]
        n = self.nslots
        if len(runs) == 1 and not arity:
            run = runs[0]

            def definition(ctx: Any, run: Step = run, n: int = n) -> Any:
                return run(ctx, [UNDEF] * n)

            return definition

        def first_defined(ctx: Any, *args: Any, runs: list[Step] = runs, rest: int = n - arity) -> Any:
            env = [*args, *[UNDEF] * rest]
            for run in runs:
                v = run(ctx, env)
                if v is not UNDEF:
                    return v
            return UNDEF

        return first_defined

    def branch(self, rule: ast.Rule, node: RuleNode, conflict_of: Callable[[RuleNode], str], arg_slots: list[int]) -> Step:
        """One branch of a complete rule or function: ``run(ctx, env)``, its value or UNDEF."""
        self.bound, self.loops = set(), 0
        head = rule.head
        value_t = head.value
        if value_t is None:
            raise Unsupported("a rule without a value")
        # A function's arguments are matched against its head's, in order.
        args = head.args or ()
        matches = [(self.pattern(a), s) for a, s in zip(args, arg_slots)]
        result = self.slot()
        required = self.head_vars(rule)
        builders = self.body(rule.body, required, head.location)
        if matches:
            builders.insert(0, _matching(matches))
        read = self.head_value(value_t)
        where = rule.location
        if self.loops == 0 or not (term_vars(value_t, set(), closures=True) - {v for a in args for v in term_vars(a, set())}):
            # The first solution's value ends the search.
            return self.chain(builders, read)
        conflict = conflict_of(node)

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

    def partial(
        self, kind: str, rule: ast.Rule, tracked: bool = False, made: tuple[str, tuple[ast.Term, ...]] | None = None
    ) -> Callable[[Any, Any], None]:
        """A partial set's or object's definition: adds each solution's key (and
        value) to ``acc`` (``tracked``: noting the objects given, see
        codegen_docs.tracks_values; ``made``: the objects of its path it makes
        first, see codegen_docs.path_made)."""
        head = rule.head
        acc = self.slot()
        builders = self.body(rule.body, self.head_vars(rule), head.location)
        last: Step
        if kind == PARTIAL_SET:
            if head.key is None:
                raise Unsupported("a set rule without a key")
            key = self.head_value(head.key)

            def add(ctx: Any, env: list[Any], key: Any = key, acc: int = acc) -> Any:
                k = key(ctx, env)
                if k is not UNDEF:
                    env[acc].add(k if type(k) is str else freeze(k))
                return UNDEF

            last = add
        else:
            if head.value is None:
                raise Unsupported("sets at an object's leaves")
            keys = [self.head_value(k) for k in rule_suffix(0, rule)]
            value = self.head_value(head.value)
            where = head.location

            put_one = rt_obj_put_value if tracked else rt_obj_put

            def put(
                ctx: Any, env: list[Any], keys: list[Any] = keys, value: Any = value, acc: int = acc, where: Any = where, put_one: Any = put_one
            ) -> Any:
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
                    put_one(env[acc], ks[0], v, where)
                else:
                    rt_obj_put_path(env[acc], tuple(ks), v, where)
                return UNDEF

            last = put
        first = self.chain(builders, last)
        n = self.nslots
        if made is not None:
            path = tuple([self.head_value(k) for k in made[1]])

            def with_path(ctx: Any, into: Any, first: Step = first, n: int = n, acc: int = acc, path: Any = path, where: Any = head.location) -> None:
                env = [UNDEF] * n
                env[acc] = into
                rt_obj_add_path(into, tuple([k(ctx, env) for k in path]), where)
                first(ctx, env)

            return with_path

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
            raise Unsupported("an iterating head term")
        return operand.value

    @staticmethod
    def chain(builders: list[Callable[[Step], Step]], last: Step) -> Step:
        step = last
        for build in reversed(builders):
            step = build(step)
        return step

    def body(self, body: ast.Body, required: set[str] | None, location: ast.Location | None) -> list[Callable[[Step], Step]]:
        saved_outer, saved_settled = self.outer, self.settled
        # Each expression's variables (outside comprehensions), for the outer
        # set and, again, for whether they are all bound once it is reached.
        # Most expressions have none, comprehensions included: a body of only
        # such expressions is in order as written (reorder_body would keep it).
        own: dict[int, AbstractSet[str]]
        ordered: ast.Body
        # (A rule's body as codegen.deferred found it, when the rule was deferred.)
        known = self.gen.body_orders.get(id(body)) if not self.outer else None
        if known is not None and known[2] is body and known[0] == self.bound and known[1] == (required or _NO_VARS):
            ordered, own, self.outer = known[3], known[4], known[5]
        else:
            ordered, own, self.outer = order_body(self.gen, body, self.bound, self.outer | self.bound, required, location)
        builders: list[Callable[[Step], Step]] = []
        strict_run: list[ast.Expr] = []
        for e in ordered:
            if strict_only(e):
                strict_run.append(e)
                continue
            if self.gen.strict_errors:
                strict_run += strict_calls_first(e, self.bound)
            if strict_run:
                builders.append(self.strict_guards(strict_run))
                strict_run = []
            known = own.get(id(e))  # (an expression reorder_body made has none yet)
            self.settled = (known if known is not None else stmt_vars(e.statement, set())) <= self.bound
            builders += self.expr(e)
        if strict_run:
            builders.append(self.strict_guards(strict_run))
        self.outer, self.settled = saved_outer, saved_settled
        return builders

    def strict_guards(self, guards: list[ast.Expr]) -> Callable[[Step], Step]:
        """Index guards needed only with strict builtin errors (a setting of
        the evaluation): taken in such evaluations alone; what they bind is theirs."""
        saved = set(self.bound), self.loops, self.settled
        inner: list[Callable[[Step], Step]] = []
        for e in guards:
            self.settled = stmt_vars(e.statement, set()) <= self.bound
            inner += self.expr(e)
        self.bound, self.loops, self.settled = saved
        chain = self.chain

        def build(nxt: Step) -> Step:
            guarded = chain(inner, nxt)

            def step(ctx: Any, env: list[Any], guarded: Step = guarded, nxt: Step = nxt) -> Any:
                if ctx.cfg.strict:
                    return guarded(ctx, env)
                return nxt(ctx, env)

            return step

        return build

    def expr(self, e: ast.Expr) -> list[Callable[[Step], Step]]:
        # (OPA names a comprehension head's unbound variable at the expression holding it.)
        saved, self.expr_at = self.expr_at, e.location
        try:
            return self.expr_as_written(e)
        finally:
            self.expr_at = saved

    def expr_as_written(self, e: ast.Expr) -> list[Callable[[Step], Step]]:
        if e.with_mods:
            raise Unsupported("with")
        if e.negated:
            return [self.negation(e)]
        s: Any = e.statement
        ts = type(s)
        if ts is ast.Assign or ts is ast.Unify:
            return [self.unify(s.lhs, s.rhs)]
        if ts is ast.SomeVars:
            return []
        if ts is ast.SomeIn:
            return [self.some_in(s)]
        if ts is ast.Every:
            return [self.every(s)]
        return [self.term_statement(s)]

    def negation(self, e: ast.Expr) -> Callable[[Step], Step]:
        saved = set(self.bound), self.loops
        inner_builders = self.expr(ast.Expr(e.statement, False, (), e.location))
        self.bound, self.loops = saved
        inner = self.chain(inner_builders, _found)

        def build(nxt: Step) -> Step:
            def step(ctx: Any, env: list[Any], inner: Step = inner, nxt: Step = nxt) -> Any:
                if inner(ctx, env) is _FOUND:
                    return UNDEF
                return nxt(ctx, env)

            return step

        return build

    def every(self, s: ast.Every) -> Callable[[Step], Step]:
        """``every k, v in xs { body }``: the body holds for each member (its variables stay inside)."""
        domain = self.operand(s.domain)
        items = rt_items_ordered if self.ordered else rt_items
        saved = set(self.bound), self.loops, dict(self.slots)
        # Fresh slots: the loop's variables shadow any of the same name outside.
        for v in (s.key, s.value):
            if v is not None:
                self.slots.pop(v.name, None)
        key = self.bind(s.key.name) if s.key is not None else None
        value = self.bind(s.value.name)
        inner = self.chain(self.body(s.body, None, None), _found)
        self.bound, self.loops, self.slots = saved

        where = s.location

        def build(nxt: Step) -> Step:
            def loop(
                ctx: Any, env: list[Any], d: Any, items: Any = items, key: Any = key, value: int = value, inner: Step = inner, nxt: Step = nxt, where: Any = where, ordered: bool = self.ordered
            ) -> Any:
                if type(d) not in COLLECTION_TYPES and check_plain(d):
                    return UNDEF  # a domain that is not a collection: undefined, not true
                for k, v in items(ctx, d) if ordered else items(d):
                    rt_check_deadline(ctx, where)
                    if key is not None:
                        env[key] = k
                    env[value] = v
                    if inner(ctx, env) is not _FOUND:
                        return UNDEF
                return nxt(ctx, env)

            return self.gather1(domain, loop)

        return build

    # -- statements -------------------------------------------------------------------

    def term_statement(self, t: ast.Term) -> Callable[[Step], Step]:
        if type(t) is ast.Call:
            return self.call_statement(t) or self.truthy(t)
        if type(t) is ast.Scalar:
            if t.value is False:
                return lambda nxt: _fail
            return lambda nxt: nxt
        return self.truthy(t)

    def call_statement(self, t: ast.Call) -> Callable[[Step], Step] | None:
        """A comparison or a membership test as a statement; None for another call."""
        if t.op in COMPARE_OPS and len(t.args) == 2 and (t.op == "equal" or t.op not in self.gen.mockable):
            test = TESTS[t.op]
            order = self.ranked(t.args)
            operands = self.operands(t.args, order)

            def build_compare(nxt: Step) -> Step:
                def compare(ctx: Any, env: list[Any], x: Any, y: Any, test: Any = test, nxt: Step = nxt) -> Any:
                    return nxt(ctx, env) if test(x, y) else UNDEF

                return self.gather2(operands, compare, order)

            return build_compare
        if t.op == "internal.member_2" and len(t.args) == 2 and not self.has_unbound(t.args[0]):
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
                            if type(v) is not str and (v is UNDEF or type(v) in PLAIN_TYPES or not rt_in_strings(v, members)) or v not in members:
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
        return None

    def truthy(self, t: ast.Term) -> Callable[[Step], Step]:
        """A term as a statement: defined and not false."""
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
                    raise Unsupported("unsafe")
                operand = self.operand(source)
                assert isinstance(target, ast.Var)
                slot = self.bind(target.name)

                def build_bind(nxt: Step, operand: Operand = operand, slot: int = slot) -> Step:
                    def bind(ctx: Any, env: list[Any], v: Any, slot: int = slot, nxt: Step = nxt) -> Any:
                        env[slot] = v
                        return nxt(ctx, env)

                    return self.gather1(operand, bind)

                return build_bind
        if self.has_unbound(a) or self.has_unbound(b):
            raise Unsupported("a pattern")
        operands = self.operands((a, b), [0, 1])

        def build_equal(nxt: Step) -> Step:
            def same(ctx: Any, env: list[Any], x: Any, y: Any, nxt: Step = nxt) -> Any:
                return nxt(ctx, env) if equal(x, y) else UNDEF

            return self.gather2(operands, same)

        return build_equal

    def some_in(self, s: ast.SomeIn) -> Callable[[Step], Step]:
        coll = self.operand(s.collection if s.key is not None else iterated_terms(s.collection, rule_var_names(self.gen)))
        self.loops += 1
        key = self.pattern(s.key) if s.key is not None else None
        value = self.pattern(s.value)
        values, items = (rt_values_ordered, rt_items_ordered) if self.ordered else (rt_values, rt_items)
        ordered = self.ordered
        if iterated_as_built(s.collection):
            values, items, ordered = rt_values_built, rt_items_built, False
        where = s.location

        def build(nxt: Step) -> Step:
            def loop(
                ctx: Any, env: list[Any], c: Any, key: Any = key, value: Any = value, nxt: Step = nxt, values: Any = values, items: Any = items, where: Any = where, ordered: bool = ordered
            ) -> Any:
                if key is None:
                    for v in values(ctx, c) if ordered else values(c):
                        rt_check_deadline(ctx, where)
                        if value(ctx, env, v):
                            r = nxt(ctx, env)
                            if r is not UNDEF:
                                return r
                else:
                    for k, v in items(ctx, c) if ordered else items(c):
                        rt_check_deadline(ctx, where)
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
            raise Unsupported("a pattern")
        operand = self.operand(p)
        read = operand.value
        if read is None:
            raise Unsupported("an iterating pattern")

        def same(ctx: Any, env: list[Any], v: Any, read: Any = read) -> bool:
            y = read(ctx, env)
            return y is not UNDEF and equal(v, y)

        return same

    # -- operands ---------------------------------------------------------------------

    def comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> Operand:
        """A comprehension's value: its body's solutions collected (variables bound inside stay inside)."""
        saved, outer = (set(self.bound), self.loops, self.ordered, self.settled), self.outer
        try:
            return self.comprehension_as_written(t)
        except RegoUnsafeVarError:
            # Safe in OPA's form only, with its head's refs moved into its body.
            moved = with_head_in_body(t, saved[0], outer | saved[0], self.gen.arity)
            if moved is None:
                raise
        (self.bound, self.loops, self.ordered, self.settled), self.outer = saved, outer
        return self.comprehension_as_written(moved)

    def comprehension_as_written(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> Operand:
        saved = set(self.bound), self.loops, self.ordered, self.settled
        self.ordered = self.ordered or isinstance(t, ast.ArrayCompr)
        self.settled = False  # the head's variables are not the enclosing expression's
        acc = self.slot()
        body = comprehension_body(t) if self.gen.strict_errors else t.body
        builders = naming_term_vars(t, body, lambda b: self.body(b, None, None), self.bound, self.outer | self.bound, self.gen.arity)
        check_head_vars(t, self.bound, self.expr_at or t.location)
        last: Step
        new: Callable[[], Any]
        if isinstance(t, ast.ObjectCompr):
            # OPA places a key conflict at the comprehension's key term.
            key, value, where = self.head_value(t.key), self.head_value(t.value), t.key.location or t.location

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
        self.bound, self.loops, self.ordered, self.settled = saved

        def collect(ctx: Any, env: list[Any], first: Step = first, acc: int = acc, new: Any = new) -> Any:
            env[acc] = new()
            first(ctx, env)
            return env[acc]

        return Operand(collect, None, -1)


def _matching(matches: list[tuple[Callable[[Any, list[Any], Any], bool], int]]) -> Callable[[Step], Step]:
    """A builder: the step that matches a function's arguments (in their slots) against its head's."""

    def build(nxt: Step) -> Step:
        def match(ctx: Any, env: list[Any], matches: Any = matches, nxt: Step = nxt) -> Any:
            for matched, slot in matches:
                if not matched(ctx, env, env[slot]):
                    return UNDEF
            return nxt(ctx, env)

        return match

    return build


def _found(ctx: Any, env: list[Any]) -> Any:
    return _FOUND


def _fail(ctx: Any, env: list[Any]) -> Any:
    return UNDEF


__all__ = ["ENABLED", "plan_definition"]
