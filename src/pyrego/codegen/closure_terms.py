"""Terms for the closures of :mod:`pyrego.codegen.closures`.

Each term is planned into a producer (:class:`Operand`): a function of
``(ctx, env)`` giving its value, or UNDEF when it is undefined; or, for a term
that binds variables by iterating (``input.xs[i]``), a maker of steps that
store each of its values in a slot and go on. Values are found exactly as
the generated code finds them (BodyEmitter.term, ModuleGen.data_ref): the
same runtime helpers, operands in the same order. The functions made here
take what they use as default arguments (see :mod:`pyrego.codegen.closures`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from pyrego.ast import nodes as ast
from pyrego.codegen import docs as codegen_docs
from pyrego.codegen.body import COMPARE_OPS
from pyrego.codegen.key_order import rule_var_names
from pyrego.codegen.set_members import member_reader_name, path_depth, path_reader_name, skips_rules
from pyrego.compile.base import PARTIAL_OBJECT
from pyrego.compile.ground import ground_value, in_build_order, is_ground
from pyrego.compile.safety import ROOTS, has_unbound, iterable_only
from pyrego.errors import EvalConflictError
from pyrego.runtime.docs import rt_root_base
from pyrego.runtime.helpers import (
    INDEX_TEXT,
    rt_check_deadline,
    rt_data_get,
    rt_ge,
    rt_get,
    rt_gt,
    rt_items,
    rt_items_ordered,
    rt_le,
    rt_lt,
    rt_member,
    rt_member3,
    rt_ne,
    rt_object,
    rt_set,
)
from pyrego.runtime.values import UNDEF, equal

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import RuleNode

Step = Callable[[Any, list[Any]], Any]
Compute = Callable[[Any, list[Any]], Any]  # (ctx, operand values) -> value
TESTS: dict[str, Callable[[Any, Any], bool]] = {"equal": equal, "neq": rt_ne, "lt": rt_lt, "lte": rt_le, "gt": rt_gt, "gte": rt_ge}


class Unsupported(Exception):
    """A shape left to the code generator."""


class Operand(NamedTuple):
    """A term's producer: ``value(ctx, env)`` (UNDEF when undefined), or, for a
    term that binds variables by iterating, ``make(k)``: a step that stores
    each of the term's defined values in ``env[slot]`` and runs step ``k``."""

    value: Callable[[Any, list[Any]], Any] | None
    make: Callable[[Step], Step] | None
    slot: int


# Operand(...) without the NamedTuple's own __new__ (a Python function): hot in planning.
_new_tuple = tuple.__new__


def value_step(value: Callable[[Any, list[Any]], Any], slot: int, nxt: Step) -> Step:
    def step(ctx: Any, env: list[Any], value: Any = value, slot: int = slot, nxt: Step = nxt) -> Any:
        v = value(ctx, env)
        if v is UNDEF:
            return UNDEF
        env[slot] = v
        return nxt(ctx, env)

    return step


class TermPlanner:
    """Plans terms; :class:`pyrego.codegen.closures._Planner` adds rules, bodies and statements."""

    def __init__(self, gen: ModuleGen) -> None:
        self.gen = gen
        self.ns = gen.namespace
        self.slots: dict[str, int] = {}  # variable -> slot
        self.bound: set[str] = set()
        self.nslots = 0
        self.loops = 0
        # As BodyEmitter: iterate in OPA's sorted order inside array
        # comprehensions (where order shows), everywhere with strict builtin
        # errors; every variable visible from enclosing scopes (for
        # reorder_body's closure captures).
        self.ordered = gen.strict_errors
        self.outer: set[str] = set()
        # Whether every variable of the expression being planned (outside its
        # comprehensions) is bound: then none of its terms has an unbound one.
        self.settled = False

    def slot(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    def bind(self, name: str) -> int:
        s = self.slots.get(name)
        if s is None:
            s = self.slots[name] = self.slot()
        self.bound.add(name)
        return s

    def is_unbound(self, t: ast.Term) -> bool:
        return isinstance(t, ast.Var) and t.name not in ROOTS and t.name not in self.bound

    def has_unbound(self, t: ast.Term) -> bool:
        return not self.settled and has_unbound(t, self.bound)

    def iterable_only(self, t: ast.Term) -> bool:
        return iterable_only(t, self.bound, self.gen.arity)

    def ranked(self, terms: tuple[ast.Term, ...]) -> list[int]:
        """Evaluation order of ``terms``: those that bind variables by iterating first."""
        if self.settled:
            return list(range(len(terms)))
        iterating = [i for i, t in enumerate(terms) if self.has_unbound(t)]
        if not iterating:
            return list(range(len(terms)))
        if not all(self.iterable_only(terms[i]) for i in iterating):
            raise Unsupported("unsafe")
        return iterating + [i for i in range(len(terms)) if i not in iterating]

    def operands(self, terms: tuple[ast.Term, ...], order: list[int]) -> list[Operand]:
        """Plan ``terms`` in evaluation ``order``; returned by position."""
        out: list[Operand | None] = [None] * len(terms)
        for i in order:
            out[i] = self.operand(terms[i])
        return out  # type: ignore[return-value]

    def gather1(self, operand: Operand, finish: Callable[[Any, list[Any], Any], Any]) -> Step:
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

    def gather2(self, operands: list[Operand], finish: Callable[[Any, list[Any], Any, Any], Any], order: list[int] | None = None) -> Step:
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

    def gather(self, operands: list[Operand], order: list[int], finish: Callable[[Any, list[Any], list[Any]], Any]) -> Step:
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
                step = value_step(op.value, slots[i], step)
        return step

    def operand(self, t: ast.Term) -> Operand:
        tt = type(t)
        if tt is ast.Ref:
            return self.ref(t)  # type: ignore[arg-type]
        if tt is ast.Scalar:
            v = t.value  # type: ignore[union-attr]
            return _new_tuple(Operand, (constant(v), None, -1))
        if tt is ast.Var:
            name = t.name  # type: ignore[union-attr]
            if name == "input":
                return _new_tuple(Operand, (_input, None, -1))
            if name in ROOTS or name not in self.bound:
                raise Unsupported("data or an unbound variable")
            return _new_tuple(Operand, (_variable(self.slots[name]), None, -1))
        if tt is ast.Call:  # (never ground)
            return self.call(t)  # type: ignore[arg-type]
        if is_ground(t):
            const = ground_value(t)
            return _new_tuple(Operand, (constant(const), None, -1))
        if isinstance(t, ast.Array):
            return self.composite(list(t.items), _built(list))
        if isinstance(t, ast.SetTerm):
            return self.composite(list(t.items), _built(rt_set))
        if isinstance(t, ast.Object):
            flat = [x for kv in t.items for x in kv]
            if all(isinstance(k, ast.Scalar) and isinstance(k.value, str) for k, _ in t.items) and len({k.value for k, _ in t.items}) == len(t.items):  # type: ignore[union-attr]
                return self.composite(flat, _built(_pairs))
            where = t.location
            flat = [x for kv in in_build_order(t.items, rule_var_names(self.gen)) for x in kv]
            return self.composite(flat, _object(where))
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
            return self.comprehension(t)
        raise Unsupported(type(t).__name__)

    def composite(self, items: list[ast.Term], compute: Compute) -> Operand:
        # Items in written order (as the generated code evaluates them).
        operands = [self.operand(x) for x in items]
        return self.computed(operands, list(range(len(items))), compute)

    def computed(self, operands: list[Operand], order: list[int], compute: Callable[[Any, list[Any]], Any]) -> Operand:
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

            return _new_tuple(Operand, (value, None, -1))
        out = self.slot()

        def make(k: Step) -> Step:
            def finish(ctx: Any, env: list[Any], vals: list[Any], k: Step = k, compute: Any = compute, out: int = out) -> Any:
                v = compute(ctx, vals)
                if v is UNDEF:
                    return UNDEF
                env[out] = v
                return k(ctx, env)

            return self.gather(operands, order, finish)

        return _new_tuple(Operand, (None, make, out))

    def call(self, t: ast.Call) -> Operand:
        op = t.op
        gen = self.gen
        if op in COMPARE_OPS and len(t.args) == 2 and op not in gen.mockable:
            test = TESTS[op]
            return self.computed(self.operands(t.args, order := self.ranked(t.args)), order, _tested(test))
        node, b = gen.tree.callee(op)  # (kept for below)
        arity = node.arity if node is not None else b.arity if b is not None else None
        if arity is None or len(t.args) != arity or op in gen.mockable or op in ("print", "internal.print") or op.startswith("rego.metadata."):
            raise Unsupported(op)
        order = self.ranked(t.args)
        operands = self.operands(t.args, order)
        if op == "internal.member_2":
            return self.computed(operands, order, lambda ctx, vals: rt_member(vals[0], vals[1]))
        if op == "internal.member_3":
            return self.computed(operands, order, lambda ctx, vals: rt_member3(vals[0], vals[1], vals[2]))
        ns = self.ns
        if node is not None:
            name = gen.function_name(node)
            return self.computed(operands, order, _function_call(ns, name))
        if b is None or b.relation:
            raise Unsupported(op)
        caller = ns[gen.builtin_site(op, t.location, b)]
        return self.computed(operands, order, _builtin_call(caller))

    # -- references ---------------------------------------------------------------------

    def ref(self, t: ast.Ref) -> Operand:
        head, path = t.head, t.path
        if type(head) is ast.Var:
            if head.name == "data":
                return self.data_ref(path)
            if head.name == "input":  # (most refs)
                return self.walk(_input, path, rt_get)
        base = self.operand(head)
        if base.make is not None:
            raise Unsupported("an iterating ref head")
        return self.walk(base.value, path, rt_get)  # type: ignore[arg-type]

    def data_ref(self, path: tuple[ast.Term, ...]) -> Operand:
        """``data.<path>`` (see ModuleGen.data_target): a rule's document, then a path into it; or base data."""
        passed: list[tuple[RuleNode, int]] = []
        kind, node, i = self.gen.data_target(path, passed)
        if kind == "function":
            return _new_tuple(Operand, (constant(UNDEF), None, -1))
        if passed:
            # Past rules with variable keys into a child: the union of the parts (codegen_docs).
            ground = codegen_docs.tree_keys_of(self.gen, path)
            name = codegen_docs.ground_document_name(self.gen, ground)
            return self.walk(document_of(self.ns, name), path[len(ground) :], rt_get)
        if kind == "rule":
            if i < len(path) and codegen_docs.has_own_part(self.gen, node) and type(path[i]) is not ast.Scalar:
                raise Unsupported("a computed key into rules beside deeper rules")
            first = tuple([p.value for p in path[i : i + 1] if type(p) is ast.Scalar])  # type: ignore[union-attr]
            doc = codegen_docs.rule_document(self.gen, node, first)
            if i < len(path) and doc.startswith("R") and skips_rules(self.gen, node) and not self.has_unbound(path[i]):
                n = path_depth(node) if node.kind == PARTIAL_OBJECT else 1
                known = next((j for j, p in enumerate(path[i : i + n]) if self.has_unbound(p)), len(path[i : i + n]))
                if known > 1:
                    # Keys along a partial object's paths: each rule runs with its path's keys bound to them, as in OPA (the keys first).
                    along = tuple([self.operand(p).value for p in path[i : i + known]])
                    return self.walk(_along(self.ns, path_reader_name(self.gen, node, known), along), path[i:], rt_get)
                # One key looked up: each rule runs for that key alone, as in OPA (the key first).
                member = _member(self.ns, member_reader_name(self.gen, node), self.operand(path[i]).value)
                return self.walk(member, path[i + 1 :], rt_get)
            if i < len(path) and node.kind == PARTIAL_OBJECT:
                # A path into a partial object: only a conflict along it raises, as in OPA.
                keys = []
                for p in path[i:]:
                    if not (type(p) is ast.Scalar or (type(p) is ast.Var and not self.has_unbound(p))):
                        break
                    keys.append(self.operand(p).value)
                if keys and all(k is not None for k in keys):
                    keyed = f"PK{node.id}" if doc.startswith("P") else codegen_docs.keyed_rule_name(self.gen, node)
                    return self.walk(_keyed_document(self.ns, doc, keyed, tuple(keys)), path[i:], rt_get)
            return self.walk(document_of(self.ns, doc), path[i:], rt_get)
        if kind == "base":
            # (the root document read whole or iterated: without base data's system key)
            root = not path or self.has_unbound(path[0])
            return self.walk(_root_base_data if root else _base_data, path, rt_data_get)
        raise Unsupported("a document holding rules")

    def walk(self, base: Callable[[Any, list[Any]], Any], path: tuple[ast.Term, ...], getter: Callable[[Any, Any], Any]) -> Operand:
        """``base`` looked up along ``path``; an unbound variable in it iterates."""
        # Each key: a literal string, or the key's read; or, to iterate, the
        # items function, with the iterated variable's slot and location in
        # ``iterated`` under the key's index.
        keys: list[Any] = []
        iterated: dict[int, tuple[int, Any]] = {}
        literal = True  # every key a literal string
        data_keys = getter is rt_data_get
        bound = self.bound
        for p in path:
            tp = type(p)
            if tp is ast.Scalar:
                key = p.value  # type: ignore[union-attr]
                # A string that reads as an index goes through the getter: base data's finds array items by it.
                if type(key) is not str or (data_keys and INDEX_TEXT.fullmatch(key)):
                    key = constant(key)
                    literal = False
                keys.append(key)
            elif tp is ast.Var and p.name not in ROOTS and p.name not in bound:  # type: ignore[union-attr]
                self.loops += 1
                iterated[len(keys)] = (self.bind(p.name), p.location)  # type: ignore[union-attr]
                keys.append(rt_items_ordered if self.ordered else rt_items)
            else:
                if self.has_unbound(p):
                    raise Unsupported("a pattern in a ref")
                keys.append(self.operand(p).value)
                literal = False
        if not iterated:
            return _new_tuple(Operand, (self._lookups(base, keys, getter, literal), None, -1))
        out = self.slot()

        def make(k: Step) -> Step:
            def stored(ctx: Any, env: list[Any], v: Any, k: Step = k, out: int = out) -> Any:
                if v is UNDEF:
                    return UNDEF
                env[out] = v
                return k(ctx, env)

            walk: Callable[[Any, list[Any], Any], Any] = stored
            for i in range(len(keys) - 1, -1, -1):
                slot, where = iterated.get(i, (None, None))
                walk = self._walk_step(keys[i], slot, getter, walk, where)

            def start(ctx: Any, env: list[Any], walk: Any = walk, base: Any = base) -> Any:
                return walk(ctx, env, base(ctx, env))

            return start

        return _new_tuple(Operand, (None, make, out))

    @staticmethod
    def _lookups(base: Callable[[Any, list[Any]], Any], keys: list[Any], getter: Callable[[Any, Any], Any], literal: bool) -> Callable[[Any, list[Any]], Any]:
        """``base`` looked up along ``keys`` (``literal``: all of them literal strings)."""
        if literal:
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
    def _walk_step(
        key: Any, slot: int | None, getter: Callable[[Any, Any], Any], nxt: Callable[[Any, list[Any], Any], Any], where: Any
    ) -> Callable[[Any, list[Any], Any], Any]:
        if slot is not None:

            ordered = key is rt_items_ordered

            def iterate(ctx: Any, env: list[Any], cur: Any, items: Any = key, slot: int = slot, nxt: Any = nxt, where: Any = where, ordered: bool = ordered) -> Any:
                for k, v in items(ctx, cur) if ordered else items(cur):
                    rt_check_deadline(ctx, where)
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

    def comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> Operand:
        raise NotImplementedError  # a body inside a term: planned by the subclass


def document_of(ns: dict[str, Any], name: str) -> Callable[[Any, list[Any]], Any]:
    """The value of the rule document ``name`` (looked up each time: a hot
    program's code replaces the function)."""

    def document(ctx: Any, env: list[Any], ns: dict[str, Any] = ns, name: str = name) -> Any:
        return ns[name](ctx)

    return document


def _member(ns: dict[str, Any], reader: str, key: Any) -> Callable[[Any, list[Any]], Any]:
    """The member of a partial set that ``key`` computes, read by ``reader`` (``SM<id>``)."""

    def member(ctx: Any, env: list[Any], ns: dict[str, Any] = ns, reader: str = reader, key: Any = key) -> Any:
        k = key(ctx, env)
        return UNDEF if k is UNDEF else ns[reader](ctx, k)

    return member


def _along(ns: dict[str, Any], reader: str, keys: tuple[Any, ...]) -> Callable[[Any, list[Any]], Any]:
    """A partial object's document as its rules make it for a read along the
    keys that ``keys`` compute, read by ``reader`` (``SK<id>``)."""

    def document(ctx: Any, env: list[Any], ns: dict[str, Any] = ns, reader: str = reader, keys: Any = keys) -> Any:
        kvs = tuple([k(ctx, env) for k in keys])
        return UNDEF if UNDEF in kvs else ns[reader](ctx, kvs)

    return document


def _keyed_document(ns: dict[str, Any], name: str, keyed: str, keys: tuple[Any, ...]) -> Callable[[Any, list[Any]], Any]:
    """The document ``name`` of a partial object, to be read along the keys
    that ``keys`` compute; where evaluating it whole meets a conflict,
    ``keyed`` (``PK<id>``, ``RK<id>``) along them (see runtime.docs.rt_own_at)."""

    def document(ctx: Any, env: list[Any], ns: dict[str, Any] = ns, name: str = name, keyed: str = keyed, keys: Any = keys) -> Any:
        try:
            return ns[name](ctx)
        except EvalConflictError:
            kvs = tuple([k(ctx, env) for k in keys])
            if UNDEF in kvs:
                raise
            return ns[keyed](ctx, kvs)

    return document


def _base_data(ctx: Any, env: list[Any]) -> Any:
    return ctx.data


def _root_base_data(ctx: Any, env: list[Any]) -> Any:
    return rt_root_base(ctx.data)


def _input(ctx: Any, env: list[Any]) -> Any:
    return ctx.input


def constant(value: Any) -> Callable[[Any, list[Any]], Any]:
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
