"""Rules a ``with`` replaces, as OPA's type checker sees them.

In an expression with ``with data.x.y as v``, where ``data.x.y`` holds rules,
OPA types every rule that reads one of those rules (at any depth, through
other rules and functions) as any: their inferred types no longer hold
there. The replaced rules themselves keep their types, as do rules that read
none of them, and the expressions without the ``with``. Found by asking OPA
v1.20.2: ``c2 if { s0 == 1 }`` and ``f if { 10 / c2 with data.p.s0 as "A" }``
is accepted, ``c2 + "a"`` there reports ``have: (any, string)``.

:class:`ReplacedRules` knows the program's rule nodes and what reads each;
:meth:`ReplacedRules.override` puts a leaf of type any at each such rule's
path in a rules' type tree for the one expression, returning what puts the
tree back. It changes the tree it is given: a program's tree while the
program is checked (one thread), a query's own copy (:func:`copy_tree`).
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast.nodes import Scalar, Var
from pyrego.compile.base import key_raw, path_key
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import Key, Node, TypeEnv, term_key
from pyrego.typecheck.ir import IArray, ICompr, IExpr, IObject, IRef, ISet, Term


class ReplacedRules:
    """The rule nodes (path, id) and, for each node id, the nodes that read it."""

    __slots__ = ("nodes", "dependencies", "_readers")

    def __init__(self, nodes: list[tuple[tuple[str, ...], int]], dependencies: dict[int, set[int]]) -> None:
        self.nodes = nodes
        self.dependencies = dependencies
        self._readers: dict[int, set[int]] | None = None

    @property
    def readers(self) -> dict[int, set[int]]:
        """For each node id, the ids of the nodes that read it (made when first needed)."""
        readers = self._readers
        if readers is None:
            readers = {}
            for nid, deps in self.dependencies.items():
                for d in deps:
                    readers.setdefault(d, set()).add(nid)
            self._readers = readers
        return readers

    def any_typed(self, withs: tuple[Any, ...]) -> list[tuple[str, ...]]:
        """The paths of the rules typed any in an expression with ``withs``."""
        replaced: set[int] = set()
        for w in withs:
            t = w.target
            if type(t) is not IRef:
                continue
            terms = t.terms()
            if not (type(terms[0]) is Var and terms[0].name == "data"):
                continue
            path: list[Any] = []
            for p in terms[1:]:
                if type(p) is not Scalar:
                    break
                path.append(path_key(p))  # (a string, or another key of a function's or rule's ref: KeyPart)
            else:
                n = len(path)
                target = tuple(path)
                replaced.update(nid for p, nid in self.nodes if p[:n] == target)
        if not replaced:
            return []
        found: set[int] = set()
        stack = list(replaced)
        while stack:
            for d in self.readers.get(stack.pop(), ()):
                if d not in found:
                    found.add(d)
                    stack.append(d)
        found -= replaced
        return sorted(p for p, nid in self.nodes if nid in found)

    def override(self, top: Node) -> Callable[[tuple[Any, ...]], Callable[[], None] | None]:
        """For ``top`` (a rules' type tree, from ``data``): what types the rules
        read through an expression's withs as any, returning what undoes it."""

        def apply(withs: tuple[Any, ...]) -> Callable[[], None] | None:
            paths = self.any_typed(withs)
            if not paths:
                return None
            undo: list[tuple[Node, Key, Node | None]] = []
            for path in paths:  # (sorted: a rule above another's is replaced first, put back last)
                names = ("data", *path)
                cur = top
                for i, name in enumerate(names):
                    term: Term = Var(name) if i == 0 else Scalar(key_raw(name))
                    key = term_key(term)
                    assert key is not None
                    child = cur.children.get(key)
                    if i + 1 == len(names):  # the rule's own node: a leaf of type any for now
                        undo.append((cur, key, child))
                        fresh = cur.children[key] = Node(key, child.term if child is not None else term)
                        fresh.value = T.ANY
                    else:
                        if child is None:
                            undo.append((cur, key, None))
                            child = cur.children[key] = Node(key, term)
                        cur = child

            def restore() -> None:
                for parent, key, old in reversed(undo):
                    if old is None:
                        del parent.children[key]
                    else:
                        parent.children[key] = old

            return restore

        return apply


def type_targets(env: TypeEnv, withs: tuple[Any, ...]) -> Callable[[], None] | None:
    """Give each ``input``/``data`` target of an expression's withs, in
    ``env``'s own tree, the union of the type it has and its value's type, for
    the one expression; returns what puts the tree back (None: nothing changed).

    As OPA v1.20.2 checks such an expression: under ``with input.b as "x"``,
    ``input`` is ``object<b: any>[string: any]`` (the type of ``input.b``,
    any, joined with string, is any), and under ``with data.p.q as 1`` a rule
    ``q := "x"`` is ``any<number, string>``; with a schema giving
    ``input.b`` type string, under ``with input.b as 1`` it is
    ``any<number, string>``. A function's target is left as it is (the with
    replaces the function)."""
    undo: list[tuple[Node, Key, Node | None, T.MaybeType]] = []
    root = env.root
    was_typed = root.input_typed
    found: list[tuple[tuple[Term, ...], list[Key | None], T.MaybeType]] = []
    for w in withs:
        t = w.target
        if type(t) is not IRef:
            continue
        terms = t.terms()
        head = terms[0]
        if not (type(head) is Var and head.name in ("input", "data")):
            continue
        keys = [term_key(x) for x in terms]
        if any(k is None for k in keys):
            continue  # (a variable in a target: an unsafe-variable error before)
        have = env.get_by_ref(terms)
        if isinstance(have, T.FunctionType):
            continue
        # (a target its document's type has no place for, a key a schema
        # does not allow, is any)
        found.append((terms, keys, T.ANY if have is None else T.or_(have, env.get_by_value(w.value))))
    # (every type found before any is put: one target's type does not see another's)
    for terms, keys, tpe in found:
        if terms[0].name == "input":  # type: ignore[union-attr]
            root.input_typed = True  # (input's type now has a part)
        cur = env.tree
        for x, key in zip(terms, keys):
            assert key is not None
            child = cur.children.get(key)
            if child is None:
                child = cur.children[key] = Node(key, x)
                undo.append((cur, key, None, None))
            cur = child
        undo.append((cur, cur.key, cur, cur.value))  # type: ignore[arg-type]
        cur.value = tpe
    if not undo:
        return None

    def restore() -> None:
        for parent, key, old, value in reversed(undo):
            if old is None:
                del parent.children[key]
            else:
                old.value = value
        root.input_typed = was_typed

    return restore


def has_with(body: list[IExpr]) -> bool:
    """Whether an expression of ``body``, or of a comprehension in it, has a with."""

    def term(t: Any) -> bool:
        tt = type(t)
        if tt is ICompr:
            return has_with(t.body) or term(t.key) or term(t.term)
        if tt is IRef:
            return any(term(x) for x in t.terms())
        if tt is IArray or tt is ISet:
            return any(term(x) for x in t.items)
        if tt is IObject:
            return any(term(k) or term(v) for k, v in t.items)
        return False

    for e in body:
        if e.withs or has_with(e.body or []):
            return True
        if any(term(x) for x in (*(e.operands or ()), e.term, e.every_key, e.every_value)):
            return True
    return False


def copy_tree(node: Node) -> Node:
    """The nodes of a type tree copied (the types and terms shared)."""
    out = Node(node.key, node.term)
    out.value = node.value
    for k, c in node.children.items():
        out.children[k] = copy_tree(c)
    return out


__all__ = ["ReplacedRules", "copy_tree", "has_with", "type_targets"]
