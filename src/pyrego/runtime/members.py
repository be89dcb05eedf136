"""Reads of one member of a partial set, or one key of a partial object, for that key alone.

See :mod:`pyrego.codegen.set_members`: ``SM<id>(ctx, key)`` runs, of the
document's definitions, those whose key pattern can unify with ``key`` (a
pattern: a 1-tuple holding a scalar constant, a list or dict of patterns,
or None for any value), those with variables in their key with the key
bound first.
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.errors import EvalCancelError, EvalError
from pyrego.runtime.helpers import MISS, rt_get, rt_obj_done
from pyrego.runtime.values import UNDEF, equal, freeze, thaw

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


def _whole_instead(ctx: Any, namespace: dict[str, Any], whole: str, cached: Any, after: int) -> bool:
    """Whether the document ``whole`` (kept in the cache under ``cached``) is
    now evaluated whole, for a read of one more key: after ``after`` keys
    read one by one in this evaluation, it is, once.

    A rule run for one key takes some of the paths it takes for all keys,
    with the same values, so where the whole document raises nothing, its
    value at a key is what the run for that key finds (and where it raises,
    the keys are read one by one again, as in OPA). Only the program's
    prints and nondeterministic builtins (never so read: the caller's
    ``after`` is 0) could tell. Reading many keys one by one costs each key
    a run of the rules; the whole document, one."""
    c = ctx.cache
    count_key = ("SMW", whole)
    n = c.get(count_key, 0)
    if n < 0:
        return False  # (it raised)
    if n < after:
        c[count_key] = n + 1
        return False
    c[count_key] = -1
    try:
        namespace[whole](ctx)
    except EvalCancelError:
        raise
    except EvalError:
        return False
    return cached in c


def member_reader(
    namespace: dict[str, Any],
    node_id: int,
    definitions: Callable[[], tuple[tuple[str, bool], ...] | None],
    keys: dict[str, Any],
    is_set: bool = True,
    whole: str | None = None,
    whole_after: int = 0,
) -> Callable[[Any, Any], Any]:
    """The reader ``SM<id>`` of the partial set or object ``R<id>`` (see
    codegen.set_members): ``definitions()`` names the functions to run for
    one key, in order, each with whether it takes the key (None: read the
    whole document); ``keys`` holds each definition's key pattern.
    ``whole``: the whole document's function, if not ``R<id>`` (an own
    part, ``P<id>``, kept in the cache under its own name); ``whole_after``:
    see :func:`_whole_instead`."""
    cached: Any = node_id if whole is None else whole
    whole = f"R{node_id}" if whole is None else whole
    known: list[Any] = []  # (the definitions, once named)

    def read(ctx: Any, key: Any) -> Any:
        c = ctx.cache
        value = c.get(cached, MISS)
        if value is not MISS:  # (evaluated whole, or replaced by ``with``)
            return rt_get(value, key)
        if not known:
            known.append(definitions())
        defs = known[0]
        if defs is None:
            return rt_get(namespace[whole](ctx), key)
        memo = (whole, key if type(key) is str else freeze(key))
        found = c.get(memo, MISS)
        if found is MISS:
            if whole_after and _whole_instead(ctx, namespace, whole, cached, whole_after):
                return rt_get(c[cached], key)
            acc: Any = set() if is_set else {}
            plain = key if type(key) in _SCALARS else thaw(freeze(key))
            for d, keyed in defs:
                if _may_match(keys.get(d), plain):
                    if keyed:
                        namespace[d](ctx, acc, key)
                    else:
                        namespace[d](ctx, acc)
            found = rt_get(acc if is_set else rt_obj_done(acc), key)
            if found is not UNDEF:  # (as OPA: a key not found is looked up again, its rules run again)
                c[memo] = found
        return found

    return read


def path_reader(
    namespace: dict[str, Any], node_id: int, definitions: Callable[[int], tuple[str, ...] | None], whole_after: int = 0
) -> Callable[[Any, tuple[Any, ...]], Any]:
    """The reader ``SK<id>`` of the partial object ``R<id>`` along keys (see
    codegen.set_members.path_reader_name): ``definitions(n)`` names the
    functions that run its rules with their paths' first ``n`` keys bound
    (None: read the whole document); ``whole_after``: see :func:`_whole_instead`."""
    whole = f"R{node_id}"
    known: dict[int, Any] = {}

    def read(ctx: Any, keys: tuple[Any, ...]) -> Any:
        c = ctx.cache
        value = c.get(node_id, MISS)
        if value is not MISS:  # (evaluated whole, or replaced by ``with``)
            return value
        n = len(keys)
        defs = known.get(n, MISS)
        if defs is MISS:
            defs = known[n] = definitions(n)
        if defs is None:
            return namespace[whole](ctx)
        memo = ("SK", whole, tuple([k if type(k) is str else freeze(k) for k in keys]))
        found = c.get(memo, MISS)
        if found is MISS:
            if whole_after and _whole_instead(ctx, namespace, whole, node_id, whole_after):
                return c[node_id]
            acc: dict[Any, Any] = {}
            for d in defs:
                namespace[d](ctx, acc, keys)
            found = rt_obj_done(acc)
            at = found
            for k in keys:
                at = rt_get(at, k)
            if at is not UNDEF:  # (as OPA: what is not found is looked up again, its rules run again)
                c[memo] = found
        return found

    return read


def artifact_path_reader(
    namespace: dict[str, Any], node_id: int, defs: dict[int, tuple[str, ...] | None], whole_after: int = 0
) -> Callable[[Any, tuple[Any, ...]], Any]:
    """``SK<id>`` in an artifact's code, whose definitions for each number of keys read are all written."""
    return path_reader(namespace, node_id, defs.get, whole_after)


def artifact_member_reader(
    namespace: dict[str, Any], node_id: int, defs: tuple[tuple[str, bool], ...] | None, keys: dict[str, Any], is_set: bool = True, whole_after: int = 0
) -> Callable[[Any, Any], Any]:
    """``SM<id>`` in an artifact's code, whose definitions ``defs`` are all
    written (None: the document is read whole)."""
    return member_reader(namespace, node_id, lambda: defs, keys, is_set, None, whole_after)


__all__ = ["artifact_member_reader", "artifact_path_reader", "member_reader", "path_reader"]
