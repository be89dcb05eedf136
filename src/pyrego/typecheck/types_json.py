"""JSON values as OPA's type checker holds them: static object keys of types.

OPA keeps an object type's static keys as Go values decoded from JSON: a
number keeps its text (:class:`JNum`), an object its sorted pairs
(:class:`JMap`). They order as OPA's ``util.Compare`` orders them
(:func:`compare_json`) and print as Go's ``%v`` prints them
(:func:`go_value_text`); :mod:`pyrego.typecheck.static_types` re-exports all four.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any


class JNum:
    """A JSON number as written (OPA's ``json.Number``): prints its text, orders by value."""

    __slots__ = ("text", "value")

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self.value = Decimal(text)
        except InvalidOperation:
            self.value = Decimal(0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JNum) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("JNum", self.text))

    def __repr__(self) -> str:
        return f"JNum({self.text})"


class JMap:
    """A JSON object used as a key (sorted pairs), hashable."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: tuple[tuple[str, Any], ...]) -> None:
        self.pairs = tuple(sorted(pairs, key=lambda p: p[0]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JMap) and other.pairs == self.pairs

    def __hash__(self) -> int:
        return hash(("JMap", self.pairs))


def _sort_order(v: Any) -> int:
    if v is None:
        return 0
    if v is True or v is False:
        return 1
    if isinstance(v, JNum):
        return 2
    if isinstance(v, str):
        return 3
    if isinstance(v, tuple):
        return 4
    return 5


def compare_json(a: Any, b: Any) -> int:
    """OPA's ``util.Compare`` on JSON values: null < boolean < number < string < array < object."""
    x, y = _sort_order(a), _sort_order(b)
    if x != y:
        return -1 if x < y else 1
    if x == 0:
        return 0
    if x == 1:
        return (a > b) - (a < b)
    if x == 2:
        return (a.value > b.value) - (a.value < b.value)
    if x == 3:
        return (a > b) - (a < b)
    if x == 4:
        for p, q in zip(a, b):
            c = compare_json(p, q)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    for (ka, va), (kb, vb) in zip(a.pairs, b.pairs):
        if ka != kb:
            return -1 if ka < kb else 1
        c = compare_json(va, vb)
        if c:
            return c
    return (len(a.pairs) > len(b.pairs)) - (len(a.pairs) < len(b.pairs))


def go_value_text(v: Any) -> str:
    """A JSON value as Go's ``%v`` prints it (strings unquoted, null as ``<nil>``)."""
    if v is None:
        return "<nil>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, JNum):
        return v.text
    if isinstance(v, str):
        return v
    if isinstance(v, tuple):
        return "[" + " ".join(go_value_text(x) for x in v) + "]"
    return "map[" + " ".join(f"{k}:{go_value_text(x)}" for k, x in v.pairs) + "]"


# OPA v1.20.2 orders two numbers that are static object keys oddly: a number
# written as an integer within int64 (no exponent; ``3``, ``1.0``) compares
# below any other number (``0.5``, ``1e0``, ``2**63``) whatever their values,
# while the reverse comparison is by value. Go's insertion sort (which
# ``slices.SortFunc`` is for up to 12 keys) run over the keys in value order,
# and ``sort.Search`` run over the result, then put such keys out of value
# order and fail to find some of them again: the object type no longer unifies
# with itself (``count({0.25: 1, 5: 1})`` is a type error). Measured against
# OPA on random key sets; pyrego mirrors it for objects of at most 12 keys.


def _int_like(v: JNum) -> bool:
    if "e" in v.text or "E" in v.text:
        return False
    d = v.value
    return d == d.to_integral_value() and -(2**63) <= d < 2**63


def compare_key(a: Any, b: Any) -> int:
    """OPA's comparison of two static object keys (see above; within arrays and objects too): not symmetric."""
    x, y = _sort_order(a), _sort_order(b)
    if x == y == 2:
        if _int_like(a) and not _int_like(b):
            return -1
        return (a.value > b.value) - (a.value < b.value)
    if x == y == 4:
        for p, q in zip(a, b):
            c = compare_key(p, q)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if x == y == 5:
        for (ka, va), (kb, vb) in zip(a.pairs, b.pairs):
            if ka != kb:
                return -1 if ka < kb else 1
            c = compare_key(va, vb)
            if c:
                return c
        return (len(a.pairs) > len(b.pairs)) - (len(a.pairs) < len(b.pairs))
    return compare_json(a, b)


def _number_kinds(v: Any, out: set[bool]) -> None:
    if isinstance(v, JNum):
        out.add(_int_like(v))
    elif isinstance(v, tuple):
        for x in v:
            _number_kinds(x, out)
    elif isinstance(v, JMap):
        for _, x in v.pairs:
            _number_kinds(x, out)


def odd_keys(keys: list[Any]) -> bool:
    """Whether ``keys`` (sorted by value) hold both kinds of number, at most 12 keys in all."""
    if len(keys) > 12:
        return False
    kinds: set[bool] = set()
    for k in keys:
        _number_kinds(k, kinds)
    return len(kinds) == 2


def go_insertion_sort(items: list[Any], key: Any) -> list[Any]:
    """Go's insertion sort of ``items`` by :func:`compare_key` on ``key(item)``."""
    data = list(items)
    for i in range(1, len(data)):
        j = i
        while j > 0 and compare_key(key(data[j]), key(data[j - 1])) < 0:
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1
    return data


def go_search(keys: list[Any], name: Any) -> int:
    """Go's ``sort.Search`` for ``name`` in ``keys`` by :func:`compare_key`: its index, or -1."""
    i, j = 0, len(keys)
    while i < j:
        h = (i + j) >> 1
        if compare_key(keys[h], name) < 0:
            i = h + 1
        else:
            j = h
    return i if i < len(keys) and compare_key(keys[i], name) == 0 else -1


def loses_keys(keys: list[Any]) -> bool:
    """Whether OPA's object type with static ``keys`` fails to find one of them again."""
    if len(keys) < 2 or all(isinstance(k, str) for k in keys):
        return False
    from functools import cmp_to_key

    ordered = sorted(keys, key=cmp_to_key(compare_json))
    if not odd_keys(ordered):
        return False
    ordered = go_insertion_sort(ordered, lambda k: k)
    return any(go_search(ordered, k) < 0 for k in keys)
