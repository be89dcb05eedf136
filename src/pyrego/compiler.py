"""From parsed modules to a checked rule tree.

The compiler

1. merges every module into one tree of documents under ``data``
   (:class:`RuleNode`), grouping the rules that define each document;
2. resolves names: a rule name, an import alias or a package-relative
   function becomes an absolute ``data.`` ref or call; every local variable
   gets a unique name (``x#3``) so nested scopes never clash in generated code;
3. checks what OPA checks statically: conflicting rule kinds, arity of calls,
   unknown functions, recursion, ``:=`` re-declaration.

Variable safety and expression ordering are done per body by
:mod:`pyrego.safety` during code generation, where the bound variables are known.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from . import ast
from .ast import (
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
from .builtins.registry import Builtin
from .builtins.registry import lookup as lookup_builtin
from .errors import RegoCompileError, RegoError, RegoRecursionError, RegoTypeError
from .safety import ROOTS, stmt_vars, term_vars

COMPLETE, PARTIAL_SET, PARTIAL_OBJECT, FUNCTION = "complete", "set", "object", "function"


@dataclass(frozen=True)
class FuncRef:
    """A builtin named as a value, only valid as a ``with`` replacement (``with f as count``)."""

    name: str
    location: ast.Location = ast.NO_LOCATION


@dataclass(eq=False)
class RuleNode:
    """A document under ``data`` and the rules that define it."""

    path: tuple[str, ...]
    id: int
    kind: str | None = None
    rules: list[ast.Rule] = field(default_factory=list)
    default: ast.Rule | None = None
    children: dict[str, RuleNode] = field(default_factory=dict)
    arity: int | None = None
    # A module's package: its document exists (an empty object at least)
    # even when no rule defines anything in it, as in OPA.
    is_package: bool = False

    @property
    def name(self) -> str:
        return ast_path_text(self.path)

    def walk(self) -> list[RuleNode]:
        out = [self]
        for c in self.children.values():
            out.extend(c.walk())
        return out

    def has_rules(self) -> bool:
        return bool(self.rules) or self.default is not None


def ast_path_text(path: tuple[str, ...]) -> str:
    text = "data"
    for p in path:
        text += "." + p if p.isidentifier() else f'["{p}"]'
    return text


def data_ref(path: tuple[str, ...], location: ast.Location) -> ast.Ref:
    return Ref(Var("data", location), tuple([Scalar(p, location) for p in path]), location)


def package_path(module: ast.Module) -> tuple[str, ...]:
    parts = []
    for p in module.package.path:
        if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
            raise RegoCompileError("package path must be strings", module.package.location)
        parts.append(p.value)
    return tuple(parts)


# ---------------------------------------------------------------- name resolution


class _Scope:
    """Maps a body's Rego variable names to unique names."""

    def __init__(self, parent: _Scope | None, names: dict[str, str]) -> None:
        self.parent = parent
        self.names = names
        # Names declared with `:=` further down this body: closures written
        # before the declaration do not see them (OPA's local-var rewriting).
        self.pending: set[str] = set()

    def lookup(self, name: str) -> str | None:
        if name in self.names:
            return self.names[name]
        return self.parent.visible(name) if self.parent is not None else None

    def visible(self, name: str) -> str | None:
        """The name as seen from a nested closure (skips pending ``:=`` declarations)."""
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names and name not in scope.pending:
                return scope.names[name]
            scope = scope.parent
        return None


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

    # -- scopes --------------------------------------------------------------

    def make_scope(self, parent: _Scope | None, terms: list[ast.Term], body: ast.Body, declared: set[str]) -> _Scope:
        """A scope for a body: declared names are new; others captured or new."""
        names: set[str] = set()
        for t in terms:
            term_vars(t, names)
        for e in body:
            stmt_vars(e.statement, names)
            for w in e.with_mods:
                if self.builtin_ref(w.value) is None:
                    term_vars(w.value, names)
            _add_declared(e.statement, declared)
        mapping: dict[str, str] = {}
        for name in sorted(names | declared):
            if name in declared:
                mapping[name] = self.fresh(name)
                continue
            outer = parent.visible(name) if parent else None
            if outer is not None:
                mapping[name] = outer
            elif name in self.rule_names or name in self.imports:
                continue  # a global: resolved as a ref
            else:
                mapping[name] = self.fresh(name)
        return _Scope(parent, mapping)

    def body(self, body: ast.Body, scope: _Scope) -> ast.Body:
        # The variables each `:=` declares (None for other expressions).
        declares = [term_vars(e.statement.lhs, set()) if type(e.statement) is Assign else None for e in body]
        pending: set[str] = set()
        for lhs_vars in declares:
            if lhs_vars is not None:
                pending |= lhs_vars
        scope.pending = pending
        assigned: set[str] = set()
        out = []
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
            out.append(self.expr(e, scope))
            if lhs_vars is not None:
                pending -= lhs_vars
        return tuple(out)

    def expr(self, e: ast.Expr, scope: _Scope) -> ast.Expr:
        s = e.statement
        stmt: ast.Statement
        if type(s) is Assign:
            stmt = Assign(self.term(s.lhs, scope), self.term(s.rhs, scope), s.location)
        elif type(s) is Unify:
            stmt = Unify(self.term(s.lhs, scope), self.term(s.rhs, scope), s.location)
        elif type(s) is SomeVars:
            stmt = SomeVars(tuple([self.var(v, scope) for v in s.vars]), s.location)
        elif type(s) is SomeIn:
            key = self.term(s.key, scope) if s.key is not None else None
            stmt = SomeIn(key, self.term(s.value, scope), self.term(s.collection, scope), s.location)
        elif type(s) is Every:
            declared = {s.value.name} | ({s.key.name} if s.key else set())
            inner = self.make_scope(scope, [], s.body, declared)
            key_var = self.var(s.key, inner) if s.key else None
            stmt = Every(key_var, self.var(s.value, inner), self.term(s.domain, scope), self.body(s.body, inner), s.location)
        else:
            stmt = self.term(s, scope)  # type: ignore[arg-type]
        withs = tuple([self.with_mod(w, scope) for w in e.with_mods]) if e.with_mods else ()
        return ast.Expr(stmt, e.negated, withs, e.location)

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
        return Var(unique if unique is not None else v.name, v.location)

    def term(self, t: ast.Term, scope: _Scope) -> ast.Term:
        # Dispatch on the exact class, most frequent first: this runs for every term.
        if type(t) is Scalar:
            return t
        if type(t) is Var:
            name = t.name
            if name in ROOTS:
                return t
            unique = scope.lookup(name)
            if unique is not None:
                return Var(unique, t.location)
            ref = self.global_ref(name, t.location)
            if ref is not None:
                if type(ref.head) is Var and ref.head.name == "data":
                    self.data_refs.append(ref)
                return ref
            return t
        # Composite terms whose parts all resolve to themselves are kept as
        # they are (nodes are immutable): most refs (input.a.b) and many
        # calls need no new node.
        if type(t) is Ref:
            head = self.term(t.head, scope)
            path = self.terms(t.path, scope)
            if type(head) is Ref:
                ref = Ref(head.head, head.path + path, t.location)
            elif head is t.head and path is t.path:
                ref = t
            else:
                ref = Ref(head, path, t.location)
            if type(ref.head) is Var and ref.head.name == "data":
                self.data_refs.append(ref)
            return ref
        if type(t) is Call:
            op = self.resolve_op(t.op, t.location)
            args = self.terms(t.args, scope)
            call = t if op is t.op and args is t.args else Call(op, args, t.location, t.op_ref)
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
        if type(t) is ArrayCompr or type(t) is SetCompr:
            inner = self.make_scope(scope, [t.term], t.body, set())
            new_body = self.body(t.body, inner)
            return type(t)(self.term(t.term, inner), new_body, t.location)
        if type(t) is ObjectCompr:
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
        args = self.terms(head.args, scope) if head.args is not None else None
        ref_path = self.terms(head.ref.path, scope)
        key = self.term(head.key, scope) if head.key is not None else None
        value = self.term(head.value, scope) if head.value is not None else None
        new_head = head
        if not (ref_path is head.ref.path and key is head.key and value is head.value and args is head.args):
            ref = head.ref if ref_path is head.ref.path else Ref(head.ref.head, ref_path, head.ref.location)
            new_head = ast.RuleHead(ref, value, key, args, head.assign, head.location)
        body = self.body(rule.body, scope)
        else_ = self.rule(rule.else_, scope if head.args is not None else None) if rule.else_ is not None else None
        return ast.Rule(new_head, body, rule.default, else_, rule.location, self.module.file)


def _add_declared(stmt: ast.Statement, declared: set[str]) -> None:
    """Adds the variables ``stmt`` declares (``:=``, ``some``) to ``declared``."""
    if type(stmt) is Assign:
        term_vars(stmt.lhs, declared)
    elif type(stmt) is SomeVars:
        declared.update([v.name for v in stmt.vars])
    elif type(stmt) is SomeIn:
        term_vars(stmt.value, declared)
        if stmt.key is not None:
            term_vars(stmt.key, declared)


# ---------------------------------------------------------------- the tree


@dataclass
class Metadata:
    """``# METADATA`` annotations by what they apply to (for ``rego.metadata.*``)."""

    # rule location -> its rule-scope annotation (the first block above it)
    rules: dict[ast.Location, ast.Annotation] = field(default_factory=dict)
    # rule location -> later rule-scope blocks above the same rule (in the chain only)
    more_rules: dict[ast.Location, list[ast.Annotation]] = field(default_factory=dict)
    # rule location -> the rule's path (package path + rule ref)
    rule_paths: dict[ast.Location, tuple[str, ...]] = field(default_factory=dict)
    # document path -> document-scope annotations
    documents: dict[tuple[str, ...], list[ast.Annotation]] = field(default_factory=dict)
    # package path -> package / subpackages annotations
    packages: dict[tuple[str, ...], list[ast.Annotation]] = field(default_factory=dict)
    subpackages: dict[tuple[str, ...], list[ast.Annotation]] = field(default_factory=dict)
    # rule location -> its package path
    rule_packages: dict[ast.Location, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class CompiledTree:
    """The checked rule tree, ready for code generation."""

    root: RuleNode
    nodes: dict[tuple[str, ...], RuleNode]
    functions: dict[str, RuleNode]
    metadata: Metadata = field(default_factory=Metadata)
    # Builtins the embedding program added (Engine.add_extension), by name.
    extensions: dict[str, Builtin] = field(default_factory=dict)
    # The builtins a capabilities file allows (Engine.set_capabilities); None: all.
    allowed_builtins: frozenset[str] | None = None
    # The rules' types, when the program was type-checked (pyrego.typecheck), for queries.
    types: Any = None
    # Compiled in OPA's strict mode (queries are checked as strictly).
    strict: bool = False
    # Some rule calls a builtin OPA deprecates (checked last: compile_checks.check_deprecated_builtins).
    calls_deprecated: bool = False

    def builtin(self, op: str) -> Builtin | None:
        """The builtin (or extension) called ``op``."""
        ext = self.extensions.get(op)
        if ext is not None:
            return ext
        if self.allowed_builtins is not None and op not in self.allowed_builtins:
            return None
        return lookup_builtin(op)

    def arity(self, op: str) -> int | None:
        node = self.functions.get(op)
        if node is not None:
            return node.arity
        b = self.builtin(op)
        return b.arity if b is not None else None


def compile_modules(
    modules: list[ast.Module],
    extensions: dict[str, Builtin] | None = None,
    allowed_builtins: frozenset[str] | None = None,
    type_check: bool = False,
    strict: bool = False,
) -> CompiledTree:
    """Merge, resolve and check ``modules`` (calling only ``allowed_builtins``, when given;
    with ``type_check``, OPA's type checker runs last: :mod:`pyrego.typecheck`;
    ``strict``: OPA's strict mode, :mod:`pyrego.compile_checks`)."""
    from .compile_checks import DEPRECATED_BUILTINS, check_modules

    hidden_calls = check_modules(modules, strict=strict)  # OPA's stages before its name resolution
    counter = itertools.count()
    ids = itertools.count()
    root = RuleNode((), next(ids))
    nodes: dict[tuple[str, ...], RuleNode] = {(): root}

    def node_at(path: tuple[str, ...]) -> RuleNode:
        # A loop, not recursion: a recursive closure is a reference cycle.
        node = nodes.get(path)
        if node is None:
            parent = root
            for i in range(1, len(path) + 1):
                child = nodes.get(path[:i])
                if child is None:
                    child = nodes[path[:i]] = parent.children[path[i - 1]] = RuleNode(path[:i], next(ids))
                parent = child
            node = parent
        return node

    metadata = Metadata()
    # Node id -> the calls and data refs in its rules, as the resolver found them.
    uses: dict[int, _Uses] = {}
    packages = [package_path(module) for module in modules]
    package_rules: dict[tuple[str, ...], set[str]] = {}
    for module, pkg in zip(modules, packages):
        names = package_rules.setdefault(pkg, set())
        names.update([r.head.ref.head.name for r in module.rules if isinstance(r.head.ref.head, ast.Var)])
    conflict: RegoTypeError | None = None  # the first; OPA reports them all (below)
    for module, pkg in zip(modules, packages):
        resolver = _Resolver(module, pkg, counter, package_rules[pkg])
        node_at(pkg).is_package = True
        for raw in module.rules:
            resolver.calls, resolver.data_refs = [], []
            rule = resolver.rule(raw)
            try:
                path = _add_rule(node_at, pkg, rule)
            except RegoTypeError as err:
                conflict = conflict or err
                continue
            metadata.rule_paths[rule.location] = path
            metadata.rule_packages[rule.location] = pkg
            node_uses = uses.get(nodes[path].id)
            if node_uses is None:
                uses[nodes[path].id] = _Uses(resolver.calls, resolver.data_refs)
            else:
                node_uses.calls += resolver.calls
                node_uses.data_refs += resolver.data_refs
        if module.annotations:
            _collect_metadata(module, pkg, metadata)
    if conflict is not None:
        from .rule_checks import conflict_errors, raise_all

        raise_all(conflict_errors(modules, packages) or [conflict])

    functions = {".".join(("data",) + n.path): n for n in nodes.values() if n.kind == FUNCTION}
    tree = CompiledTree(root, nodes, functions, metadata, dict(extensions or {}), allowed_builtins)
    tree.strict = strict
    tree.calls_deprecated = any(c.op in DEPRECATED_BUILTINS for u in uses.values() for c in u.calls)
    from .rule_checks import extent_errors, head_safety_errors, raise_all

    raise_all(extent_errors(tree, modules, packages), sort=False)
    _check_calls(tree, [call for u in uses.values() for call in u.calls])
    _raise_first(hidden_calls)
    raise_all(head_safety_errors(modules, packages))
    try:
        _check_recursion(tree, uses)
    except RegoRecursionError as first:
        from .rule_checks import raise_all, recursion_errors

        raise_all(recursion_errors(tree, uses) or [first])
    if type_check:
        from .typecheck import check_program

        tree.types = check_program(tree, modules, uses)
    return tree


@dataclass
class _Uses:
    """The calls and the refs rooted at ``data`` in the rules of one node."""

    calls: list[ast.Call]
    data_refs: list[ast.Ref]


def _ground_prefix(path: tuple[ast.Term, ...]) -> tuple[tuple[str, ...], tuple[ast.Term, ...]]:
    ground: list[str] = []
    for i, p in enumerate(path):
        if isinstance(p, ast.Scalar) and isinstance(p.value, str):
            ground.append(p.value)
        else:
            return tuple(ground), path[i:]
    return tuple(ground), ()


def rule_suffix(pkg_len: int, rule: ast.Rule) -> tuple[ast.Term, ...]:
    """The non-ground part of a rule's head ref (the keys of a partial object)."""
    return _ground_prefix(rule.head.ref.path)[1]


def _collect_metadata(module: ast.Module, pkg: tuple[str, ...], metadata: Metadata) -> None:
    rules = sorted(module.rules, key=lambda r: (r.location.row, r.location.col))
    for a in module.annotations:
        if a.scope in ("package", "subpackages"):
            target = metadata.packages if a.scope == "package" else metadata.subpackages
            target.setdefault(pkg, []).append(a)
            continue
        rule = next((r for r in rules if r.location.row > a.location.row), None)
        if rule is None:
            continue
        if a.scope == "rule":
            if rule.location in metadata.rules:  # of two blocks above a rule, rule() is the first
                metadata.more_rules.setdefault(rule.location, []).append(a)
            else:
                metadata.rules[rule.location] = a
        else:
            ground, _ = _ground_prefix(rule.head.ref.path)
            name = rule.head.ref.head.name if isinstance(rule.head.ref.head, ast.Var) else ""
            metadata.documents.setdefault(pkg + (name,) + ground, []).append(a)


def _add_rule(node_at: object, pkg: tuple[str, ...], rule: ast.Rule) -> tuple[str, ...]:
    head = rule.head
    head_name = head.ref.head.name if isinstance(head.ref.head, ast.Var) else ""
    ground, suffix = _ground_prefix(head.ref.path)
    path = pkg + (head_name,) + ground
    node: RuleNode = node_at(path)  # type: ignore[operator]
    if head.args is not None:
        kind = FUNCTION
    elif head.key is not None and head.value is None and not suffix:
        kind = PARTIAL_SET
    elif suffix:
        kind = PARTIAL_OBJECT
    else:
        kind = COMPLETE
    if node.kind is not None and node.kind != kind:
        raise RegoTypeError(f"conflicting rules {node.name} found", rule.location)
    if kind == FUNCTION:
        arity = len(head.args or ())
        if node.arity is not None and node.arity != arity:
            raise RegoTypeError(f"conflicting rules {node.name} found", rule.location)
        node.arity = arity
    node.kind = kind
    if rule.default:
        if node.default is not None:
            raise RegoTypeError(f"multiple default rules {node.name} found", rule.location)
        node.default = rule
    else:
        node.rules.append(rule)
    return path


# ---------------------------------------------------------------- checks


def _walk_terms_body(body: ast.Body, visit: object) -> None:
    for e in body:
        s = e.statement
        terms: list[ast.Term] = []
        if isinstance(s, (ast.Assign, ast.Unify)):
            terms = [s.lhs, s.rhs]
        elif isinstance(s, ast.SomeIn):
            terms = [x for x in (s.key, s.value, s.collection) if x is not None]
        elif isinstance(s, ast.Every):
            terms = [s.domain]
            _walk_terms_body(s.body, visit)
        elif isinstance(s, ast.SomeVars):
            terms = []
        else:
            terms = [s]
        for w in e.with_mods:
            terms.append(w.value)
        for t in terms:
            _walk_term(t, visit)


def _walk_term(t: ast.Term | None, visit: object) -> None:
    if t is None:
        return
    visit(t)  # type: ignore[operator]
    if isinstance(t, ast.Ref):
        _walk_term(t.head, visit)
        for p in t.path:
            _walk_term(p, visit)
    elif isinstance(t, (ast.Array, ast.SetTerm)):
        for x in t.items:
            _walk_term(x, visit)
    elif isinstance(t, ast.Object):
        for k, v in t.items:
            _walk_term(k, visit)
            _walk_term(v, visit)
    elif isinstance(t, ast.Call):
        for a in t.args:
            _walk_term(a, visit)
    elif isinstance(t, ast.TemplateString):
        for part in t.parts:
            if not isinstance(part, str):
                _walk_term(part, visit)
    elif isinstance(t, (ast.ArrayCompr, ast.SetCompr)):
        _walk_term(t.term, visit)
        _walk_terms_body(t.body, visit)
    elif isinstance(t, ast.ObjectCompr):
        _walk_term(t.key, visit)
        _walk_term(t.value, visit)
        _walk_terms_body(t.body, visit)


def rule_terms(rule: ast.Rule) -> list[ast.Term]:
    head = rule.head
    out: list[ast.Term] = list(head.ref.path)
    for x in (head.key, head.value):
        if x is not None:
            out.append(x)
    out.extend(head.args or ())
    return out


def iter_rule_chain(rule: ast.Rule) -> list[ast.Rule]:
    out = []
    r: ast.Rule | None = rule
    while r is not None:
        out.append(r)
        r = r.else_
    return out


# Calls the code generator handles itself rather than through the registry.
SPECIAL_CALLS = {"print": None, "internal.print": None}


def check_call(tree: CompiledTree, call: ast.Call, nested: bool = False) -> bool:
    """Raises for an unknown function or a wrong number of arguments; a call that is
    an expression of its own may pass one more (its output), a ``nested`` one not.
    Returns whether the call passes that output argument."""
    if call.op in SPECIAL_CALLS:
        return False
    arity = tree.arity(call.op)
    if arity is None:
        if call.op.startswith("data.") and _is_rule_path(tree, call.op):
            return False
        raise RegoTypeError(f"undefined function {call.op}", call.location)
    n = len(call.args)
    if n != arity and (nested or n != arity + 1):
        from .typecheck.arity import arity_error  # OPA's messages

        raise arity_error(call, arity, nested, call.op not in tree.functions, tree)
    return n != arity


def _is_rule_path(tree: CompiledTree, op: str) -> bool:
    return tuple(op.split(".")[1:]) in tree.nodes


def _check_calls(tree: CompiledTree, calls: list[ast.Call]) -> None:
    """Checks every call's function and arity (``calls`` in any order)."""
    try:
        outputs = False
        for call in calls:
            outputs = check_call(tree, call) or outputs
        if outputs:
            _raise_first_call_error(tree)  # nested calls may not pass one
    except RegoTypeError:
        # Report the error OPA reports: the first in rule tree order.
        _raise_first_call_error(tree)
        raise


def _raise_first_call_error(tree: CompiledTree) -> None:
    """Walks the rules as OPA orders them, raising the first bad call's error
    (with every one, up to OPA's ten, in its ``errors``)."""
    from .typecheck.arity import calls_in_rule, raise_all

    errors: list[RegoTypeError] = []
    for node in tree.nodes.values():
        for rule in node.rules + ([node.default] if node.default else []):
            for call, nested in calls_in_rule(rule):
                try:
                    check_call(tree, call, nested)
                except RegoTypeError as err:
                    errors.append(err)
    raise_all(errors)


def _raise_first(errors: list[RegoError]) -> None:
    """Raise the first of ``errors`` with all of them in its ``errors`` (OPA reports all)."""
    if errors:
        errors[0].errors = list(errors)  # type: ignore[attr-defined]
        raise errors[0]


def node_dependencies(tree: CompiledTree, uses: _Uses) -> set[int]:
    """Ids of the rule nodes that a node's rules read, given what they use."""
    deps: set[int] = set()
    functions = tree.functions
    for call in uses.calls:
        function = functions.get(call.op)
        if function is not None:
            deps.add(function.id)
    root = tree.root
    for ref in uses.data_refs:
        cur = root
        for p in ref.path:
            if type(p) is Scalar:
                cur = cur.children.get(p.value) if type(p.value) is str else None  # type: ignore[assignment]
                if cur is None:
                    break  # base data only: no rules below
                if cur.has_rules():
                    deps.add(cur.id)
                    break
            else:
                # A dynamic ref (``data[x]``) is not followed: which rules it
                # reads is only known at run time, as in OPA's recursion check.
                break
    return deps


def _check_recursion(tree: CompiledTree, uses: dict[int, _Uses]) -> None:
    by_id = {n.id: n for n in tree.nodes.values()}
    graph = {nid: node_dependencies(tree, node_uses) for nid, node_uses in uses.items()}
    state: dict[int, int] = {}
    for nid in sorted(graph):
        if state.get(nid) is None:
            _find_cycle(nid, graph, state, [], by_id)


def _find_cycle(start: int, graph: dict[int, set[int]], state: dict[int, int], stack: list[int], by_id: dict[int, RuleNode]) -> None:
    """Depth-first search from ``start``; raises on a rule that reaches itself.

    A loop with an explicit stack, not recursion: a chain of thousands of
    rules must not run out of Python's stack (and a module-level function,
    not a closure, so that nothing it holds waits for the cyclic collector)."""
    state[start] = 1
    stack.append(start)
    pending = [iter(sorted(graph.get(start, ())))]
    while pending:
        dep = next(pending[-1], None)
        if dep is None:
            pending.pop()
            state[stack.pop()] = 2
            continue
        if state.get(dep) == 1:
            cycle = stack[stack.index(dep) :] + [dep]
            names = " -> ".join(by_id[i].name for i in cycle)
            first = by_id[dep]
            loc = first.rules[0].location if first.rules else None
            raise RegoRecursionError(f"rule {first.name} is recursive: {names}", loc)
        if state.get(dep) is None:
            state[dep] = 1
            stack.append(dep)
            pending.append(iter(sorted(graph.get(dep, ()))))


def resolve_query(
    body: ast.Body, tree: CompiledTree, context: ast.Module | None = None
) -> tuple[ast.Body, dict[str, str]]:
    """Resolve a query's names; returns the body and {unique var name: user name}.

    ``context``: a module without rules whose package and imports the query
    is resolved in (``opa eval --package p --import data.q``): the rules of
    that package are visible by name, as from one of its modules."""
    from .compile_checks import check_query, check_query_deprecated

    hidden_calls = check_query(body, strict=tree.strict)  # declarations, as OPA's query compiler checks them first
    module = context if context is not None else ast.Module(ast.Ref(ast.Var("data"), ()), (), (), file="query")
    pkg = package_path(module)
    node = tree.nodes.get(pkg) if pkg else None
    resolver = _Resolver(module, pkg, itertools.count(), set(node.children) if node is not None else frozenset())
    scope = resolver.make_scope(None, [], body, set())
    resolved = resolver.body(body, scope)
    found: RegoTypeError | None = None
    outputs = False
    try:
        for call in resolver.calls:
            outputs = check_call(tree, call) or outputs
    except RegoTypeError as err:
        found = err
    if found is not None or outputs:
        from .typecheck.arity import calls_in_body, raise_all

        # Report the first bad call in the order OPA walks the query.
        errors: list[RegoTypeError] = []
        for call, nested in calls_in_body(resolved):
            try:
                check_call(tree, call, nested)
            except RegoTypeError as err:
                errors.append(err)
        raise_all(errors)
        if found is not None:
            raise found
    _raise_first(hidden_calls)
    check_query_deprecated(body, strict=tree.strict)
    names = {unique: name for name, unique in scope.names.items() if not name.startswith("$")}
    return resolved, names
