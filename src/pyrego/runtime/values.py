"""Rego values as plain Python objects.

The value model (what generated code and builtins see):

========== ==========================================================
Rego       Python
========== ==========================================================
null       ``None``
boolean    ``bool``
number     ``int`` (arbitrary precision), ``float``, or ``Decimal`` (a
           literal a float cannot hold exactly)
string     ``str``
array      ``list`` (a caller's ``tuple`` is read as an array too)
object     ``dict`` whose keys are *frozen* values (see below)
set        ``set`` / ``frozenset`` whose members are *frozen* values
========== ==========================================================

Python's ``dict`` and ``set`` need hashable keys, and in Python ``True == 1``.
So set members and object keys are stored in *frozen* form: strings, numbers
and ``None`` are themselves; booleans become the :data:`TRUE_KEY` /
:data:`FALSE_KEY` singletons (so ``{1, true}`` keeps two members); arrays,
objects and sets become :class:`ArrayKey`, :class:`ObjectKey`,
:class:`SetKey`. :func:`freeze` makes the frozen form, :func:`thaw` turns it
back into a value. A caller's JSON-like dicts (string keys) are already in
this form, so input is read as it is, with no conversion.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cmp_to_key
from typing import Any, Iterator

from .numbers import compare as compare_numbers


class _Undefined:
    """The result of an undefined expression or rule. Falsy; distinct from None."""

    __slots__ = ()
    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED = _Undefined()
UNDEF = UNDEFINED


class BoolKey:
    """The frozen form of a boolean: never equal to a number."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "TRUE_KEY" if self.value else "FALSE_KEY"

    def __reduce__(self) -> str:
        return "TRUE_KEY" if self.value else "FALSE_KEY"


TRUE_KEY = BoolKey(True)
FALSE_KEY = BoolKey(False)


class _CompositeKey:
    """Base of the frozen forms of composites: hashable, compared by content."""

    __slots__ = ("items", "_hash")
    tag = 0

    def __init__(self, items: Any) -> None:
        self.items = items
        self._hash = hash((self.tag, items))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._hash == other._hash and self.items == other.items  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.items,))


class ArrayKey(_CompositeKey):
    """Frozen array: ``items`` is a tuple of frozen values."""

    __slots__ = ()
    tag = 1


class ObjectKey(_CompositeKey):
    """Frozen object: ``items`` is a frozenset of (frozen key, frozen value) pairs."""

    __slots__ = ()
    tag = 2


class SetKey(_CompositeKey):
    """Frozen set: ``items`` is a frozenset of frozen values."""

    __slots__ = ()
    tag = 3


_KEY_TYPES = (BoolKey, ArrayKey, ObjectKey, SetKey)


def freeze(value: Any) -> Any:
    """Return the hashable frozen form of ``value`` (idempotent)."""
    t = type(value)
    if t is str or t is int or t is float or value is None:
        return value
    if t is Decimal:
        return value
    if t is bool:
        return TRUE_KEY if value else FALSE_KEY
    if t is list or t is tuple:
        return ArrayKey(tuple([freeze(v) for v in value]))
    if t is dict:
        return ObjectKey(frozenset([(freeze(k), freeze(v)) for k, v in value.items()]))
    if t is set or t is frozenset:
        return SetKey(frozenset([freeze(v) for v in value]))
    if t in _KEY_TYPES:
        return value
    return value


def thaw(key: Any) -> Any:
    """Turn a frozen set member or object key back into a value."""
    t = type(key)
    if t is str or t is int or t is float or key is None:
        return key
    if t is BoolKey:
        return key.value
    if t is ArrayKey:
        return [thaw(v) for v in key.items]
    if t is ObjectKey:
        return {k: thaw(v) for k, v in key.items}
    if t is SetKey:
        return key.items
    return key


# ---------------------------------------------------------------- types


def type_name(value: Any) -> str:
    """OPA's ``type_name``: null, boolean, number, string, array, object, set."""
    t = type(value)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int or t is float or t is Decimal:
        return "number"
    if value is None:
        return "null"
    if t is dict:
        return "object"
    if t is list or t is tuple:
        return "array"
    if t is set or t is frozenset:
        return "set"
    raise TypeError(f"not a Rego value: {t.__name__}")


def is_number(value: Any) -> bool:
    t = type(value)
    return t is int or t is float or t is Decimal


def is_array(value: Any) -> bool:
    t = type(value)
    return t is list or t is tuple


def is_set(value: Any) -> bool:
    t = type(value)
    return t is set or t is frozenset


# ---------------------------------------------------------------- equality


def equal(a: Any, b: Any) -> bool:
    """Rego equality: ``1 == 1.0``, ``true != 1``, deep on composites."""
    ta = type(a)
    tb = type(b)
    if ta is str or tb is str:
        return ta is tb and a == b
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if (ta is int or ta is float or ta is Decimal) and (tb is int or tb is float or tb is Decimal):
        return a == b
    if a is None or b is None:
        return a is b
    return freeze(a) == freeze(b)


# ---------------------------------------------------------------- ordering

# null < boolean < number < string < array < object < set
_RANK = {
    type(None): 0,
    bool: 1,
    int: 2,
    float: 2,
    Decimal: 2,
    str: 3,
    list: 4,
    tuple: 4,
    dict: 5,
    set: 6,
    frozenset: 6,
}


def compare(a: Any, b: Any) -> int:
    """OPA's total order; returns -1, 0 or 1."""
    ta = type(a)
    tb = type(b)
    ra = _RANK[ta]
    rb = _RANK[tb]
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 2 or ra == 3 or ra == 1:
        if ta is not tb and ra == 2 and (ta is Decimal or tb is Decimal):
            # By the decimals they spell, not a float's binary value.
            return compare_numbers(a, b)
        return -1 if a < b else (1 if a > b else 0)
    if ra == 0:
        return 0
    if ra == 4:
        for x, y in zip(a, b):
            c = compare(x, y)
            if c:
                return c
        la, lb = len(a), len(b)
        return -1 if la < lb else (1 if la > lb else 0)
    if ra == 5:
        # Objects compare by their sorted keys, then the values in key order.
        ka = sorted((thaw(k) for k in a), key=sort_key)
        kb = sorted((thaw(k) for k in b), key=sort_key)
        for x, y in zip(ka, kb):
            c = compare(x, y)
            if c:
                return c
            c = compare(a[freeze(x)], b[freeze(y)])
            if c:
                return c
        return -1 if len(ka) < len(kb) else (1 if len(ka) > len(kb) else 0)
    # sets: compare the sorted members like arrays
    return compare(sorted_values(a), sorted_values(b))


sort_key = cmp_to_key(compare)


def sorted_values(collection: Any) -> list[Any]:
    """The members of a set (thawed), or the items of an array, in OPA's order."""
    if type(collection) is set or type(collection) is frozenset:
        return sorted((thaw(k) for k in collection), key=sort_key)
    return sorted(collection, key=sort_key)


# ---------------------------------------------------------------- iteration


def iter_items(collection: Any) -> Iterator[tuple[Any, Any]]:
    """(key, value) pairs of an array (index), object (key) or set (member, member)."""
    t = type(collection)
    if t is list or t is tuple:
        return enumerate(collection)
    if t is dict:
        return ((thaw(k), v) for k, v in collection.items())
    if t is set or t is frozenset:
        return ((m, m) for m in (thaw(k) for k in collection))
    return iter(())


def make_set(values: Any) -> frozenset[Any]:
    """A Rego set of the given values."""
    return frozenset([freeze(v) for v in values])


def make_object(pairs: Any) -> dict[Any, Any]:
    """A Rego object of (key, value) pairs (keys frozen)."""
    return {freeze(k): v for k, v in pairs}
