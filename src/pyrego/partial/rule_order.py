"""The order in which OPA visits the rules of one document.

OPA's partial evaluation (with rule indexing off, as its Compile API runs
it) walks its rule index, a trie built from the rule bodies as OPA's
compiler leaves them, and inlines the rules in the order the walk meets
them. That order is the order of the residual queries, so of a filter's
``OR`` terms.

The compiled bodies (:class:`pyrego.compile.opa_form.OpaForm`): nested calls are
expressions of their own, and a ref among a call's operands is first bound
to a variable (``__local0__ = input.t.a; gt(__local0__, 3)``). From them
each rule gets *indices*, one or more values per ground ``input``/base-data
ref (or function argument):

- ``ref = scalar`` / ``ref = [scalars or vars]``: that value; ``ref = var``
  (and a ref used as a statement): any value; a variable bound to a
  constant earlier stands for the constant; ``ref[_] = scalar`` indexes
  ``ref`` with the scalar;
- ``var in [constants]`` where ``var`` was bound to a ref: each constant.

The refs are ordered by how often they are indexed (most first, then by
where they first appear); a rule sits in the trie along its values, one
level per ref (a rule with several constant values for one ref sits under
each); a rule without indices sits at the root. The walk visits a node's
rules, then what any value matches, what does not index the ref, each value
(grouped by OPA's hash of the value, in insertion order, each group newest
first: where OPA iterates a Go map, the order it takes most often), arrays,
and the next level.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.body_order import reorder_body
from pyrego.compile.opa_form import OpaForm, PieceTable
from pyrego.compile.safety import stmt_vars, term_vars
from pyrego.errors import RegoError
from pyrego.runtime.values import freeze, sorted_values

_PRINT = frozenset({"print", "internal.print", "internal.test_case"})


class _Any:
    """An index value that matches anything (a variable)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Any) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def _opa_hash(key: Any) -> Any:
    """The hash OPA's trie keys a scalar by: null and false are 0, true 1, a
    number its integer part; values with one hash share a chain."""
    from pyrego.runtime.values import BoolKey

    if key is None:
        return 0
    if isinstance(key, BoolKey):
        return 1 if key.value else 0
    if isinstance(key, (int, float)) or type(key).__name__ == "Decimal":
        try:
            return int(key)
        except (OverflowError, ValueError):
            return ("n", key)
    return ("s", key)


class _Scalars:
    """OPA's map of scalar values: a Go map from hash to a chain of entries,
    each chain listing its newest entry first."""

    __slots__ = ("chains",)

    def __init__(self) -> None:
        self.chains: dict[Any, list[tuple[Any, _Node]]] = {}

    def get(self, key: Any) -> _Node | None:
        for k, node in self.chains.get(_opa_hash(key), ()):
            if k == key:
                return node
        return None

    def put(self, key: Any, node: _Node) -> None:
        self.chains.setdefault(_opa_hash(key), []).insert(0, (key, node))

    def values(self) -> list[_Node]:
        return [node for chain in self.chains.values() for _, node in chain]


class _Node:
    __slots__ = ("rules", "any", "undefined", "scalars", "array", "next")

    def __init__(self) -> None:
        self.rules: list[int] = []
        self.any: _Node | None = None
        self.undefined: _Node | None = None
        self.scalars = _Scalars()
        self.array: _Node | None = None
        self.next: _Node | None = None

    def insert(self, value: Any) -> _Node:
        """The child for ``value`` under this ref node (None: the rule does not index the ref)."""
        if value is None:
            if self.undefined is None:
                self.undefined = _Node()
            return self.undefined
        if isinstance(value, _Any):
            if self.any is None:
                self.any = _Node()
            return self.any
        if value[0] == "scalar":
            child = self.scalars.get(value[1])
            if child is None:
                child = _Node()
                self.scalars.put(value[1], child)
            return child
        if self.array is None:
            self.array = _Node()
        return self.array.insert_array(value[1])

    def insert_array(self, items: tuple[Any, ...]) -> _Node:
        if not items:
            return self
        head, rest = items[0], items[1:]
        if isinstance(head, _Any):
            if self.any is None:
                self.any = _Node()
            return self.any.insert_array(rest)
        child = self.scalars.get(head[1])
        if child is None:
            child = _Node()
            self.scalars.put(head[1], child)
        return child.insert_array(rest)

    def walk(self, out: list[int]) -> None:
        for i in self.rules:
            if i not in out:
                out.append(i)
        for child in (self.any, self.undefined):
            if child is not None:
                child.walk(out)
        for child in self.scalars.values():
            child.walk(out)
        for child in (self.array, self.next):
            if child is not None:
                child.walk(out)


class _Indices:
    """The indices of each rule and how often each ref is indexed."""

    def __init__(self, is_virtual: Callable[[tuple[Any, ...]], bool]) -> None:
        self.is_virtual = is_virtual
        self.rules: list[list[tuple[Any, Any]]] = []
        self.frequency: dict[Any, int] = {}
        self.first_seen: dict[Any, tuple[int, int]] = {}

    def insert(self, indices: list[tuple[Any, Any]], key: Any, value: Any, where: tuple[int, int]) -> None:
        self.frequency[key] = self.frequency.get(key, 0) + 1
        self.first_seen.setdefault(key, where)
        for pos, (k, v) in enumerate(indices):
            if k == key:
                if v == value:
                    return
                if not isinstance(value, _Any) and isinstance(v, _Any):
                    indices[pos] = (key, value)
                    return
        indices.append((key, value))

    def valid_ref(self, t: Any) -> tuple[Any, ...] | None:
        """A ground, non-nested input/base-data ref's key, or None."""
        if isinstance(t, ast.Var) and t.name in ("input", "data"):
            t = ast.Ref(t, (), t.location)
        if not isinstance(t, ast.Ref) or not isinstance(t.head, ast.Var) or t.head.name not in ("input", "data"):
            return None
        key: list[Any] = [t.head.name]
        for p in t.path:
            if not isinstance(p, ast.Scalar):
                return None
            key.append(freeze(p.value))
        out = tuple(key)
        if out[0] == "data" and self.is_virtual(out):
            return None
        return out


def rule_order(
    rules: list[ast.Rule],
    is_virtual: Callable[[tuple[Any, ...]], bool],
    arity: Callable[[str], int | None],
) -> list[int]:
    """The positions of ``rules`` (not the default) in the order OPA's index walk visits them."""
    idx = _Indices(is_virtual)
    form = OpaForm(PieceTable(), lambda _file: None)
    for rule in rules:
        indices: list[tuple[Any, Any]] = []
        body = _compiled(form, rule, arity)
        if body is not None and not any(isinstance(e.statement, ast.Call) and e.statement.op in _PRINT for e in body):
            constants: dict[str, Any] = {}
            args = [a.name if isinstance(a, ast.Var) else None for a in (rule.head.args or ())]
            for e in body:
                _update(idx, indices, e, constants, args)
        idx.rules.append(indices)
    refs = sorted(idx.frequency, key=lambda k: (-idx.frequency[k], idx.first_seen[k]))
    root = _Node()
    for i, indices in enumerate(idx.rules):
        node = root
        placed = False
        if indices:
            for ref in refs:
                values = [v for k, v in indices if k == ref]
                if node.next is None:
                    node.next = _Node()
                ref_node = node.next
                if not values:
                    node = ref_node.insert(None)
                elif len(values) == 1:
                    node = ref_node.insert(values[0])
                elif any(isinstance(v, _Any) for v in values):
                    node = ref_node.insert(values[0] if isinstance(values[0], _Any) else _Any("__any__"))
                else:
                    for v in values:
                        ref_node.insert(v).rules.append(i)
                    placed = True
                    break
        if not placed:
            node.rules.append(i)
    order: list[int] = []
    root.walk(order)
    return order


def _compiled(form: OpaForm, rule: ast.Rule, arity: Callable[[str], int | None]) -> ast.Body | None:
    """The rule's body as OPA's compiler leaves it (None where it cannot be made)."""
    bound: set[str] = set()
    for a in rule.head.args or ():
        term_vars(a, bound)
    try:
        split = form.split(rule.body)
        own = set(bound).union(*[stmt_vars(e.statement, set()) for e in split])
        ordered, _ = reorder_body(split, set(bound), own, arity, bind_operands=False)
        return form.bind(ordered)
    except (RegoError, RecursionError):
        return None


def _update(idx: _Indices, indices: list[tuple[Any, Any]], e: ast.Expr, constants: dict[str, Any], args: list[str | None]) -> None:
    if e.negated or e.with_mods:
        return
    s = e.statement
    if isinstance(s, ast.Ref) or (isinstance(s, ast.Var) and s.name in ("input", "data")):
        key = idx.valid_ref(s)
        if key is not None:
            idx.insert(indices, key, _Any("__any__"), _where(s))
        return
    if isinstance(s, (ast.Unify, ast.Assign)):
        a, b = s.lhs, s.rhs
    elif isinstance(s, ast.Call) and s.op == "equal" and len(s.args) == 2:
        a, b = s.args
    elif isinstance(s, ast.Call) and s.op == "internal.member_2" and len(s.args) == 2:
        _update_member(idx, indices, s.args[0], s.args[1], constants, args)
        return
    else:
        return
    if _wildcard(idx, indices, a, b, constants) or _wildcard(idx, indices, b, a, constants):
        return
    if not _eq(idx, indices, a, b, constants, args):
        _eq(idx, indices, b, a, constants, args)


def _where(t: Any) -> tuple[int, int]:
    head = t.head if isinstance(t, ast.Ref) else t
    loc = head.location
    return (loc.row, loc.col)


def _index_value(b: Any) -> Any:
    if isinstance(b, ast.Scalar):
        return ("scalar", freeze(b.value))
    if isinstance(b, ast.Var):
        return _Any(b.name)
    if isinstance(b, ast.Array):
        items: list[Any] = []
        for x in b.items:
            if isinstance(x, ast.Scalar):
                items.append(("scalar", freeze(x.value)))
            elif isinstance(x, ast.Var):
                items.append(_Any(x.name))
            else:
                return None
        return ("array", tuple(items))
    return None


def _resolve_var(indices: list[tuple[Any, Any]], args: list[str | None], name: str) -> Any:
    for k, v in indices:
        if isinstance(v, _Any) and v.name == name:
            return k
    for i, arg in enumerate(args):
        if arg == name:
            return ("args", i)
    return None


def _eq(idx: _Indices, indices: list[tuple[Any, Any]], a: Any, b: Any, constants: dict[str, Any], args: list[str | None]) -> bool:
    if isinstance(a, ast.Var) and a.name not in ("input", "data"):
        if _constant(b):
            constants[a.name] = b
        value = _index_value(b)
        if value is None:
            return False
        ref = _resolve_var(indices, args, a.name)
        if ref is not None:
            idx.insert(indices, ref, value, (1 << 30, 0) if ref[0] == "args" else (0, 0))
            return True
        return False
    key = idx.valid_ref(a)
    if key is None:
        return False
    if isinstance(b, ast.Var) and b.name in constants:
        b = constants[b.name]
    value = _index_value(b)
    if value is None:
        return False
    idx.insert(indices, key, value, _where(a))
    return True


def _wildcard(idx: _Indices, indices: list[tuple[Any, Any]], a: Any, b: Any, constants: dict[str, Any]) -> bool:
    """``ref[_] = scalar``: index the ref's ground prefix with the scalar."""
    if not isinstance(a, ast.Ref) or not a.path or isinstance(a.path[-1], ast.Scalar):
        return False
    prefix = ast.Ref(a.head, a.path[:-1], a.location)
    if not isinstance(a.path[-1], ast.Var):
        return False
    key = idx.valid_ref(prefix)
    if key is None:
        return False
    if isinstance(b, ast.Var):
        b = constants.get(b.name, b)
    if not isinstance(b, ast.Scalar):
        return False
    idx.insert(indices, key, ("scalar", freeze(b.value)), _where(a))
    return True


def _constant(t: Any) -> bool:
    if isinstance(t, ast.Scalar):
        return True
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return all(_constant(x) for x in t.items)
    if isinstance(t, ast.Object):
        return all(_constant(k) and _constant(v) for k, v in t.items)
    return False


def _update_member(idx: _Indices, indices: list[tuple[Any, Any]], lhs: Any, rhs: Any, constants: dict[str, Any], args: list[str | None]) -> None:
    if isinstance(lhs, ast.Var):
        ref = _resolve_var(indices, args, lhs.name)
        if ref is not None:
            if isinstance(rhs, ast.Var):
                rhs = constants.get(rhs.name, rhs)
            items: list[Any] = []
            if isinstance(rhs, ast.Array):
                items = list(rhs.items)
            elif isinstance(rhs, ast.SetTerm) and _constant(rhs):
                from pyrego.compile.ground import ground_value

                items = [ast.Scalar(v) if not isinstance(v, (list, dict, frozenset)) else ast.Array(()) for v in sorted_values(ground_value(rhs))]
            elif isinstance(rhs, ast.Object):
                items = [v for _, v in rhs.items]
            where = (1 << 30, 0) if ref[0] == "args" else (0, 0)
            for x in items:
                item = ("scalar", freeze(x.value)) if isinstance(x, ast.Scalar) else _index_value(x)
                if item is not None:
                    idx.insert(indices, ref, item, where)
            return
        known: Any = constants.get(lhs.name)
        if known is None:
            return
        lval = known
    elif isinstance(lhs, ast.Scalar):
        lval = lhs
    else:
        return
    key = idx.valid_ref(rhs)
    if key is None and isinstance(rhs, ast.Var):
        key = _resolve_var(indices, args, rhs.name)
        if key is not None and key[0] != "args" and not idx.valid_ref(ast.Ref(ast.Var(key[0]), tuple(ast.Scalar(p) for p in key[1:]))):
            key = None
    if key is None or not isinstance(lval, ast.Scalar):
        return
    idx.insert(indices, key, ("scalar", freeze(lval.value)), _where(rhs) if isinstance(rhs, ast.Ref) else (0, 0))
