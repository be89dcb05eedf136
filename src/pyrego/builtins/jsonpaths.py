"""json.filter, json.remove and json.patch (OPA's ``json.go``).

Paths are JSON pointers (``"/a/b/0"``, ``~0``/``~1`` escapes; OPA strips
every leading ``/``) or arrays of segments (any values). Objects are indexed
by key, arrays by integer (a pointer's ``"1"`` or a number), sets by the
member itself. json.patch follows RFC 6902 with OPA's extensions (paths into
sets, array-form paths); a patch that cannot apply is a builtin error with
OPA v1.20's message (undefined without strict builtin errors). It stops at
the evaluation's deadline.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from pyrego.builtins.limits import Deadline
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import UNDEF, equal, freeze, thaw, type_name

# ---------------------------------------------------------------- paths


def _parse_path(p: Any) -> list[Any]:
    """A path as a list of segments (values)."""
    if type(p) is str:
        if p == "":
            return []
        return [part.replace("~1", "/").replace("~0", "~") for part in p.lstrip("/").split("/")]
    if type(p) is list or type(p) is tuple:
        return list(p)
    raise OperandTypeError(
        "operand 2 must be one of {set, array} containing string paths or array of path segments but got "
        + type_name(p)
    )


def _paths(x: Any) -> list[list[Any]]:
    t = type(x)
    if t is list or t is tuple:
        return [_parse_path(p) for p in x]
    if t is set or t is frozenset:
        # OPA walks a set in its sorted order
        from pyrego.runtime.values import sorted_values

        return [_parse_path(p) for p in sorted_values(x)]
    raise OperandTypeError(f"operand 2 must be one of {{set, array}} but got {type_name(x)}")


def _paths_to_tree(paths: list[list[Any]]) -> dict[Any, Any]:
    """OPA's ``pathsToObject``: nested dicts (frozen keys) with None at the leaves."""
    root: dict[Any, Any] = {}
    for path in paths:
        if not path:
            continue
        node = root
        done = False
        for seg in path[:-1]:
            k = freeze(seg)
            child = node.get(k, UNDEF)
            if child is UNDEF:
                child = node[k] = {}
            elif child is None:
                done = True  # a shorter path already selects everything below
                break
            node = child
        if not done:
            node[freeze(path[-1])] = None
    return root


# ---------------------------------------------------------------- filter / remove


def _filter(value: Any, tree: Any) -> Any:
    if tree is None:
        return value
    t = type(value)
    if t is dict:
        return {k: _filter(v, tree[k]) for k, v in value.items() if k in tree}
    if t is list or t is tuple:
        # array elements are selected by their index as a string ("0", "1", ...)
        return [_filter(v, tree[str(i)]) for i, v in enumerate(value) if str(i) in tree]
    if t is set or t is frozenset:
        return frozenset(freeze(_filter(thaw(m), tree[m])) for m in value if m in tree)
    return value


@builtin("json.filter", 2)
def json_filter(obj: Any, paths: Any) -> Any:
    if type(obj) is not dict:
        raise operand_error(1, obj, "object")
    return _filter(obj, _paths_to_tree(_paths(paths)))


_DROP = object()


def _remove(value: Any, tree: Any) -> Any:
    if tree is UNDEF:
        return value
    if tree is None:
        return _DROP  # a leaf of the paths: drop this value
    if type(tree) is not dict:
        return value
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            r = _remove(v, tree.get(k, UNDEF))
            if r is not _DROP:
                out[k] = r
        return out
    if t is list or t is tuple:
        kept = (_remove(v, tree.get(str(i), UNDEF)) for i, v in enumerate(value))
        return [r for r in kept if r is not _DROP]
    if t is set or t is frozenset:
        out_set = set()
        for m in value:
            r = _remove(thaw(m), tree.get(m, UNDEF))
            if r is not _DROP:
                out_set.add(freeze(r))
        return frozenset(out_set)
    return value


@builtin("json.remove", 2)
def json_remove(obj: Any, paths: Any) -> Any:
    if type(obj) is not dict:
        raise operand_error(1, obj, "object")
    result = _remove(obj, _paths_to_tree(_paths(paths)))
    return UNDEF if result is _DROP else result


# ---------------------------------------------------------------- patch
#
# OPA applies a patch to an "edit tree" over the target. Here the target is
# copied lazily: a container is copied once, the first time an operation
# changes something inside it, and then changed in place, so each operation
# costs the length of its path (not the size of the document). A removed
# object member is remembered, as OPA's edit tree keeps it: reaching through
# it or removing it again is an error, adding it again is not.


class _PatchError(Exception):
    pass


class _OwnedSet(dict):  # type: ignore[type-arg]
    """A set being patched: frozen member -> member (thawed, possibly patched)."""


_INDEX = re.compile(r"[+-]?[0-9]{1,19}")
_INT64 = 1 << 63
_AST_TYPES = {str: "ast.String", bool: "ast.Boolean", type(None): "ast.Null"}


def _term(v: Any) -> str:
    """A value as OPA prints a term in an error (Rego syntax)."""
    from pyrego.builtins.sprintf import format_value

    return format_value(_render_for_text(v))  # type: ignore[no-any-return]


def _raw(seg: Any) -> str:
    return seg if type(seg) is str else _term(seg)


def _ast_type(v: Any) -> str:
    return _AST_TYPES.get(type(v), "ast.Number")


def _kind(v: Any) -> str:
    t = type(v)
    composite = t is dict or t is list or t is tuple or t is set or t is frozenset or t is _OwnedSet
    return "composite" if composite else "scalar"


def _to_index(length: int, seg: Any) -> int:
    """OPA's ``toIndex``: a number, "-" (the end) or a decimal string without leading zeros."""
    t = type(seg)
    if t is str:
        if seg == "-":
            return length
        if not _INDEX.fullmatch(seg):
            raise _PatchError("invalid string for indexing")
        if len(seg) > 1 and seg.lstrip("+-").startswith("0"):
            raise _PatchError("leading zeros are not allowed in JSON paths")
        i = int(seg)
        if not -_INT64 <= i < _INT64:
            raise _PatchError("invalid string for indexing")
        return i
    if t is bool or not (t is int or t is float or t is Decimal):
        raise _PatchError("invalid type for indexing")
    if t is not int and not seg == int(seg):
        raise _PatchError("invalid number type for indexing")
    i = int(seg)
    if not -_INT64 <= i < _INT64:
        raise _PatchError("invalid number type for indexing")
    return i


class _Patcher:
    """One json.patch call: the document being patched and what it owns."""

    __slots__ = ("root", "owned", "deadline", "marked", "removed")

    def __init__(self, target: Any, deadline: Deadline | None) -> None:
        self.root = target
        self.owned: dict[int, Any] = {}
        self.deadline = deadline
        # Whether a set was copied: if not, the owned copies are plain Rego
        # values already.
        self.marked = False
        # Removed object members: (owned object id, key) -> the value removed.
        self.removed: dict[tuple[int, Any], Any] = {}

    def _own(self, node: Any) -> Any:
        if id(node) in self.owned:
            return node
        t = type(node)
        if t is dict:
            new: Any = dict(node)
        elif t is list or t is tuple:
            new = list(node)
        elif t is set or t is frozenset:
            new = _OwnedSet((m, thaw(m)) for m in node)
            self.marked = True
        else:
            return node
        self.owned[id(new)] = new
        return new

    # -- reading

    def _child(self, node: Any, seg: Any) -> Any:
        """The child at ``seg`` (OPA's unfold): errors name the path and the node."""
        t = type(node)
        if t is dict:
            k = freeze(seg)
            v = node.get(k, _MISSING)
            if v is _MISSING:
                old = self.removed.get((id(node), k), _MISSING) if self.removed else _MISSING
                if old is not _MISSING:
                    raise _PatchError(f"cannot unfold the already deleted {_kind(old)} node for key {_term(seg)}")
                raise _PatchError(f"path {_term(seg)} does not exist in object term {_term(node)}")
            return v
        if t is list or t is tuple:
            i = _to_index(len(node), seg)
            if not 0 <= i < len(node):
                raise _PatchError(f"path {_raw(seg)} does not exist in array term {_term(node)}")
            return node[i]
        if t is _OwnedSet or t is set or t is frozenset:
            k = freeze(seg)
            if k not in node:
                raise _PatchError(f"path {_raw(seg)} does not exist in set term {_term(node)}")
            return node[k] if t is _OwnedSet else seg
        raise _PatchError(
            f"expected composite type for path {_term(seg)}, found value: {_term(node)} (type: {_ast_type(node)})"
        )

    def render_at(self, path: list[Any]) -> Any:
        if self.root is _GONE:
            raise _PatchError("the document was removed")
        node = self.root
        for seg in path:
            node = self._child(node, seg)
        return node

    # -- changing

    def _parent(self, path: list[Any]) -> Any:
        """The (owned) container that holds the last step of ``path``."""
        if self.deadline is not None:
            self.deadline.tick(len(path) + 1)
        if self.root is _GONE:
            raise _PatchError("the document was removed")
        node = self.root = self._own(self.root)
        for seg in path[:-1]:
            child = self._own(self._child(node, seg))
            t = type(node)
            if t is dict:
                node[freeze(seg)] = child
            elif t is list:
                node[_to_index(len(node), seg)] = child
            else:
                node[freeze(seg)] = child  # a set member: re-frozen when rendered
            node = child
        return node

    def insert(self, path: list[Any], value: Any) -> None:
        if not path:
            self.root = value
            return
        node = self._parent(path)
        seg = path[-1]
        t = type(node)
        if t is dict:
            k = freeze(seg)
            node[k] = value
            if self.removed:
                self.removed.pop((id(node), k), None)
        elif t is list:
            i = _to_index(len(node), seg)
            if not 0 <= i <= len(node):
                raise _PatchError("index for array insertion out of bounds")
            node.insert(i, value)
        elif t is _OwnedSet:
            if not equal(seg, value):
                raise _PatchError(f"set key {_term(seg)} does not equal value to be inserted {_term(value)}")
            node[freeze(value)] = value
        else:
            raise _PatchError(f"expected composite type, found value: {_term(node)} (type: {_ast_type(node)})")

    def delete(self, path: list[Any]) -> None:
        if not path:
            # OPA crashes here; removing the whole document leaves nothing
            # (undefined) unless a later patch adds one.
            if self.root is _GONE:
                raise _PatchError("the document was already removed")
            self.root = _GONE
            return
        node = self._parent(path)
        seg = path[-1]
        t = type(node)
        if t is dict:
            k = freeze(seg)
            old = node.pop(k, _MISSING)
            if old is _MISSING:
                gone = self.removed.get((id(node), k), _MISSING) if self.removed else _MISSING
                if gone is not _MISSING:
                    raise _PatchError(f"cannot delete the already deleted {_kind(gone)} node for key {_term(seg)}")
                raise _PatchError(f"cannot delete child key {_term(seg)} that does not exist")
            self.removed[id(node), k] = old
        elif t is list:
            i = _to_index(len(node), seg)
            if not 0 <= i < len(node):
                raise _PatchError("index for array delete out of bounds")
            del node[i]
        elif t is _OwnedSet:
            k = freeze(seg)
            if k not in node:
                raise _PatchError(f"cannot delete child key {_term(seg)} that does not exist")
            del node[k]
        else:
            raise _PatchError(f"expected composite type, found value: {_term(node)} (type: {_ast_type(node)})")

    def render(self, node: Any) -> Any:
        """The patched document: owned containers become Rego values again."""
        owned = self.owned
        if not self.marked or id(node) not in owned:
            return node
        render = self.render
        t = type(node)
        if t is dict:
            return {k: render(v) if id(v) in owned else v for k, v in node.items()}
        if t is list:
            return [render(v) if id(v) in owned else v for v in node]
        return frozenset(freeze(render(v)) for v in node.values())


def _render_for_text(v: Any) -> Any:
    """A value being patched, as a Rego value (for an error message)."""
    t = type(v)
    if t is dict:
        return {k: _render_for_text(x) for k, x in v.items()}
    if t is list:
        return [_render_for_text(x) for x in v]
    if t is _OwnedSet:
        return frozenset(freeze(_render_for_text(x)) for x in v.values())
    return v


_MISSING = object()
_GONE = object()  # the whole document, removed


def _attr(patch: dict[Any, Any], name: str) -> Any:
    v = patch.get(name, UNDEF)
    if v is UNDEF:
        raise _PatchError(f"missing required attribute '{name}'")
    return v


def _apply(doc: _Patcher, patch: Any) -> None:
    # In OPA's order: 'path' and 'op' present, 'op' a string, the path parsed
    # (a type error), and only then the op's name and its other attributes.
    if type(patch) is not dict:
        raise _PatchError("must be an array of JSON-Patch objects, but at least one element is not an object")
    raw_path = _attr(patch, "path")
    op = _attr(patch, "op")
    if type(op) is not str:
        raise _PatchError(f"attribute 'op' must be a string but found: {type_name(op)}")
    path = _parse_path(raw_path)
    if op == "add":
        doc.insert(path, _attr(patch, "value"))
    elif op == "remove":
        doc.delete(path)
    elif op == "replace":
        doc.delete(path)
        doc.insert(path, _attr(patch, "value"))
    elif op == "test":
        found = doc.render_at(path)
        value = _attr(patch, "value")
        if not equal(_render_for_text(found), value):
            raise _PatchError(
                f"value from EditTree != patch value.\n\nExpected: {_term(value)}\n\nFound: {_term(found)}"
            )
    elif op in ("move", "copy"):
        src = _parse_path(_attr(patch, "from"))
        chunk = _render_for_text(doc.render_at(src))
        if op == "move":
            doc.delete(src)
        doc.insert(path, chunk)
    else:
        raise _PatchError(f"unrecognized op: '{op}'")


@builtin("json.patch", 2, cancellable=True)
def json_patch(ctx: EvalContext, target: Any, patches: Any) -> Any:
    if type(patches) is not list and type(patches) is not tuple:
        raise operand_error(2, patches, "array")
    doc = _Patcher(target, Deadline(ctx) if len(patches) > 16 else None)
    try:
        for p in patches:
            _apply(doc, p)
    except _PatchError as e:
        raise BuiltinError(str(e)) from None
    return UNDEF if doc.root is _GONE else doc.render(doc.root)
