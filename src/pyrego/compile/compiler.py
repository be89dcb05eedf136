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
:mod:`pyrego.compile.safety` during code generation, where the bound variables are known.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Scalar,
)
from pyrego.builtins.registry import Builtin
from pyrego.builtins.registry import lookup as lookup_builtin
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    FuncRef,
    RuleNode,
    ast_path_text,
    data_ref,
    package_path,
)
from pyrego.compile.checks import DEPRECATED_BUILTINS, check_modules, check_query, check_query_deprecated
from pyrego.compile.resolver import _Resolver
from pyrego.compile.rule_checks import conflict_errors, extent_errors, head_safety_errors, raise_all, recursion_errors
from pyrego.errors import RegoError, RegoRecursionError, RegoTypeError

if TYPE_CHECKING:
    from pyrego.typecheck.schemas import SchemaSet

# The compiler's shapes, defined in compiler_base (which the resolver shares)
# and used by the rest of the package through this module.
__all__ = [
    "COMPLETE",
    "FUNCTION",
    "PARTIAL_OBJECT",
    "PARTIAL_SET",
    "CompiledTree",
    "FuncRef",
    "Metadata",
    "RuleNode",
    "ast_path_text",
    "compile_modules",
    "data_ref",
    "iter_rule_chain",
    "node_dependencies",
    "package_path",
    "resolve_query",
    "rule_suffix",
    "rule_terms",
]

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
        return find_builtin(op, self.extensions, self.allowed_builtins)

    def callee(self, op: str) -> tuple[RuleNode | None, Builtin | None]:
        """What a call of ``op`` calls: a function of the policies, else a builtin (or neither)."""
        node = self.functions.get(op)
        if node is not None:
            return node, None
        return None, find_builtin(op, self.extensions, self.allowed_builtins)

    def arity(self, op: str) -> int | None:
        node, b = self.callee(op)
        return node.arity if node is not None else b.arity if b is not None else None


def find_builtin(op: str, extensions: dict[str, Builtin], allowed: frozenset[str] | None) -> Builtin | None:
    """The extension or builtin called ``op``, where ``allowed`` (None: all) lets it be called."""
    ext = extensions.get(op)
    if ext is not None:
        return ext
    if allowed is not None and op not in allowed:
        return None
    return lookup_builtin(op)


def compile_modules(
    modules: list[ast.Module],
    extensions: dict[str, Builtin] | None = None,
    allowed_builtins: frozenset[str] | None = None,
    type_check: bool = False,
    strict: bool = False,
    schemas: SchemaSet | None = None,
    checked_hidden_calls: list[RegoError] | None = None,
) -> CompiledTree:
    """Merge, resolve and check ``modules`` (calling only ``allowed_builtins``, when given;
    with ``type_check``, OPA's type checker runs last: :mod:`pyrego.typecheck`;
    ``strict``: OPA's strict mode, :mod:`pyrego.compile.checks`; ``schemas``: the
    JSON schemas the type checker reads, :mod:`pyrego.typecheck.schemas`).

    ``checked_hidden_calls``: the modules have each passed OPA's early stages
    (:func:`pyrego.compile.checks.check_modules`, outside strict mode) when they
    were added, which found these hidden calls, in file order: the stages are
    not run again."""
    if checked_hidden_calls is None or strict:
        hidden_calls = check_modules(modules, strict=strict)  # OPA's stages before its name resolution
    else:
        hidden_calls = checked_hidden_calls
    counter = itertools.count()
    ids = itertools.count()
    root = RuleNode((), next(ids))
    nodes: dict[tuple[str, ...], RuleNode] = {(): root}

    def node_at(path: tuple[str, ...]) -> RuleNode:
        # A loop, not recursion: a recursive closure is a reference cycle.
        node = nodes.get(path)
        if node is None and len(path) > 1:
            # (a rule of a package seen before: only the last node is new)
            above = nodes.get(path[:-1])
            if above is not None:
                node = nodes[path] = above.children[path[-1]] = RuleNode(path, next(ids))
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
        raise_all(conflict_errors(modules, packages) or [conflict])

    functions = {".".join(("data",) + n.path): n for n in nodes.values() if n.kind == FUNCTION}
    tree = CompiledTree(root, nodes, functions, metadata, dict(extensions or {}), allowed_builtins)
    tree.strict = strict
    calls = [call for u in uses.values() for call in u.calls]
    tree.calls_deprecated = not DEPRECATED_BUILTINS.isdisjoint([call.op for call in calls])
    raise_all(extent_errors(tree, modules, packages), sort=False)
    _check_calls(tree, calls)
    _raise_first(hidden_calls)
    raise_all(head_safety_errors(modules, packages))
    try:
        graph = _check_recursion(tree, uses)
    except RegoRecursionError as first:
        raise_all(recursion_errors(tree, uses) or [first])
    if type_check:
        tree.types = _typecheck_module().check_program(tree, graph, modules, schemas)
    return tree


@functools.cache
def _typecheck_module() -> Any:
    """:mod:`pyrego.typecheck` (which imports this module), imported once; its
    function is read at each use, so that a replaced one is the one called."""
    from pyrego import typecheck

    return typecheck


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
        from pyrego.typecheck.arity import arity_error  # OPA's messages

        raise arity_error(call, arity, nested, call.op not in tree.functions, tree)
    return n != arity


def _is_rule_path(tree: CompiledTree, op: str) -> bool:
    return tuple(op.split(".")[1:]) in tree.nodes


def _check_calls(tree: CompiledTree, calls: list[ast.Call]) -> None:
    """Checks every call's function and arity (``calls`` in any order)."""
    try:
        outputs = False
        # A call's check depends only on its function and its number of
        # arguments: each such pair is checked once.
        checked: set[tuple[str, int]] = set()
        for call in calls:
            shape = (call.op, len(call.args))
            if shape not in checked:
                checked.add(shape)
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
    from pyrego.typecheck.arity import calls_in_rule

    rules = [rule for node in tree.nodes.values() for rule in node.rules + ([node.default] if node.default else [])]
    _raise_call_errors(tree, (found for rule in rules for found in calls_in_rule(rule)))


def _raise_call_errors(tree: CompiledTree, calls: Iterable[tuple[ast.Call, bool]]) -> None:
    """Raise the first error of ``calls`` (each with whether it is nested), with
    every one, up to OPA's ten, in its ``errors``."""
    from pyrego.typecheck.arity import raise_all

    errors: list[RegoTypeError] = []
    for call, nested in calls:
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


def node_dependencies(tree: CompiledTree, uses: _Uses, memo: dict[tuple[Any, ...], list[int]] | None = None) -> set[int]:
    """Ids of the rule nodes that a node's rules read, given what they use.

    A ref reads what OPA's dependency graph says it may (GetRulesDynamic): the
    rules along its path, every child where a key is not a constant
    (``data.p[x]``, ``data[_]``), and every rule below where it ends
    (``data.p`` reads the package's rules, ``object.get(data, ...)`` all of
    them). ``memo`` keeps the answer per ref shape across calls."""
    deps: set[int] = set()
    functions = tree.functions
    for call in uses.calls:
        function = functions.get(call.op)
        if function is not None:
            deps.add(function.id)
    root = tree.root
    for ref in uses.data_refs:
        path = ref.path
        if _ground_strings(path):
            # The usual ref, with string keys only: walked directly.
            cur: RuleNode | None = root
            for p in path:
                cur = cur.children.get(p.value)  # type: ignore[union-attr,arg-type]
                if cur is None:
                    break
                if cur.rules or cur.default is not None:  # (RuleNode.has_rules, inline)
                    deps.add(cur.id)
            else:
                if cur is not None and cur.children:
                    deps.update(n.id for n in cur.walk()[1:] if n.has_rules())
            continue
        shape = tuple([p.value if type(p) is Scalar else None for p in path])
        found = memo.get(shape) if memo is not None else None
        if found is None:
            found = rules_read(root, path)
            if memo is not None:
                memo[shape] = found
        deps.update(found)
    return deps


def _ground_strings(path: tuple[Any, ...]) -> bool:
    for p in path:
        if type(p) is not Scalar or type(p.value) is not str:
            return False
    return True


def rules_read(root: RuleNode, path: tuple[Any, ...]) -> list[int]:
    """Ids of the rule nodes a ref ``data<path>`` may read (see :func:`node_dependencies`)."""
    out: list[int] = []
    stack: list[tuple[RuleNode, int]] = [(root, 0)]
    while stack:
        node, i = stack.pop()
        if i >= len(path):
            out.extend([n.id for n in node.walk()[1:] if n.has_rules()])
            continue
        p = path[i]
        if type(p) is Scalar:
            child = node.children.get(p.value) if type(p.value) is str else None
            children = [child] if child is not None else []
        else:
            children = list(node.children.values())
        for child in children:
            if child.has_rules():
                out.append(child.id)
            stack.append((child, i + 1))
    return out


def _check_recursion(tree: CompiledTree, uses: dict[int, _Uses]) -> dict[int, set[int]]:
    """Raises on the first rule that reads itself; returns what each node reads (by id)."""
    memo: dict[tuple[Any, ...], list[int]] = {}
    graph = {nid: node_dependencies(tree, node_uses, memo) for nid, node_uses in uses.items()}
    state: dict[int, int] = {}
    for nid in sorted(graph):
        if state.get(nid) is None:
            _find_cycle(nid, graph, state, [], tree)
    return graph


def _find_cycle(start: int, graph: dict[int, set[int]], state: dict[int, int], stack: list[int], tree: CompiledTree) -> None:
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
            by_id = {n.id: n for n in tree.nodes.values()}
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
        from pyrego.typecheck.arity import calls_in_body

        # Report the first bad call in the order OPA walks the query.
        _raise_call_errors(tree, calls_in_body(resolved))
        if found is not None:
            raise found
    _raise_first(hidden_calls)
    check_query_deprecated(body, strict=tree.strict)
    names = {unique: name for name, unique in scope.names.items() if not name.startswith("$")}
    return resolved, names
