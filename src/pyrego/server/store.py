"""The data store's writes, as OPA's in-memory store makes them: copy on write.

Data is a tree of dicts and lists that is never changed in place: a write
returns a new root that shares every part off the written path with the old
one, so that evaluations still reading the old root see it whole.
Errors are OPA's storage errors (:class:`StorageError`, with its code).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NOT_FOUND = "storage_not_found_error"
WRITE_CONFLICT = "storage_write_conflict_error"
INVALID_PATCH = "storage_invalid_patch_error"

Path = Sequence[str]


class StorageError(Exception):
    """A write the store refuses: ``code`` is OPA's storage error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def path_text(path: Path) -> str:
    """The path as OPA's storage writes it (``/a/b``)."""
    return "/" + "/".join(path)


def not_found(path: Path) -> StorageError:
    return StorageError(NOT_FOUND, f"{path_text(path)}: document does not exist")


def _index(node: list[Any], key: str, path: Path, *, append: bool = False) -> int:
    if append and key == "-":
        return len(node)
    if not key.isdigit() or (len(key) > 1 and key[0] == "0"):
        raise StorageError(NOT_FOUND, f"{path_text(path)}: array index must be integer")
    i = int(key)
    if i > len(node) or (not append and i >= len(node)):
        raise StorageError(NOT_FOUND, f"{path_text(path)}: array index out of range")
    return i


def read(root: Any, path: Path) -> Any:
    """The document at ``path``; raises ``storage_not_found_error`` when there is none."""
    node = root
    for n, key in enumerate(path):
        if isinstance(node, dict):
            if key not in node:
                raise not_found(path[: n + 1])
            node = node[key]
        elif isinstance(node, list):
            node = node[_index(node, key, path[: n + 1])]
        else:
            raise not_found(path[: n + 1])
    return node


def write(root: dict[str, Any], op: str, path: Path, value: Any = None, *, make_dirs: bool = False) -> dict[str, Any]:
    """``root`` after one write (``add``, ``remove`` or ``replace`` at ``path``), as a new root.

    ``make_dirs``: create missing parent objects first (what a PUT does)."""
    if not path:
        if op == "remove":
            return {}
        if not isinstance(value, dict):
            raise StorageError(INVALID_PATCH, "root must be object")
        return value
    return _write(root, op, list(path), 0, value, make_dirs)  # type: ignore[no-any-return]


def _write(node: Any, op: str, path: list[str], depth: int, value: Any, make_dirs: bool) -> Any:
    key = path[depth]
    last = depth == len(path) - 1
    here = path[: depth + 1]
    if isinstance(node, dict):
        out = dict(node)
        if last:
            if op == "add":
                out[key] = value
            elif key not in node:
                raise not_found(here)
            elif op == "remove":
                del out[key]
            else:
                out[key] = value
            return out
        child = node.get(key)
        if child is None and key not in node:
            if not make_dirs:
                raise not_found(here)
            child = {}
        elif make_dirs and not isinstance(child, (dict, list)):
            raise StorageError(WRITE_CONFLICT, path_text(here))
        out[key] = _write(child, op, path, depth + 1, value, make_dirs)
        return out
    if isinstance(node, list):
        out_list = list(node)
        if last:
            if op == "add":
                out_list.insert(_index(node, key, here, append=True), value)
            else:
                i = _index(node, key, here)
                if op == "remove":
                    del out_list[i]
                else:
                    out_list[i] = value
            return out_list
        i = _index(node, key, here)
        out_list[i] = _write(node[i], op, path, depth + 1, value, make_dirs)
        return out_list
    if make_dirs:
        raise StorageError(WRITE_CONFLICT, path_text(here))
    raise not_found(here)
