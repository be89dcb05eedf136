"""Types of rules, inferred in dependency order (OPA's ``CheckTypes``).

Every rule (each ``else`` branch on its own) is checked after the rules it
reads, so that a reference to a rule has the type of the values it produces:
a complete rule's value type, ``set[...]`` of a partial set's keys,
``object[key: value]`` for a ref head with variables, a function type for a
function. Several rules for one document merge their types. A rule whose
body has a type error is typed ``any``, so that what reads it reports
nothing more.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Scalar, Var
from pyrego.builtins.rego import metadata_value
from pyrego.compile.base import CompiledTree, RuleNode, find_builtin, key_raw
from pyrego.typecheck import static_types as T
from pyrego.typecheck.annotated import SchemaAnnotations, input_type
from pyrego.typecheck.check import Checker, TypeErr
from pyrego.typecheck.env import RootEnv, TypeEnv, term_key
from pyrego.typecheck.ir import IArray, IObject, IRef, ISet, Term
from pyrego.typecheck.locations import SharedLocations
from pyrego.typecheck.lower import LoweredRule, Lowerer
from pyrego.typecheck.replaced import ReplacedRules
from pyrego.typecheck.schemas import SchemaSet
from pyrego.typecheck.screen import BodyScreen, ground_head
from pyrego.typecheck.signatures import any_function, builtin_type
from pyrego.typecheck.some_vars import LocalVarNumbers


def function_types(tree: CompiledTree) -> Callable[[str], T.FunctionType | None]:
    """Looks up the type of a builtin or extension the program may call (without
    holding on to the tree: what checks queries is kept by the tree)."""
    extensions, allowed = tree.extensions, tree.allowed_builtins
    if not extensions and allowed is None:  # (most programs: the builtins' types, shared by all)
        return builtin_type
    # Extensions: their declared types (Engine.add_extension's decl), else any.
    declared = {n: _declared_type(b.decl) if b.decl is not None else any_function(b.arity) for n, b in extensions.items()}

    def lookup(name: str) -> T.FunctionType | None:
        ext = declared.get(name)
        if ext is not None:
            return ext
        if allowed is not None and name not in allowed:
            return None
        return builtin_type(name)

    return lookup


def _declared_type(decl: Any) -> T.FunctionType:
    tpe = T.from_decl(decl)
    assert isinstance(tpe, T.FunctionType)  # (checked by Engine.add_extension)
    return tpe


class QueryTypes:
    """What checking a query needs of a checked program: the rules' types and
    the program's functions. It is kept with the compiled tree and refers to
    nothing that refers back to it, so that the program is freed by reference
    counting alone. The rules' environment may be given as a function that
    builds it (when a query first needs it: most programs never check one)."""

    __slots__ = ("_rules_env", "_build", "arity", "is_function", "function_paths", "replaced")

    def __init__(
        self,
        tree: CompiledTree,
        rules_env: TypeEnv | None,
        build: Callable[[], TypeEnv] | None = None,
        lookup: Callable[[str], T.FunctionType | None] | None = None,
        replaced: ReplacedRules | None = None,
    ) -> None:
        functions = tree.functions
        arities = {op: node.arity for op, node in functions.items()} if functions else {}
        extensions, allowed = tree.extensions, tree.allowed_builtins
        lookup = lookup or function_types(tree)

        def arity(op: str) -> int | None:  # (CompiledTree.arity, without holding the tree)
            found = arities.get(op)
            if found is not None:
                return found
            b = find_builtin(op, extensions, allowed)
            return b.arity if b is not None else None

        self._rules_env = rules_env
        self._build = build
        self.arity = arity
        self.is_function: Callable[[str], bool] = lambda n: n in arities or lookup(n) is not None
        self.function_paths = {op: node.path for op, node in functions.items()} if functions else {}
        self.replaced = replaced  # (the rules a query's with may replace, and what reads them)

    @property
    def rules_env(self) -> TypeEnv:
        env = self._rules_env
        if env is None:
            # (Two threads may both build it: each gets an equal environment.)
            build = self._build
            assert build is not None
            env = self._rules_env = build()
        return env


def screened_query_types(
    tree: CompiledTree,
    types: dict[tuple[str, ...], T.Type],
    modules: list[ast.Module] | None,
    lookup: Callable[[str], T.FunctionType | None],
    dependencies: dict[int, set[int]] | None = None,
) -> QueryTypes:
    """The rules' types of a program :mod:`.fast` found clean, as the full
    check would have left them (each at its path; no path is below another's).
    ``lookup``: :func:`function_types` of the tree."""
    shared = SharedLocations(tree, modules) if modules is not None else None
    if shared is not None:
        shared.detach()

    def build() -> TypeEnv:
        rules_env = RootEnv(lookup, Checker, shared, None).wrap()
        data = Var("data")
        for path, tpe in types.items():
            rules_env.tree.insert([data, *[Scalar(key_raw(p)) for p in path]], tpe, rules_env)
        return rules_env

    return QueryTypes(tree, None, build, lookup, replaced_rules(tree, dependencies or {}))


def replaced_rules(tree: CompiledTree, dependencies: dict[int, set[int]]) -> ReplacedRules:
    return ReplacedRules([(n.path, n.id) for n in tree.nodes.values() if n.has_rules()], dependencies)


def root_env(tree: CompiledTree, shared: SharedLocations | None = None, names: Callable[[str], str] | None = None) -> RootEnv:
    return RootEnv(function_types(tree), Checker, shared, names)


# ---------------------------------------------------------------- dependencies


def branches(rule: ast.Rule) -> list[ast.Rule]:
    if rule.else_ is None:  # (most rules)
        return [rule]
    out = []
    r: ast.Rule | None = rule
    while r is not None:
        out.append(r)
        r = r.else_
    return out


def sorted_nodes(tree: CompiledTree, dependencies: dict[int, set[int]]) -> list[RuleNode]:
    """Rule nodes, each after the nodes its rules read (``dependencies``: what
    each node reads, by id, as the compiler's recursion check worked it out)."""
    seen: set[int] = set()
    order: list[RuleNode] = []
    for _, node in sorted_rules(tree, dependencies):
        if node.id not in seen:
            seen.add(node.id)
            order.append(node)
    return order


def _location_key(rule: ast.Rule) -> tuple[str, int, int]:
    return (rule.module_file, rule.location.row, rule.location.col)


def sorted_rules(tree: CompiledTree, dependencies: dict[int, set[int]]) -> list[tuple[ast.Rule, RuleNode]]:
    """Every rule with its node, in the order OPA checks them: rules in source
    order (file, row, column), each after the rules of the nodes it reads.

    The order matters where rules of different nodes put their types into one
    object of the type tree (``a[k] contains 1`` and ``a.x contains true``: the
    object at ``a`` takes ``a.x``'s type when inserted after it, and merges
    with another rule's object differently after that)."""
    by_id = {n.id: n for n in tree.nodes.values()}
    rules: list[tuple[ast.Rule, RuleNode]] = []
    for node in tree.nodes.values():
        if node.has_rules():
            for rule in node_rules(node):
                rules.append((rule, node))
    if len(rules) > 1:
        rules.sort(key=lambda rn: _location_key(rn[0]))
    order: list[tuple[ast.Rule, RuleNode]] = []
    done: set[int] = set()  # rules emitted (by id)
    visiting: set[int] = set()  # nodes whose dependencies are being emitted (by id)
    complete: set[int] = set()  # nodes all of whose rules are emitted (by id)
    for rule, node in rules:
        if id(rule) in done:
            continue
        deps = dependencies.get(node.id)
        if deps:
            # The rules of the nodes it reads first, depth first, with an
            # explicit stack (a cycle, which the recursion check refuses
            # before, would be cut).
            stack: list[tuple[RuleNode | None, list[int]]] = [(None, sorted(deps))]
            while stack:
                current, pending = stack[-1]
                if pending:
                    nid = pending.pop()
                    if nid not in complete and nid not in visiting:
                        visiting.add(nid)
                        stack.append((by_id[nid], sorted(dependencies.get(nid, ()))))
                    continue
                stack.pop()
                if current is None:
                    break
                visiting.discard(current.id)
                complete.add(current.id)
                for r in node_rules(current):
                    if id(r) not in done:
                        done.add(id(r))
                        order.append((r, current))
        done.add(id(rule))
        order.append((rule, node))
    return order


def node_rules(node: RuleNode) -> list[ast.Rule]:
    if node.default is None and len(node.rules) == 1:  # (most nodes: nothing to sort)
        return list(node.rules)
    rules = list(node.rules)
    if node.default is not None:
        rules.append(node.default)
    return sorted(rules, key=lambda r: (r.module_file, r.location.row, r.location.col))


# ---------------------------------------------------------------- rule types


def _walk_vars(t: Any, out: list[Var]) -> None:
    tt = type(t)
    if tt is Var:
        out.append(t)
    elif tt is IRef:
        for x in t.terms():
            _walk_vars(x, out)
    elif tt is IArray or tt is ISet:
        for x in t.items:
            _walk_vars(x, out)
    elif tt is IObject:
        for k, v in t.items:
            _walk_vars(k, out)
            _walk_vars(v, out)


def rule_type(cpy: TypeEnv, lowered: LoweredRule) -> tuple[list[Term], T.MaybeType]:
    """Where the rule's type goes (the ground part of its path) and the type."""
    path = lowered.path
    if lowered.args is not None:
        for a in lowered.args:
            found: list[Var] = []
            _walk_vars(a, found)
            for v in found:
                if cpy.get_by_value(v) is None:
                    cpy.tree.put_one(("v", v.name), v, T.ANY)
        args = tuple(cpy.get_by_value(a) for a in lowered.args)
        assert lowered.value is not None
        return path, T.FunctionType(args, cpy.get_by_value(lowered.value))
    value: T.MaybeType
    if lowered.value is None:  # a partial set: the set of its keys
        assert lowered.key is not None
        key = cpy.get_by_value(lowered.key)
        value = T.SetType(key) if key is not None else None
    else:
        value = cpy.get_by_value(lowered.value)
    # Variables in the head's ref (``r[k] := v``, ``r[k].y contains v``): the
    # type goes to the ground prefix, an object keyed by each variable's type
    # (one level per term after the prefix), whatever the rule's kind.
    ground = 0
    while ground < len(path) and type(path[ground]) is Scalar:
        ground += 1
    if ground == len(path):
        return path, value
    tpe: T.MaybeType = value
    for k in reversed(path[ground:]):
        if tpe is None:
            break
        key_type = cpy.get_by_value(k)
        if key_type is None:
            tpe = None
            break
        tpe = T.ObjectType((), (key_type, tpe))
    return path[:ground], tpe


class ProgramChecker:
    """Checks every rule of a compiled tree; the environment keeps the rules' types."""

    def __init__(
        self,
        tree: CompiledTree,
        dependencies: dict[int, set[int]],
        modules: list[ast.Module] | None = None,
        schemas: SchemaSet | None = None,
    ) -> None:
        self.tree = tree
        self.dependencies = dependencies
        lookup = function_types(tree)
        paths = {op: node.path for op, node in tree.functions.items()}
        self.lowerer = Lowerer(
            tree.arity,
            lambda n: n in tree.functions or lookup(n) is not None,
            function_paths=paths,
            local_numbers=LocalVarNumbers(tree),
            metadata=lambda op, rule: metadata_value(tree.metadata, op, rule),
        )
        shared = SharedLocations(tree, modules) if modules is not None else None
        self.root_env = root_env(tree, shared, self.lowerer.show)
        self.rules_env = self.root_env.wrap()
        self.screen = BodyScreen(self.rules_env, self.lowerer)
        self.prefixes: dict[tuple[str, ...], list[Term]] = {}
        # JSON schemas: the input schema (input's type everywhere) and # METADATA schemas.
        self.annotations = SchemaAnnotations(tree, schemas)
        self.schema_errors: list[TypeErr] = []
        typed_input = input_type(schemas, self.schema_errors)
        if typed_input is not None:
            self.root_env.tree.put_one(("v", "input"), Var("input"), typed_input)
        self.root_env.root.input_typed = typed_input is not None or self.annotations.mentions_input
        # Rules reading a rule a with replaces are of any type in its expression.
        self.replaced = replaced_rules(tree, dependencies)
        with_any = self.replaced.override(self.rules_env.tree)
        self.checker = Checker(with_any=with_any)
        self.root_env.checker_factory = self.rules_env.checker_factory = lambda: Checker(with_any=with_any)

    def run(self) -> list[TypeErr]:
        tree = self.tree
        packages = tree.metadata.rule_packages
        for rule, _ in sorted_rules(tree, self.dependencies):
            pkg = packages.get(rule.location, ())
            for branch in branches(rule):
                self.check_rule(pkg, branch, rule.head.args)
            self.root_env.root.closure_memo.clear()  # (its comprehensions are the rule's)
        return self.schema_errors + self.checker.errors

    def check_rule(self, pkg: tuple[str, ...], rule: ast.Rule, args: tuple[ast.Term, ...] | None) -> None:
        prefix = self.prefixes.get(pkg)
        if prefix is None:  # where the package's rules go (terms kept by the type tree as first made)
            prefix = self.prefixes[pkg] = [Var("data", rule.location), *[Scalar(p, rule.location) for p in pkg]]
        annotations = self.annotations.for_rule(rule, pkg)
        if args is None and not annotations and ground_head(rule.head):
            # A body that cannot fail is neither lowered nor checked; the rule
            # takes its head's type (see .screen).
            screened = self.screen.rule(rule)
            if screened is not None:
                made, screened_type = screened
                self.lowerer.counter += made
                self._put_screened(prefix, rule, screened_type)
                return
        lowered = self.lowerer.rule(rule, args)
        env = self.rules_env.wrap()
        if annotations:
            self.annotations.apply(env, rule, annotations, self.schema_errors)
        cpy, errs = self.checker.check_body(env, lowered.body)
        if errs:
            self._put(prefix + lowered.path, T.ANY)
            return
        path, tpe = rule_type(cpy, lowered)
        if tpe is not None:
            self.rules_env.tree.insert(prefix + path, tpe, self.rules_env)

    def query_types(self) -> QueryTypes:
        """The rules' types, for queries (the environments stop naming rule variables)."""
        self.root_env.names = self.rules_env.names = None
        # (the program's tree is no longer changed: a query changes its own copy)
        self.root_env.checker_factory = self.rules_env.checker_factory = Checker
        if self.root_env.shared is not None:
            self.root_env.shared.detach()
        return QueryTypes(self.tree, self.rules_env, replaced=self.replaced)

    def _put_screened(self, prefix: list[Term], rule: ast.Rule, tpe: T.Type) -> None:
        """The type of a screened rule, at its path (whose keys are literals)."""
        head = rule.head
        name = head.ref.head.name if isinstance(head.ref.head, Var) else ""
        path: list[Term] = [*prefix, Scalar(name, head.ref.location)]
        path += [p for p in head.ref.path if isinstance(p, Scalar)]  # all of them (a ground head)
        self.rules_env.tree.insert(path, tpe, self.rules_env)

    def _put(self, path: list[Term], tpe: T.Type) -> None:
        node = self.rules_env.tree
        for t in path:
            key = term_key(t)
            assert key is not None
            child = node.children.get(key)
            if child is None:
                from pyrego.typecheck.env import Node

                child = node.children[key] = Node(key, t)
            node = child
        node.value = tpe


__all__ = ["ProgramChecker", "QueryTypes", "screened_query_types", "sorted_nodes", "sorted_rules", "rule_type", "root_env", "function_types"]
