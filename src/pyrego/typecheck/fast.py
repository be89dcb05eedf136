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

from .. import ast
from .. import types as T
from ..ast import Call, Ref, Scalar, Var
from ..compiler import FUNCTION, CompiledTree, RuleNode
from ..safety import is_wildcard
from .check import unify1
from .env import TypeEnv, merge_types, select_constant, to_json
from .ir import IArray, IObject, ISet, Term

# Calls the lowering rewrites in ways of its own (or that the checker treats as unification).
_SPECIAL_CALLS = frozenset(
    {"eq", "assign", "print", "internal.print", "internal.template_string", "rego.metadata.chain", "rego.metadata.rule"}
)
#: Comprehensions nested deeper than this are left to the full check.
_MAX_NESTING = 8


class _Unsure(Exception):
    """The screen cannot tell: the full check decides."""


_UNSURE = _Unsure()


def _scalar_type(v: Any) -> T.Type:
    if v is None:
        return T.NULL
    if v is True or v is False:
        return T.BOOLEAN
    if isinstance(v, str):
        return T.STRING
    return T.NUMBER


def _is_any(t: T.MaybeType) -> bool:
    """The unconstrained ``any`` (no members): every value but a function's unifies with it."""
    return type(t) is T.AnyType and not t.of  # type: ignore[union-attr]


class ProgramScreen:
    """One pass over a program's rules (see the module's docstring)."""

    def __init__(self, tree: CompiledTree, builtin: Callable[[str], T.FunctionType | None]) -> None:
        self.nodes = tree.nodes
        self.builtin = builtin
        self.function_ops = tree.functions
        self.types: dict[tuple[str, ...], T.Type] = {}  # rule path -> merged type
        self.pending: set[tuple[str, ...]] = set()
        self.scope: list[dict[str, T.Type]] = []  # innermost last
        self.negated = False
        self.nesting = 0
        self.signatures: dict[str, tuple[T.FunctionType, tuple[T.MaybeType, ...]]] = {}

    # -- rules -------------------------------------------------------------------

    def run(self) -> dict[tuple[str, ...], T.Type] | None:
        """Every rule's type by path when no rule can fail the check, else None."""
        if self.function_ops:
            return None
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
        if node.kind == FUNCTION or node.children or path in self.pending:
            raise _UNSURE
        for i in range(1, len(path)):  # a rule above this one: its value holds this document
            above = self.nodes.get(path[:i])
            if above is not None and (above.rules or above.default is not None):
                raise _UNSURE
        self.pending.add(path)
        rules = list(node.rules)
        if node.default is not None:
            rules.append(node.default)
        rules.sort(key=lambda r: (r.module_file, r.location.row, r.location.col))
        merged: T.MaybeType = None
        saved = self.scope, self.negated, self.nesting
        for rule in rules:
            branch: ast.Rule | None = rule
            while branch is not None:
                merged = merge_types(merged, self.rule_type(branch))
                branch = branch.else_
        self.scope, self.negated, self.nesting = saved
        self.pending.discard(path)
        if merged is None:
            raise _UNSURE
        self.types[path] = merged
        return merged

    def rule_type(self, rule: ast.Rule) -> T.Type:
        head = rule.head
        if head.args is not None or type(head.ref.head) is not Var:
            raise _UNSURE
        for p in head.ref.path:
            if type(p) is not Scalar or not isinstance(p.value, str):
                raise _UNSURE
        self.scope = [{}]
        self.nesting = 0
        self.body(rule.body)
        key, value = head.key, head.value
        tpe: T.MaybeType
        if value is None and key is None:
            tpe = T.BOOLEAN
        elif value is None:  # a partial set: of its keys
            if type(key) is Var:
                if is_wildcard(key.name):
                    raise _UNSURE
                tpe = T.SetType(self.var(key))
            elif is_constant_term(key):
                tpe = T.SetType(self.value(key))
            else:
                raise _UNSURE
        elif key is not None:
            raise _UNSURE  # (a partial object with a literal key: left to the full check)
        elif type(value) is Scalar:
            tpe = _scalar_type(value.value)
        else:
            tpe = self.value(value)
        if tpe is None or T.is_nil(tpe):
            raise _UNSURE
        return tpe

    # -- bodies ------------------------------------------------------------------

    def body(self, body: ast.Body) -> None:
        for e in body:
            if e.with_mods:
                raise _UNSURE
            self.negated = e.negated
            s: Any = e.statement
            st = type(s)
            if st is Call:
                if e.negated and any(type(a) is Call for a in s.args):
                    raise _UNSURE  # (its calls are taken out of the negation first)
                if s.op == "equal" and len(s.args) == 2:
                    # Lowered to a unification: both sides' types must unify.
                    type_a, type_b = self.operand(s.args[0]), self.operand(s.args[1])
                    if T.is_nil(type_a) or T.is_nil(type_b) or not T.unifies(type_a, type_b):
                        raise _UNSURE
                else:
                    self.call(s, nested=False)
            elif st is Ref or st is Scalar:
                self.value(s)
            elif st is ast.Assign and not e.negated:
                self.bind(s.lhs, self.value(s.rhs))
            elif st is ast.Unify and not e.negated:
                self.unify(s.lhs, s.rhs)
            elif st is ast.SomeIn and not e.negated and s.key is None:
                # Lowered to ``x = coll[k]`` with a new ``k``: x has the type of coll's values.
                self.bind(s.value, T.values(self.value(s.collection)))
            elif st is not ast.SomeVars:
                raise _UNSURE

    def unify(self, a: Any, b: Any) -> None:
        """``a = b``: a new variable on one side takes the other's type (as
        ``:=``), else the two types must unify."""
        for new, other in ((a, b), (b, a)):
            if type(new) is Var and not is_wildcard(new.name) and self.lookup(new.name) is None:
                self.bind(new, self.operand(other))
                return
        type_a, type_b = self.operand(a), self.operand(b)
        if T.is_nil(type_a) or T.is_nil(type_b) or not T.unifies(type_a, type_b):
            raise _UNSURE

    def bind(self, var: Any, tpe: T.MaybeType) -> None:
        """A new variable takes the type of what it is assigned."""
        if type(var) is not Var or is_wildcard(var.name) or self.lookup(var.name) is not None or tpe is None or T.is_nil(tpe):
            raise _UNSURE
        self.scope[-1][var.name] = tpe

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
            raise _UNSURE
        return tpe

    # -- terms -------------------------------------------------------------------

    def operand(self, t: Any) -> T.MaybeType:
        """A side of a unification: composites only when constant (as the full check types them)."""
        tt = type(t)
        if (tt is ast.Array or tt is ast.SetTerm or tt is ast.Object) and not is_constant_term(t):
            raise _UNSURE
        return self.value(t)

    def value(self, t: Any) -> T.Type:
        """The type the full check gives ``t`` (lowered): checks the calls and refs in it."""
        tt = type(t)
        if tt is Scalar:
            return _scalar_type(t.value)
        if tt is Var:
            return self.var(t)
        if tt is Ref:
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
            for k, v in t.items:
                if type(k) is not Scalar:
                    raise _UNSURE
                props.append((to_json(k), self.value(v)))
            return T.ObjectType(props, (T.ANY, T.ANY) if not props else None)
        if tt is ast.ArrayCompr or tt is ast.SetCompr or tt is ast.ObjectCompr:
            return self.comprehension(t)
        raise _UNSURE

    def comprehension(self, c: Any) -> T.Type:
        if self.nesting >= _MAX_NESTING:
            raise _UNSURE
        self.nesting += 1
        negated = self.negated
        self.scope.append({})
        self.body(c.body)
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
            raise _UNSURE
        return tpe

    def ref(self, r: Ref) -> T.Type:
        head = r.head
        path = r.path
        if type(head) is Var:
            name = head.name
            if name == "input":
                self.input_keys(path)
                return T.ANY  # (no schema: input is any)
            if name == "data":
                return self.data_ref(path)
            base = self.var(head)
        elif type(head) is Call:
            base = self.value(head)
        else:
            raise _UNSURE
        if type(base) is T.FunctionType:
            raise _UNSURE
        return self.select(base, path)

    def input_keys(self, path: tuple[Any, ...]) -> None:
        """The keys of a ref into ``input`` (any): literals, wildcards, bound
        variables, and new variables, which become any."""
        for p in path:
            tp = type(p)
            if tp is Scalar:
                continue
            if tp is Var and not self.negated:  # (a negation binds nothing: safety reports it)
                if not is_wildcard(p.name) and self.lookup(p.name) is None:
                    self.scope[-1][p.name] = T.ANY
                continue
            raise _UNSURE

    def select(self, tpe: T.Type, path: tuple[Any, ...]) -> T.Type:
        """The type ``path`` selects in a value of type ``tpe``, checked as the
        ref checker checks a ref into a value (OPA's ``checkRefLeaf``): a
        variable key must fit the value's keys (a new one takes their type)."""
        found: T.MaybeType = tpe
        for p in path:
            keys = T.keys(found)
            if keys is None:
                raise _UNSURE
            tp = type(p)
            if tp is Scalar:
                found = select_constant(found, p)
            elif tp is Var:
                if self.negated:
                    raise _UNSURE
                exist = None if is_wildcard(p.name) else self.lookup(p.name)
                if exist is not None:
                    if not T.unifies(exist, keys):
                        raise _UNSURE
                elif not is_wildcard(p.name):
                    self.bind(p, keys)
                found = T.values(found)
            else:
                raise _UNSURE
            if found is None:
                raise _UNSURE
        assert found is not None
        return found

    def data_ref(self, path: tuple[Any, ...]) -> T.Type:
        """A ref under ``data``: into a rule's value (from the rule's type), or
        into a document no rule defines (base data: any)."""
        nodes = self.nodes
        at: tuple[str, ...] = ()
        for i, p in enumerate(path):
            if type(p) is not Scalar or not isinstance(p.value, str):
                raise _UNSURE  # (a package's document, typed by what is known of its rules so far)
            at += (p.value,)
            node = nodes.get(at)
            if node is None:  # base data (whose keys the full check does not type)
                for q in path[i + 1 :]:
                    if type(q) is Scalar or (type(q) is Var and self._bound_or_wildcard(q)):
                        continue
                    raise _UNSURE
                return T.ANY
            if node.rules or node.default is not None:
                tpe = self.node_type(node)
                if type(tpe) is T.FunctionType:
                    raise _UNSURE
                return self.select(tpe, path[i + 1 :])
        raise _UNSURE  # a package, or a prefix of rules' paths: an object of their types

    def _bound_or_wildcard(self, v: Var) -> bool:
        if is_wildcard(v.name):
            return not self.negated
        return self.lookup(v.name) is not None

    def call(self, c: Call, *, nested: bool) -> T.Type | None:
        """A builtin call: each operand must unify with its declared type.
        Returns the result type (what the output variable of a nested call gets)."""
        op = c.op
        sig = self.signatures.get(op)
        if sig is None:
            if op in _SPECIAL_CALLS or op.startswith("data.") or op in self.function_ops:
                raise _UNSURE
            tpe = self.builtin(op)
            if type(tpe) is not T.FunctionType or tpe.variadic is not None:
                raise _UNSURE
            sig = self.signatures[op] = (tpe, tpe.arg_types())
        tpe, wants = sig
        args = c.args
        if len(args) != len(wants) or (nested and tpe.result is None):
            raise _UNSURE
        for a, want in zip(args, wants):
            ta = type(a)
            if ta is ast.Array or ta is ast.SetTerm or ta is ast.Object:
                # Checked as the full check does (unify1), which may widen the
                # types of variables inside: only scalars and calls' results here.
                scratch = TypeEnv(None)
                if not unify1(scratch, self.lowered_operand(a, scratch), want, False):
                    raise _UNSURE
                continue
            if not T.unifies(self.value(a), want):
                raise _UNSURE
        return tpe.result_type() if nested else None


    def lowered_operand(self, t: Any, scratch: TypeEnv) -> Term:
        """A composite operand as the lowering leaves it: each call's result in
        a variable (typed in ``scratch``); anything but scalars, calls and
        composites of them is left to the full check."""
        tt = type(t)
        if tt is Scalar:
            return t  # type: ignore[no-any-return]
        if tt is Call:
            result = self.call(t, nested=True)
            out = Var(f"__call{len(scratch.tree.children)}__", t.location)
            scratch.tree.put_one(("v", out.name), out, result)
            return out
        if tt is ast.Array:
            return IArray(tuple([self.lowered_operand(x, scratch) for x in t.items]), t.location)
        if tt is ast.SetTerm:
            return ISet(tuple([self.lowered_operand(x, scratch) for x in t.items]), t.location)
        if tt is ast.Object:
            pairs = []
            for k, v in t.items:
                if type(k) is not Scalar:
                    raise _UNSURE
                pairs.append((k, self.lowered_operand(v, scratch)))
            return IObject(tuple(pairs), t.location)
        raise _UNSURE


def is_constant_term(t: Any) -> bool:
    """A scalar or a composite of scalars (no variable, ref, call or comprehension)."""
    tt = type(t)
    if tt is Scalar:
        return True
    if tt is ast.Array or tt is ast.SetTerm:
        return all([is_constant_term(x) for x in t.items])
    if tt is ast.Object:
        return all([is_constant_term(k) and is_constant_term(v) for k, v in t.items])
    return False


def screen_program(tree: CompiledTree, builtin: Callable[[str], T.FunctionType | None]) -> dict[tuple[str, ...], T.Type] | None:
    """Every rule's type by path (below ``data``) when no rule of ``tree`` can
    fail the type check; None when the full check must decide."""
    return ProgramScreen(tree, builtin).run()


__all__ = ["screen_program", "ProgramScreen"]
