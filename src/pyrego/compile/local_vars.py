"""OPA's checks of local variable declarations (its compiler's RewriteLocalVars stage).

OPA gives every variable a body declares (``x := ...``, ``some x``, ``some x
in xs``, ``every x in xs``) a new name, walking each body in order with a
stack of scopes (one per comprehension and ``every`` body). On the way it
refuses, with ``rego_compile_error``:

- ``var x referenced above`` / ``var x assigned above`` / ``var x declared
  above`` / ``arg x redeclared``: a declaration of a name this scope has
  already seen, assigned, declared, or taken as a function argument;
- ``cannot assign to number`` (``ref``, ``string``, ``call``, ...): ``:=``
  with something on the left that is not a variable or a pattern of them;
- ``cannot assign vars inside negated expression``;
- ``called function f shadowed``: a call of a function whose name a local
  variable of the body hides;
- ``rule arguments cannot contain calls``;
- ``declared var x unused``: a ``some``/``every`` variable the body never uses;

and in strict mode also ``assigned var x unused`` and ``unused argument x.
(hint: use _ (wildcard variable) instead)``.

:class:`LocalVarChecker` walks the parsed (unresolved) modules as OPA's
compiler walks them, mirroring its scope stack (what each name is in each
scope, and how often it was seen), so that the same programs are refused
with the same messages, at the same locations, in the same order. Names OPA
would generate are generated too (``__local0__``, ...): OPA sorts some
errors by them.
"""

from __future__ import annotations

from collections.abc import Callable

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Array,
    ArrayCompr,
    Assign,
    Call,
    Every,
    Object,
    ObjectCompr,
    Ref,
    Scalar,
    SetCompr,
    SetTerm,
    SomeIn,
    SomeVars,
    TemplateString,
    Unify,
    Var,
)
from pyrego.errors import Location, RegoCompileError, RegoError, RegoTypeError

__all__ = ["LocalVarChecker", "value_name", "all_vars"]

# How a name occurs in a scope (OPA's varOccurrence).
_NEW, _ARG, _SEEN, _ASSIGNED, _DECLARED = range(5)

_REDECLARED = {
    _SEEN: "var {} referenced above",
    _ASSIGNED: "var {} assigned above",
    _DECLARED: "var {} declared above",
    _ARG: "arg {} redeclared",
}

_ROOTS = ("input", "data")


def _is_wildcard(name: str) -> bool:
    return name.startswith("$")


def _is_generated(name: str) -> bool:
    return name.startswith("__local")


def value_name(term: ast.Term) -> str:
    """OPA's name for the kind of a term (``cannot assign to number``)."""
    if type(term) is Scalar:
        v = term.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "boolean"
        return "string" if isinstance(v, str) else "number"
    return {
        Var: "var",
        Ref: "ref",
        Call: "call",
        Array: "array",
        Object: "object",
        SetTerm: "set",
        ArrayCompr: "arraycomprehension",
        SetCompr: "setcomprehension",
        ObjectCompr: "objectcomprehension",
        TemplateString: "templatestring",
    }.get(type(term), type(term).__name__.lower())


def _root_ref(term: ast.Term) -> str | None:
    """``input`` or ``data`` when ``term`` is that root document alone."""
    if type(term) is Ref and not term.path and type(term.head) is Var and term.head.name in _ROOTS:
        return term.head.name
    return None


def all_vars(node: object, out: set[str]) -> set[str]:
    """Every variable name in a term, statement or expression, closures
    included (OPA's default variable visitor)."""
    stack = [node]
    while stack:
        x = stack.pop()
        if x is None or isinstance(x, (Scalar, str)):
            continue
        if isinstance(x, Var):
            out.add(x.name)
        elif isinstance(x, Ref):
            stack.append(x.head)
            stack.extend(x.path)
        elif isinstance(x, Call):
            head = x.op.split(".")[0]
            out.add(head)
            stack.extend(x.args)
        elif isinstance(x, (Array, SetTerm)):
            stack.extend(x.items)
        elif isinstance(x, Object):
            for k, v in x.items:
                stack.append(k)
                stack.append(v)
        elif isinstance(x, (ArrayCompr, SetCompr)):
            stack.append(x.term)
            stack.extend(x.body)
        elif isinstance(x, ObjectCompr):
            stack.extend((x.key, x.value))
            stack.extend(x.body)
        elif isinstance(x, TemplateString):
            stack.extend(p for p in x.parts if not isinstance(p, str))
        elif isinstance(x, ast.Expr):
            stack.append(x.statement)
            for w in x.with_mods:
                stack.extend((w.target, w.value))
        elif isinstance(x, (Assign, Unify)):
            stack.extend((x.lhs, x.rhs))
        elif isinstance(x, SomeVars):
            stack.extend(x.vars)
        elif isinstance(x, SomeIn):
            stack.extend((x.key, x.value, x.collection))
        elif isinstance(x, Every):
            stack.extend((x.key, x.value, x.domain))
            stack.extend(x.body)
    return out


class _Scope:
    """What each name is in one scope: its new name, how it occurs, how often it was seen."""

    __slots__ = ("names", "occurrence", "count")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.occurrence: dict[str, int] = {}
        self.count: dict[str, int] = {}


class _Stack:
    """OPA's stack of declared variables (one scope per body being rewritten)."""

    def __init__(self) -> None:
        self.scopes = [_Scope()]

    def copy(self) -> _Stack:
        """A copy with every scope merged into one (as OPA copies the arguments' stack)."""
        new = _Stack()
        top = new.scopes[0]
        for s in self.scopes:
            top.names.update(s.names)
            top.occurrence.update(s.occurrence)
            top.count.update(s.count)
        return new

    def push(self) -> None:
        self.scopes.append(_Scope())

    def pop(self) -> None:
        self.scopes.pop()

    @property
    def top(self) -> _Scope:
        return self.scopes[-1]

    def insert(self, name: str, new: str, occurrence: int) -> None:
        top = self.scopes[-1]
        top.names[name] = new
        top.occurrence[name] = occurrence
        top.count[name] = 1

    def declared(self, name: str) -> str | None:
        for s in reversed(self.scopes):
            new = s.names.get(name)
            if new is not None:
                return new
        return None

    def occurrence(self, name: str) -> int:
        return self.scopes[-1].occurrence.get(name, _NEW)

    def global_occurrence(self, name: str) -> int | None:
        for s in reversed(self.scopes):
            occ = s.occurrence.get(name)
            if occ is not None:
                return occ
        return None

    def seen(self, name: str) -> None:
        for s in reversed(self.scopes):
            c = s.count.get(name)
            if c is not None:
                s.count[name] = c + 1
                return
        self.scopes[-1].count[name] = 1

    def use(self, name: str) -> str | None:
        """An occurrence of ``name``: :meth:`declared` and :meth:`seen` in one
        loop (the scope that declares a name is the innermost that counts it:
        :meth:`insert` sets both), and a name met for the first time is
        inserted as itself. Returns its new name if a scope has it."""
        scopes = self.scopes
        for scope in reversed(scopes):
            new = scope.names.get(name)
            if new is not None:
                scope.count[name] += 1
                return new
        if name not in scopes[-1].occurrence:
            self.insert(name, name, _SEEN)
        return None

    def count(self, name: str) -> int:
        for s in reversed(self.scopes):
            c = s.count.get(name)
            if c is not None:
                return c
        return 0


def _head_may_have_vars(head: ast.RuleHead) -> bool:
    for t in head.ref.path:
        if type(t) is not Scalar:
            return True
    key, value = head.key, head.value
    if (key is not None and type(key) is not Scalar) or (value is not None and type(value) is not Scalar):
        return True
    for t in head.args or ():
        if type(t) is not Scalar:
            return True
    return False


def _declares_nothing(rule: ast.Rule) -> bool:
    """Whether no body of a rule's chain declares a variable at its top level
    (``:=``, ``some``, ``every``). With no arguments and no comprehensions,
    such a rule has no declared name anywhere: every name it uses stands for
    itself, nothing can be redeclared, unused or shadowed, and no name is
    generated for it."""
    branch: ast.Rule | None = rule
    while branch is not None:
        for e in branch.body:
            kind = type(e.statement)
            if kind is Assign or kind is SomeVars or kind is SomeIn or kind is Every:
                return False
        branch = branch.else_
    return True


class LocalVarChecker:
    """Runs OPA's local variable checks over rules (:meth:`rule`) or a query
    (:meth:`query`), giving each error to ``report`` (which returns False once
    no more errors are wanted: OPA's error limit)."""

    def __init__(self, report: Callable[[RegoError], bool], *, strict: bool = False, prefix: str = "__local") -> None:
        self.report = report
        self.strict = strict
        self._prefix = prefix
        self._next = 0
        # where each generated name of an assigned variable was assigned
        self._assigned_at: dict[str, Location] = {}
        # calls of functions a local variable hides (OPA's CheckUndefinedFuncs reports them)
        self.hidden_calls: list[RegoError] = []
        # whether some `input := ...`/`data := ...` was met; whether every rule was walked
        self.assigns_roots = False
        self.finished = False

    def _gen(self) -> str:
        name = f"{self._prefix}{self._next}__"
        self._next += 1
        return name

    def skip_names(self, n: int) -> None:
        """Count ``n`` names OPA generates before this stage (rule heads with composite keys)."""
        self._next += n

    # -- rules and queries ---------------------------------------------------

    def rule(self, rule: ast.Rule, closures: bool = True) -> bool:
        """Check a rule and its ``else`` chain; False once the error limit is
        reached. ``closures``: whether the rule may hold comprehensions."""
        head = rule.head
        args = head.args or ()
        if not closures and not args and _declares_nothing(rule):
            return True  # (every check here is about declared names)
        unused_args: dict[str, None] = {}
        if self.strict and args:
            names: set[str] = set()
            for a in args:
                all_vars(a, names)
            unused_args = dict.fromkeys(sorted(names))
        arg_stack: _Stack | None = None  # (what the arguments declare, for each branch)
        if args:
            arg_stack = _Stack()
            arg_errors: list[RegoError] = []
            for a in args:
                self._arg(arg_stack, a, arg_errors)
            if arg_errors and not self._report_all(arg_errors):
                return False
        branch: ast.Rule | None = rule
        while branch is not None:
            stack = arg_stack.copy() if arg_stack is not None else _Stack()
            used: set[str] | None = None
            if _head_may_have_vars(branch.head):
                used, value_vars = self._head(branch.head)
                if used is None:
                    return False
                for name in value_vars:
                    unused_args.pop(name, None)
            errors: list[RegoError] = []
            self._body(stack, used, branch.body, errors)
            if errors and not self._report_all(errors):
                return False
            if unused_args:
                for name in list(unused_args):
                    if stack.count(name) > 1:
                        del unused_args[name]
            branch = branch.else_
        for name in unused_args:
            if not _is_wildcard(name):
                msg = f"unused argument {name}. (hint: use _ (wildcard variable) instead)"
                if not self.report(RegoCompileError(msg, head.location)):
                    return False
        return True

    def query(self, body: ast.Body) -> bool:
        """Check a query's body; False once the error limit is reached."""
        errors: list[RegoError] = []
        self._body(_Stack(), None, body, errors)
        return self._report_all(errors)

    def _report_all(self, errors: list[RegoError]) -> bool:
        for err in errors:
            if not self.report(err):
                return False
        return True

    # -- rule heads ------------------------------------------------------------

    def _arg(self, stack: _Stack, term: ast.Term, errors: list[RegoError]) -> None:
        """A function argument: its variables are the arguments' names."""
        if isinstance(term, Var):
            name = term.name
            if stack.declared(name) is not None:
                stack.seen(name)
            else:
                stack.insert(name, self._gen(), _ARG)
        elif isinstance(term, Object):
            for _, v in term.items:
                self._arg(stack, v, errors)
        elif isinstance(term, Call):
            errors.append(RegoCompileError("rule arguments cannot contain calls", term.location))
        elif isinstance(term, Ref):
            self._arg(stack, term.head, errors)
            for p in term.path:
                self._arg(stack, p, errors)
        elif isinstance(term, Array):
            for x in term.items:
                self._arg(stack, x, errors)

    def _head(self, head: ast.RuleHead) -> tuple[set[str] | None, set[str]]:
        """Comprehensions in a head are checked first, each with a stack of its
        own; returns the variables the head uses (None once the error limit is
        reached) and those of its value."""
        errors: list[RegoError] = []
        for a in head.args or ():
            self._head_term(a, errors)
        key_vars = self._head_term(head.key, errors) if head.key is not None else set()
        value_vars = self._head_term(head.value, errors) if head.value is not None else set()
        if not self._report_all(errors):
            return None, value_vars
        used: set[str] = set()
        for p in head.ref.path:
            if type(p) is not Scalar:
                all_vars(p, used)
        if head.key is not None and type(head.key) is not Scalar:
            used |= key_vars
        if head.value is not None and type(head.value) is not Scalar:
            used |= value_vars
        return used, value_vars

    def _head_term(self, term: ast.Term, errors: list[RegoError]) -> set[str]:
        """The variables of a head term once its comprehensions are rewritten."""
        if isinstance(term, (ArrayCompr, SetCompr, ObjectCompr, TemplateString)):
            stack = _Stack()
            if isinstance(term, TemplateString):
                out: set[str] = set()
                for part in term.parts:
                    if not isinstance(part, str):
                        stack.push()
                        self._term_into(stack, part, errors, out)
                        stack.pop()
                return out
            return self._term(stack, term, errors)
        if isinstance(term, Var):
            return {term.name}
        if isinstance(term, Scalar):
            return set()
        out = set()
        if isinstance(term, Object):
            for k, v in term.items:
                out |= self._head_term(k, errors)
                out |= self._head_term(v, errors)
        elif isinstance(term, (Array, SetTerm)):
            for x in term.items:
                if type(x) is not Scalar:  # (a constant has no variables: most items of a constant array)
                    out |= self._head_term(x, errors)
        elif isinstance(term, Ref):
            out |= self._head_term(term.head, errors)
            for p in term.path:
                out |= self._head_term(p, errors)
        elif isinstance(term, Call):
            out.add(term.op.split(".")[0])
            for a in term.args:
                out |= self._head_term(a, errors)
        return out

    # -- bodies ------------------------------------------------------------------

    def _body(self, stack: _Stack, used: set[str] | None, body: ast.Body, errors: list[RegoError]) -> set[str]:
        """Check ``body`` in the stack's top scope; returns the (new) names of
        the variables the rewritten body holds."""
        out: set[str] = set()
        for e in body:
            s = e.statement
            if type(s) is Assign:
                self._assign(stack, e, s, errors, out)
            elif type(s) is SomeVars or type(s) is SomeIn:
                out |= self._some(stack, e, s, errors)
            elif type(s) is Every:
                out |= self._every(stack, e, s, errors)
            else:
                self._expr(stack, e, errors, out)
        if self.strict and not errors:
            self._unused_assigned(stack, used, body, errors)
        if not errors:
            self._unused_declared(stack, used, body, out, errors)
        return out

    def _declare(self, stack: _Stack, name: str, occurrence: int, where: Location | None, errors: list[RegoError]) -> str | None:
        message = _REDECLARED.get(stack.occurrence(name))
        if message is not None:
            errors.append(RegoCompileError(message.format(name), where))
            return None
        new = self._gen()
        stack.insert(name, new, occurrence)
        return new

    def _assign(self, stack: _Stack, e: ast.Expr, s: Assign, errors: list[RegoError], out: set[str]) -> None:
        """Adds the (new) names of the variables of ``lhs := rhs`` to ``out``."""
        if _root_ref(s.lhs) is not None:
            self.assigns_roots = True
        if e.negated:
            errors.append(RegoCompileError("cannot assign vars inside negated expression", e.location))
            all_vars(s, out)
            return
        self._term_into(stack, s.rhs, errors, out)
        for w in e.with_mods:
            self._term_into(stack, w.value, errors, out)
        self._assign_lhs(stack, s.lhs, e.location, errors, out)

    def _assign_lhs(self, stack: _Stack, term: ast.Term, where: Location, errors: list[RegoError], out: set[str]) -> None:
        if isinstance(term, Var):
            name = term.name
            new = self._declare(stack, name, _ASSIGNED, term.location, errors)
            if new is not None:
                self._assigned_at[new] = where
            out.add(new or name)
        elif isinstance(term, Array):
            for x in term.items:
                self._assign_lhs(stack, x, where, errors, out)
        elif isinstance(term, Object):
            for k, v in term.items:
                all_vars(k, out)
                self._assign_lhs(stack, v, where, errors, out)
        elif _root_ref(term) is not None:
            root = _root_ref(term) or ""
            new = self._declare(stack, root, _ASSIGNED, term.location, errors)
            if new is not None:
                self._assigned_at[new] = where
            out.add(new or root)
        else:
            errors.append(RegoCompileError(f"cannot assign to {value_name(term)}", term.location))
            all_vars(term, out)

    def _some(self, stack: _Stack, e: ast.Expr, s: SomeVars | SomeIn, errors: list[RegoError]) -> set[str]:
        if type(s) is SomeVars:
            for v in s.vars:
                if self._declare(stack, v.name, _DECLARED, s.location, errors) is None:
                    break
            return set()  # the declaration itself leaves the body
        assert type(s) is SomeIn
        # OPA rewrites `some k, v in xs` to `v = xs[k]` (a new name for a
        # missing key) and declares what that binds, in name order.
        key: ast.Term = s.key if s.key is not None else Var(self._gen(), s.location)
        safe = all_vars(s.collection, set())
        bound = {n for n in all_vars(key, set()) | _pattern_vars(s.value) if n not in safe}
        for name in sorted(bound):
            if self._declare(stack, name, _DECLARED, s.location, errors) is None:
                return set()
        # then walks `v = xs[k]`: the operator, the value, the collection and the key
        out: set[str] = set()
        self._var(stack, "eq", out)
        self._term_into(stack, s.value, errors, out)
        root = _root_ref(s.collection)
        if root is not None:
            self._var(stack, root, out)  # `input[k]` is no longer the root alone
        else:
            self._term_into(stack, s.collection, errors, out)
        self._term_into(stack, key, errors, out)
        for w in e.with_mods:
            out |= self._with(stack, w, errors)
        return out

    def _every(self, stack: _Stack, e: ast.Expr, s: Every, errors: list[RegoError]) -> set[str]:
        out: set[str] = set()
        self._term_into(stack, s.domain, errors, out)
        stack.push()
        try:
            # OPA gives these errors no location.
            if s.key is not None:
                if not _is_wildcard(s.key.name):
                    new = self._declare(stack, s.key.name, _DECLARED, None, errors)
                    if new is None:
                        return out
                    out.add(new)
            else:
                self._gen()
            if not _is_wildcard(s.value.name):
                new = self._declare(stack, s.value.name, _DECLARED, None, errors)
                if new is None:
                    return out
                out.add(new)
            out |= self._body(stack, set(), s.body, errors)
            for w in e.with_mods:
                out |= self._with(stack, w, errors)
        finally:
            stack.pop()
        return out

    def _expr(self, stack: _Stack, e: ast.Expr, errors: list[RegoError], out: set[str]) -> None:
        """Adds the (new) names of the variables of ``e`` to ``out``."""
        s = e.statement
        if type(s) is Unify:
            self._var(stack, "eq", out)
            self._term_into(stack, s.lhs, errors, out)
            self._term_into(stack, s.rhs, errors, out)
        elif type(s) is Call:
            # A call written as an expression: its operator is a plain ref
            # here; a local variable that hides it leaves OPA calling a
            # function that does not exist (reported at a later stage).
            head = s.op.partition(".")[0]
            new = self._var(stack, head, out)
            if new is not None and new != head:
                self.hidden_calls.append(RegoTypeError(f"undefined function {ast.call_name_text(s.op)}", e.location))
            for a in s.args:
                self._term_into(stack, a, errors, out)
        else:
            self._term_into(stack, s, errors, out)  # type: ignore[arg-type]  # (declarations are handled by the caller)
        for w in e.with_mods:
            out |= self._with(stack, w, errors)

    def _with(self, stack: _Stack, w: ast.With, errors: list[RegoError]) -> set[str]:
        out: set[str] = set()
        self._term_into(stack, w.target, errors, out)
        self._term_into(stack, w.value, errors, out)
        return out

    def _var(self, stack: _Stack, name: str, out: set[str]) -> str | None:
        """Records an occurrence of ``name`` (its name in ``out``); returns its
        new name if a scope has it (None: it is seen for the first time)."""
        new = stack.use(name)
        out.add(new if new is not None else name)
        return new

    def _term(self, stack: _Stack, term: ast.Term, errors: list[RegoError]) -> set[str]:
        """OPA's rewrite of the variables of a term: declared names are
        replaced (and counted as seen), others recorded as seen."""
        out: set[str] = set()
        self._term_into(stack, term, errors, out)
        return out

    def _term_into(self, stack: _Stack, term: ast.Term, errors: list[RegoError], out: set[str]) -> None:
        # exact classes, most frequent first: this runs for every term of every rule
        if type(term) is Scalar:
            return
        if type(term) is Var:
            self._var(stack, term.name, out)
        elif type(term) is Ref:
            root = _root_ref(term) if not term.path else None
            if root is not None:
                occ = stack.global_occurrence(root)
                new = stack.declared(root) if occ is not None and occ != _SEEN else None
                out.add(new or root)
                return
            head = term.head
            if type(head) is Var:  # (the usual ref, handled here rather than by a call)
                self._var(stack, head.name, out)
            else:
                self._term_into(stack, head, errors, out)
            for p in term.path:
                if type(p) is not Scalar:
                    self._term_into(stack, p, errors, out)
        elif type(term) is Call:
            op = term.op
            head_name = op.partition(".")[0]
            new = self._var(stack, head_name, out)
            if new is not None and new != head_name:
                errors.append(RegoCompileError(f"called function {op} shadowed", term.location))
            for a in term.args:
                if type(a) is not Scalar:
                    self._term_into(stack, a, errors, out)
        elif type(term) is Array or type(term) is SetTerm:
            for x in term.items:
                self._term_into(stack, x, errors, out)
        elif type(term) is Object:
            for k, v in term.items:
                self._term_into(stack, k, errors, out)
                self._term_into(stack, v, errors, out)
        elif type(term) is ArrayCompr or type(term) is SetCompr:
            used = all_vars(term.term, set())
            stack.push()
            out |= self._body(stack, used, term.body, errors)
            self._term_into(stack, term.term, errors, out)
            stack.pop()
        elif type(term) is ObjectCompr:
            used = all_vars(term.key, set())
            all_vars(term.value, used)
            stack.push()
            out |= self._body(stack, used, term.body, errors)
            self._term_into(stack, term.key, errors, out)
            self._term_into(stack, term.value, errors, out)
            stack.pop()
        elif type(term) is TemplateString:
            for part in term.parts:
                if not isinstance(part, str):
                    self._term_into(stack, part, errors, out)

    # -- unused variables ----------------------------------------------------------

    def _unused_assigned(self, stack: _Stack, used: set[str] | None, body: ast.Body, errors: list[RegoError]) -> None:
        """Strict mode: a variable assigned in this scope and never seen again."""
        top = stack.top
        if _ASSIGNED not in top.occurrence.values():
            return
        unused = {
            top.names[name]
            for name, occ in top.occurrence.items()
            if occ == _ASSIGNED and not _is_wildcard(name) and stack.count(name) <= 1
        }
        unused -= {stack.declared(name) or name for name in used or ()}
        by_new = {new: name for name, new in top.names.items()}
        for new in sorted(unused):
            where = self._assigned_at.get(new, body[0].location if body else None)
            errors.append(RegoCompileError(f"assigned var {by_new[new]} unused", where))

    def _unused_declared(
        self, stack: _Stack, used: set[str] | None, body: ast.Body, body_vars: set[str], errors: list[RegoError]
    ) -> None:
        """A ``some``/``every`` variable of this scope that the body never uses."""
        top = stack.top
        if _DECLARED not in top.occurrence.values():
            return  # (most bodies declare nothing with some/every)
        declared = {top.names[name] for name, occ in top.occurrence.items() if occ == _DECLARED}
        used = used or set()
        present = body_vars | {stack.declared(name) or name for name in used}
        by_new = {new: name for name, new in top.names.items()}
        for new in sorted(declared - present - used):
            name = by_new[new]
            if _is_generated(name):
                continue
            where = next((e.location for e in body if name in _declared_in(e)), body[0].location if body else None)
            errors.append(RegoCompileError(f"declared var {name} unused", where))


def _pattern_vars(term: ast.Term) -> set[str]:
    """The variables a ``some ... in`` value pattern binds."""
    out: set[str] = set()
    if isinstance(term, Var):
        out.add(term.name)
    elif isinstance(term, Array):
        for x in term.items:
            out |= _pattern_vars(x)
    elif isinstance(term, Object):
        for _, v in term.items:
            out |= _pattern_vars(v)
    return out


def _declared_in(e: ast.Expr) -> set[str]:
    """The names an expression declares as OPA still sees them after its
    rewrite: ``some`` declarations (kept as written) and, inside an ``every``
    body (also kept as written), assignments too."""
    s = e.statement
    out: set[str] = set()
    if type(s) is SomeVars:
        out.update(v.name for v in s.vars)
    elif type(s) is SomeIn:
        all_vars(s.value, out)
        if s.key is not None:
            all_vars(s.key, out)
    elif type(s) is Every:
        for inner in s.body:
            _declared_as_written(inner, out)
    return out


def _declared_as_written(e: ast.Expr, out: set[str]) -> None:
    s = e.statement
    if type(s) is Assign:
        all_vars(s.lhs, out)
    elif type(s) is SomeVars or type(s) is SomeIn or type(s) is Every:
        out |= _declared_in(e)
        if type(s) is Every:
            for inner in s.body:
                _declared_as_written(inner, out)
