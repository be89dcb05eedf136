"""OPA's early compile checks and strict mode, with all errors collected.

OPA's compiler runs in stages and stops after the first stage that fails,
reporting every error of that stage (up to its limit of ten, then ``error
limit reached``). :func:`check_modules` runs, over the parsed modules in
OPA's order (sorted by file name), the stages before pyrego's own name
resolution:

1. ResolveRefs: ``args must not shadow input``; in strict mode
   ``import data.x unused`` for an import nothing reads;
2. CheckKeywordOverrides (Rego v1 modules, or any module in strict mode):
   ``rules must not shadow input``, ``args must not shadow data``,
   ``variables must not shadow input``;
3. CheckDuplicateImports (same modules): ``import must not shadow import data.a``;
4. RewriteLocalVars: :mod:`pyrego.compile.local_vars` (strict mode adds unused
   assignments and arguments).

:func:`check_deprecated_builtins` is OPA's last stage (CheckDeprecatedBuiltins:
``deprecated built-in function calls in expression: any`` in Rego v1 modules,
or in any module in strict mode); :func:`check_query_keywords`,
:func:`check_query` and :func:`check_query_deprecated` are the query
compiler's (run as stages by :mod:`pyrego.compile.pipeline`).

Strict mode is OPA's ``opa check --strict`` / ``--strict`` on ``opa eval``
(``Engine.set_strict``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

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
from pyrego.builtins.table import DEPRECATED
from pyrego.compile.local_vars import LocalVarChecker, all_vars
from pyrego.errors import RegoCompileError, RegoError, RegoTypeError
from pyrego.parse.lexer import ALL_KEYWORDS

__all__ = [
    "DEFAULT_ERROR_LIMIT",
    "DEPRECATED_BUILTINS",
    "ErrorSink",
    "check_deprecated_builtins",
    "check_modules",
    "check_query",
    "check_query_keywords",
    "deprecated_errors",
    "early_errors",
    "first_with_all",
    "import_text",
    "location_key",
    "ref_text",
]

#: OPA's compiler stops after this many errors (``opa check --max-errors``).
DEFAULT_ERROR_LIMIT = 10

#: Builtins OPA marks deprecated (not callable in Rego v1 modules, nor in strict mode).
DEPRECATED_BUILTINS = DEPRECATED

_ROOTS = ("input", "data")
_VAR_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ErrorSink:
    """Errors collected as OPA's compiler collects them: up to ``limit``
    (0 or less: no limit), then OPA's ``error limit reached`` entry."""

    def __init__(self, limit: int = DEFAULT_ERROR_LIMIT) -> None:
        self.limit = limit
        self.errors: list[RegoError] = []
        self._count = 0

    def add(self, err: RegoError) -> bool:
        """Record ``err``; False when no more errors are wanted."""
        if self.limit <= 0:
            self.errors.append(err)
            return True
        if self._count >= self.limit:
            return False
        self._count += 1
        self.errors.append(err)
        if self._count == self.limit:
            self.errors.append(RegoCompileError("error limit reached"))
            return False
        return True

    def raise_errors(self) -> None:
        """Raise the first error with all of them in its ``errors`` (if there are any)."""
        if self.errors:
            raise first_with_all(self.errors, limit=0)


def location_key(err: RegoError) -> tuple[str, int, int]:
    loc = err.location
    return (loc.file, loc.row, loc.col) if loc is not None else ("", 0, 0)


def first_with_all(errors: list[RegoError], *, sort: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> RegoError:
    """The error to raise for ``errors`` (one at least): the first, with all of
    them in its ``errors`` (as OPA reports them all), ordered by location when
    ``sort``, cut at ``limit`` with OPA's ``error limit reached`` (0: no limit)."""
    sink = ErrorSink(limit)
    for err in sorted(errors, key=location_key) if sort else errors:
        if not sink.add(err):
            break
    first = sink.errors[0]
    first.errors = list(sink.errors)  # type: ignore[attr-defined]  # (as the type checker sets it)
    return first


# ---------------------------------------------------------------- texts


def ref_text(ref: Ref) -> str:
    """A ref as OPA writes it: ``data.a.b``, ``future.keywords["in"]``, ``data.x["a-b"]``."""
    head = ref.head
    out = head.name if type(head) is Var else "<term>"
    for p in ref.path:
        if type(p) is Scalar and isinstance(p.value, str):
            if _VAR_LIKE.fullmatch(p.value) and p.value not in ALL_KEYWORDS:
                out += "." + p.value
            else:
                out += "[" + json.dumps(p.value, ensure_ascii=False) + "]"
        elif type(p) is Var:
            out += f"[{p.name}]"
        elif type(p) is Scalar:
            out += "[" + json.dumps(p.value) + "]"
        else:
            out += "[...]"
    return out


def import_text(imp: ast.Import) -> str:
    """``import data.a.b`` / ``import data.a.b as c``, as OPA writes an import."""
    text = "import " + ref_text(imp.path)
    return f"{text} as {imp.alias}" if imp.alias else text


def import_name(imp: ast.Import) -> str:
    """The name an import binds: its alias, else its path's last name."""
    if imp.alias:
        return imp.alias
    if imp.path.path:
        last = imp.path.path[-1]
        return last.value if type(last) is Scalar and isinstance(last.value, str) else ""
    head = imp.path.head
    return head.name if type(head) is Var else ""


def _import_root(imp: ast.Import) -> str:
    head = imp.path.head
    return head.name if type(head) is Var else ""


def _rule_name(rule: ast.Rule) -> str:
    head = rule.head.ref.head
    return head.name if type(head) is Var else ""


def _root_ref(term: ast.Term | None) -> str | None:
    if type(term) is Ref and not term.path and type(term.head) is Var and term.head.name in _ROOTS:
        return term.head.name
    return None


# ---------------------------------------------------------------- modules


def check_modules(modules: Iterable[ast.Module], *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> list[RegoError]:
    """Run OPA's early compile stages over ``modules``; raise the errors of the
    first stage that finds any (the first error, with all in ``errors``).

    Returns the errors OPA finds later, when it checks calls: calls of
    functions a local variable hides (``count := 1; count(x)``)."""
    errors, hidden_calls = early_errors(modules, strict=strict, limit=limit)
    if errors:
        raise first_with_all(errors, limit=0)
    return hidden_calls


def early_errors(
    modules: Iterable[ast.Module], *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT
) -> tuple[list[RegoError], list[RegoError]]:
    """OPA's early compile stages over ``modules``: the errors of the first
    stage that finds any (cut at ``limit``), and the calls of functions a
    local variable hides (reported when calls are checked)."""
    ordered = sorted(modules, key=lambda m: m.file)
    hidden_calls: list[RegoError] = []
    # The local variable stage runs first (its errors are reported in OPA's
    # order, after the others'): it tells whether any `input`/`data` is
    # assigned, which spares the keyword stage a walk of every expression.
    local = ErrorSink(limit)
    checker = _local_vars(ordered, local, strict, hidden_calls)
    for stage in (_resolve_refs, _keyword_overrides, _duplicate_imports):
        sink = ErrorSink(limit)
        stage(ordered, sink, strict, checker)
        if sink.errors:
            return sink.errors, hidden_calls
    return local.errors, hidden_calls


def _resolve_refs(modules: list[ast.Module], sink: ErrorSink, strict: bool, _: LocalVarChecker) -> None:
    """Arguments named ``input``/``data``; in strict mode, imports nothing reads."""
    exports: dict[tuple[object, ...], set[str]] = {}
    if strict:  # (only strict mode needs to know what is read)
        for m in modules:
            exports.setdefault(_package_key(m), set()).update(_rule_name(r) for r in m.rules)
    for m in modules:
        # what each global name stands for: a rule of the package, or an import
        globals_: dict[str, object] = {}
        if strict:
            globals_ = dict.fromkeys(exports[_package_key(m)], "rule")
            for imp in m.imports:
                if _import_root(imp) not in ("future", "rego"):
                    globals_[import_name(imp)] = imp
        used: set[str] = set()
        for rule in m.rules:
            args = rule.head.args
            shadowed = _shadowed_root_arg(args) if args else None
            if shadowed is not None:
                msg = f"args must not shadow {shadowed} (use a different variable name)"
                if not sink.add(RegoCompileError(msg, rule.location)):
                    return
                continue
            branch: ast.Rule | None = rule
            while strict and branch is not None:
                _RefUse(globals_, used).rule(branch)
                branch = branch.else_
        if strict:
            for imp in m.imports:
                if _import_root(imp) in ("future", "rego"):
                    continue
                name = import_name(imp)
                if isinstance(globals_.get(name), ast.Import) and name not in used:
                    if not sink.add(RegoCompileError(f"{import_text(imp)} unused", imp.location)):
                        return


def _package_key(m: ast.Module) -> tuple[object, ...]:
    return tuple(p.value if type(p) is Scalar else repr(p) for p in m.package.path)


def _shadowed_root_arg(args: tuple[ast.Term, ...]) -> str | None:
    """The first argument (in OPA's walk) that is ``input`` or ``data`` alone."""
    for a in args:
        found = _root_in_arg(a)
        if found is not None:
            return found
    return None


def _root_in_arg(t: ast.Term) -> str | None:
    root = _root_ref(t)
    if root is not None:
        return root
    items: Iterable[ast.Term] = ()
    if type(t) is Array:
        items = t.items
    elif type(t) is Object:
        items = [v for _, v in t.items]
    elif type(t) is Ref:
        items = t.path
    for x in items:
        found = _root_in_arg(x)
        if found is not None:
            return found
    return None


class _RefUse:
    """Which global names (rules of the package, imports) a rule reads, as
    OPA's reference resolution finds them: names a local variable (an argument,
    a ``:=`` or ``some`` declaration) hides are not the global."""

    def __init__(self, globals_: dict[str, object], used: set[str]) -> None:
        self.globals = globals_
        self.used = used
        self.hidden: list[set[str]] = []

    def rule(self, rule: ast.Rule) -> None:
        args: set[str] = set()
        for a in rule.head.args or ():
            _arg_vars(a, args)
        self.hidden = [args, _declared_vars(rule.body)]
        head = rule.head
        for p in head.ref.path:
            self.term(p)
        for t in (head.key, head.value):
            if t is not None:
                self.term(t)
        self.body(rule.body)

    def name(self, name: str) -> None:
        if name in self.globals and not any(name in h for h in self.hidden):
            self.used.add(name)

    def body(self, body: ast.Body) -> None:
        for e in body:
            self.expr(e)

    def expr(self, e: ast.Expr) -> None:
        s = e.statement
        if type(s) is Assign or type(s) is Unify:
            self.name("assign" if type(s) is Assign else "eq")
            self.term(s.lhs)
            self.term(s.rhs)
        elif type(s) is SomeIn:
            self.name("internal")
            for t in (s.key, s.value, s.collection):
                if t is not None:
                    self.term(t)
        elif type(s) is Every:
            local: set[str] = set()
            if s.key is not None:
                local.add(s.key.name)
            local.add(s.value.name)
            self.hidden.append(local)
            self.term(s.domain)
            self.body(s.body)
            self.hidden.pop()
        elif type(s) is not SomeVars:
            self.term(s)  # type: ignore[arg-type]  # (a term: the other statements are handled above)
        for w in e.with_mods:
            self.term(w.target)
            self.term(w.value)

    def term(self, t: ast.Term) -> None:
        if isinstance(t, Var):
            self.name(t.name)
        elif isinstance(t, Ref):
            self.term(t.head)
            for p in t.path:
                if type(p) is not Scalar:
                    self.term(p)
        elif isinstance(t, Call):
            self.name(t.op.split(".")[0])
            for a in t.args:
                self.term(a)
        elif isinstance(t, (Array, SetTerm)):
            for x in t.items:
                self.term(x)
        elif isinstance(t, Object):
            for k, v in t.items:
                self.term(k)
                self.term(v)
        elif isinstance(t, (ArrayCompr, SetCompr, ObjectCompr)):
            self.hidden.append(_declared_vars(t.body))
            if isinstance(t, ObjectCompr):
                self.term(t.key)
                self.term(t.value)
            else:
                self.term(t.term)
            self.body(t.body)
            self.hidden.pop()
        elif isinstance(t, TemplateString):
            for part in t.parts:
                if not isinstance(part, str):
                    self.term(part)


def _arg_vars(t: ast.Term, out: set[str]) -> None:
    """The variables of a function argument that hide globals (OPA skips sets,
    comprehensions and calls, and object keys)."""
    if isinstance(t, Var):
        out.add(t.name)
    elif isinstance(t, Ref):
        _arg_vars(t.head, out)
        for p in t.path:
            _arg_vars(p, out)
    elif isinstance(t, Array):
        for x in t.items:
            _arg_vars(x, out)
    elif isinstance(t, Object):
        for _, v in t.items:
            _arg_vars(v, out)


def _declared_vars(body: ast.Body) -> set[str]:
    """OPA's declaredVars: what ``:=`` and ``some`` declare in a body, ``every``
    bodies included, comprehensions not."""
    out: set[str] = set()
    for e in body:
        s = e.statement
        if type(s) is Assign:
            all_vars(s.lhs, out)
        elif type(s) is SomeVars:
            out.update(v.name for v in s.vars)
        elif type(s) is SomeIn:
            all_vars(s.value, out)
            if s.key is not None:
                all_vars(s.key, out)
        elif type(s) is Every:
            out |= _declared_vars(s.body)
    return out


def _keyword_overrides(modules: list[ast.Module], sink: ErrorSink, strict: bool, local: LocalVarChecker) -> None:
    """Rules, arguments and ``:=`` variables named ``input`` or ``data``."""
    for m in modules:
        if not (strict or m.rego_v1):
            continue
        errors: list[RegoError] = []
        for rule in m.rules:
            name = _rule_name(rule)
            if name in _ROOTS:
                errors.append(RegoCompileError(f"rules must not shadow {name} (use a different rule name)", rule.location))
            for a in rule.head.args or ():
                root = _root_ref(a)
                if root is not None:
                    errors.append(RegoCompileError(f"args must not shadow {root} (use a different variable name)", a.location))
        if local.assigns_roots or not local.finished:
            for rule in m.rules:
                _root_assignments(rule, errors)
        for err in errors:
            if not sink.add(err):
                return


def _root_assignments(rule: ast.Rule, errors: list[RegoError]) -> None:
    """``input := ...`` anywhere in a rule (heads, bodies, closures, else branches), in OPA's walk order."""
    for e in _exprs_of_rule(rule):
        s = e.statement
        if type(s) is Assign:
            root = _root_ref(s.lhs)
            if root is not None:
                errors.append(RegoCompileError(f"variables must not shadow {root} (use a different variable name)", e.location))


def _exprs_of_rule(rule: ast.Rule) -> list[ast.Expr]:
    out: list[ast.Expr] = []
    branch: ast.Rule | None = rule
    while branch is not None:
        head = branch.head
        for t in (*(head.args or ()), head.key, head.value):
            if t is not None:
                _exprs_in(t, out)
        for e in branch.body:
            _exprs_in(e, out)
        branch = branch.else_
    return out


def _exprs_in(node: object, out: list[ast.Expr]) -> None:
    """Every expression in ``node`` in pre-order (an expression before those nested in it)."""
    if node is None or isinstance(node, (Scalar, Var, str)):
        return
    if isinstance(node, ast.Expr):
        out.append(node)
        _exprs_in(node.statement, out)
        for w in node.with_mods:
            _exprs_in(w.value, out)
        return
    if isinstance(node, (ArrayCompr, SetCompr)):
        _exprs_in(node.term, out)
        for e in node.body:
            _exprs_in(e, out)
    elif isinstance(node, ObjectCompr):
        _exprs_in(node.key, out)
        _exprs_in(node.value, out)
        for e in node.body:
            _exprs_in(e, out)
    elif isinstance(node, Every):
        _exprs_in(node.domain, out)
        for e in node.body:
            _exprs_in(e, out)
    elif isinstance(node, Ref):
        _exprs_in(node.head, out)
        for p in node.path:
            _exprs_in(p, out)
    elif isinstance(node, Call):
        for a in node.args:
            _exprs_in(a, out)
    elif isinstance(node, (Array, SetTerm)):
        for x in node.items:
            _exprs_in(x, out)
    elif isinstance(node, Object):
        for k, v in node.items:
            _exprs_in(k, out)
            _exprs_in(v, out)
    elif isinstance(node, TemplateString):
        for part in node.parts:
            _exprs_in(part, out)
    elif isinstance(node, (Assign, Unify)):
        _exprs_in(node.lhs, out)
        _exprs_in(node.rhs, out)
    elif isinstance(node, SomeIn):
        for sub in (node.key, node.value, node.collection):
            _exprs_in(sub, out)


def _duplicate_imports(modules: list[ast.Module], sink: ErrorSink, strict: bool, _: LocalVarChecker) -> None:
    """Two imports of a module that bind the same name."""
    for m in modules:
        if not (strict or m.rego_v1):
            continue
        seen: dict[str, ast.Import] = {}
        for imp in m.imports:
            name = import_name(imp)
            first = seen.get(name)
            if first is not None:
                if not sink.add(RegoCompileError(f"import must not shadow {import_text(first)}", imp.location)):
                    return
            else:
                seen[name] = imp


def _local_vars(modules: list[ast.Module], sink: ErrorSink, strict: bool, hidden_calls: list[RegoError]) -> LocalVarChecker:
    checker = LocalVarChecker(sink.add, strict=strict)
    checker.hidden_calls = hidden_calls
    # OPA names composite keys of rule heads first (``p[x.y]``): count those names.
    checker.skip_names(sum(1 for m in modules for r in m.rules for p in r.head.ref.path if type(p) not in (Scalar, Var)))
    for m in modules:
        for rule in m.rules:
            if not checker.rule(rule, m.closures):
                return checker
    checker.finished = True
    return checker


# ---------------------------------------------------------------- deprecated builtins


def check_deprecated_builtins(modules: Iterable[ast.Module], *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> None:
    """OPA's CheckDeprecatedBuiltins stage: calls of deprecated builtins in
    Rego v1 modules (in every module in strict mode) are ``rego_type_error``."""
    errors = deprecated_errors(modules, strict=strict, limit=limit)
    if errors:
        raise first_with_all(errors, limit=0)


def deprecated_errors(modules: Iterable[ast.Module], *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> list[RegoError]:
    """The errors of OPA's CheckDeprecatedBuiltins stage (cut at ``limit``)."""
    sink = ErrorSink(limit)
    for m in sorted(modules, key=lambda m: m.file):
        if not (strict or m.rego_v1):
            continue
        local = {_rule_name(r) for r in m.rules} | {import_name(i) for i in m.imports}
        for err in _deprecated_calls(m.rules, local):
            if not sink.add(err):
                break
    return sink.errors


def _deprecated_calls(rules: Iterable[ast.Rule], local: set[str]) -> list[RegoError]:
    out: list[RegoError] = []

    def visit_call(call: Call, where: ast.Location) -> None:
        if call.op in DEPRECATED_BUILTINS and call.op.split(".")[0] not in local:
            out.append(RegoTypeError(f"deprecated built-in function calls in expression: {call.op}", where))

    def term(t: object) -> None:
        if t is None or isinstance(t, (Scalar, Var, str)):
            return
        if isinstance(t, Call):
            visit_call(t, t.location)
            for a in t.args:
                term(a)
        elif isinstance(t, ast.Expr):
            s = t.statement
            if type(s) is Call:
                # a call written as an expression is reported at the expression
                visit_call(s, t.location)
                for a in s.args:
                    term(a)
            else:
                term(s)
            for w in t.with_mods:
                term(w.value)
        elif isinstance(t, Ref):
            term(t.head)
            for p in t.path:
                term(p)
        elif isinstance(t, (Array, SetTerm)):
            for x in t.items:
                term(x)
        elif isinstance(t, Object):
            for k, v in t.items:
                term(k)
                term(v)
        elif isinstance(t, (ArrayCompr, SetCompr)):
            term(t.term)
            for e in t.body:
                term(e)
        elif isinstance(t, ObjectCompr):
            term(t.key)
            term(t.value)
            for e in t.body:
                term(e)
        elif isinstance(t, TemplateString):
            for part in t.parts:
                term(part)
        elif isinstance(t, (Assign, Unify)):
            term(t.lhs)
            term(t.rhs)
        elif isinstance(t, SomeIn):
            for sub in (t.key, t.value, t.collection):
                term(sub)
        elif isinstance(t, Every):
            term(t.domain)
            for e in t.body:
                term(e)

    for rule in rules:
        branch: ast.Rule | None = rule
        while branch is not None:
            head = branch.head
            for p in head.ref.path:
                term(p)
            for t in (*(head.args or ()), head.key, head.value):
                term(t)
            for e in branch.body:
                term(e)
            branch = branch.else_
    return out


# ---------------------------------------------------------------- queries


def check_query_keywords(body: ast.Body, *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> None:
    """The query compiler's keyword check: in strict mode ``input``/``data`` may not be assigned."""
    if strict:
        nested: list[ast.Expr] = []
        for e in body:
            _exprs_in(e, nested)
        errors: list[RegoError] = []
        for x in nested:
            root = _root_ref(x.statement.lhs) if type(x.statement) is Assign else None
            if root is not None:
                errors.append(RegoCompileError(f"variables must not shadow {root} (use a different variable name)", x.location))
        _raise_limited(errors, limit)


def check_query(body: ast.Body, *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> list[RegoError]:
    """The query compiler's declaration checks, as in rule bodies (strict
    mode: unused assignments too). Returns the calls of functions a local
    variable hides, which OPA reports when it checks calls."""
    sink = ErrorSink(0)  # the query compiler cuts its errors at the limit afterwards
    checker = LocalVarChecker(sink.add, strict=strict, prefix="__localq")
    checker.query(body)
    _raise_limited(sink.errors, limit)
    return checker.hidden_calls


def check_query_deprecated(body: ast.Body, *, strict: bool = False, limit: int = DEFAULT_ERROR_LIMIT) -> None:
    """Strict mode: calls of deprecated builtins in a query."""
    if strict:
        rule = ast.Rule(ast.RuleHead(Ref(Var("q"), ())), body)
        _raise_limited(_deprecated_calls([rule], set()), limit)


def _raise_limited(errors: list[RegoError], limit: int) -> None:
    """Raise a query's errors: OPA's query compiler adds ``error limit reached`` only past the limit."""
    if not errors:
        return
    if 0 < limit < len(errors):
        errors = errors[:limit] + [RegoCompileError("error limit reached")]
    first = errors[0]
    first.errors = list(errors)  # type: ignore[attr-defined]
    raise first
