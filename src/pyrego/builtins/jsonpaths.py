"""json.filter, json.remove and json.patch (OPA's ``json.go``).

Paths are JSON pointers (``"/a/b/0"``, ``~0``/``~1`` escapes; OPA strips
every leading ``/``) or arrays of segments (any values). Objects are indexed
by key, arrays by integer (a pointer's ``"1"`` or a number), sets by the
member itself. json.patch follows RFC 6902 with OPA's extensions (paths into
sets, array-form paths) and is undefined when a patch cannot apply, as in
current OPA.
"""

from __future__ import annotations

import re
from typing import Any

from ..runtime.values import UNDEF, equal, freeze, thaw, type_name
from .registry import OperandTypeError, builtin, operand_error

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
        from ..runtime.values import sorted_values

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


class _PatchError(Exception):
    pass


_INDEX = re.compile(r"[+-]?[0-9]+")
_INT64 = 1 << 63


def _to_index(length: int, seg: Any) -> int:
    """OPA's ``toIndex``: a number, "-" (the end) or a decimal string without leading zeros."""
    t = type(seg)
    if t is int or (t is float and seg.is_integer()):
        i = int(seg)
    elif t is str:
        if seg == "-":
            return length
        if not _INDEX.fullmatch(seg):
            raise _PatchError("invalid string for indexing")
        if seg != "0" and seg.startswith("0"):
            raise _PatchError("leading zeros are not allowed in JSON paths")
        i = int(seg)
    else:
        raise _PatchError("invalid type for indexing")
    if not -_INT64 <= i < _INT64:
        raise _PatchError("invalid number type for indexing")
    return i


def _child(node: Any, seg: Any) -> Any:
    t = type(node)
    if t is dict:
        v = node.get(freeze(seg), UNDEF)
        if v is UNDEF:
            raise _PatchError("path does not exist in object")
        return v
    if t is list or t is tuple:
        i = _to_index(len(node), seg)
        if not 0 <= i < len(node):
            raise _PatchError("path does not exist in array")
        return node[i]
    if t is set or t is frozenset:
        if freeze(seg) not in node:
            raise _PatchError("path does not exist in set")
        return seg
    raise _PatchError("expected composite type")


def _with_child(node: Any, seg: Any, child: Any) -> Any:
    """``node`` with the child at ``seg`` (known to exist) replaced."""
    t = type(node)
    if t is dict:
        out = dict(node)
        out[freeze(seg)] = child
        return out
    if t is list or t is tuple:
        lst = list(node)
        lst[_to_index(len(node), seg)] = child
        return lst
    # a set member changes: the old member goes, the new one comes
    return (frozenset(node) - {freeze(seg)}) | {freeze(child)}


def _insert(node: Any, seg: Any, value: Any) -> Any:
    t = type(node)
    if t is dict:
        out = dict(node)
        out[freeze(seg)] = value
        return out
    if t is list or t is tuple:
        i = _to_index(len(node), seg)
        if not 0 <= i <= len(node):
            raise _PatchError("index for array insertion out of bounds")
        lst = list(node)
        lst.insert(i, value)
        return lst
    if t is set or t is frozenset:
        if not equal(seg, value):
            raise _PatchError("set key does not equal value to be inserted")
        return frozenset(node) | {freeze(value)}
    raise _PatchError("expected composite type")


def _delete(node: Any, seg: Any) -> Any:
    t = type(node)
    if t is dict:
        k = freeze(seg)
        if k not in node:
            raise _PatchError("cannot delete child key that does not exist")
        return {kk: v for kk, v in node.items() if kk != k}
    if t is list or t is tuple:
        i = _to_index(len(node), seg)
        if not 0 <= i < len(node):
            raise _PatchError("index for array delete out of bounds")
        return list(node[:i]) + list(node[i + 1 :])
    if t is set or t is frozenset:
        k = freeze(seg)
        if k not in node:
            raise _PatchError("cannot delete child key that does not exist")
        return frozenset(node) - {k}
    raise _PatchError("expected composite type")


_DELETED = object()


def _get(doc: Any, path: list[Any]) -> Any:
    if doc is _DELETED:
        raise _PatchError("deleted node")
    node = doc
    for seg in path:
        node = _child(node, seg)
    return node


def _edit(doc: Any, path: list[Any], op: Any) -> Any:
    """Apply ``op(parent, last segment)`` at the end of ``path``, rebuilding the way up."""
    if doc is _DELETED:
        raise _PatchError("deleted node")
    if len(path) == 1:
        return op(doc, path[0])
    child = _child(doc, path[0])
    return _with_child(doc, path[0], _edit(child, path[1:], op))


def _add(doc: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    return _edit(doc, path, lambda node, seg: _insert(node, seg, value))


def _remove_at(doc: Any, path: list[Any]) -> Any:
    if not path:
        if doc is _DELETED:
            raise _PatchError("deleted node")
        return _DELETED
    return _edit(doc, path, _delete)


_OPS = ("add", "remove", "replace", "move", "copy", "test")


def _attr(patch: dict[Any, Any], name: str) -> Any:
    v = patch.get(name, UNDEF)
    if v is UNDEF:
        raise _PatchError(f"missing '{name}' attribute")
    return v


def _apply(doc: Any, patch: Any) -> Any:
    if type(patch) is not dict:
        raise _PatchError("must be an array of JSON-Patch objects")
    op = _attr(patch, "op")
    if type(op) is not str:
        raise _PatchError("attribute 'op' must be a string")
    if op not in _OPS:
        raise _PatchError(f"unrecognized op '{op}'")
    raw_path = _attr(patch, "path")
    raw_from = _attr(patch, "from") if op in ("move", "copy") else None
    value = _attr(patch, "value") if op in ("add", "replace", "test") else None
    try:
        path = _parse_path(raw_path)
    except OperandTypeError as e:
        raise _PatchError(str(e)) from None
    if op == "add":
        return _add(doc, path, value)
    if op == "remove":
        return _remove_at(doc, path)
    if op == "replace":
        return _add(_remove_at(doc, path), path, value)
    if op == "test":
        if not equal(_get(doc, path), value):
            raise _PatchError("test failed")
        return doc
    try:
        src = _parse_path(raw_from)
    except OperandTypeError as e:
        raise _PatchError(str(e)) from None
    chunk = _get(doc, src)
    if op == "move":
        doc = _remove_at(doc, src)
    return _add(doc, path, chunk)


@builtin("json.patch", 2)
def json_patch(target: Any, patches: Any) -> Any:
    if type(patches) is not list and type(patches) is not tuple:
        raise operand_error(2, patches, "array")
    doc = target
    try:
        for p in patches:
            doc = _apply(doc, p)
    except _PatchError:
        return UNDEF
    return UNDEF if doc is _DELETED else doc
