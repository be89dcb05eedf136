"""Rule bodies that cannot fail the type check, found without lowering them.

Most bodies of real policies compare ``input`` (typed ``any``) with literals
and call builtins on them: ``input.method == "GET"``, ``count(input.items) >
0``, ``input.role in admins``. For such a body, lowering it as OPA's compiler
rewrites it (:mod:`.lower`) and checking every expression (:mod:`.check`)
only confirms that nothing fails. :class:`BodyScreen` reads the resolved body
directly and answers for a small set of forms whose outcome it can work out
with the checker's own functions (type unification, ``unify1`` for literal
operands, :class:`.refs.RefChecker` for refs to rules):

- a call of a builtin (``equal`` as a unification, as OPA rewrites it) whose
  operands are literals, refs with literal keys into ``input`` or to rules,
  variables bound before, or such calls nested;
- a ref or a literal on its own; either of them negated;
- ``x := value`` and ``some x in coll`` (``coll`` a ref with literal keys)
  binding a new variable, which is typed as the checker types it.

Anything else (comprehensions, ``with``, ``every``, variables used before
the expression that binds them, function rules, a negation holding a call,
a type the screen cannot be sure of) is left to the full check: the screen answers "clean" only when the full
check would report nothing, never the other way round. It also counts the
variables the lowering would have made, so that variables of later rules
keep their numbers in messages.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Call, Ref, Scalar, Var
from pyrego.compile.safety import is_wildcard
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import TypeEnv
from pyrego.typecheck.ir import IRef
from pyrego.typecheck.lower import Lowerer
from pyrego.typecheck.refs import RefChecker
from pyrego.typecheck.terms import unify1
from pyrego.typecheck.unify import unifies

# Calls the lowering rewrites in ways of their own (or that the checker treats as unification).
SPECIAL_CALLS = frozenset(
    {"eq", "assign", "print", "internal.print", "internal.template_string", "rego.metadata.chain", "rego.metadata.rule"}
)


def constant(t: Any) -> bool:
    """Whether ``t`` is a scalar or a composite of constants (no variable, ref, call or comprehension)."""
    tt = type(t)
    if tt is Scalar:
        return True
    if tt is ast.Array or tt is ast.SetTerm:
        return all([constant(x) for x in t.items])
    if tt is ast.Object:
        return all([constant(k) and constant(v) for k, v in t.items])
    return False


def ground_head(head: ast.RuleHead) -> bool:
    """Not a function, literal keys in the head's ref, a constant key (if any)
    or a partial set's key that is a variable (bound by the body)."""
    if head.args is not None or not isinstance(head.ref.head, Var):
        return False
    for p in head.ref.path:
        if type(p) is not Scalar:
            return False
    key = head.key
    return key is None or constant(key) or (type(key) is Var and head.value is None)


class _Unsure(Exception):
    """The screen cannot tell: the full check decides."""


class BodyScreen:
    """Screens the bodies of one program against its rules' types (``env``)."""

    def __init__(self, env: TypeEnv, lowerer: Lowerer) -> None:
        self.env = env
        self.local = env
        self.lowerer = lowerer
        self.made = 0
        self.negated = False

    def rule(self, rule: ast.Rule) -> tuple[int, T.Type] | None:
        """For a rule with a :func:`ground_head` whose body cannot fail: how many
        variables its lowering would make, and its type (its value's; a partial
        set's the set of its key's). None when the full check must decide."""
        made = self.clean(rule.body)
        if made is None:
            return None
        head = rule.head
        value = head.value if head.value is not None or head.key is not None else Scalar(True, head.location)
        tpe: T.MaybeType
        if value is None and type(head.key) is Var:  # a partial set of a body variable
            tpe = T.SetType(self.local.get_by_value(head.key))
            if is_wildcard(head.key.name):
                return None
        elif value is None:  # a partial set with a constant key
            tpe = T.SetType(self.env.get_by_value(self.lowerer.expand(head.key, [], set(), set(), ())))
        elif type(value) is Scalar:
            tpe = self.env.get_by_value(value)
        else:
            try:
                tpe = self._value(value)
            except _Unsure:
                return None
            if type(value) is Ref:
                self.made += 1  # a ref in the head is bound to a variable at the end of the body
        if tpe is None or T.is_nil(tpe):
            return None
        return self.made, tpe

    def clean(self, body: ast.Body) -> int | None:
        """How many variables the lowering of ``body`` would make, when no
        expression in it can fail the check; None when the full check must decide."""
        self.made = 0
        self.negated = False
        self.local = self.env.wrap()  # the body's variables
        try:
            for e in body:
                self._expr(e)
        except _Unsure:
            return None
        return self.made

    def _expr(self, e: ast.Expr) -> None:
        if e.with_mods:
            raise _Unsure
        self.negated = e.negated
        s: Any = e.statement
        st = type(s)
        if st is Call:
            if e.negated and any(type(a) is Call for a in s.args):
                raise _Unsure  # its calls are taken out of the negation first
            if s.op == "equal" and len(s.args) == 2:
                # Lowered to a unification: both sides' types must unify.
                type_a, type_b = self._value(s.args[0]), self._value(s.args[1])
                if T.is_nil(type_a) or T.is_nil(type_b) or not unifies(type_a, type_b):
                    raise _Unsure
            else:
                self._call(s, nested=False)
        elif st is Ref or st is Scalar:
            self._value(s)
        elif st is ast.Assign and not e.negated:
            self._bind(s.lhs, self._value(s.rhs))
        elif st is ast.SomeIn and not e.negated and s.key is None:
            self._some_in(s)
        elif st is not ast.SomeVars:
            raise _Unsure

    def _bind(self, var: Any, tpe: T.MaybeType) -> None:
        """A new variable takes the type of what it is unified with (when that is known)."""
        if type(var) is not Var or self.local.get_by_value(var) is not None or T.is_nil(tpe):
            raise _Unsure
        self.local.tree.put_one(("v", var.name), var, tpe)

    def _some_in(self, s: ast.SomeIn) -> None:
        """``some x in coll``: lowered to ``x = coll[k]`` with a new key variable ``k``."""
        coll = s.collection
        if type(coll) is not Ref:
            raise _Unsure
        head = self._literal_ref(coll)
        self.made += 1  # the key variable
        key = Var(f"__screen{self.made}__", s.location)
        path: Any = coll.path + (key,)
        lowered = IRef(head, path, coll.location)
        checker = RefChecker(self.local)
        checker.walk(lowered)  # types the key variable, as in the full check
        if checker.errors:
            raise _Unsure
        self._bind(s.value, self.local.get_by_value(lowered))

    def _value(self, t: Any) -> T.MaybeType:
        """The type of an operand of a unification (or of a term on its own)."""
        tt = type(t)
        if tt is Scalar:
            return self.env.get_by_value(t)
        if tt is Var:
            return self._var(t)
        if tt is Ref:
            return self._ref(t)
        if tt is Call:
            return self._call(t, nested=True)
        if tt is ast.Array or tt is ast.SetTerm or tt is ast.Object:
            return self.env.get_by_value(self._literal(t))
        raise _Unsure

    def _var(self, v: Var) -> T.MaybeType:
        """A variable bound by an earlier expression of the body (else the body may be reordered)."""
        tpe = self.local.get_by_value(v)
        if tpe is None:
            raise _Unsure
        return tpe

    def _literal(self, t: Any) -> Any:
        """A composite operand holding only literals, as the lowering gives it."""
        if not constant(t):
            raise _Unsure
        return self.lowerer.expand(t, [], set(), set(), ())

    def _literal_ref(self, r: Ref) -> Var:
        """The head of a ref into ``input`` or under ``data`` with literal keys only."""
        head = r.head
        if not isinstance(head, Var) or head.name not in ("data", "input"):
            raise _Unsure
        for p in r.path:
            if type(p) is not Scalar:
                raise _Unsure
        return head

    def _ref(self, r: Ref) -> T.MaybeType:
        """A ref into ``input`` or under ``data``, checked as the ref checker does.

        Its keys are literals, variables bound by earlier expressions, or
        wildcards (each its own variable, bound nowhere else): the lowering
        keeps such a ref as it is, and the ref checker types the wildcards."""
        head = r.head
        if not isinstance(head, Var) or head.name not in ("data", "input"):
            raise _Unsure
        dynamic = False
        p: Any
        for p in r.path:
            tp = type(p)
            if tp is Scalar:
                continue
            if tp is Var and is_wildcard(p.name):
                if self.negated:
                    raise _Unsure  # (unsafe: a negation binds nothing; safety reports it)
                dynamic = True
                continue
            if tp is Var and self.local.get_by_value(p) is not None:
                dynamic = True
                continue
            raise _Unsure
        if dynamic:
            lowered = IRef(head, r.path, r.location)  # type: ignore[arg-type]  # (scalars and variables only)
            checker = RefChecker(self.local)
            checker.walk(lowered)  # types the wildcards, checks the bound keys
            if checker.errors:
                raise _Unsure
            tpe = self.local.get_by_value(lowered)
            if tpe is None or type(tpe) is T.FunctionType or T.is_nil(tpe):
                raise _Unsure
            return tpe
        if head.name == "input" and not self.env.root.input_typed:
            return T.ANY
        # What RefChecker.walk does for a ref whose keys are literals (the type
        # it looks up first, to refuse a function read as a value, is the ref's).
        terms = (head, *r.path)
        tpe = self.local.get_by_ref(terms)  # type: ignore[arg-type]
        if tpe is None or type(tpe) is T.FunctionType:
            raise _Unsure
        if RefChecker(self.local).check_ref(self.local, self.local.tree, terms, 0) is not None:  # type: ignore[arg-type]
            raise _Unsure
        return tpe

    def _call(self, c: Call, *, nested: bool) -> T.MaybeType:
        """A builtin call: each operand must unify with its declared type.
        Returns the result type (what the output variable of a nested call gets)."""
        op = c.op
        if op in SPECIAL_CALLS or op.startswith("data.") or op in self.lowerer.function_paths:
            raise _Unsure
        tpe = self.env.root.builtin(op)  # (no variable or rule has a builtin's name)
        if type(tpe) is not T.FunctionType or tpe.variadic is not None or len(c.args) != len(tpe.args):
            raise _Unsure
        if nested:
            if tpe.result is None:
                raise _Unsure
            self.made += 1  # the call's output variable
        a: Any
        for a, want in zip(c.args, tpe.arg_types()):
            ta = type(a)
            if ta is Scalar:
                ok = unifies(self.env.get_by_value(a), want)
            elif ta is Var:
                ok = unifies(self._var(a), want)
            elif ta is Ref:
                self.made += 1  # a ref among a call's operands is bound to a variable first
                ok = unifies(self._ref(a), want)
            elif ta is Call:
                ok = unifies(self._call(a, nested=True), want)
            elif ta is ast.Array or ta is ast.SetTerm or ta is ast.Object:
                ok = unify1(self.local, self._literal(a), want, False)
            else:
                raise _Unsure
            if not ok:
                raise _Unsure
        return tpe.result_type() if nested else None
