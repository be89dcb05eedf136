"""Name resolution (the compiler's second step): a rule name, an import alias
or a package-relative function becomes an absolute ``data.`` ref or call, and
every local variable gets a unique name (``x#3``) so nested scopes never clash
in generated code. Used by :mod:`pyrego.compile.compiler` for modules and queries."""

from __future__ import annotations

import itertools

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
from pyrego.builtins.registry import lookup as lookup_builtin
from pyrego.compile.base import FuncRef, data_ref
from pyrego.compile.safety import ROOTS, stmt_vars, term_vars
from pyrego.errors import RegoCompileError
from pyrego.parse.nodes import new_call, new_expr, new_ref, new_rule, new_rule_head, new_var


class _Scope:
    """Maps a body's Rego variable names to unique names."""

    def __init__(self, parent: _Scope | None, names: dict[str, str]) -> None:
        self.parent = parent
        self.names = names
        # Names declared with `:=` further down this body: closures written
        # before the declaration do not see them (OPA's local-var rewriting).
        self.pending: set[str] = set()

    def lookup(self, name: str) -> str | None:
        unique = self.names.get(name)
        if unique is not None:
            return unique
        return self.parent.visible(name) if self.parent is not None else None

    def visible(self, name: str) -> str | None:
        """The name as seen from a nested closure (skips pending ``:=`` declarations)."""
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names and name not in scope.pending:
                return scope.names[name]
            scope = scope.parent
        return None


class _HasLocals(Exception):
    """A rule resolved as if it had no local variable has one (see _Resolver.rule)."""


class _Resolver:
    """Resolves one module's names against its package and imports."""

    def __init__(
        self,
        module: ast.Module,
        pkg: tuple[str, ...],
        counter: itertools.count[int],
        package_rules: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        self.module = module
        self.pkg = pkg
        self.counter = counter
        # Every call and every ref rooted at data in what was resolved: the
        # compiler checks the calls and finds rule dependencies from these
        # instead of walking the resolved rules again.
        self.calls: list[ast.Call] = []
        self.data_refs: list[ast.Ref] = []
        # How many comprehensions, ``every`` statements and calls of
        # ``rego.*`` builtins (which the closure planner evaluates itself)
        # were resolved: the compiler notes the documents whose rules hold
        # one (CompiledTree.nested_nodes).
        self.nested = 0
        # The rules (each else branch alike, as parsed and as resolved) with no
        # local variable in head or body and nothing nested, and their resolved
        # bodies, by id (CompiledTree.var_free_rules, var_free_bodies).
        self.var_free_rules: dict[int, ast.Rule] = {}
        self.var_free_bodies: dict[int, ast.Body] = {}
        # Whether a scope declares ``input`` or ``data`` as a local (Rego v0's
        # ``input := ...``): until one does, the roots need no scope lookup.
        self.roots_declared = False
        # Resolving a rule as if it had no local variable: one met raises _HasLocals.
        self.no_locals = False
        self.imports: dict[str, ast.Ref] = {}
        for imp in module.imports:
            head = imp.path.head
            if not isinstance(head, ast.Var) or head.name not in ("data", "input"):
                continue  # rego.v1 / future.keywords: syntax switches only
            if imp.alias:
                alias = imp.alias
            elif imp.path.path:
                last = imp.path.path[-1]
                if not (isinstance(last, ast.Scalar) and isinstance(last.value, str)):
                    raise RegoCompileError("import path must end in a name", imp.location)
                alias = last.value
            else:
                alias = head.name
            self.imports[alias] = imp.path
        # Every rule of the package is visible by its first name from each of
        # the package's modules, whichever file defines it; an import of the
        # same name takes precedence over a rule (as in OPA).
        self.rule_names = set(package_rules) - self.imports.keys()

    def fresh(self, name: str) -> str:
        return f"{name}#{next(self.counter)}"

    # -- names -------------------------------------------------------------

    def global_ref(self, name: str, location: ast.Location) -> ast.Ref | None:
        """The ref a free name stands for: a rule of this package or an import."""
        if name in self.rule_names:
            return data_ref(self.pkg + (name,), location)
        if name in self.imports:
            ref = self.imports[name]
            return ast.Ref(ref.head, ref.path, location)
        return None

    def resolve_op(self, op: str, location: ast.Location) -> str:
        dot = op.find(".")
        head = op if dot < 0 else op[:dot]
        if head == "data" or (head not in self.rule_names and head not in self.imports):
            return op  # a builtin or an absolute name
        parts = op.split(".")
        if head in self.rule_names:
            return ".".join(("data",) + self.pkg + tuple(parts))
        if head in self.imports:
            ref = self.imports[head]
            base = [ref.head.name] if isinstance(ref.head, ast.Var) else []
            for p in ref.path:
                if isinstance(p, ast.Scalar):
                    base.append(str(p.value))
            return ".".join(base + parts[1:])
        return op

    def resolve_keyed_op(self, head: str, op_ref: ast.Ref) -> str:
        """The absolute name of a call whose ref has keys other than strings
        (``a[1].x(v)``, named as :func:`ast.ref_to_string` writes it)."""
        if head in self.rule_names:
            base: tuple[ast.Term, ...] = tuple([ast.Scalar(p) for p in self.pkg]) + (ast.Scalar(head),)
        else:
            ref = self.imports[head]
            if not (isinstance(ref.head, ast.Var) and ref.head.name == "data"):
                return ast.ref_to_string(op_ref, written=True)
            base = ref.path
        return ast.ref_to_string(ast.Ref(ast.Var("data"), base + op_ref.path), written=True)

    # -- scopes --------------------------------------------------------------

    def make_scope(self, parent: _Scope | None, terms: list[ast.Term], body: ast.Body, declared: set[str]) -> _Scope:
        """A scope for a body: declared names are new; others captured or new."""
        names: set[str] = set()
        for t in terms:
            if type(t) is not Scalar:
                term_vars(t, names)
        for e in body:
            stmt = e.statement
            stmt_vars(stmt, names)
            for w in e.with_mods:
                if self.builtin_ref(w.value) is None:
                    term_vars(w.value, names)
            kind = type(stmt)
            if kind is Assign or kind is SomeVars or kind is SomeIn:
                _add_declared(stmt, declared)
        if declared and not ROOTS.isdisjoint(declared):
            self.roots_declared = True
        # OPA takes the names declared in an ``every`` body as the body's own
        # variables everywhere in it, not as the rules they name.
        hidden = _every_declared(body)
        mapping: dict[str, str] = {}
        for name in sorted(names | declared | hidden):
            if name in declared:
                mapping[name] = self.fresh(name)
                continue
            outer = parent.visible(name) if parent else None
            if outer is not None:
                mapping[name] = outer
            elif (name in self.rule_names or name in self.imports) and name not in hidden:
                continue  # a global: resolved as a ref
            else:
                mapping[name] = self.fresh(name)
        return _Scope(parent, mapping)

    def body(self, body: ast.Body, scope: _Scope) -> ast.Body:
        if self.no_locals:  # (a rule's body with no declaration: nothing to check or hide)
            out = []
            same = True
            for e in body:
                if type(e.statement) is Assign:
                    raise _HasLocals  # (before its checks: the rule is resolved again with its scope)
                resolved = self.expr(e, scope)
                if resolved is not e:
                    same = False
                out.append(resolved)
            return body if same else tuple(out)
        # The variables each `:=` declares (None for other expressions).
        declares = [_assigned_names(e.statement.lhs) if type(e.statement) is Assign else None for e in body]
        pending: set[str] = set()
        for lhs_vars in declares:
            if lhs_vars is not None:
                pending |= lhs_vars
        scope.pending = pending
        assigned: set[str] = set()
        out = []
        same = True  # every expression resolved to itself
        for e, lhs_vars in zip(body, declares):
            if lhs_vars is not None and e.negated:
                raise RegoCompileError("cannot assign vars inside negated expression", e.location)
            if lhs_vars is not None:
                for v in lhs_vars:
                    if v.startswith("$"):
                        continue
                    if v in assigned:
                        raise RegoCompileError(f"var {v} assigned above", e.location)
                    assigned.add(v)
            resolved = self.expr(e, scope)
            if resolved is not e:
                same = False
            out.append(resolved)
            if lhs_vars is not None:
                pending -= lhs_vars
        return body if same else tuple(out)

    def expr(self, e: ast.Expr, scope: _Scope) -> ast.Expr:
        s = e.statement
        stmt: ast.Statement
        if type(s) is Call:  # (the most frequent: ``x == y``, ``f(x)``)
            stmt = self.term(s, scope)
        elif type(s) is Assign:
            stmt = Assign(self.term(s.lhs, scope), self.term(s.rhs, scope), s.location)
        elif type(s) is Unify:
            stmt = Unify(self.term(s.lhs, scope), self.term(s.rhs, scope), s.location)
        elif self.no_locals and (type(s) is SomeVars or type(s) is SomeIn or type(s) is Every):
            raise _HasLocals  # (they declare variables)
        elif type(s) is SomeVars:
            stmt = SomeVars(tuple([self.var(v, scope) for v in s.vars]), s.location)
        elif type(s) is SomeIn:
            key = self.term(s.key, scope) if s.key is not None else None
            stmt = SomeIn(key, self.term(s.value, scope), self.term(s.collection, scope), s.location)
        elif type(s) is Every:
            self.nested += 1
            declared = {s.value.name} | ({s.key.name} if s.key else set())
            inner = self.make_scope(scope, [], s.body, declared)
            key_var = self.var(s.key, inner) if s.key else None
            stmt = Every(key_var, self.var(s.value, inner), self.term(s.domain, scope), self.body(s.body, inner), s.location)
        else:
            stmt = self.term(s, scope)  # type: ignore[arg-type]
        if not e.with_mods:
            return e if stmt is s else new_expr(stmt, e.negated, (), e.location)
        withs = tuple([self.with_mod(w, scope) for w in e.with_mods])
        return new_expr(stmt, e.negated, withs, e.location)

    def with_mod(self, w: ast.With, scope: _Scope) -> ast.With:
        target = w.target
        head = target.head
        if isinstance(head, ast.Var) and head.name not in ROOTS:
            # A rule or function named relative to the package, or through an
            # import: the target becomes absolute, its path terms kept as they
            # are (a key may hold a dot: ``data["a.b"].x``). Other names are
            # builtins.
            base = self.global_ref(head.name, target.location)
            if base is not None:
                target = ast.Ref(base.head, base.path + target.path, target.location)
        if isinstance(target.head, ast.Var) and target.head.name == "data" and not any(term_vars(p, set()) for p in target.path):
            # OPA's graph of rule dependencies counts every ref of a rule, the
            # targets of its ``with`` modifiers too (a rule replacing its own
            # package is recursive). A target with a variable is OPA's unsafe
            # variable error, a stage before.
            self.data_refs.append(target)
        builtin_name = self.builtin_ref(w.value)
        if builtin_name is not None and scope.lookup(builtin_name.split(".")[0]) is None:
            return ast.With(target, FuncRef(builtin_name, w.value.location), w.location)  # type: ignore[arg-type]
        return ast.With(target, self.term(w.value, scope), w.location)

    def builtin_ref(self, t: ast.Term) -> str | None:
        """The builtin a ``with`` value names (``count``, ``object.get``), if it names one."""
        parts: list[str] = []
        if isinstance(t, ast.Var):
            parts = [t.name]
        elif isinstance(t, ast.Ref) and isinstance(t.head, ast.Var):
            parts = [t.head.name]
            for p in t.path:
                if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
                    return None
                parts.append(p.value)
        else:
            return None
        if parts[0] in self.rule_names or parts[0] in self.imports or parts[0] in ROOTS:
            return None
        name = ".".join(parts)
        return name if lookup_builtin(name) is not None else None

    def var(self, v: ast.Var, scope: _Scope) -> ast.Var:
        unique = scope.lookup(v.name)
        return new_var(unique if unique is not None else v.name, v.location)

    def term(self, t: ast.Term, scope: _Scope) -> ast.Term:
        # Dispatch on the exact class, most frequent first: this runs for every term.
        if type(t) is Scalar:
            return t
        if type(t) is Var:
            name = t.name
            if name in ROOTS:
                if not self.roots_declared:
                    return t
                local = scope.lookup(name)  # (a Rego v0 `input := ...` above)
                return t if local is None else new_var(local, t.location)
            unique = scope.lookup(name)
            if unique is not None:
                return new_var(unique, t.location)
            ref = self.global_ref(name, t.location)
            if ref is not None:
                if type(ref.head) is Var and ref.head.name == "data":
                    self.data_refs.append(ref)
                return ref
            if self.no_locals:
                raise _HasLocals  # (a local variable: its scope would have named it)
            return t
        # Composite terms whose parts all resolve to themselves are kept as
        # they are (nodes are immutable): most refs (input.a.b) and many
        # calls need no new node.
        if type(t) is Ref:
            head = t.head
            if type(head) is not Var:
                head = self.term(head, scope)
            elif head.name in ROOTS:  # (input.x, data.x: the head stays, unless a local hides it)
                if not self.roots_declared:
                    for p in t.path:
                        if type(p) is not Scalar:
                            break
                    else:  # (the commonest ref, input.a.b: kept as it is)
                        if head.name == "data":
                            self.data_refs.append(t)
                        return t
                local = scope.lookup(head.name) if self.roots_declared else None
                if local is not None:
                    head = new_var(local, head.location)
                    if not t.path:
                        return head
            else:
                recorded = len(self.data_refs)
                head = self.term(head, scope)
                # (``me.q`` with ``import data.x as me``: the whole ref is recorded
                # below, not its head data.x, which would read every rule under it)
                del self.data_refs[recorded:]
            path = t.path
            for p in path:
                if type(p) is not Scalar:  # (most paths are constant keys: no call then)
                    path = self.terms(path, scope)
                    break
            if type(head) is Ref:
                ref = new_ref(head.head, head.path + path, t.location)
            elif head is t.head and path is t.path:
                ref = t
            else:
                ref = new_ref(head, path, t.location)
            if type(ref.head) is Var and ref.head.name == "data":
                self.data_refs.append(ref)
            return ref
        if type(t) is Call:
            op = t.op
            dot = op.find(".")
            first = op if dot < 0 else op[:dot]
            if "[" in first:  # (a[1].x(v): a function with other constant keys)
                first = first[: first.find("[")]
                if (first in self.rule_names or first in self.imports) and t.op_ref is not None:
                    op = self.resolve_keyed_op(first, t.op_ref)
            elif first in self.rule_names or first in self.imports:  # (resolve_op's own test first: most calls are of builtins)
                op = self.resolve_op(op, t.location)
            if op.startswith("rego."):
                self.nested += 1
            args = self.terms(t.args, scope)
            call = t if op is t.op and args is t.args else new_call(op, args, t.location, t.op_ref)
            self.calls.append(call)
            return call
        if type(t) is Array:
            items = self.terms(t.items, scope)
            return t if items is t.items else Array(items, t.location)
        if type(t) is SetTerm:
            items = self.terms(t.items, scope)
            return t if items is t.items else SetTerm(items, t.location)
        if type(t) is Object:
            pairs = tuple([(self.term(k, scope), self.term(v, scope)) for k, v in t.items])
            if all(k is old_k and v is old_v for (k, v), (old_k, old_v) in zip(pairs, t.items)):
                return t
            return Object(pairs, t.location)
        if type(t) is TemplateString:
            parts = tuple([p if isinstance(p, str) else self.term(p, scope) for p in t.parts])
            return TemplateString(parts, t.raw, t.location)
        if self.no_locals and (type(t) is ArrayCompr or type(t) is SetCompr or type(t) is ObjectCompr):
            raise _HasLocals  # (their scopes name their variables)
        if type(t) is ArrayCompr or type(t) is SetCompr:
            self.nested += 1
            inner = self.make_scope(scope, [t.term], t.body, set())
            new_body = self.body(t.body, inner)
            return type(t)(self.term(t.term, inner), new_body, t.location)
        if type(t) is ObjectCompr:
            self.nested += 1
            inner = self.make_scope(scope, [t.key, t.value], t.body, set())
            new_body = self.body(t.body, inner)
            return ObjectCompr(self.term(t.key, inner), self.term(t.value, inner), new_body, t.location)
        raise RegoCompileError(f"unexpected term {type(t).__name__}", getattr(t, "location", None))

    def terms(self, terms: tuple[ast.Term, ...], scope: _Scope) -> tuple[ast.Term, ...]:
        """``terms`` resolved: the same tuple when every term resolves to itself."""
        changed: list[ast.Term] | None = None
        for i, t in enumerate(terms):
            if type(t) is Scalar:
                continue
            resolved = self.term(t, scope)
            if resolved is not t:
                if changed is None:
                    changed = list(terms)
                changed[i] = resolved
        return terms if changed is None else tuple(changed)

    # -- rules ----------------------------------------------------------------

    def rule(self, rule: ast.Rule, args_scope: _Scope | None = None) -> ast.Rule:
        head = rule.head
        nested = self.nested
        resolved: tuple[ast.RuleHead, ast.Body] | None = None
        scope: _Scope | None = None
        if args_scope is None and head.args is None:
            # Most rules have no local variable (``allow if input.x == 1``):
            # resolved first as if so, in an empty scope, which spares the
            # walk for their variables that making their scope would take.
            # The first local met (or a declaration, a closure) ends that,
            # undone, and the rule is resolved with its scope.
            calls, refs = len(self.calls), len(self.data_refs)
            self.no_locals = True
            try:
                resolved = self.branch(rule, _Scope(None, {}))
            except _HasLocals:
                del self.calls[calls:], self.data_refs[refs:]
                self.nested = nested
            finally:
                self.no_locals = False
        if resolved is None:
            head_terms: list[ast.Term] = [p for p in head.ref.path]
            for x in (head.key, head.value):
                if x is not None:
                    head_terms.append(x)
            declared: set[str] = set()
            if args_scope is None and head.args is not None:
                for a in head.args:
                    term_vars(a, declared)
            if args_scope is None:
                arg_terms = list(head.args or ())
                scope = self.make_scope(None, arg_terms + head_terms, rule.body, declared)
            else:
                scope = self.make_scope(args_scope, head_terms, rule.body, set())
            new_head, body = self.branch(rule, scope)
            no_locals = not scope.names
        else:
            (new_head, body), no_locals = resolved, True
        var_free = no_locals and self.nested == nested
        if var_free:
            self.var_free_bodies[id(body)] = body
        else_ = self.rule(rule.else_, scope if head.args is not None else None) if rule.else_ is not None else None
        if new_head is head and body is rule.body and else_ is rule.else_ and rule.module_file == self.module.file:
            resolved_rule = rule  # (nothing to resolve: rules are immutable)
        else:
            resolved_rule = new_rule(new_head, body, rule.default, else_, rule.location, self.module.file)
        if var_free:  # (the rule as parsed and as resolved: a body, the empty one above all, may be another rule's too)
            self.var_free_rules[id(rule)] = rule
            self.var_free_rules[id(resolved_rule)] = resolved_rule
        return resolved_rule

    def branch(self, rule: ast.Rule, scope: _Scope) -> tuple[ast.RuleHead, ast.Body]:
        """The head and body of one branch of ``rule``, resolved in ``scope``."""
        head = rule.head
        args = self.terms(head.args, scope) if head.args is not None else None
        ref_path = self.terms(head.ref.path, scope)
        key = self.term(head.key, scope) if head.key is not None else None
        value = self.term(head.value, scope) if head.value is not None else None
        new_head = head
        if not (ref_path is head.ref.path and key is head.key and value is head.value and args is head.args):
            ref = head.ref if ref_path is head.ref.path else Ref(head.ref.head, ref_path, head.ref.location)
            new_head = new_rule_head(ref, value, key, args, head.assign, head.location)
        if _true_body_dropped(new_head, rule.body):
            # Resolved only for its print calls: OPA checks calls of print used
            # as values before it drops the body, everything else after.
            calls, refs = len(self.calls), len(self.data_refs)
            self.body(rule.body, scope)
            self.calls[calls:] = [c for c in self.calls[calls:] if c.op == "print"]
            del self.data_refs[refs:]
            body: ast.Body = ()
        else:
            body = self.body(rule.body, scope)
        return new_head, body


def _true_body_dropped(head: ast.RuleHead, body: ast.Body) -> bool:
    """Whether OPA's compiler replaces ``body`` by the expressions it moves
    out of ``head``: a body of one expression that is the term ``true``
    (negated or not, with modifiers or not) gives way to them, where the
    head's key, value or ref holds a ref, call, comprehension or template
    string (``r := f(1) if { not true }`` is ``f(1)`` in OPA v1.20.2)."""
    if len(body) != 1:
        return False
    stmt = body[0].statement
    if not (type(stmt) is Scalar and stmt.value is True):
        return False
    terms: list[ast.Term] = list(head.ref.path)
    terms.extend([x for x in (head.key, head.value) if x is not None])
    while terms:
        t = terms.pop()
        if isinstance(t, (Ref, Call, ArrayCompr, SetCompr, ObjectCompr, TemplateString)):
            return True
        if isinstance(t, (Array, SetTerm)):
            terms.extend(t.items)
        elif isinstance(t, Object):
            for k, v in t.items:
                terms.extend((k, v))
    return False


def _assigned_names(lhs: ast.Term) -> set[str]:
    """The names ``lhs := ...`` declares: its variables, or a root document
    assigned alone (``input := {...}``, allowed in Rego v0, declares a local
    ``input`` that the rest of the body reads instead of the document)."""
    names = term_vars(lhs, set())
    if type(lhs) is ast.Ref and not lhs.path and type(lhs.head) is ast.Var and lhs.head.name in ROOTS:
        names.add(lhs.head.name)
    return names


def _every_declared(body: ast.Body) -> set[str]:
    """The names declared in the ``every`` bodies of ``body`` (nested ones too,
    not those in comprehensions)."""
    out: set[str] = set()
    for e in body:
        if type(e.statement) is Every:
            for inner in e.statement.body:
                _add_declared(inner.statement, out)
            out |= _every_declared(e.statement.body)
    return out


def _add_declared(stmt: ast.Statement, declared: set[str]) -> None:
    """Adds the variables ``stmt`` declares (``:=``, ``some``) to ``declared``."""
    if type(stmt) is Assign:
        declared |= _assigned_names(stmt.lhs)
    elif type(stmt) is SomeVars:
        declared.update([v.name for v in stmt.vars])
    elif type(stmt) is SomeIn:
        term_vars(stmt.value, declared)
        if stmt.key is not None:
            term_vars(stmt.key, declared)


