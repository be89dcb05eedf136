"""What a ``with`` modifier replaces, and the static checks OPA makes on it.

:func:`with_targets` sorts each target of an expression's ``with`` modifiers
into input, base or rule data, or a function (a rule with arguments or a
builtin), and raises the error OPA raises for a target it refuses, in the
order of OPA's compiler stages: targets first (``rego_compile_error``, or
``rego_type_error`` for a name that is none of these), then variables in
targets or builtins used as values (``rego_unsafe_var_error``), then a target
document holding the rule that replaces it (``rego_recursion_error``), then
types (``rego_type_error``: arities, functions named without a call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import PARTIAL_OBJECT, FuncRef, rule_terms, scalar_key, tree_keys
from pyrego.compile.safety import term_vars
from pyrego.errors import RegoCompileError, RegoRecursionError, RegoTypeError, RegoUnsafeVarError

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import RuleNode

# Builtins OPA never lets ``with`` replace: unification and the rule's own
# metadata are resolved before evaluation.
_FIXED_BUILTINS = frozenset({"eq", "rego.metadata.chain", "rego.metadata.rule"})
# Builtins that return nothing.
_VOID_BUILTINS = frozenset({"print"})


@dataclass(frozen=True)
class Target:
    """One ``with``: ``kind`` is "input", "data" (``path`` below the root),
    "func" (``name`` of the function replaced) or "bad" (a key that is not a
    string: OPA's evaluation fails on it)."""

    kind: str
    path: tuple[Any, ...]
    name: str
    mod: ast.With


def with_targets(gen: ModuleGen, e: ast.Expr, node: RuleNode | None) -> list[Target]:
    """The targets of ``e``'s modifiers, checked; ``node`` is the rule the
    expression belongs to (None in a query)."""
    targets = [_target(gen, w) for w in e.with_mods]
    for t in targets:
        _check_safe(gen, t)
    if node is not None:
        for t in targets:
            if t.kind == "data":
                _check_recursion(gen, node, t)
    for t in targets:
        _check_types(gen, e, t)
    return targets


def _target(gen: ModuleGen, w: ast.With) -> Target:
    target = w.target
    head = target.head.name if isinstance(target.head, ast.Var) else ""
    # String keys as strings; any other key stays a term.
    keys = [p.value if isinstance(p, ast.Scalar) and isinstance(p.value, str) else p for p in target.path]
    if head == "input":
        return Target(_data_kind(keys, "input"), tuple(keys), "", w)
    if head == "data":
        _check_partial(gen, keys, w)
        name = ".".join(["data"] + [str(k) for k in keys])
        if all(type(k) is str for k in keys) and name in gen.tree.functions:
            return Target("func", tuple(keys), name, w)
        return Target(_data_kind(keys, "data"), tuple(keys), "", w)
    name = ".".join([head] + [str(k) for k in keys])
    b = gen.builtin(name) if head and all(type(k) is str for k in keys) else None
    if b is None:
        raise RegoTypeError("with keyword target must reference existing input, data, or a function", w.location)
    if name in _FIXED_BUILTINS:
        raise RegoCompileError(f'with keyword replacing built-in function: replacement of "{name}" invalid', w.location)
    if head == "internal":
        raise RegoCompileError(f'with keyword replacing built-in function: replacement of internal function "{name}" invalid', w.location)
    if b.relation:
        raise RegoCompileError("with keyword replacing built-in function: target must not be a relation", w.location)
    if name in _VOID_BUILTINS:
        raise RegoCompileError("with keyword replacing built-in function: target must not be a void function", w.location)
    return Target("func", (), name, w)


def _data_kind(keys: list[Any], kind: str) -> str:
    # Documents are keyed by strings: OPA cannot patch input or data at any
    # other key (and fails when it evaluates the expression).
    return kind if all(type(k) is str for k in keys) else "bad"


def _check_partial(gen: ModuleGen, keys: list[Any], w: ast.With) -> None:
    """A target inside a rule's document (below ``data.p.q`` where rules
    define ``q``) would change part of a value the rules compute: refused."""
    cur = gen.tree.root
    for i, k in enumerate(keys[:-1]):
        if type(k) is not str:
            return
        nxt = cur.children.get(k)
        if nxt is None:
            return
        if nxt.has_rules():
            at = {tree_keys(r) for r in nxt.rules} if nxt.kind == PARTIAL_OBJECT and nxt.default is None else {()}
            if () in at or _reaches_rules(at, keys[i + 1 : -1]):
                raise RegoCompileError("with keyword cannot partially replace virtual document(s)", w.location)
            return
        cur = nxt


def _reaches_rules(at: set[tuple[Any, ...]], keys: list[Any]) -> bool:
    """Whether ``keys`` pass a node of OPA's rule tree that holds rules
    (``at``: where each rule of a document is held, below its node): a
    document whose rules all start with constants (``p[1].x := v``) has a
    node per constant, no rules at the document itself."""
    path: tuple[Any, ...] = ()
    for k in keys:
        key = scalar_key(k)
        if key is None:
            return False
        path += (key,)
        if path in at:
            return True
        if not any(p[: len(path)] == path for p in at):
            return False
    return False


def _check_safe(gen: ModuleGen, t: Target) -> None:
    # Variables in a target are never bound (OPA does not evaluate targets).
    for k in t.path:
        if type(k) is not str:
            names = sorted(v for v in term_vars(k, set()) if not v.startswith("$"))
            if names:
                raise RegoUnsafeVarError(f"var {_shown(names[0])} is unsafe", t.mod.location)
    value = t.mod.value
    if t.kind != "func" and isinstance(value, FuncRef):
        # Only a function's replacement may name a builtin; elsewhere the
        # name is a variable nothing binds.
        raise RegoUnsafeVarError(f"var {value.name.split('.')[0]} is unsafe", value.location)


def _check_types(gen: ModuleGen, e: ast.Expr, t: Target) -> None:
    value = t.mod.value
    if t.kind == "func":
        if isinstance(e.statement, ast.Every):
            # OPA type-checks ``every`` with its modifiers as a whole, where a
            # function's name is a reference, not a call.
            raise RegoTypeError(f"function {t.name} used as reference, not called", t.mod.location)
        want = gen.arity(t.name)
        replacement = _function_name(gen, value)
        have = gen.arity(replacement) if replacement is not None else None
        if want is not None and have is not None and have != want:
            raise RegoTypeError(f"{t.name}: arity mismatch\n\thave: ({_anys(have)})\n\twant: ({_anys(want)})", t.mod.location)
    elif t.kind == "input" or isinstance(e.statement, ast.Every):
        # A value (unlike data's, which OPA leaves unchecked outside ``every``)
        # must not be a function.
        function = _function_name(gen, value)
        if function is not None:
            raise RegoTypeError(f"function {function} used as reference, not called", value.location)


def _function_name(gen: ModuleGen, value: ast.Term) -> str | None:
    """The function (user function or builtin) that ``value`` names, if any."""
    if isinstance(value, FuncRef):
        return value.name
    if isinstance(value, ast.Ref) and isinstance(value.head, ast.Var) and value.head.name == "data":
        if all(isinstance(p, ast.Scalar) and isinstance(p.value, str) for p in value.path):
            name = ".".join(["data"] + [str(p.value) for p in value.path])  # type: ignore[union-attr]
            if name in gen.tree.functions:
                return name
    return None


def _anys(n: int) -> str:
    return ", ".join(["any"] * n)


def _shown(name: str) -> str:
    return name.split("#")[0]


# -- recursion through ``with`` targets ---------------------------------------------


def _check_recursion(gen: ModuleGen, node: RuleNode, t: Target) -> None:
    """A rule that replaces a document holding itself, or a rule that reads
    it, depends on itself: OPA's recursion error."""
    graph = _dependency_graph(gen)
    for start in _rules_below(gen, t.path):
        path = _path_to(graph, start, node.id)
        if path is not None:
            names = " -> ".join(_node_name(gen, i) for i in [node.id] + path)
            raise RegoRecursionError(f"rule {node.name} is recursive: {names}", t.mod.location)


def _path_to(graph: dict[int, set[int]], start: int, goal: int) -> list[int] | None:
    """The nodes from ``start`` to ``goal`` along ``graph`` (both included), or None."""
    came: dict[int, int | None] = {start: None}
    todo = [start]
    while todo:
        cur = todo.pop()
        if cur == goal:
            out = [cur]
            prev = came[cur]
            while prev is not None:
                out.append(prev)
                prev = came[prev]
            return out[::-1]
        for nxt in graph.get(cur, ()):
            if nxt not in came:
                came[nxt] = cur
                todo.append(nxt)
    return None


def _node_name(gen: ModuleGen, nid: int) -> str:
    for n in gen.tree.nodes.values():
        if n.id == nid:
            return n.name
    return "?"


def _rules_below(gen: ModuleGen, keys: tuple[Any, ...]) -> list[int]:
    """Ids of the rule nodes at or below ``data.<keys>`` (its string prefix)."""
    cur = gen.tree.root
    for k in keys:
        if type(k) is not str:
            break
        nxt = cur.children.get(k)
        if nxt is None:
            return []
        cur = nxt
        if cur.has_rules():
            break
    return [n.id for n in cur.walk() if n.has_rules()]


def _dependency_graph(gen: ModuleGen) -> dict[int, set[int]]:
    """Rule node id -> the rule nodes its rules read, call or replace (built
    once per program, only where a rule replaces data with ``with``)."""
    graph = gen.with_dependencies
    if graph is None:
        graph = {}
        for n in gen.tree.nodes.values():
            if n.has_rules():
                deps: set[int] = set()
                collector = _Deps(gen, deps)
                for rule in n.rules + ([n.default] if n.default else []):
                    r: ast.Rule | None = rule
                    while r is not None:
                        collector.body(r.body)
                        for term in rule_terms(r):
                            collector.term(term)
                        r = r.else_
                graph[n.id] = deps
        gen.with_dependencies = graph
    return graph


class _Deps:
    """Collects the rule nodes a rule depends on (methods, not recursive
    closures, which would be reference cycles)."""

    def __init__(self, gen: ModuleGen, out: set[int]) -> None:
        self.gen = gen
        self.out = out

    def body(self, body: ast.Body) -> None:
        for e in body:
            s = e.statement
            if isinstance(s, (ast.Assign, ast.Unify)):
                self.term(s.lhs)
                self.term(s.rhs)
            elif isinstance(s, ast.SomeIn):
                for x in (s.key, s.value, s.collection):
                    self.term(x)
            elif isinstance(s, ast.Every):
                self.term(s.domain)
                self.body(s.body)
            elif not isinstance(s, ast.SomeVars):
                self.term(s)
            for w in e.with_mods:
                self.term(w.target)
                self.term(w.value)

    def term(self, t: Any) -> None:
        if isinstance(t, ast.Ref):
            if isinstance(t.head, ast.Var) and t.head.name == "data":
                self.ref(t.path)
            else:
                self.term(t.head)
            for p in t.path:
                self.term(p)
        elif isinstance(t, ast.Call):
            function = self.gen.tree.functions.get(t.op)
            if function is not None:
                self.out.add(function.id)
            for a in t.args:
                self.term(a)
        elif isinstance(t, (ast.Array, ast.SetTerm)):
            for x in t.items:
                self.term(x)
        elif isinstance(t, ast.Object):
            for k, v in t.items:
                self.term(k)
                self.term(v)
        elif isinstance(t, (ast.ArrayCompr, ast.SetCompr)):
            self.term(t.term)
            self.body(t.body)
        elif isinstance(t, ast.ObjectCompr):
            self.term(t.key)
            self.term(t.value)
            self.body(t.body)
        elif isinstance(t, ast.TemplateString):
            for part in t.parts:
                if not isinstance(part, str):
                    self.term(part)

    def ref(self, path: tuple[ast.Term, ...]) -> None:
        """``data.<path>``: the rules that define it, or all rules below a
        document that holds rules; a computed key is not followed (which
        rules it reads is only known at run time)."""
        cur = self.gen.tree.root
        for p in path:
            if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
                return
            nxt = cur.children.get(p.value)
            if nxt is None:
                return
            cur = nxt
            if cur.has_rules():
                self.out.add(cur.id)
                return
        self.out.update(n.id for n in cur.walk() if n.has_rules())
