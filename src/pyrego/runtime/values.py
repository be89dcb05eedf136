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

from pyrego.errors import EvalTypeError
from pyrego.runtime.budget import tick
from pyrego.runtime.numbers import compare as compare_numbers


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

#: The Python types of Rego values (a caller's own objects are read as they
#: are, so anything else, even a subclass of one of these, is not a value).
PLAIN_TYPES = frozenset((str, int, float, bool, type(None), Decimal, list, tuple, dict, set, frozenset))


def not_a_value(value: Any) -> EvalTypeError:
    """The error for a caller's object that is not a Rego value (an
    ``OrderedDict``, a ``StrEnum``): generated code reads input with exact
    type tests, so such an object would otherwise be misread, not converted."""
    return EvalTypeError(
        f"{type(value).__name__} is not a Rego value: pass input as plain dict, list, str, int, float, bool or None"
        " (convert it first, e.g. with json.loads(json.dumps(x)))"
    )


def check_plain(value: Any) -> bool:
    """True for a Rego value's type (or undefined); else :func:`not_a_value` is
    raised. Called only where an exact type test has already failed."""
    if type(value) in PLAIN_TYPES or value is UNDEF:
        return True
    raise not_a_value(value)


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


class CompositeKey:
    """Base of the frozen forms of composites: hashable, compared by content.

    ``source``: the value the key was frozen from, when :func:`thaw` may give
    it back as it is (a list or dict of plain values, none of them a tuple):
    values are never changed once made, and iterating a set of objects thaws
    each member again for every loop over it (``some c in containers``).
    None: thaw rebuilds the value from ``items``."""

    __slots__ = ("items", "_hash", "source")
    tag = 0

    def __init__(self, items: Any) -> None:
        self.items = items
        self._hash = hash((self.tag, items))
        self.source: Any = None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not type(self) or self._hash != other._hash:  # type: ignore[attr-defined]
            return False
        if type(self) is ArrayKey:
            return _array_keys_equal(self, other, None)
        tick(len(self.items))
        return self.items == other.items  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.items,))


class ArrayKey(CompositeKey):
    """Frozen array: ``items`` is a tuple of frozen values."""

    __slots__ = ()
    tag = 1


class ObjectKey(CompositeKey):
    """Frozen object: ``items`` is a frozenset of (frozen key, frozen value) pairs."""

    __slots__ = ()
    tag = 2


class SetKey(CompositeKey):
    """Frozen set: ``items`` is a frozenset of frozen values."""

    __slots__ = ()
    tag = 3


def _array_keys_equal(a: Any, b: Any, seen: _SeenPairs | None) -> bool:
    """Two frozen arrays of equal hash: equal items (a pair of parts found equal is not compared again)."""
    items_a = a.items
    items_b = b.items
    if len(items_a) != len(items_b):
        return False
    if seen is None:
        seen = _SeenPairs()
    key = (id(a), id(b))
    if key in seen:
        return True
    seen.visit(len(items_a))
    for x, y in zip(items_a, items_b):
        if x is y:
            continue
        if type(x) is ArrayKey:
            if type(y) is not ArrayKey or x._hash != y._hash or not _array_keys_equal(x, y, seen):
                return False
        elif not x == y:
            return False
    seen.add(key)
    return True


#: The frozen forms of booleans and composites (see :func:`freeze`).
_KEY_TYPES = frozenset((BoolKey, ArrayKey, ObjectKey, SetKey))


def _frozen_other(value: Any) -> Any:
    """:func:`freeze` of a value whose type is no value's: an already frozen
    key is itself; anything else is not a Rego value."""
    if type(value) in _KEY_TYPES or value is UNDEF:
        return value
    raise not_a_value(value)


def freeze(value: Any) -> Any:
    """Return the hashable frozen form of ``value`` (idempotent)."""
    t = type(value)
    if t is str or t is int or t is float or value is None:
        return value
    if t is Decimal:
        return value
    if t is bool:
        return TRUE_KEY if value else FALSE_KEY
    if t is list or t is tuple or t is dict or t is set or t is frozenset:
        budget = [_SMALL_WALK, 0]
        try:
            return _freeze_small(value, budget)
        except _WalkTooLong:
            # A big value (or one with shared parts): once more, each part
            # frozen once and the deadline checked as it goes.
            return _freeze_big(value, {})
    return _frozen_other(value)


#: Composite nodes a walk visits before it counts its work and remembers shared parts.
_SMALL_WALK = 512


class _WalkTooLong(Exception):
    """A walk's small-value path ran out of its node budget."""


def _freeze_small(value: Any, budget: list[int]) -> Any:
    """``budget``: [composite nodes left to visit, tuples met so far].

    The value itself is a list's or object's key's source unless a tuple is
    in it (thaw gives arrays as lists). Objects, the most common composite,
    are tested for first; strings, the most common members and keys, are
    taken without a call; keys are made without calling their class."""
    t = type(value)
    if t is dict:
        budget[0] -= 1
        if budget[0] < 0:
            raise _WalkTooLong
        tuples = budget[1]
        items: Any = frozenset(
            [
                (k if type(k) is str else _freeze_small(k, budget), v if type(v) is str else _freeze_small(v, budget))
                for k, v in value.items()
            ]
        )
        key: CompositeKey = _new_key(ObjectKey)
        key.items = items
        key._hash = hash((_OBJECT_TAG, items))
        key.source = value if budget[1] == tuples else None
        return key
    if t is str or t is int or t is float or value is None or t is Decimal:
        return value
    if t is bool:
        return TRUE_KEY if value else FALSE_KEY
    budget[0] -= 1
    if budget[0] < 0:
        raise _WalkTooLong
    if t is list:
        tuples = budget[1]
        items = tuple([v if type(v) is str else _freeze_small(v, budget) for v in value])
        key = _new_key(ArrayKey)
        key.items = items
        key._hash = hash((_ARRAY_TAG, items))
        key.source = value if budget[1] == tuples else None
        return key
    if t is tuple:
        budget[1] += 1
        return ArrayKey(tuple([_freeze_small(v, budget) for v in value]))
    if t is set or t is frozenset:
        budget[0] -= len(value) >> 3
        return SetKey(frozenset([_freeze_small(v, budget) for v in value]))
    return _frozen_other(value)


_new_key = object.__new__
_OBJECT_TAG = ObjectKey.tag
_ARRAY_TAG = ArrayKey.tag


def _freeze_big(value: Any, memo: dict[int, Any]) -> Any:
    t = type(value)
    if t is str or t is int or t is float or value is None or t is Decimal:
        return value
    if t is bool:
        return TRUE_KEY if value else FALSE_KEY
    if t not in _COMPOSITE_TYPES:
        return _frozen_other(value)
    done = memo.get(id(value))
    if done is not None:
        return done[1]
    tick(len(value) + 1)
    if t is list or t is tuple:
        out: Any = ArrayKey(tuple([_freeze_big(v, memo) for v in value]))
    elif t is dict:
        out = ObjectKey(frozenset([(_freeze_big(k, memo), _freeze_big(v, memo)) for k, v in value.items()]))
    else:
        out = SetKey(frozenset([_freeze_big(v, memo) for v in value]))
    # (The value is kept with its key: the id stays its own while the walk runs.)
    memo[id(value)] = (value, out)
    return out


_COMPOSITE_TYPES = frozenset((list, tuple, dict, set, frozenset))


def thaw(key: Any) -> Any:
    """Turn a frozen set member or object key back into a value."""
    t = type(key)
    if t is str or t is int or t is float or key is None:
        return key
    if t is BoolKey:
        return key.value
    if t is ArrayKey or t is ObjectKey:
        source = key.source
        return _thaw(key, {}) if source is None else source
    if t is SetKey:
        return key.items
    if t is Decimal or t is bool or key is UNDEF:
        return key
    raise not_a_value(key)  # (an object key or set member of a caller's)


def _thaw(key: Any, memo: dict[int, Any]) -> Any:
    """:func:`thaw` of a composite key; a part shared in the key is thawed once and shared."""
    t = type(key)
    if t is str or t is int or t is float or key is None:
        return key
    if t is BoolKey:
        return key.value
    if t is SetKey:
        return key.items
    if t is not ArrayKey and t is not ObjectKey:
        if t is Decimal or t is bool:
            return key
        raise not_a_value(key)
    source = key.source
    if source is not None:
        return source
    done = memo.get(id(key))
    if done is not None:
        return done
    tick(len(key.items) + 1)
    if t is ArrayKey:
        out: Any = [_thaw(v, memo) for v in key.items]
    else:
        out = {k: _thaw(v, memo) for k, v in key.items}
    memo[id(key)] = out  # (the key itself is alive: it is part of the root key)
    return out


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
    if t in _KEY_TYPES or value is UNDEF:
        raise TypeError(f"not a Rego value: {t.__name__}")  # (pyrego's own objects)
    raise not_a_value(value)


def is_set(value: Any) -> bool:
    t = type(value)
    return t is set or t is frozenset


# ---------------------------------------------------------------- equality


def equal(a: Any, b: Any) -> bool:
    """Rego equality: ``1 == 1.0``, ``true != 1``, deep on composites."""
    if a is b:
        return True
    ta = type(a)
    tb = type(b)
    if ta is str or tb is str:
        if ta is tb:
            return a == b  # type: ignore[no-any-return]
        return False if ta in PLAIN_TYPES and tb in PLAIN_TYPES else _unequal(a, b)
    if ta is bool or tb is bool:
        if ta is tb:
            return a == b  # type: ignore[no-any-return]
        return False if ta in PLAIN_TYPES and tb in PLAIN_TYPES else _unequal(a, b)
    if (ta is int or ta is float or ta is Decimal) and (tb is int or tb is float or tb is Decimal):
        return a == b  # type: ignore[no-any-return]
    if a is None or b is None:
        return False if ta in PLAIN_TYPES and tb in PLAIN_TYPES else _unequal(a, b)
    return _equal_composite(a, b, None)


def _unequal(a: Any, b: Any) -> bool:
    """Equality where the types differ: false for two values of different kinds.

    A caller's object of no Rego type (a ``StrEnum``, an ``IntEnum``, bytes)
    compared with a string or number is equal where Python's ``==`` says so,
    as the generated code's comparisons with a literal have it (exact for
    subclasses of str, int and float: their plain value), and never equals
    true, false or null; compared with anything else it is an error."""
    ta = type(a)
    tb = type(b)
    if ta in PLAIN_TYPES or a is UNDEF:
        if tb in PLAIN_TYPES or b is UNDEF:
            return False
        other, foreign = a, b
    elif tb in PLAIN_TYPES or b is UNDEF:
        other, foreign = b, a
    else:
        raise not_a_value(a)
    to = type(other)
    if to is str or to is int or to is float or to is Decimal:
        return bool(foreign == other)
    if to is bool or other is None or other is UNDEF:
        return False
    raise not_a_value(foreign)


def _equal_composite(a: Any, b: Any, seen: _SeenPairs | None) -> bool:
    """Deep equality of two values, at least one of them not a scalar.

    Pairs of composites already found equal are remembered (``seen``, made
    once the walk is past a few hundred pairs), so parts two values share are compared once."""
    if a is b:
        return True
    ta = type(a)
    tb = type(b)
    if ta is list or ta is tuple:
        if tb is not list and tb is not tuple:
            return _unequal(a, b)
        if len(a) != len(b):
            return False
        pairs: Any = zip(a, b)
    elif ta is dict:
        if tb is not dict:
            return _unequal(a, b)
        if len(a) != len(b):
            return False
        pairs = [(v, b.get(k, _MISSING)) for k, v in a.items()]
    elif ta is set or ta is frozenset:
        if tb is not set and tb is not frozenset:
            return _unequal(a, b)
        tick(len(a))
        return a == b  # members are frozen keys
    elif (ta in PLAIN_TYPES or ta in _KEY_TYPES) and (tb in PLAIN_TYPES or tb in _KEY_TYPES):
        return freeze(a) == freeze(b)  # a scalar and a composite, or a frozen key
    else:
        return _unequal(a, b)
    if seen is None:
        seen = _SeenPairs()
    key = (id(a), id(b))
    if key in seen:
        return True
    seen.visit(len(a))
    for x, y in pairs:
        if x is y:
            continue
        if y is _MISSING:
            return False
        tx = type(x)
        if tx is str or tx is int or tx is bool or tx is float or x is None or tx is Decimal:
            if not equal(x, y):
                return False
        elif not _equal_composite(x, y, seen):
            return False
    seen.add(key)
    return True


_MISSING = object()


class _SeenPairs(set):  # type: ignore[type-arg]
    """The pairs of composites an equality walk found equal, and its work count.

    Small walks neither count nor remember (``__contains__`` is false until
    the walk has visited :data:`_SMALL_WALK` nodes)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        super().__init__()
        self.left = _SMALL_WALK

    def visit(self, units: int) -> None:
        if self.left > 0:
            self.left -= units + 1
        else:
            tick(units + 1)

    def add(self, key: Any) -> None:
        if self.left <= 0:
            set.add(self, key)


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
    try:
        ra = _RANK[ta]
        rb = _RANK[tb]
    except KeyError:
        check_plain(a)
        check_plain(b)
        raise
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 2 or ra == 3 or ra == 1:
        if ta is not tb and ra == 2 and (ta is Decimal or tb is Decimal):
            # By the decimals they spell, not a float's binary value.
            return compare_numbers(a, b)
        return -1 if a < b else (1 if a > b else 0)
    if ra == 0 or a is b:
        return 0
    tick(len(a) + 1)
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
    if collection is not UNDEF:
        check_plain(collection)
    return iter(())


def make_set(values: Any) -> frozenset[Any]:
    """A Rego set of the given values."""
    return frozenset([freeze(v) for v in values])


