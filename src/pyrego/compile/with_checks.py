"""What a ``with`` modifier replaces, and the static checks OPA makes on it.

:func:`with_targets` sorts each target of an expression's ``with`` modifiers
into input, base or rule data, or a function (a rule with arguments or a
builtin), and raises the error OPA raises for a target it refuses, in the
order of OPA's compiler stages: targets first (``rego_compile_error``, or
``rego_type_error`` for a name that is none of these), then variables in
targets or builtins used as values (``rego_unsafe_var_error``), then types
(``rego_type_error``: arities, functions named without a call). A target
holding the rule that replaces it is a dependency of that rule in the
compiler's recursion check (``rego_recursion_error``), which first runs
:func:`check_with_targets` for the target errors OPA finds before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import PARTIAL_OBJECT, FuncRef, data_function_name, scalar_key, tree_keys
from pyrego.compile.safety import shown_name, term_vars, unsafe_var_message
from pyrego.errors import RegoCompileError, RegoTypeError, RegoUnsafeVarError

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import CompiledTree, RuleNode

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
    expression belongs to (None in a query; not needed by the checks)."""
    targets = [_target(gen.tree, w) for w in e.with_mods]
    for t in targets:
        _check_safe(gen, t)
    # (A target holding the rule itself is found by the compiler's recursion
    # check, which counts targets as the rule's dependencies, as OPA does.)
    for t in targets:
        _check_types(gen, e, t)
    return targets


def check_with_targets(tree: CompiledTree) -> None:
    """Raise the error OPA's compiler raises for the first ``with`` target it
    refuses (by location), before it checks for recursion.

    OPA checks targets when it rewrites ``with`` values, a stage before the
    recursion check, which counts targets as dependencies (so a target that
    partially replaces the rule's own document is that error, not recursion).
    Code generation checks each expression's targets again; this runs only
    where the recursion check found a cycle."""
    mods: list[ast.With] = []
    for node in tree.nodes.values():
        for rule in node.rules + ([node.default] if node.default is not None else []):
            _collect_withs(rule, mods)
    _check_all(tree, mods)


def check_query_with_targets(tree: CompiledTree, body: ast.Body) -> None:
    """As :func:`check_with_targets`, for a query's ``body`` (OPA checks its
    targets a stage before it looks for undefined functions)."""
    mods: list[ast.With] = []
    _collect_withs(body, mods)
    _check_all(tree, mods)


def _check_all(tree: CompiledTree, mods: list[ast.With]) -> None:
    for w in sorted(mods, key=lambda w: (w.location.file, w.location.row, w.location.col) if w.location else ("", 0, 0)):
        _target(tree, w)


def _collect_withs(root: object, out: list[ast.With]) -> None:
    stack: list[object] = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, ast.With):
            out.append(x)
        elif x is not None and not isinstance(x, (str, int, float, bool)):
            stack.extend(getattr(x, f) for f in getattr(type(x), "__slots__", ()) if f != "location")


def _target(tree: CompiledTree, w: ast.With) -> Target:
    target = w.target
    head = target.head.name if isinstance(target.head, ast.Var) else ""
    # String keys as strings; any other key stays a term.
    keys = [p.value if isinstance(p, ast.Scalar) and isinstance(p.value, str) else p for p in target.path]
    if head == "input":
        return Target(_data_kind(keys, "input"), tuple(keys), "", w)
    if head == "data":
        _check_partial(tree, keys, w)
        fname = data_function_name(target.path)
        if fname is not None and fname in tree.functions:
            return Target("func", tuple(keys), fname, w)
        return Target(_data_kind(keys, "data"), tuple(keys), "", w)
    name = ".".join([head] + [str(k) for k in keys])
    b = tree.builtin(name) if head and all(type(k) is str for k in keys) else None
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


def _check_partial(tree: CompiledTree, keys: list[Any], w: ast.With) -> None:
    """A target inside a rule's document (below ``data.p.q`` where rules
    define ``q``) would change part of a value the rules compute: refused."""
    cur = tree.root
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
                raise RegoUnsafeVarError(unsafe_var_message(shown_name(names[0])), t.mod.location)
    value = t.mod.value
    if t.kind != "func" and isinstance(value, FuncRef):
        # Only a function's replacement may name a builtin; elsewhere the
        # name is a variable nothing binds.
        raise RegoUnsafeVarError(unsafe_var_message(value.name.split(".")[0]), value.location)


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
        name = data_function_name(value.path)
        if name is not None and name in gen.tree.functions:
            return name
    return None


def _anys(n: int) -> str:
    return ", ".join(["any"] * n)
