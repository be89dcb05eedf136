"""OPA's rule index, for instrumented evaluation.

OPA does not try every rule that defines a document: its compiler indexes
the rules of each document by the values their bodies require of ``input``
and base ``data`` (``input.x = "a"``, ``input.x`` merely defined, ``input.x
in ["a", "b"]``, ``input.xs[_] = 1``, a function's arguments) in a trie, and
at evaluation looks the current values up to find the rules that can apply,
in the trie's order, and whether the first rule that succeeds decides the
value ("early exit"). Rules it leaves out are never entered, so their
expressions are not covered and not traced.

pyrego's normal code needs none of this (a body that cannot succeed fails at
its first test, which is cheap); the instrumented program (coverage, traces)
asks this index which definitions and ``else`` branches to evaluate and in
which order, so that it reports what OPA reports. The index is built from
the bodies as OPA compiles them (:mod:`pyrego.compile.opa_form`): a ref that OPA
binds before a call (``__local0__ = input.x``) requires that ref to be
defined.

This follows OPA's ``ast/index.go`` (the trie, ref ordering by frequency,
``internal.member_2`` values, refs ending in a wildcard, the early-exit
rule); ``glob.match`` patterns (a string split at the delimiters, matched as an
array).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.base import COMPLETE, FUNCTION, RuleNode, iter_rule_chain
from pyrego.compile.ground import ground_value, is_ground
from pyrego.runtime.values import UNDEF, BoolKey, equal, freeze

#: A ref the index reads: ("input", keys...), ("data", keys...) or ("args", i).
IndexRef = tuple[Any, ...]


class _Any:
    """A value that matches anything defined (a variable in OPA's index)."""

    def __repr__(self) -> str:
        return "<any>"


ANY = _Any()
#: Where a rule has no requirement on a ref (apart from ``None``, a null constant).
NO_ENTRY = object()
_SCALARS = (str, int, float, bool, Decimal, type(None))


@dataclass
class IndexedRule:
    """One rule (or ``else`` branch) as the index sees it.

    ``chain``: the position of its definition among the document's rules;
    ``branch``: its position in that definition's ``else`` chain;
    ``body``: its body in OPA's compiled form; ``args``: a function's
    parameters; ``value``: its head value when ground, else ``None`` with
    ``ground_value`` False; ``complete``: a complete document or function."""

    chain: int
    branch: int
    body: ast.Body
    args: tuple[ast.Term, ...] = ()
    complete: bool = True
    has_value: bool = True
    ground: bool = False
    value: Any = None


@dataclass
class _Entry:
    ref: IndexRef
    value: Any  # ANY, a frozen scalar, or a tuple of them (an array pattern)


@dataclass(eq=False)
class _Node:
    ref: IndexRef | None = None
    next: _Node | None = None
    any: _Node | None = None
    undefined: _Node | None = None
    scalars: dict[Any, _Node] = field(default_factory=dict)
    array: _Node | None = None
    # glob.match delimiters: a string value is also looked up split at them (as an array)
    mappers: list[str] = field(default_factory=list)
    rules: list[tuple[tuple[int, int], IndexedRule]] = field(default_factory=list)
    value: Any = None  # the first complete rule's head value here (None: none yet)
    has_value: bool = False
    value_ground: bool = False
    multiple: bool = False

    def insert(self, ref: IndexRef, value: Any) -> _Node:
        if self.next is None:
            self.next = _Node(ref)
        return self.next.insert_value(value)

    def insert_value(self, value: Any) -> _Node:
        if value is NO_ENTRY:
            if self.undefined is None:
                self.undefined = _Node()
            return self.undefined
        if value is ANY:
            if self.any is None:
                self.any = _Node()
            return self.any
        if type(value) is tuple:
            if self.array is None:
                self.array = _Node()
            return self.array.insert_array(value)
        child = self.scalars.get(value)
        if child is None:
            child = self.scalars[value] = _Node()
        return child

    def insert_array(self, items: tuple[Any, ...]) -> _Node:
        if not items:
            return self
        head = items[0]
        if head is ANY:
            if self.any is None:
                self.any = _Node()
            return self.any.insert_array(items[1:])
        child = self.scalars.get(head)
        if child is None:
            child = self.scalars[head] = _Node()
        return child.insert_array(items[1:])

    def append(self, prio: tuple[int, int], rule: IndexedRule) -> None:
        self.rules.append((prio, rule))
        if not rule.complete or not rule.has_value:
            return
        if self.has_value and not _same_value(self.value, self.value_ground, rule):
            self.multiple = True
        if not self.has_value:
            self.has_value, self.value, self.value_ground = True, rule.value, rule.ground


def _same_value(value: Any, ground: bool, rule: IndexedRule) -> bool:
    return ground and rule.ground and equal(value, rule.value)


@dataclass
class IndexResult:
    """The definitions to evaluate, in order: (definition position, its
    branches to try in order); ``early_exit``: stop at the first value."""

    rules: list[tuple[int, list[int]]]
    early_exit: bool

    def count(self) -> int:
        return len(self.rules)


class _Traversal:
    def __init__(self) -> None:
        self.unordered: dict[int, list[tuple[tuple[int, int], IndexedRule]]] = {}
        self.ordering: list[int] = []
        self.multiple = False
        self.exist: Any = UNDEF
        self.exist_ground = False

    def add(self, node: _Node) -> None:
        for prio, rule in node.rules:
            nodes = self.unordered.get(prio[0])
            if nodes is None:
                self.ordering.append(prio[0])
                nodes = self.unordered[prio[0]] = []
            if not any(p == prio for p, _ in nodes):
                nodes.append((prio, rule))
        if node.multiple:
            self.multiple = True
        if self.multiple or not node.has_value:
            return
        if (node.value_ground and self.exist is UNDEF) or (
            self.exist is not UNDEF and self.exist_ground and node.value_ground and equal(self.exist, node.value)
        ):
            self.exist, self.exist_ground = node.value, node.value_ground
            return
        self.multiple = True


class RuleIndex:
    """The index of one document's rules (a rule tree node)."""

    def __init__(self, rules: list[IndexedRule], is_virtual: Callable[[tuple[str, ...]], bool]) -> None:
        self.root = _Node()
        self.rules = rules
        #: Each branch's requirements along its path in the trie, by (chain,
        #: branch): (ref, value) pairs, the value ANY, a scalar, an array
        #: pattern (a tuple) or a list of scalars (any of them); see _Builder.origin
        #: for the third field ("eq" for a plain requirement).
        self.paths: dict[tuple[int, int], list[tuple[IndexRef, Any, str]]] = {}
        builder = _Builder(is_virtual)
        for rule in rules:
            builder.update(rule)
        order = builder.sorted()
        prios: dict[int, int] = {}
        for rule in rules:
            prio = prios.get(rule.chain, 0)
            node = self.root
            entries = builder.entries.get(id(rule))
            path = self.paths[rule.chain, rule.branch] = []
            if entries:
                for ref in order:
                    values = [ANY if isinstance(e.value, _Any) else e.value for e in entries if e.ref == ref]
                    if not values:
                        node = node.insert(ref, NO_ENTRY)
                    elif len(values) == 1:
                        parent, origin = node, builder.origin.get((id(rule), ref), "eq")
                        node = node.insert(ref, values[0])
                        path.append((ref, values[0], origin))
                        if type(origin) is tuple and parent.next is not None and origin[2] not in parent.next.mappers:
                            parent.next.mappers.append(origin[2])  # ("glob", pattern, delimiters)
                    elif any(v is ANY for v in values):
                        node = node.insert(ref, ANY)
                        path.append((ref, ANY, builder.origin.get((id(rule), ref), "eq")))
                    else:
                        # Several constants (``x in ["a", "b"]``): the rule
                        # under each, and no deeper refs (as OPA does).
                        path.append((ref, values, builder.origin.get((id(rule), ref), "eq")))
                        for v in values:
                            node.insert(ref, v).append((rule.chain, prio), rule)
                        prio += 1
                        break
                else:
                    node.append((rule.chain, prio), rule)
                    prio += 1
            else:
                node.append((rule.chain, prio), rule)
                prio += 1
            prios[rule.chain] = prio

    def order(self) -> list[int]:
        """The definitions' positions in the order the trie holds them, the
        order of every lookup's result (restricted to the rules it finds):
        a node's rules, then under each ref the rules without a requirement
        on it, those that require it defined, then those of a value."""
        out: list[int] = []
        _order_node(self.root, out)
        return out

    def lookup(self, resolve: Callable[[IndexRef], Any]) -> IndexResult:
        """The rules that can apply when refs have the values ``resolve`` gives (UNDEF: undefined)."""
        tr = _Traversal()
        _traverse_node(self.root, resolve, tr)
        out: list[tuple[int, list[int]]] = []
        chosen: list[IndexedRule] = []
        for pos in tr.ordering:
            nodes = sorted(tr.unordered[pos], key=lambda x: x[0][1])
            out.append((pos, [r.branch for _, r in nodes]))
            chosen.append(nodes[0][1])
        multiple = tr.multiple
        if not multiple:
            last: Any = UNDEF
            for rule in chosen:
                if not rule.complete:
                    multiple = True
                    break
                if rule.has_value:
                    if not rule.ground:
                        continue  # (OPA compares values only; a variable differs from any constant)
                    if last is not UNDEF and not equal(last, rule.value):
                        multiple = True
                        break
                    last = rule.value
        return IndexResult(out, not multiple)

    def walk_order(self, noisy: Callable[[int], bool] = lambda _chain: True) -> tuple[list[int] | None, bool]:
        """The definitions' positions in an order that puts those a lookup
        returns in the order it returns them, for every input where one order
        does that; where the input decides between two definitions, in their
        source order (None: no order keeps the rest).

        A lookup walks the trie: a node's rules, then below it the rules
        without a requirement on the next ref, those requiring it defined,
        then those requiring its value (a string split at ``glob.match``
        delimiters after it, as an array). A definition is returned where the
        walk first meets one of its nodes (its ``else`` branches, each value
        of ``x in ["a", "b"]``). Nodes under different values of one ref
        are never both met (a value is one scalar; a collection fails an
        equality the body tests anyway), except where the ref's members are
        required (``"a" in input.roles``): a collection holding both meets
        them in its own order. An ``else`` branch or a value met before
        another definition and one met after it leave their order to the input.

        ``noisy``: whether a definition can raise or print; two that cannot
        may come in either order (whichever succeeds, the value is the same).
        With the order: whether the input decides between two (noisy) definitions."""
        members = {ref for path in self.paths.values() for ref, _value, origin in path if origin == "member"}
        # Each (chain, position in the walk, choices: ref node -> value taken there).
        leaves: list[tuple[int, int, dict[int, Any]]] = []
        member_nodes: set[int] = set()
        at: dict[int, set[int]] = {}  # chain -> the nodes holding it
        stack: list[tuple[_Node, bool, dict[int, Any], frozenset[int]]] = [(self.root, False, {}, frozenset())]
        while stack:
            node, array, choices, above = stack.pop()
            for _, rule in node.rules:
                held = at.setdefault(rule.chain, set())
                if held.isdisjoint(above):  # (else always met at a node above first)
                    leaves.append((rule.chain, len(leaves), choices))
                held.add(id(node))
            below: list[tuple[_Node, bool, dict[int, Any], frozenset[int]]] = []
            if array:
                # Items of an array pattern: the walk takes any item before a
                # value (a shorter array's rules are not met at a longer one).
                if node.any is not None:
                    below.append((node.any, True, choices, above))
                below += [(child, True, choices, above) for child in node.scalars.values()]
            above = above | {id(node)}
            ref_node = node.next
            if ref_node is not None:
                if ref_node.ref in members:
                    member_nodes.add(id(ref_node))
                for child in (ref_node.undefined, ref_node.any):
                    if child is not None:
                        below.append((child, False, choices, above))
                below += [(child, False, {**choices, id(ref_node): key}, above) for key, child in ref_node.scalars.items()]
                if ref_node.array is not None:
                    below.append((ref_node.array, True, choices, above))
            stack.extend(reversed(below))
        # (A definition met at the root is met there first, whatever the input.)
        at_root = {rule.chain for _, rule in self.root.rules}
        leaves = [leaf for leaf in leaves if leaf[0] not in at_root or leaf[1] < len(self.root.rules)]
        chains = sorted({chain for chain, _, _ in leaves})
        before: set[tuple[int, int]] = set()
        loose: set[tuple[int, int]] = set()  # (pairs whose order the input decides)
        for i, (ca, pa, xa) in enumerate(leaves):
            for cb, pb, xb in leaves[i + 1 :]:
                if ca == cb or not (noisy(ca) or noisy(cb)):
                    continue
                apart = [n for n in xa.keys() & xb.keys() if xa[n] != xb[n]]
                if apart:
                    if any(n in member_nodes for n in apart):
                        loose.add((ca, cb))
                        loose.add((cb, ca))
                    continue  # (else never both met)
                before.add((ca, cb) if pa < pb else (cb, ca))
        loose |= {(a, b) for a, b in before if (b, a) in before}
        # The chains in an order that keeps every fixed "before"; the rest
        # (never both met, unable to raise or print, or decided by the input)
        # in the source order.
        after: dict[int, list[int]] = {c: [] for c in chains}
        incoming = dict.fromkeys(chains, 0)
        for a, b in before - loose:
            after[a].append(b)
            incoming[b] += 1
        ready = [c for c in chains if incoming[c] == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            c = heapq.heappop(ready)
            order.append(c)
            for d in after[c]:
                incoming[d] -= 1
                if incoming[d] == 0:
                    heapq.heappush(ready, d)
        return (order if len(order) == len(chains) else None), bool(loose)


def _order_node(n: _Node | None, out: list[int]) -> None:
    """:meth:`RuleIndex.order` from node ``n`` (functions, not closures calling each other: no reference cycle)."""
    if n is None:
        return
    for prio, _rule in n.rules:
        if prio[0] not in out:
            out.append(prio[0])
    ref = n.next
    if ref is None:
        return
    _order_node(ref.undefined, out)
    _order_node(ref.any, out)
    for child in ref.scalars.values():
        _order_node(child, out)
    _order_array(ref.array, out)


def _order_array(n: _Node | None, out: list[int]) -> None:
    if n is None:
        return
    _order_node(n, out)
    _order_array(n.any, out)
    for child in n.scalars.values():
        _order_array(child, out)


def _traverse_node(node: _Node | None, resolve: Callable[[IndexRef], Any], tr: _Traversal) -> None:
    if node is None:
        return
    tr.add(node)
    _traverse_ref(node.next, resolve, tr)


def _traverse_ref(node: _Node | None, resolve: Callable[[IndexRef], Any], tr: _Traversal) -> None:
    if node is None:
        return
    assert node.ref is not None
    value = resolve(node.ref)
    _traverse_node(node.undefined, resolve, tr)
    if value is UNDEF:
        return
    _traverse_node(node.any, resolve, tr)
    _traverse_value(node, value, resolve, tr)
    for delims in node.mappers:
        mapped = tuple(split_escaped(value, delims)) if type(value) is str else value
        _traverse_value(node, mapped, resolve, tr)


def _traverse_value(node: _Node, value: Any, resolve: Callable[[IndexRef], Any], tr: _Traversal) -> None:
    t = type(value)
    if t is list or t is tuple or t is dict or t is set or t is frozenset:
        if node.array is not None:
            if t is list or t is tuple:
                _traverse_array(node.array, tuple(value), resolve, tr)
            return
        if node.scalars:
            members = value.values() if t is dict else value
            for member in members:
                key = _scalar_key(member)
                if key is not UNDEF:
                    _traverse_node(node.scalars.get(key), resolve, tr)
        return
    key = _scalar_key(value)
    if key is not UNDEF:
        _traverse_node(node.scalars.get(key), resolve, tr)


def _traverse_array(node: _Node | None, items: tuple[Any, ...], resolve: Callable[[IndexRef], Any], tr: _Traversal) -> None:
    if node is None:
        return
    if not items:
        _traverse_node(node, resolve, tr)
        return
    _traverse_array(node.any, items[1:], resolve, tr)
    key = _scalar_key(items[0])
    if key is not UNDEF:
        _traverse_array(node.scalars.get(key), items[1:], resolve, tr)


def _scalar_key(value: Any) -> Any:
    """The trie key of a scalar value (booleans apart from numbers), or UNDEF for a collection."""
    if isinstance(value, _SCALARS) or type(value) is BoolKey:  # (BoolKey: a boolean member of a set)
        return freeze(value)
    return UNDEF


# ---------------------------------------------------------------- building


class _Builder:
    """OPA's ``refindices``: each rule's (ref, value) requirements."""

    def __init__(self, is_virtual: Callable[[tuple[str, ...]], bool]) -> None:
        self.is_virtual = is_virtual
        self.entries: dict[int, list[_Entry]] = {}
        self.frequency: dict[IndexRef, int] = {}
        # (id(rule), ref) -> how its requirement came (for index_guards): "member" from
        # ``ref[_] = v`` or ``v in ref`` (the value among the ref's members), "partial"
        # from ``x in [...]`` with items that are not scalars (not all indexed).
        # ("glob", pattern, delimiters) from ``glob.match(pattern, delimiters, x)``.
        self.origin: dict[tuple[int, IndexRef], Any] = {}
        self.first_seen: dict[IndexRef, tuple[int, ...]] = {}

    def sorted(self) -> list[IndexRef]:
        refs = list(self.frequency)
        refs.sort(key=lambda r: (-self.frequency[r], self.first_seen[r]))
        return refs

    def update(self, rule: IndexedRule) -> None:
        for e in rule.body:
            s = e.statement
            if type(s) is ast.Call and s.op in ("print", "internal.print", "internal.test_case"):
                return  # OPA does not index such rules
        constants: dict[str, Any] = {}
        for e in rule.body:
            if e.with_mods or e.negated:
                continue
            s = e.statement
            if isinstance(s, (ast.Unify, ast.Assign)):
                if not self._wildcard_ref(rule, s.lhs, s.rhs, constants) and not self._wildcard_ref(rule, s.rhs, s.lhs, constants):
                    self._eq(rule, s.lhs, s.rhs, constants)
            elif type(s) is ast.Call:
                if s.op == "equal" and len(s.args) == 2:
                    a, b = s.args
                    if not self._wildcard_ref(rule, a, b, constants) and not self._wildcard_ref(rule, b, a, constants):
                        self._eq(rule, a, b, constants)
                elif s.op == "internal.member_2" and len(s.args) == 2:
                    self._member(rule, s.args[0], s.args[1], constants)
                elif s.op == "glob.match" and len(s.args) == 3:
                    self._glob(rule, *s.args)
            elif type(s) is ast.Ref or (type(s) is ast.Var and s.name in ("input", "data")):
                ref = self._valid_ref(s)
                if ref is not None:
                    self._insert(rule, ref, ANY, s)

    # -- OPA's eqOperandsToRefAndValue and friends ----------------------------------

    def _eq(self, rule: IndexedRule, a: ast.Term, b: ast.Term, constants: dict[str, Any]) -> None:
        if not self._ref_and_value(rule, a, b, constants):
            self._ref_and_value(rule, b, a, constants)

    def _ref_and_value(self, rule: IndexedRule, a: ast.Term, b: ast.Term, constants: dict[str, Any]) -> bool:
        if _is_local_var(a):
            assert isinstance(a, ast.Var)
            if is_ground(b) and not isinstance(b, ast.Var):
                constants[a.name] = b
            bval = _index_value(b)
            if bval is UNDEF:
                return False
            ref = self._var_ref(rule, a.name)
            if ref is not None:
                self._insert(rule, ref, bval, a)
                return True
            return False
        ref = self._valid_ref(a)
        if ref is None:
            return False
        if _is_local_var(b):
            assert isinstance(b, ast.Var)
            known = constants.get(b.name)
            value = _index_value(known) if known is not None else _VarValue(b.name)
            if value is UNDEF:
                value = _VarValue(b.name)
        else:
            value = _index_value(b)
            if value is UNDEF:
                return False
        self._insert(rule, ref, value, a)
        return True

    def _wildcard_ref(self, rule: IndexedRule, a: ast.Term, b: ast.Term, constants: dict[str, Any]) -> bool:
        """``input.xs[_] = 1``: the rule needs 1 among the members of ``input.xs``."""
        if type(a) is not ast.Ref or not a.path or not _is_local_var(a.path[-1]):
            return False
        prefix = ast.Ref(a.head, a.path[:-1], a.location)
        ref = self._valid_ref(prefix)
        if ref is None:
            return False
        if _is_local_var(b):
            assert isinstance(b, ast.Var)
            known = constants.get(b.name)
            value = _index_value(known) if known is not None else UNDEF
        else:
            value = _index_value(b)
        if value is UNDEF or isinstance(value, _Any) or type(value) is tuple:
            return False
        self._insert(rule, ref, value, a)
        self.origin[id(rule), ref] = "member"
        return True

    def _member(self, rule: IndexedRule, lhs: ast.Term, rhs: ast.Term, constants: dict[str, Any]) -> None:
        if _is_local_var(lhs):
            assert isinstance(lhs, ast.Var)
            lref = self._var_ref(rule, lhs.name)
            if lref is not None:
                collection = rhs
                if _is_local_var(rhs):
                    assert isinstance(rhs, ast.Var)
                    collection = constants.get(rhs.name, rhs)
                if isinstance(collection, (ast.Array, ast.SetTerm, ast.Object)) and is_ground(collection):
                    items = [v for _, v in collection.items] if isinstance(collection, ast.Object) else list(collection.items)
                    for item in items:
                        if isinstance(item, ast.Scalar):
                            self._insert(rule, lref, freeze(item.value), lhs)
                        else:
                            self.origin[id(rule), lref] = "partial"
                return
        lval: Any
        if _is_local_var(lhs):
            assert isinstance(lhs, ast.Var)
            known = constants.get(lhs.name)
            lval = _index_value(known) if known is not None else _VarValue(lhs.name)
        elif isinstance(lhs, ast.Scalar):
            lval = freeze(lhs.value)
        else:
            return
        if type(rhs) is ast.Ref:
            rref = self._valid_ref(rhs)
        elif _is_local_var(rhs):
            assert isinstance(rhs, ast.Var)
            rref = self._var_ref(rule, rhs.name)
            # (OPA validates the collection's ref as a root document's, so a
            # function's argument, ``x in arg``, is not indexed.)
            if rref is not None and (rref[0] == "args" or not self._valid_key(rref)):
                rref = None
        else:
            return
        if rref is not None and lval is not UNDEF:
            self._insert(rule, rref, lval, rhs)
            if not isinstance(lval, _Any) and self.origin.get((id(rule), rref)) != "partial":
                self.origin[id(rule), rref] = "member"

    def _glob(self, rule: IndexedRule, pattern: ast.Term, delims: ast.Term, match: ast.Term) -> None:
        """``glob.match("a.*", ["."], x)`` (x bound to a ref, or an argument):
        the ref's value split at the delimiters must match the pattern's parts
        (``*``: any part; a pattern with other special characters is not indexed)."""
        if type(pattern) is not ast.Scalar or type(pattern.value) is not str or type(delims) is not ast.Array:
            return
        if not all(type(d) is ast.Scalar and type(d.value) is str for d in delims.items):
            return
        if not _is_local_var(match) or "\\" in pattern.value:
            # (OPA indexes an escaped part as written, so it skips a rule whose
            # pattern would match: pyrego evaluates it, in every form.)
            return
        assert isinstance(match, ast.Var)
        ref = self._var_ref(rule, match.name)
        if ref is None:
            return
        sep = "".join(d.value for d in delims.items) or "."  # type: ignore[misc, union-attr]
        parts: list[Any] = []
        for part in split_escaped(pattern.value, sep):
            if part == "*":
                parts.append(ANY)
                continue
            escaped = False
            for c in part:
                if c == "\\":
                    escaped = not escaped
                    continue
                if not escaped and c in "[?{*":
                    return
                escaped = False
            parts.append(part)
        self._insert(rule, ref, tuple(parts), match)
        self.origin[id(rule), ref] = ("glob", pattern.value, sep)

    def _var_ref(self, rule: IndexedRule, name: str) -> IndexRef | None:
        """The ref a variable was bound to (``__local0__ = input.x``), or a function parameter."""
        for entry in self.entries.get(id(rule), ()):
            if isinstance(entry.value, _VarValue) and entry.value.name == name:
                return entry.ref
        for i, arg in enumerate(rule.args):
            if type(arg) is ast.Var and arg.name == name:
                return ("args", i)
        return None

    def _valid_ref(self, t: ast.Term) -> IndexRef | None:
        """OPA's ``isValidIndexRef``: a ground ref into input or base data."""
        path: tuple[ast.Term, ...]
        if type(t) is ast.Var and t.name in ("input", "data"):
            head, path = t.name, ()
        elif type(t) is ast.Ref and type(t.head) is ast.Var and t.head.name in ("input", "data"):
            head, path = t.head.name, t.path
        else:
            return None
        keys: list[Any] = [head]
        for p in path:
            if type(p) is not ast.Scalar:
                return None
            keys.append(p.value)
        ref = tuple(keys)
        return ref if self._valid_key(ref) else None

    def _valid_key(self, ref: IndexRef) -> bool:
        return not (ref[0] == "data" and self.is_virtual(tuple(ref[1:])))

    def _insert(self, rule: IndexedRule, ref: IndexRef, value: Any, where: Any) -> None:
        self.frequency[ref] = self.frequency.get(ref, 0) + 1
        if ref not in self.first_seen:
            loc = getattr(where, "location", None)
            # (OPA breaks a tie in frequency by the location of the ref's head;
            # a function argument's has none, which sorts after every location.)
            self.first_seen[ref] = (0, loc.file, loc.row, loc.col) if loc is not None and ref[0] != "args" else (1,)
        entries = self.entries.setdefault(id(rule), [])
        new_is_var = isinstance(value, _Any)
        for pos, other in enumerate(entries):
            if other.ref == ref:
                if _index_equal(other.value, value):
                    return
                if not new_is_var and isinstance(other.value, _Any):
                    entries[pos] = _Entry(ref, value)
                    return
        entries.append(_Entry(ref, value))


class _VarValue(_Any):
    """An "any" value that remembers the variable it was bound to (for ``_var_ref``)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _index_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, _Any) or isinstance(b, _Any):
        return isinstance(a, _VarValue) and isinstance(b, _VarValue) and a.name == b.name
    return bool(a == b)


def _is_local_var(t: Any) -> bool:
    return type(t) is ast.Var and t.name not in ("input", "data")


def _index_value(t: ast.Term | None) -> Any:
    """OPA's ``indexValue``: a scalar, a variable (any value) or an array of those; else UNDEF."""
    if t is None:
        return UNDEF
    if type(t) is ast.Scalar:
        return freeze(t.value)
    if type(t) is ast.Var:
        return _VarValue(t.name)
    if type(t) is ast.Array:
        items: list[Any] = []
        for item in t.items:
            if type(item) is ast.Scalar:
                items.append(freeze(item.value))
            elif type(item) is ast.Var:
                items.append(ANY)
            else:
                return UNDEF
        return tuple(items)
    return UNDEF


def split_escaped(s: str, delims: str) -> list[str]:
    """``s`` split at each character of ``delims`` not escaped by a backslash (as OPA's index splits)."""
    out: list[str] = []
    last = 0
    escaped = False
    for i, c in enumerate(s):
        if c == "\\" or escaped:
            escaped = not escaped
            continue
        if c in delims:
            out.append(s[last:i])
            last = i + 1
    out.append(s[last:])
    return out


def head_value(rule: ast.Rule) -> tuple[bool, bool, Any]:
    """(has a value, value is ground, the value) of a rule's head for the early-exit test."""
    value = rule.head.value
    if value is None:
        return False, False, None
    if is_ground(value):
        return True, True, ground_value(value)
    return True, False, None


__all__ = ["ANY", "NO_ENTRY", "split_escaped", "IndexResult", "IndexedRule", "RuleIndex", "head_value", "never_exits_early", "one_constant_value"]


def never_exits_early(node: RuleNode) -> bool:
    """Whether OPA evaluates every definition of the complete document
    ``node`` whatever their values: where one of them is a rule whose ref is
    longer than its name and which has no body (``o.b := 1``; one with a
    body, ``o.b := 1 if true``, does not stop this, as OPA shows)."""
    return node.kind == COMPLETE and any(rule.head.ref.path and not rule.body for rule in node.rules)


def one_constant_value(node: RuleNode) -> bool:
    """Whether ``node`` is a complete rule or function whose definitions (all
    their branches; not the default) all have one constant value: OPA then
    stops at the first definition that succeeds."""
    if node.kind not in (COMPLETE, FUNCTION) or not node.rules:
        return False
    if never_exits_early(node):
        return False
    first: Any = None
    seen = False
    for rule in node.rules:
        for branch in iter_rule_chain(rule):
            has, ground, value = head_value(branch)
            if not (has and ground):
                return False
            if seen and not (type(value) is type(first) and equal(value, first)):
                return False
            first, seen = value, True
    return True
