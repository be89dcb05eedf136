"""Partial evaluation of references: ``input``, ``data``, and refs into values.

A ref that overlaps an unknown (:mod:`pyrego.partial.unknowns`) is not
looked up: it is the result itself, a residual ref with the known parts of
its path plugged in. Other refs are looked up in the known input, base data,
or rule documents (:mod:`pyrego.partial.rules`); a variable in the path
iterates, and a path part that is unknown iterates the known keys with a
saved equality for each (``input.tickets.role = "admin"``), as OPA does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import RuleNode, key_raw, path_key
from pyrego.partial.base import EvalBase
from pyrego.partial.bindings import Scope
from pyrego.partial.terms import Known
from pyrego.partial.unknowns import path_overlaps
from pyrego.runtime.values import UNDEF, freeze, thaw


class RefsMixin(EvalBase):
    """Evaluation of refs (mixed into :class:`~pyrego.partial.evaluator.Evaluator`)."""

    def ref(self, t: ast.Ref, scope: Scope, against: Any = None) -> Iterator[Any]:
        head = t.head
        if type(head) is ast.Var and head.name == "input":
            yield from self.input_ref(t.path, scope)
        elif type(head) is ast.Var and head.name == "data":
            yield from self.data_ref(t.path, scope, against)
        else:
            for base in self.term(head, scope):
                yield from self.walk(self.env.resolve(base), t.path, scope)

    def plugged_path(self, path: tuple[ast.Term, ...], scope: Scope, i: int = 0, done: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """The path's parts with what is known plugged in; unbound variables stay (they iterate later)."""
        if i == len(path):
            yield done
            return
        p = path[i]
        if type(p) is ast.Scalar:
            yield from self.plugged_path(path, scope, i + 1, done + (Known(p.value),))
            return
        if type(p) is ast.Var:
            yield from self.plugged_path(path, scope, i + 1, done + (self.env.plug(ast.Var(scope.var(p.name), p.location)),))
            return
        for v in self.term(p, scope):
            yield from self.plugged_path(path, scope, i + 1, done + (self.env.plug(v),))

    # -- input -------------------------------------------------------------------------------

    def input_ref(self, path: tuple[ast.Term, ...], scope: Scope) -> Iterator[Any]:
        for parts in self.plugged_path(path, scope):
            ground, whole = _ground(parts)
            if path_overlaps(self.unknowns, ("input",) + ground, whole):
                yield ast.Ref(ast.Var("input"), parts)
                continue
            if self.input is UNDEF:
                continue
            yield from self.walk_parts(Known(self.input), parts, 0)

    # -- data --------------------------------------------------------------------------------

    def data_ref(self, path: tuple[ast.Term, ...], scope: Scope, against: Any = None) -> Iterator[Any]:
        for parts in self.plugged_path(path, scope):
            ground, whole = _ground(parts)
            if path_overlaps(self.unknowns, ("data",) + ground, whole):
                yield ast.Ref(ast.Var("data"), parts)
                continue
            site = path[-1].location if path else self.where[-1]
            yield from self._data_walk(self.tree.root, parts, 0, (), scope, against, site)

    def _data_walk(
        self, node: RuleNode, parts: tuple[Any, ...], i: int, prefix: tuple[Any, ...], scope: Scope, against: Any, site: ast.Location
    ) -> Iterator[Any]:
        if node.has_rules():
            yield from self.rule_document(node, parts[i:], scope, against, site)
            return
        if i == len(parts):
            if node.children and self.deps.subtree(node):
                yield ast.Ref(ast.Var("data", site), tuple(ast.Scalar(key_raw(p), site) for p in prefix), site)
                return
            value = self.known.document(prefix)
            if value is not UNDEF:
                yield Known(value)
            return
        key = self.env.resolve(parts[i])
        if type(key) is Known:
            child = node.children.get(path_key(ast.Scalar(key.value))) if type(key.value) in _KEY_TYPES else None
            if child is not None:  # (a string, or a function's other key: KeyPart)
                yield from self._data_walk(child, parts, i + 1, prefix + (key.value if type(key.value) is str else child.path[-1],), scope, against, site)
                return
            base = self.known.base(prefix)
            if base is not UNDEF:
                yield from self.walk_parts(Known(base), parts, i)
            return
        # A variable or an unknown key: every key of base data, then every child rule document.
        base = self.known.base(prefix)
        keys: list[Any] = [k for k, _ in _sorted_items(base)] if type(base) is dict else []
        keys += [k for k in sorted(node.children) if k not in keys]
        for k in keys:
            for _ in self._match_key(key, Known(k)):
                child = node.children.get(k) if type(k) is str else None
                if child is not None:
                    yield from self._data_walk(child, parts, i + 1, prefix + (k,), scope, against, site)
                elif base is not UNDEF:
                    value = base.get(freeze(k), UNDEF) if type(base) is dict else UNDEF
                    if value is not UNDEF:
                        yield from self.walk_parts(Known(value), parts, i + 1)

    def _match_key(self, key: Any, k: Known) -> Iterator[None]:
        if type(key) is ast.Var and not self.env.is_unknown(key.name):
            yield from self._bind(key.name, k)
        else:
            yield from self.save_unify(k, key)

    # -- walking into values -------------------------------------------------------------

    def walk(self, base: Any, path: tuple[ast.Term, ...], scope: Scope) -> Iterator[Any]:
        """``base`` looked up along the source ``path``."""
        for parts in self.plugged_path(path, scope):
            yield from self.walk_parts(base, parts, 0)

    def walk_parts(self, base: Any, parts: tuple[Any, ...], i: int) -> Iterator[Any]:
        """``base`` looked up along the plugged ``parts[i:]``; unbound variables iterate."""
        if i == len(parts):
            yield base
            return
        base = self.env.resolve(base)
        key = self.env.resolve(parts[i])
        if type(base) is not Known:
            yield from self.walk_parts(_extend(base, self.env.plug(key)), parts, i + 1)
            return
        value = base.value
        if type(key) is Known:
            got = _get(value, key.value)
            if got is not UNDEF:
                yield from self.walk_parts(Known(got), parts, i + 1)
            return
        for k, v in _sorted_items(value):
            for _ in self._match_key(key, Known(k)):
                yield from self.walk_parts(Known(v), parts, i + 1)


_KEY_TYPES = (str, int, float, bool, type(None))


def _ground(parts: tuple[Any, ...]) -> tuple[tuple[Any, ...], bool]:
    out: list[Any] = []
    for p in parts:
        if type(p) is Known and (type(p.value) in (str, int, float, bool) or p.value is None):
            out.append(p.value)
        else:
            return tuple(out), False
    return tuple(out), True


def _extend(base: Any, key: Any) -> ast.Ref:
    if type(base) is ast.Ref:
        return ast.Ref(base.head, base.path + (key,), base.location)
    return ast.Ref(base, (key,), getattr(base, "location", ast.NO_LOCATION))


def _get(value: Any, key: Any) -> Any:
    t = type(value)
    if t is dict:
        return value.get(freeze(key), UNDEF)
    if t is list or t is tuple:
        if type(key) is int or (type(key) is float and key.is_integer()):
            k = int(key)
            if 0 <= k < len(value):
                return value[k]
        return UNDEF
    if t is set or t is frozenset:
        return key if freeze(key) in value else UNDEF
    return UNDEF


def _sorted_items(value: Any) -> list[tuple[Any, Any]]:
    """(key, value) pairs in OPA's order: arrays by index, objects and sets sorted."""
    from pyrego.runtime.values import sort_key

    t = type(value)
    if t is list or t is tuple:
        return list(enumerate(value))
    if t is dict:
        keys = sorted((thaw(k) for k in value), key=sort_key)
        return [(k, value[freeze(k)]) for k in keys]
    if t is set or t is frozenset:
        members = sorted((thaw(k) for k in value), key=sort_key)
        return [(m, m) for m in members]
    return []
