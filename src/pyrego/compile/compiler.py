"""The compile stages over the rule tree: building it, and checking its calls.

- :func:`build_tree` merges every module into one tree of documents under
  ``data`` (:class:`RuleNode`), grouping the rules that define each
  document, as it resolves names: a rule name, an import alias or a
  package-relative function becomes an absolute ``data.`` ref or call; every
  local variable gets a unique name (``x#3``) so nested scopes never clash in
  generated code (:mod:`pyrego.compile.resolver`);
- :func:`call_errors`: unknown functions and wrong arities (OPA's
  CheckUndefinedFuncs), with OPA's messages (:mod:`pyrego.typecheck.arity`);
- :func:`resolve_query_names` and :func:`query_call_errors`: the query
  compiler's resolution and call checks (run as stages, with its other
  checks, by :func:`pyrego.compile.pipeline.resolve_query`).

:mod:`pyrego.compile.pipeline` runs the stages in order. The tree's shapes
live in :mod:`pyrego.compile.base`, where the modules that read them import
them from.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from pyrego.ast import nodes as ast
from pyrego.builtins.registry import Builtin
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    CompiledTree,
    Metadata,
    RuleNode,
    Uses,
    function_name,
    ground_prefix,
    key_part,
    package_path,
    rule_suffix,
    tree_keys,
)
from pyrego.compile.head_terms import head_terms_in_body
from pyrego.compile.resolver import _Resolver
from pyrego.errors import RegoError, RegoTypeError


def build_tree(
    modules: list[ast.Module],
    packages: list[tuple[str, ...]],
    extensions: dict[str, Builtin] | None = None,
    allowed_builtins: frozenset[str] | None = None,
    strict: bool = False,
) -> tuple[CompiledTree, dict[int, Uses], RegoTypeError | None]:
    """Merge ``modules`` (of ``packages``) into one rule tree, resolving their
    names; returns the tree, the calls and ``data`` refs of each node's rules
    (by node id), and the first rule conflict met (such a rule is left out)."""
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
    uses: dict[int, Uses] = {}
    package_rules: dict[tuple[str, ...], set[str]] = {}
    for module, pkg in zip(modules, packages):
        names = package_rules.setdefault(pkg, set())
        names.update([r.head.ref.head.name for r in module.rules if isinstance(r.head.ref.head, ast.Var)])
    conflict: RegoTypeError | None = None  # the first; OPA reports them all (below)
    nested_nodes: set[int] = set()
    var_free_rules: dict[int, ast.Rule] = {}
    var_free_bodies: dict[int, ast.Body] = {}
    for module, pkg in zip(modules, packages):
        resolver = _Resolver(module, pkg, counter, package_rules[pkg])
        node_at(pkg).is_package = True
        for raw in module.rules:
            resolver.calls, resolver.data_refs = [], []
            nested = resolver.nested
            rule = resolver.rule(raw)
            try:
                path = _add_rule(node_at, pkg, rule)
            except RegoTypeError as err:
                conflict = conflict or err
                continue
            branch: ast.Rule | None = rule
            while branch is not None:  # (an else branch's chain has the rule's path and package)
                metadata.rule_paths[branch.location] = path
                metadata.rule_packages[branch.location] = pkg
                branch = branch.else_
            if resolver.nested != nested:
                nested_nodes.add(nodes[path].id)
            node_uses = uses.get(nodes[path].id)
            if node_uses is None:
                uses[nodes[path].id] = Uses(resolver.calls, resolver.data_refs)
            else:
                node_uses.calls += resolver.calls
                node_uses.data_refs += resolver.data_refs
        var_free_rules.update(resolver.var_free_rules)
        var_free_bodies.update(resolver.var_free_bodies)
        if module.annotations:
            _collect_metadata(module, pkg, metadata)
    functions = {function_name(n.path): n for n in nodes.values() if n.kind == FUNCTION}
    tree = CompiledTree(root, nodes, functions, metadata, dict(extensions or {}), allowed_builtins)
    tree.strict = strict
    tree.nested_nodes = frozenset(nested_nodes)
    tree.var_free_rules = var_free_rules
    tree.var_free_bodies = var_free_bodies
    # (With every function known: whether a body binds a variable depends on
    # which calls have an output argument.)
    # A rule without local variables has no head term to move: kept as it is.
    for node in nodes.values():
        if node.rules:
            node.rules = [
                r if r.else_ is None and var_free_rules.get(id(r)) is r else head_terms_in_body(r, tree.arity) for r in node.rules
            ]
    return tree, uses, conflict


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
            ground, _ = ground_prefix(rule.head.ref.path)
            name = rule.head.ref.head.name if isinstance(rule.head.ref.head, ast.Var) else ""
            metadata.documents.setdefault(pkg + (name,) + ground, []).append(a)


def _add_rule(node_at: object, pkg: tuple[str, ...], rule: ast.Rule) -> tuple[str, ...]:
    head = rule.head
    head_name = head.ref.head.name if isinstance(head.ref.head, ast.Var) else ""
    ground, suffix = ground_prefix(head.ref.path)
    path = pkg + (head_name,) + ground
    if suffix and all(type(t) is ast.Scalar for t in suffix):
        # Other constant keys, with no variable (a[1].x(v), default a[1] := 2):
        # a node of its own, as in OPA's rule tree.
        path += tuple([key_part(t) for t in suffix])  # type: ignore[arg-type]
        suffix = ()
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


def drop_unreached_defaults(tree: CompiledTree) -> None:
    """Takes out the default rules OPA never evaluates: those below a node of
    its rule tree that holds rules with variables (``a[k][1]`` beside
    ``default a.b.c := 2``, ``a[1][k]`` beside ``default a[1].b := 2``). OPA
    evaluates such a document, and every read into it, from the rules held
    at and below its node, leaving their defaults out: ``data.p.a.b.c`` is
    undefined there, and ``data.p.a`` has no ``b``. Run after the checks,
    which see the default as OPA's do."""
    for node in list(tree.nodes.values()):
        if node.default is None:
            continue
        path = node.path
        for i in range(1, len(path) + 1):
            above = tree.nodes.get(path[:i])
            if above is not None and any(_holds_variables_above(above, r, path) for r in above.rules):
                node.default = None
                if not node.rules:
                    node.kind = None
                break


def _holds_variables_above(node: RuleNode, rule: ast.Rule, path: tuple[str, ...]) -> bool:
    """Whether ``rule`` (of ``node``) has variables in its ref and OPA's rule
    tree holds it above ``path`` (at its ground prefix, numbers included)."""
    keys = tree_keys(rule)
    suffix = rule_suffix(0, rule)
    if len(suffix) <= len(keys):
        return False
    at = node.path + tuple([key_part(t) for t in suffix[: len(keys)]])  # type: ignore[arg-type]
    return len(at) < len(path) and path[: len(at)] == at


# Calls the code generator handles itself rather than through the registry.
SPECIAL_CALLS = {"print": None, "internal.print": None}


def check_call(tree: CompiledTree, call: ast.Call, nested: bool = False, in_query: bool = False) -> bool:
    """Raises for an unknown function or a wrong number of arguments; a call that is
    an expression of its own may pass one more (its output), a ``nested`` one not.
    Returns whether the call passes that output argument. ``in_query``: the call
    is a query's (its rules' types are known by then, as OPA's message shows)."""
    if call.op in SPECIAL_CALLS:
        return False
    arity = tree.arity(call.op)
    is_builtin = call.op not in tree.functions
    if arity is None:
        if not (call.op.startswith("data.") and _is_rule_path(tree, call.op)):
            raise RegoTypeError(f"undefined function {ast.call_name_text(call.op)}", call.location)
        if tree.called_document(call.op) is None:
            return False  # (the type check finds no function there)
        # A rule that is not a function: OPA takes its arity as 0 here (the
        # type check then finds no function there either).
        arity, is_builtin = 0, False
    n = len(call.args)
    if n != arity and (nested or n != arity + 1):
        from pyrego.typecheck.arity import arity_error  # (OPA's messages: only on errors)

        raise arity_error(call, arity, nested, is_builtin, tree, in_query=in_query)
    return n != arity


def _is_rule_path(tree: CompiledTree, op: str) -> bool:
    return tuple(op.split(".")[1:]) in tree.nodes


def call_errors(tree: CompiledTree, uses: Iterable[Uses]) -> tuple[list[RegoError], set[str]]:
    """Every call's function and arity (the calls of ``uses``, in any order):
    the errors in the order OPA reports them (the first in rule tree order
    first), and the functions called (all of them when there is no error)."""
    failed: RegoTypeError | None = None
    outputs = False
    # A call's check depends only on its function and its number of
    # arguments: each such pair is checked once.
    checked: set[tuple[str, int]] = set()
    for u in uses:
        for call in u.calls:
            shape = (call.op, len(call.args))
            if shape not in checked:
                checked.add(shape)
                try:
                    outputs = check_call(tree, call) or outputs
                except RegoTypeError as err:
                    failed = err
                    break
        if failed is not None:
            break
    called = {op for op, _ in checked}
    if failed is None and not outputs:
        return [], called
    # Report the errors OPA reports (nested calls may not pass an output),
    # walking the rules as OPA orders them.
    from pyrego.typecheck.arity import calls_in_rule  # (OPA's order and words: only on errors)

    rules = [rule for node in tree.nodes.values() for rule in node.rules + ([node.default] if node.default else [])]
    errors = _call_errors(tree, (found for rule in rules for found in calls_in_rule(rule)))
    return errors or ([failed] if failed is not None else []), called


def _call_errors(tree: CompiledTree, calls: Iterable[tuple[ast.Call, bool]], in_query: bool = False) -> list[RegoError]:
    """The errors of ``calls`` (each with whether it is nested), in order."""
    errors: list[RegoError] = []
    for call, nested in calls:
        try:
            check_call(tree, call, nested, in_query)
        except RegoTypeError as err:
            errors.append(err)
    return errors


def resolve_query_names(
    body: ast.Body, tree: CompiledTree, context: ast.Module | None = None
) -> tuple[ast.Body, dict[str, str], list[ast.Call]]:
    """Resolve a query's names: the resolved body, {unique var name: user
    name} and the calls it makes.

    ``context``: a module without rules whose package and imports the query
    is resolved in (``opa eval --package p --import data.q``): the rules of
    that package are visible by name, as from one of its modules."""
    module = context if context is not None else ast.Module(ast.Ref(ast.Var("data"), ()), (), (), file="query")
    pkg = package_path(module)
    node = tree.nodes.get(pkg) if pkg else None
    resolver = _Resolver(module, pkg, itertools.count(), set(node.children) if node is not None else frozenset())
    scope = resolver.make_scope(None, [], body, set())
    resolved = resolver.body(body, scope)
    names = {unique: name for name, unique in scope.names.items() if not name.startswith("$")}
    return resolved, names, resolver.calls


def query_call_errors(tree: CompiledTree, calls: list[ast.Call], resolved: ast.Body) -> tuple[list[RegoError], RegoTypeError | None]:
    """A query's unknown functions and wrong arities: the errors in the order
    OPA walks the resolved query (``resolved``), and the first error found
    among ``calls`` (when the walk finds none)."""
    found: RegoTypeError | None = None
    outputs = False
    try:
        for call in calls:
            outputs = check_call(tree, call, in_query=True) or outputs
    except RegoTypeError as err:
        found = err
    if found is None and not outputs:
        return [], None
    from pyrego.typecheck.arity import calls_in_body  # (OPA's order and words: only on errors)

    return _call_errors(tree, calls_in_body(resolved), in_query=True), found
