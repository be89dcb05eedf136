"""The compiler's shapes: the kinds of document, :class:`RuleNode` (a
document under ``data`` and its rules), :class:`FuncRef`, package paths, and
:class:`CompiledTree` (the checked rule tree), with the walks over rules that
the compile stages, the type checker and the code generator share.

The bottom of the compile layer: it imports no other compile stage, and
nothing of :mod:`pyrego.typecheck`, which reads these shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.builtins.registry import REGISTRY, Builtin
from pyrego.builtins.registry import lookup as lookup_builtin
from pyrego.errors import RegoCompileError
from pyrego.parse.nodes import new_ref, new_scalar, new_var
from pyrego.runtime.values import BoolKey, freeze

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
    # On the root: whether each document's evaluation can raise, by node id
    # (compile.index_guards; made once per program, on first use).
    raises_memo: dict[int, bool | None] | None = field(default=None, repr=False)
    # The same with strict builtin errors (a builtin's error raises too).
    strict_raises_memo: dict[int, bool | None] | None = field(default=None, repr=False)

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


class KeyPart(str):
    """A constant key of a function's ref that is not a string (the ``1`` of
    ``a[1].x(v)``), as a part of a node's path: OPA's rule tree holds such a
    function at a node of its own (``a``, ``1``, ``x``), so a read of
    ``data.p.a`` gives ``{1: {}}``. Its text is the key as written; it
    hashes and compares as the key's frozen form (``children.get(1)`` finds
    it, as :func:`path_key` looks keys up), never as a string (a key ``"1"``
    is another node). ``raw``: the key; ``value``: its frozen form."""

    raw: Any
    value: Any

    def __new__(cls, raw: Any, text: str) -> KeyPart:
        """The part for the key ``raw``, written ``text``."""
        part = str.__new__(cls, text)
        part.raw, part.value = raw, freeze(raw)
        return part

    def __eq__(self, other: object) -> bool:
        if type(other) is KeyPart:
            other = other.value
        elif isinstance(other, str):
            return False
        elif type(other) is bool:
            other = freeze(other)
        v = self.value
        if v is None or other is None or type(v) is BoolKey or type(other) is BoolKey:
            return v is other
        return bool(v == other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __reduce__(self) -> Any:
        return (KeyPart, (self.raw, str(self)))


def path_key(term: Any) -> Any:
    """What a constant key of a ref is looked up by among a node's children
    (a string, or a :class:`KeyPart`'s frozen key); None for other terms."""
    if type(term) is not ast.Scalar:
        return None
    v = term.value
    return freeze(v) if type(v) is bool else v


def child_at(node: RuleNode, key: Any) -> RuleNode | None:
    """The child of ``node`` that a ref's constant key reads: a string's, a
    :class:`KeyPart`'s (``a[1].x := 1``), or the string its text is (an
    index of base data: ``data.p[0]`` may be ``"0"``)."""
    if type(key) is str:
        return node.children.get(key)
    try:
        child = node.children.get(freeze(key) if type(key) is bool else key)
    except TypeError:  # (a composite key)
        return None
    return child if child is not None else node.children.get(str(key))


def key_value(part: str) -> Any:
    """The key a part of a node's path stands for in a document (a
    :class:`KeyPart`'s value, else the string)."""
    return part.value if type(part) is KeyPart else part


def key_raw(part: str) -> Any:
    """The key a part of a node's path stands for in a ref (a
    :class:`KeyPart`'s key as written, else the string)."""
    return part.raw if type(part) is KeyPart else part


def ast_path_text(path: tuple[str, ...]) -> str:
    text = "data"
    for p in path:
        if type(p) is KeyPart:
            text += f"[{p}]"
        else:
            text += "." + p if p.isidentifier() else f'["{p}"]'
    return text


def function_name(path: tuple[str, ...]) -> str:
    """The name a call of the function at ``path`` is written by
    (``data.p.a[1].x``, as :attr:`ast.Call.op` holds it)."""
    if not any(type(p) is KeyPart for p in path):
        return ".".join(("data",) + path)
    parts = tuple([ast.Scalar(p.raw, text=str(p)) if type(p) is KeyPart else ast.Scalar(p) for p in path])
    return ast.ref_to_string(ast.Ref(ast.Var("data"), parts), written=True)


def data_function_name(path: tuple[ast.Term, ...]) -> str | None:
    """The name of the function ``data.<path>`` would be (as
    :func:`function_name` writes it); None where a key is not a constant."""
    if not all(type(p) is ast.Scalar for p in path):
        return None
    return function_name(tuple([key_part(p) for p in path]))  # type: ignore[arg-type]


def key_part(term: ast.Scalar) -> str:
    """A constant key of a function's ref as a part of its node's path."""
    v = term.value
    if type(v) is str:
        return v
    return KeyPart(v, "null" if v is None else "true" if v is True else "false" if v is False else term.text or str(v))


def data_ref(path: tuple[str, ...], location: ast.Location) -> ast.Ref:
    return new_ref(new_var("data", location), tuple([new_scalar(p, location) for p in path]), location)


def package_path(module: ast.Module) -> tuple[str, ...]:
    parts = []
    for p in module.package.path:
        if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
            raise RegoCompileError("package path must be strings", module.package.location)
        parts.append(p.value)
    return tuple(parts)


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
    # Some rule calls print (the order of definitions then shows in what is printed).
    calls_print: bool = False
    # The ids of the nodes whose rules call print (else branches, closures included).
    printing_nodes: frozenset[int] = frozenset()
    # Some rule calls print or a nondeterministic builtin (``http.send``, ...): what runs shows beyond the values.
    impure: bool = False
    # The ids of the nodes whose rules hold a comprehension or an ``every``,
    # or call a ``rego.*`` builtin (as name resolution found them); None: not known.
    nested_nodes: frozenset[int] | None = None
    # The rules (each else branch alike, as parsed and as resolved) that name
    # resolution found with no local variable in head or body and nothing
    # nested (see nested_nodes), and the bodies it resolved for them (a fact
    # of the body alone: the empty body is shared); by id, each kept to tell
    # a new object of the same id. None: not known.
    var_free_rules: dict[int, ast.Rule] | None = None
    var_free_bodies: dict[int, ast.Body] | None = None
    # OPA's numbers of the rules' local variables (a typecheck.some_vars.LocalVarNumbers), made on first use.
    local_var_numbers: Any = None

    def builtin(self, op: str) -> Builtin | None:
        """The builtin (or extension) called ``op``."""
        return find_builtin(op, self.extensions, self.allowed_builtins)

    def callee(self, op: str) -> tuple[RuleNode | None, Builtin | None]:
        """What a call of ``op`` calls: a function of the policies, else a builtin (or neither)."""
        node = self.functions.get(op)
        if node is not None:
            return node, None
        return None, find_builtin(op, self.extensions, self.allowed_builtins)

    def called_document(self, op: str) -> RuleNode | None:
        """The document with rules of its own that a call ``op`` (``data.a.f``)
        names where ``op`` is no function: OPA reads a rule ``f() := v if
        { ... }`` (no function of no arguments there) as a document."""
        node = self.nodes.get(tuple(op.split(".")[1:])) if op.startswith("data.") else None
        return node if node is not None and node.has_rules() else None

    def arity(self, op: str) -> int | None:
        """The number of arguments ``op`` takes (None: no such function).

        :meth:`callee` and :func:`find_builtin`, written out: compiling asks
        this for every call, and most calls are of builtins already loaded."""
        node = self.functions.get(op)
        if node is not None:
            return node.arity
        b = self.extensions.get(op)
        if b is None:
            allowed = self.allowed_builtins
            if allowed is not None and op not in allowed:
                return None
            b = REGISTRY.get(op) or lookup_builtin(op)
            if b is None:
                return None
        return b.arity


def find_builtin(op: str, extensions: dict[str, Builtin], allowed: frozenset[str] | None) -> Builtin | None:
    """The extension or builtin called ``op``, where ``allowed`` (None: all) lets it be called."""
    ext = extensions.get(op)
    if ext is not None:
        return ext
    if allowed is not None and op not in allowed:
        return None
    return lookup_builtin(op)


@dataclass
class Uses:
    """The calls and the refs rooted at ``data`` in the rules of one node."""

    calls: list[ast.Call]
    data_refs: list[ast.Ref]


def ground_prefix(path: tuple[ast.Term, ...]) -> tuple[tuple[str, ...], tuple[ast.Term, ...]]:
    ground: list[str] = []
    for i, p in enumerate(path):
        if isinstance(p, ast.Scalar) and isinstance(p.value, str):
            ground.append(p.value)
        else:
            return tuple(ground), path[i:]
    return tuple(ground), ()


def rule_suffix(pkg_len: int, rule: ast.Rule) -> tuple[ast.Term, ...]:
    """The non-ground part of a rule's head ref (the keys of a partial object)."""
    return ground_prefix(rule.head.ref.path)[1]


def scalar_key(term: Any) -> Any:
    """A constant key (a string, or a term) as OPA's rule tree compares keys
    (a number by its text: ``1`` and ``1.0`` are two nodes there); None for
    a term that is not a scalar."""
    if type(term) is str:
        return ("str", term)
    if type(term) is not ast.Scalar:
        return None
    v = term.value
    if v is None or type(v) in (bool, str):
        return (type(v).__name__, v)
    return ("number", term.text or str(v))


def tree_keys(rule: ast.Rule) -> tuple[Any, ...]:
    """The scalars that start ``rule``'s path after its constant strings (as
    :func:`scalar_key` gives them): where OPA's rule tree holds the rule,
    below the node of those strings."""
    out = []
    for k in rule_suffix(0, rule):
        key = scalar_key(k)
        if key is None:
            break
        out.append(key)
    return tuple(out)


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
