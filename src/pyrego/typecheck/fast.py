"""Programs that cannot fail the type check, found in one cheap pass.

Most programs are clean, and most of their rules compare ``input`` (typed
``any`` when no schema is given) with literals and call builtins on it. For
those, the full check (:class:`.rules.ProgramChecker`: dependency order,
lowering as OPA rewrites bodies, environments per body) only confirms that
nothing fails, and it costs about as much as the rest of compiling.
:func:`screen_program` reads the resolved rules directly, keeping variables'
types in plain dicts and rules' types by path, computing a rule's type the
first time another rule reads it. It answers for the forms whose outcome it
can work out with the checker's own type functions:

- builtin calls (``equal`` as a unification), nested or not, whose operands
  have known types; composite literals of such operands; comprehensions whose
  bodies are clean in turn;
- refs into ``input``, into rules' values (from the rules' types), into
  variables and calls' results, checked key by key as the full check does;
- ``x := value``, ``x = value`` binding ``x``, ``some x in coll``, refs and
  literals alone, negated or not.

Anything else (functions, ``with``, ``every``, schemas, ref heads with
variables, types it cannot be sure of) makes it answer None, and the full
check runs, from the start, on the whole program: the screen answers
"clean" only when the full check would report nothing, and then it also
knows every rule's type, as the full check would have inserted it (what
queries are checked against, built when a query first needs it).
``tests/test_typecheck_fast.py`` holds both to that over every program the
suite compiles.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Call, Ref, Scalar, Var
from pyrego.compile.base import FUNCTION, CompiledTree, RuleNode
from pyrego.compile.safety import is_wildcard
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import SCALAR_TYPE_BY_CLASS, merge_types, scalar_type, select_constant, to_json
from pyrego.typecheck.rules import node_rules
from pyrego.typecheck.screen import SPECIAL_CALLS, constant
from pyrego.typecheck.signatures import builtin_type
from pyrego.typecheck.types_json import loses_keys
from pyrego.typecheck.unify import unifies

#: Comprehensions nested deeper than this are left to the full check.
_MAX_NESTING = 8

_NO_ARGUMENTS: frozenset[str] = frozenset()

# Literal composites: a side of a unification (see ProgramScreen.operand).
_COMPOSITE_TERMS = frozenset({ast.Array, ast.SetTerm, ast.Object})

# Types that are never nil (T.is_nil), told by their class alone: most types met,
# tested in place before calling is_nil (None is nil: its class is not here).
_NEVER_NIL = frozenset({T.NullType, T.BooleanType, T.NumberType, T.StringType, T.AnyType})

# Types that unify with any (every type but a function's, told by class; a
# recursive or named type is left to unifies): builtins' operands mostly want any.
_UNIFY_WITH_ANY = _NEVER_NIL | {T.ArrayType, T.ObjectType, T.SetType}


class _Unsure(Exception):
    """The screen cannot tell: the full check decides. (Raised as a new
    instance each time, once per program: one instance raised again would
    keep every traceback it went through, and the exception being handled
    when it was raised, with their frames and what they hold.)"""


class ProgramScreen:
    """One pass over a program's rules (see the module's docstring)."""

    def __init__(self, tree: CompiledTree, builtin: Callable[[str], T.FunctionType | None]) -> None:
        self.nodes = tree.nodes
        self.builtin = builtin
        self.function_ops = tree.functions
        self.extension_roots = {name.split(".")[0] for name in tree.extensions} if tree.extensions else set()
        self.types: dict[tuple[str, ...], T.Type] = {}  # rule path -> merged type
        self.pending: set[tuple[str, ...]] = set()
        self.scope: list[dict[str, T.Type]] = []  # innermost last
        self.negated = False
        self.nesting = 0
        self.open: frozenset[str] = _NO_ARGUMENTS  # a function's arguments (see function_type)
        self.statement: Any = None  # the expression (or head value) being read: see occurrences
        self.found: list[tuple[str, bool]] | None = None  # its variable occurrences (see occurrences)
        # A call's signature by name; the builtins' are shared by the programs that call no extension.
        self.signatures: dict[str, tuple[T.FunctionType, tuple[T.MaybeType, ...]]] = (
            _BUILTIN_SIGNATURES if builtin is builtin_type and not self.function_ops else {}
        )

    # -- rules -------------------------------------------------------------------

    def run(self) -> dict[tuple[str, ...], T.Type] | None:
        """Every rule's type by path when no rule can fail the check, else None."""
        try:
            for path, node in self.nodes.items():
                if (node.rules or node.default is not None) and path not in self.types:
                    self.node_type(node)
        except (_Unsure, RecursionError):
            return None
        return self.types

    def node_type(self, node: RuleNode) -> T.Type:
        path = node.path
        done = self.types.get(path)
        if done is not None:
            return done
        function = node.kind == FUNCTION
        if node.children or path in self.pending or (function and node.default is not None):
            raise _Unsure
        for i in range(1, len(path)):  # a rule above this one: its value holds this document
            above = self.nodes.get(path[:i])
            if above is not None and (above.rules or above.default is not None):
                raise _Unsure
        self.pending.add(path)
        merged: T.MaybeType = None
        saved = self.scope, self.negated, self.nesting, self.open
        for rule in node_rules(node):  # (in the full check's order: types merge in it)
            branch: ast.Rule | None = rule
            while branch is not None:  # (the rule, then its else branches)
                # (an else branch has the arguments of the rule it follows)
                tpe = self.function_type(branch, rule.head.args) if function else self.rule_type(branch)
                merged = tpe if merged is None else merge_types(merged, tpe)
                branch = branch.else_
        self.scope, self.negated, self.nesting, self.open = saved
        self.pending.discard(path)
        if merged is None:
            raise _Unsure
        self.types[path] = merged
        return merged

    def function_type(self, rule: ast.Rule, args: tuple[ast.Term, ...] | None) -> T.Type:
        """A function's type: its arguments' types (each what its first use
        in the body made it, else any) and its value's.

        The full check binds an argument where it first meets it, as any
        variable not bound yet: a builtin's operand takes the declared type,
        one side of a unification the other side's type, the head of a ref
        any. Until then the argument is "open" here, and the screen answers
        only where that first use is the only use in its expression (the
        full check walks an expression's refs before its call)."""
        head = rule.head
        if args is None or head.key is not None or not self._ground_name(head):
            raise _Unsure
        names: list[str] = []
        for a in args:
            if type(a) is not Var or a.name in names:
                raise _Unsure
            names.append(a.name)
        self.scope = [{}]
        self.nesting = 0
        self.open = frozenset([n for n in names if not is_wildcard(n)])
        for name in self.open:
            if name in _builtin_roots() or name in self.extension_roots:
                raise _Unsure  # (a ref headed by it might read as a builtin's name)
        self.body(rule.body)
        value = head.value
        if value is None:
            value_type: T.MaybeType = T.BOOLEAN
        elif type(value) is Var and self.is_open(value):
            value_type = None  # any, as the arguments still open (below)
        else:
            self.statement, self.found = value, None
            self.statement_uses()
            value_type = self.value(value)  # (its calls and refs are checked after the body)
        arg_types = tuple([self.lookup(n) or T.ANY for n in names])
        tpe = T.FunctionType(arg_types, value_type if value_type is not None else T.ANY)
        if T.is_nil(tpe.result_type()):
            raise _Unsure
        self.open = _NO_ARGUMENTS
        return tpe

    def _ground_name(self, head: ast.RuleHead) -> bool:
        if type(head.ref.head) is not Var:
            return False
        for p in head.ref.path:
            if type(p) is not Scalar or not isinstance(p.value, str):
                return False
        return True

    def rule_type(self, rule: ast.Rule) -> T.Type:
        """A rule's type: its value's; a partial set's, the set of its keys';
        with variables ending its head's ref (``r[k] := v``), an object keyed
        by their types, one level per variable."""
        head = rule.head
        if head.args is not None or type(head.ref.head) is not Var:
            raise _Unsure
        keys: list[Var] = []
        for p in head.ref.path:
            if type(p) is Var and not is_wildcard(p.name) and head.key is None:
                keys.append(p)
            elif keys or type(p) is not Scalar or not isinstance(p.value, str):
                raise _Unsure
        self.scope = [{}]
        self.nesting = 0
        self.open = _NO_ARGUMENTS
        self.body(rule.body)
        key, value = head.key, head.value
        tpe: T.MaybeType
        if value is None and key is None:
            tpe = T.BOOLEAN
        elif value is None:  # a partial set: of its keys
            if type(key) is Var:
                if is_wildcard(key.name):
                    raise _Unsure
                tpe = T.SetType(self.var(key))
            elif constant(key):
                tpe = T.SetType(self.value(key))
            else:
                raise _Unsure
        elif key is not None:
            raise _Unsure  # (a partial object with a literal key: left to the full check)
        elif type(value) is Scalar:
            tpe = SCALAR_TYPE_BY_CLASS.get(value.value.__class__) or scalar_type(value.value)
        else:
            self.statement, self.found = value, None
            tpe = self.value(value)
        if keys:
            for k in reversed(keys):
                tpe = T.ObjectType((), (self.var(k), tpe))
        if tpe.__class__ not in _NEVER_NIL and T.is_nil(tpe):
            raise _Unsure
        return tpe

    # -- bodies ------------------------------------------------------------------

    def body(self, body: ast.Body) -> None:
        for e in body:
            if e.with_mods:
                raise _Unsure
            self.negated = e.negated
            s: Any = e.statement
            st = type(s)
            self.statement = s
            self.found = None
            if self.open:
                self.statement_uses()
            if st is Call:
                # (a negation's calls are taken out of it first, in this order)
                if s.op == "equal" and len(s.args) == 2:
                    # Lowered to a unification, which binds nothing new but an
                    # open argument (``==`` does not bind: safety says so).
                    self.unify(s.args[0], s.args[1], self.is_open)
                else:
                    self.call(s, nested=False)
            elif st is Ref or st is Scalar:
                self.value(s)
            elif st is ast.Assign and not e.negated:
                self.bind(s.lhs, self.value(s.rhs))
            elif st is ast.Unify and not e.negated:
                self.unify(s.lhs, s.rhs, self.unbound)
            elif st is ast.SomeIn and not e.negated:
                self.some_in(s)
            elif st is not ast.SomeVars:
                raise _Unsure

    def some_in(self, s: ast.SomeIn) -> None:
        """``some k, x in coll``: lowered to ``x = coll[k]`` (``k`` a new
        variable when not given), whose ref types ``k``; ``x`` takes its type."""
        key = s.key if s.key is not None else Var("$in", s.location)  # (a wildcard)
        if type(key) is not Var:
            raise _Unsure
        coll = s.collection
        if type(coll) is Ref:
            ref = Ref(coll.head, coll.path + (key,), coll.location)
        elif type(coll) is Var or type(coll) is Call:
            ref = Ref(coll, (key,), s.location)
        elif type(coll) is ast.Array or type(coll) is ast.SetTerm or type(coll) is ast.Object:
            # (the lowering binds a literal collection to a variable first)
            self.bind(s.value, self.select(self.value(coll), (key,)))
            return
        else:
            raise _Unsure
        self.bind(s.value, self.value(ref))

    def unify(self, a: Any, b: Any, binds: Callable[[Var], bool]) -> None:
        """``a = b``: a variable on one side that ``binds`` takes the other
        side's type (as ``:=``), else the two types must unify."""
        if type(a) is Var and binds(a):
            new, other = a, b
        elif type(b) is Var and binds(b):
            new, other = b, a
        else:
            type_a = self.operand(a) if type(a) in _COMPOSITE_TERMS else self.value(a)
            type_b = self.operand(b) if type(b) in _COMPOSITE_TERMS else self.value(b)
            if type_a.__class__ not in _NEVER_NIL and T.is_nil(type_a):
                raise _Unsure
            if type_b.__class__ not in _NEVER_NIL and T.is_nil(type_b):
                raise _Unsure
            if type_a is type_b:  # (a type unifies with itself)
                return
            if type_a is T.ANY and type_b.__class__ in _UNIFY_WITH_ANY:
                return
            if type_b is T.ANY and type_a.__class__ in _UNIFY_WITH_ANY:
                return
            if not unifies(type_a, type_b):
                raise _Unsure
            return
        if is_wildcard(new.name):
            self.operand(other)  # (checks the other side; the wildcard is never read)
        else:
            self.bind(new, self.operand(other))

    def bind(self, var: Any, tpe: T.MaybeType) -> None:
        """A new variable takes the type of what it is assigned."""
        if type(var) is not Var or is_wildcard(var.name) or self.lookup(var.name) is not None:
            raise _Unsure
        if tpe is None or (tpe.__class__ not in _NEVER_NIL and T.is_nil(tpe)):
            raise _Unsure
        self.scope[-1][var.name] = tpe

    def unbound(self, v: Var) -> bool:
        return self.lookup(v.name) is None

    def is_open(self, v: Var) -> bool:
        """A function's argument that no expression has typed yet."""
        return v.name in self.open and self.lookup(v.name) is None

    def statement_uses(self) -> None:
        """An open argument may occur once in an expression, where its first use
        types it. Its uses inside a comprehension type it there only (the
        comprehension's body is checked in an environment of its own, and
        before the rest of the expression): it may not occur outside as well."""
        outside: set[str] = set()
        inside: set[str] = set()
        for name, in_comprehension in self.occurrences():
            if name not in self.open or self.lookup(name) is not None:
                continue
            if in_comprehension:
                inside.add(name)
            elif name in outside:
                raise _Unsure
            else:
                outside.add(name)
        if outside & inside:
            raise _Unsure

    def occurrences(self) -> list[tuple[str, bool]]:
        """The variable occurrences of the expression being read (found once,
        when a function's open argument or a composite operand first asks)."""
        found = self.found
        if found is None:
            found = self.found = []
            for t in _statement_terms(self.statement):
                _occurrences(t, found, False)
        return found

    def lookup(self, name: str) -> T.Type | None:
        for level in reversed(self.scope):
            tpe = level.get(name)
            if tpe is not None:
                return tpe
        return None

    def var(self, v: Var) -> T.Type:
        """A variable bound by an earlier expression (else the body may be reordered)."""
        tpe = self.lookup(v.name)
        if tpe is None:
            raise _Unsure
        return tpe

    # -- terms -------------------------------------------------------------------

    def operand(self, t: Any) -> T.MaybeType:
        """A side of a unification: composites only when constant (as the full check types them)."""
        tt = type(t)
        if (tt is ast.Array or tt is ast.SetTerm or tt is ast.Object) and not constant(t):
            raise _Unsure
        return self.value(t)

    def value(self, t: Any) -> T.Type:
        """The type the full check gives ``t`` (lowered): checks the calls and refs in it."""
        tt = type(t)
        if tt is Scalar:
            return SCALAR_TYPE_BY_CLASS.get(t.value.__class__) or scalar_type(t.value)
        if tt is Var:
            return self.var(t)
        if tt is Ref:
            head = t.head
            if type(head) is Var and head.name == "input":  # (the most common ref: checked here)
                for p in t.path:
                    if type(p) is not Scalar:  # (most keys are literals: nothing to check)
                        self.any_keys(t.path)
                        break
                return T.ANY  # (no schema: input is any)
            return self.ref(t)
        if tt is Call:
            result = self.call(t, nested=True)
            assert result is not None
            return result
        if tt is ast.Array:
            static = tuple([self.value(x) for x in t.items])
            return T.ArrayType(static, T.ANY if not static else None)
        if tt is ast.SetTerm:
            of: T.MaybeType = None
            for x in t.items:
                of = T.or_(of, self.value(x))
            return T.SetType(of if of is not None else T.ANY)
        if tt is ast.Object:
            props: list[tuple[Any, T.MaybeType]] = []
            _sure_of_keys(t)
            for k, v in t.items:
                if type(k) is not Scalar:
                    raise _Unsure
                props.append((to_json(k), self.value(v)))
            return T.ObjectType(props, (T.ANY, T.ANY) if not props else None)
        if tt is ast.ArrayCompr or tt is ast.SetCompr or tt is ast.ObjectCompr:
            return self.comprehension(t)
        raise _Unsure

    def comprehension(self, c: Any) -> T.Type:
        if self.nesting >= _MAX_NESTING:
            raise _Unsure
        self.nesting += 1
        negated = self.negated
        self.scope.append({})
        statement, found = self.statement, self.found
        self.body(c.body)
        self.statement, self.found = statement, found
        tpe: T.Type
        if type(c) is ast.ArrayCompr:
            tpe = T.ArrayType((), self.value(c.term))
        elif type(c) is ast.SetCompr:
            tpe = T.SetType(self.value(c.term))
        else:
            tpe = T.ObjectType((), (self.value(c.key), self.value(c.value)))
        self.scope.pop()
        self.negated = negated
        self.nesting -= 1
        if T.is_nil(tpe):
            raise _Unsure
        return tpe

    def ref(self, r: Ref) -> T.Type:
        """A ref not headed by ``input`` (value() reads those)."""
        head = r.head
        path = r.path
        if type(head) is Var:
            name = head.name
            if name == "data":
                return self.data_ref(path)
            if self.is_open(head):
                # The ref checker reads the head as a ref into an unknown document.
                self.bind(head, T.keys(T.ANY))
            base = self.var(head)
        elif type(head) is Call:
            base = self.value(head)
        else:
            raise _Unsure
        if type(base) is T.FunctionType:
            raise _Unsure
        return self.select(base, path)

    def any_keys(self, path: tuple[Any, ...]) -> None:
        """The keys of a ref into a document of type any (``input`` without a
        schema, base data): literals, bound variables, refs and calls (checked
        on their own), wildcards and new variables, which become any."""
        for p in path:
            tp = type(p)
            if tp is Scalar:
                continue
            if tp is Var:
                if self.lookup(p.name) is not None:
                    continue
                if self.negated:
                    raise _Unsure  # (a negation binds nothing: safety reports it)
                if not is_wildcard(p.name):
                    self.scope[-1][p.name] = T.ANY
            elif tp is Ref or tp is Call:
                if type(self.value(p)) is T.FunctionType:
                    raise _Unsure
            else:
                raise _Unsure

    def select(self, tpe: T.Type, path: tuple[Any, ...]) -> T.Type:
        """The type ``path`` selects in a value of type ``tpe``, checked as the
        ref checker checks a ref into a value (OPA's ``checkRefLeaf``): a
        variable key must fit the value's keys (a new one takes their type)."""
        found: T.MaybeType = tpe
        for p in path:
            keys = T.keys(found)
            if keys is None:
                raise _Unsure
            tp = type(p)
            if tp is Scalar:
                found = select_constant(found, p)
            elif tp is Var:
                if self.negated:
                    raise _Unsure
                exist = None if is_wildcard(p.name) else self.lookup(p.name)
                if exist is not None:
                    if not unifies(exist, keys):
                        raise _Unsure
                elif not is_wildcard(p.name):
                    self.bind(p, keys)
                found = T.values(found)
            elif tp is Ref or tp is Call:  # (a call's result, in its output variable)
                if not unifies(self.value(p), keys):
                    raise _Unsure
                found = T.values(found)
            else:
                raise _Unsure
            if found is None:
                raise _Unsure
        assert found is not None
        return found

    def data_ref(self, path: tuple[Any, ...]) -> T.Type:
        """A ref under ``data``: into a rule's value (from the rule's type), or
        into a document no rule defines (base data: any)."""
        nodes = self.nodes
        at: tuple[str, ...] = ()
        for i, p in enumerate(path):
            if type(p) is not Scalar or not isinstance(p.value, str):
                raise _Unsure  # (a package's document, typed by what is known of its rules so far)
            at += (p.value,)
            node = nodes.get(at)
            if node is None:  # base data: any, and so its keys
                self.any_keys(path[i + 1 :])
                return T.ANY
            if node.rules or node.default is not None:
                tpe = self.node_type(node)
                if type(tpe) is T.FunctionType:
                    raise _Unsure
                return self.select(tpe, path[i + 1 :]) if i + 1 < len(path) else tpe
        raise _Unsure  # a package, or a prefix of rules' paths: an object of their types

    def call(self, c: Call, *, nested: bool) -> T.Type | None:
        """A builtin call: each operand must unify with its declared type.
        Returns the result type (what the output variable of a nested call gets)."""
        op = c.op
        sig = self.signatures.get(op)
        if sig is None:
            sig = self.signature(op)
        tpe, wants = sig
        args = c.args
        extra = len(args) - len(wants)
        if extra == 0:
            if nested and tpe.result is None:
                raise _Unsure
            self.call_operands(args, wants)
            return tpe.result_type() if nested else None
        if extra == 1 and not nested and tpe.result is not None:
            # ``walk(x, [path, value])``: the last operand takes the result.
            self.call_operands(args[:-1], wants)
            if not self.unify_term(args[-1], tpe.result_type(), False, output=True):
                raise _Unsure
            return None
        raise _Unsure

    def signature(self, op: str) -> tuple[T.FunctionType, tuple[T.MaybeType, ...]]:
        """The type of the function or builtin ``op`` and its arguments' types."""
        function = self.function_ops.get(op)
        if function is not None:
            tpe: T.MaybeType = self.node_type(function)
        elif op in SPECIAL_CALLS or op.startswith("data."):
            raise _Unsure
        else:
            tpe = self.builtin(op)
        if type(tpe) is not T.FunctionType or tpe.variadic is not None:
            raise _Unsure
        # (an argument of type any is T.ANY here, which call_operands tells at once)
        wants = tuple([T.ANY if type(w) is T.AnyType and not w.of else w for w in tpe.arg_types()])
        sig = self.signatures[op] = (tpe, wants)
        return sig

    def call_operands(self, args: Any, wants: tuple[T.MaybeType, ...]) -> None:
        for a, want in zip(args, wants):
            ta = type(a)
            if ta is ast.Array or ta is ast.SetTerm or ta is ast.Object:
                # As the full check (unify1): it types the variables inside,
                # widening them to any where ``want`` allows any (``x in {a, "b"}``).
                if not self.unify_term(a, want, False):
                    raise _Unsure
                continue
            if ta is Var and self.open and self.is_open(a):  # type: ignore[arg-type]
                self.bind(a, want)  # (as unify1 types a variable not bound yet)
                continue
            if ta is Scalar:  # (as value(), without a call: literals are common operands)
                value = a.value  # type: ignore[attr-defined]
                operand_type = SCALAR_TYPE_BY_CLASS.get(value.__class__) or scalar_type(value)
            else:
                operand_type = self.value(a)
            # (the same type unifies with itself: a declared scalar type is the shared one)
            if operand_type is want or (want is T.ANY and operand_type.__class__ in _UNIFY_WITH_ANY):
                continue
            if not unifies(operand_type, want):
                raise _Unsure


    def unify_term(self, t: Any, want: T.MaybeType, union: bool, *, output: bool = False) -> bool:
        """Whether composite operand ``t`` can have type ``want``, typing the
        variables in it on the way: the full check's ``unify1`` on the
        lowered term (a nested call is its output variable). ``output``: the
        output operand of a call, whose new variables it binds."""
        tt = type(t)
        if tt is Var:
            if is_wildcard(t.name):
                return True  # (typed, and never read)
            exist = self.lookup(t.name)
            if exist is None and not (output or self.is_open(t)):
                raise _Unsure
            if not union:
                if exist is not None:
                    return unifies(exist, want)
                self.retype(t, want)
            else:
                self.retype(t, T.or_(exist, want))
                if exist is not None:
                    return unifies(exist, want)
            return True
        if tt is Scalar:
            return unifies(scalar_type(t.value), want)
        if tt is Call:
            result = self.call(t, nested=True)
            return unifies(result, want)
        if tt is Ref or tt is ast.ArrayCompr or tt is ast.SetCompr or tt is ast.ObjectCompr:
            return unifies(self.value(t), want)
        want = T.unwrap(want)
        if tt is ast.Array or tt is ast.SetTerm or tt is ast.Object:
            if type(want) is T.AnyType:
                if not want.of:
                    for x in _composite_parts(t):
                        self.unify_term(x, T.ANY, True, output=output)
                    return True
                ok = False
                for m in want.of:
                    ok = self.unify_term(t, m, True, output=output) or ok
                return ok
            if tt is ast.Array and type(want) is T.ArrayType:
                if len(t.items) != len(want.static) and want.dynamic is None:
                    return False
                for i, x in enumerate(t.items):
                    if not self.unify_term(x, want.select(i), union, output=output):
                        return False
                return True
            if tt is ast.SetTerm and type(want) is T.SetType:
                of = T.values(want)
                for x in t.items:
                    if not self.unify_term(x, of, union, output=output):
                        return False
                return True
            if tt is ast.Object and type(want) is T.ObjectType:
                if len(t.items) != len(want.static) and want.dynamic_value is None:
                    return False
                _sure_of_keys(t)
                for k, v in t.items:
                    if type(k) is not Scalar:
                        raise _Unsure
                    child = select_constant(want, k)
                    if child is None or not self.unify_term(v, child, union, output=output):
                        return False
                return True
            return False
        raise _Unsure

    def retype(self, v: Var, tpe: T.MaybeType) -> None:
        """Give ``v`` a type where the full check gives it one in passing: only
        for a variable its expression holds once (else the order of the full
        check's steps within the expression would matter)."""
        if tpe is None or self.uses(v.name) != 1:
            raise _Unsure
        self.scope[-1][v.name] = tpe

    def uses(self, name: str) -> int:
        return sum([1 for n, _ in self.occurrences() if n == name])


def _sure_of_keys(t: Any) -> None:
    """Leave to the full check an object literal whose number keys OPA's type loses (see types_json)."""
    if len(t.items) > 1 and loses_keys([to_json(k) for k, _ in t.items if type(k) is Scalar]):
        raise _Unsure


def _statement_terms(s: Any) -> list[Any]:
    st = type(s)
    if st is Call:
        return list(s.args)
    if st is ast.Assign or st is ast.Unify:
        return [s.lhs, s.rhs]
    if st is ast.SomeIn:
        return [x for x in (s.key, s.value, s.collection) if x is not None]
    if st is ast.SomeVars:
        return []
    return [s]


def _occurrences(t: Any, out: list[tuple[str, bool]], in_comprehension: bool) -> None:
    """Each variable occurrence in ``t``: its name, and whether it is inside a comprehension."""
    tt = type(t)
    if tt is Var:
        out.append((t.name, in_comprehension))
    elif tt is Ref:
        _occurrences(t.head, out, in_comprehension)
        for p in t.path:
            _occurrences(p, out, in_comprehension)
    elif tt is Call:
        for a in t.args:
            _occurrences(a, out, in_comprehension)
    elif tt is ast.Array or tt is ast.SetTerm:
        for x in t.items:
            _occurrences(x, out, in_comprehension)
    elif tt is ast.Object:
        for k, v in t.items:
            _occurrences(k, out, in_comprehension)
            _occurrences(v, out, in_comprehension)
    elif tt is ast.ArrayCompr or tt is ast.SetCompr or tt is ast.ObjectCompr:
        for x in [t.key, t.value] if tt is ast.ObjectCompr else [t.term]:
            _occurrences(x, out, True)
        for e in t.body:
            for x in _statement_terms(e.statement):
                _occurrences(x, out, True)
    # (other terms hold no variable the screen reads: it refuses them when it meets them)


_BUILTIN_ROOTS: set[str] = set()

#: The builtins' signatures (:meth:`ProgramScreen.signature`), for programs whose
#: calls are all builtins without restriction (``builtin_type``: their types are fixed).
_BUILTIN_SIGNATURES: dict[str, tuple[T.FunctionType, tuple[T.MaybeType, ...]]] = {}


def _builtin_roots() -> set[str]:
    """The first part of every builtin's name (``time`` of ``time.now_ns``)."""
    if not _BUILTIN_ROOTS:
        from pyrego.typecheck.signatures_data import SIGNATURES

        _BUILTIN_ROOTS.update([name.split(".")[0] for name in SIGNATURES])
    return _BUILTIN_ROOTS


def screen_program(tree: CompiledTree, builtin: Callable[[str], T.FunctionType | None]) -> dict[tuple[str, ...], T.Type] | None:
    """Every rule's type by path (below ``data``) when no rule of ``tree`` can
    fail the type check; None when the full check must decide."""
    return ProgramScreen(tree, builtin).run()


__all__ = ["screen_program", "ProgramScreen"]


def _composite_parts(t: Any) -> list[Any]:
    if type(t) is ast.Object:
        return [x for kv in t.items for x in kv]
    return list(t.items)
