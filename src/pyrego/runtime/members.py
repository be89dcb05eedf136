"""Reads of one member of a partial set that run only the rules that can add it.

See :mod:`pyrego.codegen.set_members`: ``SM<id>(ctx, key)`` runs, of the
set's definitions, those whose key pattern can unify with ``key`` (a
pattern: a 1-tuple holding a scalar constant, a list or dict of patterns,
or None for any value).
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.runtime.helpers import MISS, rt_get
from pyrego.runtime.values import equal, freeze, thaw

_SCALARS = (str, int, float, bool, type(None))


def _may_match(pattern: Any, value: Any) -> bool:
    """Whether a key of ``pattern``'s shape can unify with ``value``."""
    if pattern is None:
        return True
    tp = type(pattern)
    if tp is tuple:
        return equal(pattern[0], value)
    if tp is list:
        return type(value) is list and len(value) == len(pattern) and all(_may_match(p, v) for p, v in zip(pattern, value))
    if type(value) is not dict or len(value) != len(pattern):
        return False
    return all(k in value and _may_match(p, value[k]) for k, p in pattern.items())


def member_reader(
    namespace: dict[str, Any], node_id: int, definitions: Callable[[], tuple[str, ...] | None], keys: dict[str, Any]
) -> Callable[[Any, Any], Any]:
    """The reader ``SM<id>`` of the partial set ``R<id>`` (see member_reader_name):
    ``definitions()`` names its definitions' functions in order (None: read
    the whole set), ``keys`` holds each one's key pattern."""
    whole = f"R{node_id}"

    def read(ctx: Any, key: Any) -> Any:
        c = ctx.cache
        value = c.get(node_id, MISS)
        if value is not MISS:  # (evaluated whole, or replaced by ``with``)
            return rt_get(value, key)
        defs = definitions()
        if defs is None:
            return rt_get(namespace[whole](ctx), key)
        memo = (whole, key if type(key) is str else freeze(key))
        found = c.get(memo, MISS)
        if found is MISS:
            acc: set[Any] = set()
            plain = key if type(key) in _SCALARS else thaw(freeze(key))
            for d in defs:
                if _may_match(keys.get(d), plain):
                    namespace[d](ctx, acc)
            found = c[memo] = rt_get(acc, key)
        return found

    return read


def artifact_member_reader(namespace: dict[str, Any], node_id: int, defs: tuple[str, ...] | None, keys: dict[str, Any]) -> Callable[[Any, Any], Any]:
    """``SM<id>`` in an artifact's code, whose definitions ``defs`` are all
    written (None: the set is read whole)."""
    return member_reader(namespace, node_id, lambda: defs, keys)


__all__ = ["artifact_member_reader", "member_reader"]
