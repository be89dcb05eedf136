"""Static types of Rego values, as OPA's type checker models them.

A type is one of ``null``, ``boolean``, ``number``, ``string``, an array
(static element types by position, then an optional dynamic element type), an
object (static properties by key, then an optional dynamic key/value pair), a
set (of one element type), ``any`` (the union of its members; ``any`` with no
members is every type) or a function (argument types, a result, a variadic
tail). ``None`` stands for an unknown type (OPA's ``nil``; printed ``???``).

Everything here mirrors OPA's ``types`` package so that the checker infers
the same types and prints them the same way in error messages:
``any<number, string>``, ``array[any]``, ``object<a: string>[string: any]``,
``set[any]``. Static object keys are JSON values (see :class:`JNum`); they
print and order as OPA's Go values do.

Types are shared, never copied: a rule's type is one object in the type of
every rule that holds its value, so ``a1 := [a0, a0]``, ...,
``a60 := [a59, a59]`` make 61 small types whose printed forms double at
each step. Everything here works on that graph, not on the tree it prints
as: :func:`is_nil` keeps its answer in the type, :func:`compare` and
:func:`unifies` remember the pairs of parts they have met within one call
(by identity), and the text (:mod:`pyrego.typecheck.types_text`) is built once per
part and cut when very long.
"""

from __future__ import annotations

from typing import Any, Optional, Union

# JSON values (object keys): kept in their own module, re-exported here.
from pyrego.typecheck.types_json import JMap, JNum, compare_json, go_insertion_sort, go_search, go_value_text, odd_keys
from pyrego.typecheck.types_text import type_text

# ---------------------------------------------------------------- types


class Type:
    """Base class of every type."""

    __slots__ = ()
    order = -1

    def pieces(self) -> list[Any]:  # pragma: no cover - each subclass prints itself
        """Its text as OPA prints it: strings, and the types (or None) printed between them."""
        raise NotImplementedError

    def __str__(self) -> str:
        return type_text(self)

    def __repr__(self) -> str:
        return str(self)


class NullType(Type):
    __slots__ = ()
    order = 0

    def pieces(self) -> list[Any]:
        return ["null"]

    def __str__(self) -> str:
        return "null"


class BooleanType(Type):
    __slots__ = ()
    order = 1

    def pieces(self) -> list[Any]:
        return ["boolean"]

    def __str__(self) -> str:
        return "boolean"


class NumberType(Type):
    __slots__ = ()
    order = 2

    def pieces(self) -> list[Any]:
        return ["number"]

    def __str__(self) -> str:
        return "number"


class StringType(Type):
    __slots__ = ()
    order = 3

    def pieces(self) -> list[Any]:
        return ["string"]

    def __str__(self) -> str:
        return "string"


MaybeType = Optional[Type]


class ArrayType(Type):
    """``array<static...>[dynamic]``."""

    __slots__ = ("static", "dynamic", "nil")
    order = 4

    def __init__(self, static: tuple[MaybeType, ...] = (), dynamic: MaybeType = None) -> None:
        self.static = static
        self.dynamic = dynamic
        self.nil: bool | None = None  # is_nil's answer, once asked

    def select(self, pos: int) -> MaybeType:
        if pos >= 0:
            if pos < len(self.static):
                return self.static[pos]
            if self.dynamic is not None:
                return self.dynamic
        return None

    def pieces(self) -> list[Any]:
        out: list[Any] = ["array"]
        if self.static:
            out.append("<")
            _join(out, self.static)
            out.append(">")
        if self.dynamic is not None:
            out += ["[", self.dynamic, "]"]
        return out


class ObjectType(Type):
    """``object<key: type, ...>[key type: value type]``; static keys are JSON values, sorted."""

    __slots__ = ("static", "dynamic", "nil", "odd", "lost")
    order = 5

    def __init__(
        self,
        static: list[tuple[Any, MaybeType]] | tuple[tuple[Any, MaybeType], ...] = (),
        dynamic: tuple[MaybeType, MaybeType] | None = None,
    ) -> None:
        self.static: tuple[tuple[Any, MaybeType], ...]
        self.odd = self.lost = False  # (lost: select misses one of the static keys, so it unifies with nothing)
        if len(static) < 2:
            self.static = tuple(static)
        elif all(type(k) is str for k, _ in static):
            # (strings compare as in Go: by code point, which is their UTF-8 byte order)
            self.static = tuple(sorted(static, key=lambda p: p[0]))
        else:
            self.static = tuple(_sort_props(list(static)))
            # (keys in OPA's odd order, found again as OPA finds them: see types_json)
            self.odd = odd_keys([k for k, _ in self.static])
        if self.odd:
            self.static = tuple(go_insertion_sort(list(self.static), lambda p: p[0]))
            keys = [k for k, _ in self.static]
            self.lost = any(go_search(keys, k) < 0 for k in keys)
        self.dynamic = dynamic
        self.nil: bool | None = None  # is_nil's answer, once asked (reset where dynamic is widened)

    def keys(self) -> list[Any]:
        return [k for k, _ in self.static]

    @property
    def dynamic_value(self) -> MaybeType:
        return self.dynamic[1] if self.dynamic is not None else None

    def select(self, name: Any) -> MaybeType:
        if self.odd:
            i = go_search([k for k, _ in self.static], name)
            if i >= 0:
                return self.static[i][1]
        else:
            for k, v in self.static:
                if compare_json(k, name) == 0:
                    return v
        if self.dynamic is not None and contains(self.dynamic[0], type_of(name)):
            return self.dynamic[1]
        return None

    def pieces(self) -> list[Any]:
        out: list[Any] = ["object"]
        if self.static:
            sep = "<"
            for k, v in self.static:
                out += [sep + go_value_text(k) + ": ", v]
                sep = ", "
            out.append(">")
        if self.dynamic is not None:
            out += ["[", self.dynamic[0], ": ", self.dynamic[1], "]"]
        return out


def _sort_props(props: list[tuple[Any, MaybeType]]) -> list[tuple[Any, MaybeType]]:
    from functools import cmp_to_key

    def by_key(a: tuple[Any, MaybeType], b: tuple[Any, MaybeType]) -> int:
        return compare_json(a[0], b[0])

    return sorted(props, key=cmp_to_key(by_key))


class SetType(Type):
    __slots__ = ("of", "nil")
    order = 6

    def __init__(self, of: MaybeType) -> None:
        self.of = of
        self.nil: bool | None = None  # is_nil's answer, once asked

    def pieces(self) -> list[Any]:
        return ["set[", self.of, "]"]


class AnyType(Type):
    """The union of ``of`` (kept sorted); with no members, every type."""

    __slots__ = ("of",)
    order = 7

    def __init__(self, of: tuple[Type, ...] = ()) -> None:
        self.of = of

    def pieces(self) -> list[Any]:
        if not self.of:
            return ["any"]
        out: list[Any] = ["any<"]
        _join(out, self.of)
        out.append(">")
        return out


class NamedType(Type):
    """A builtin argument or result with its name (printed ``name: type``)."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: Type) -> None:
        self.name = name
        self.type = type

    def pieces(self) -> list[Any]:
        return [self.name + ": ", self.type]


class FunctionType(Type):
    """Arguments (possibly named), a result (None: void) and a variadic tail."""

    __slots__ = ("args", "result", "variadic", "_arg_types", "nil")
    order = 8

    def __init__(self, args: tuple[MaybeType, ...], result: MaybeType, variadic: MaybeType = None) -> None:
        self.args = args
        self.result = result
        self.variadic = variadic
        self._arg_types: tuple[MaybeType, ...] | None = None
        self.nil: bool | None = None  # is_nil's answer, once asked

    def arg_types(self) -> tuple[MaybeType, ...]:
        """The argument types without their names (worked out once: builtins' types are shared)."""
        found = self._arg_types
        if found is None:
            found = self._arg_types = tuple([unwrap(a) for a in self.args])
        return found

    def result_type(self) -> MaybeType:
        return unwrap(self.result)

    def pieces(self) -> list[Any]:
        out: list[Any] = ["("]
        _join(out, self.arg_types())
        variadic = unwrap(self.variadic)
        if variadic is not None:
            out += [", " if self.args else "", variadic, "..."]
        out += [") => ", self.result_type()]
        return out


def _join(out: list[Any], types: tuple[MaybeType, ...] | list[MaybeType]) -> None:
    """``types`` into ``out``, separated by commas."""
    for i, t in enumerate(types):
        if i:
            out.append(", ")
        out.append(t)


class _Recursive:
    """A schema met again while it is being read (a recursive ``$ref``).

    It is the type being read (its contents are filled in when that is
    done), printed ``recursive(<ref>)`` as OPA prints it; comparisons and
    unifications stop at it, so that the cycle is never walked twice."""

    __slots__ = ()
    ref: str

    def pieces(self) -> list[Any]:
        return [f"recursive({self.ref})"]


class RecursiveObjectType(_Recursive, ObjectType):
    __slots__ = ("ref",)

    def __init__(self, ref: str) -> None:
        ObjectType.__init__(self, (), (ANY, ANY))
        self.ref = ref


class RecursiveArrayType(_Recursive, ArrayType):
    __slots__ = ("ref",)

    def __init__(self, ref: str) -> None:
        ArrayType.__init__(self, (), ANY)
        self.ref = ref


class RecursiveAnyType(_Recursive, AnyType):
    __slots__ = ("ref",)

    def __init__(self, ref: str) -> None:
        AnyType.__init__(self, ())
        self.ref = ref


_RECURSIVE = frozenset({RecursiveObjectType, RecursiveArrayType, RecursiveAnyType})

NULL = NullType()
BOOLEAN = BooleanType()
NUMBER = NumberType()
STRING = StringType()
ANY = AnyType()

TypeLike = Union[Type, None]


def unwrap(t: MaybeType) -> MaybeType:
    return t.type if t.__class__ is NamedType else t  # type: ignore[union-attr]


# Types whose values only ever unify with their own type (checked first: most operands are these).
_SCALAR_TYPES = frozenset({NullType, BooleanType, NumberType, StringType})


def sprint(t: MaybeType) -> str:
    """A type as OPA prints it in messages; ``???`` for an unknown type (cut when
    very long: :mod:`pyrego.typecheck.types_text`)."""
    return type_text(t)


def func_args_text(args: tuple[MaybeType, ...] | list[MaybeType], variadic: MaybeType = None) -> str:
    """An argument list as OPA prints it: ``(number, string, any...)``."""
    parts = [type_text(a) for a in args]
    if variadic is not None:
        parts.append(type_text(variadic) + "...")
    return "(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------- comparison and union


# Memos of the comparisons and unifications made within one call, by the
# identities of the two types: types are shared, not copied (a rule's type is
# in the type of every rule that holds its value), so two types can hold the
# same pair of parts many times over; each pair is worked out once.
_Memo = Optional[dict]


def _slice_compare(a: tuple[MaybeType, ...], b: tuple[MaybeType, ...], memo: _Memo = None) -> int:
    for x, y in zip(a, b):
        c = compare(x, y, memo)
        if c:
            return c
    return (len(a) > len(b)) - (len(a) < len(b))


def compare(a: MaybeType, b: MaybeType, memo: _Memo = None) -> int:
    """OPA's total order on types (by kind first, then structure).

    ``memo``: the answers for pairs of parts met so far in this comparison
    (by identity; made when first needed)."""
    if a.__class__ is NamedType:
        a = a.type  # type: ignore[union-attr]
    if b.__class__ is NamedType:
        b = b.type  # type: ignore[union-attr]
    x = -1 if a is None else a.order
    y = -1 if b is None else b.order
    if x != y:
        return 1 if x > y else -1
    if x <= 3 or a is b:
        return 0
    if a.__class__ in _RECURSIVE and b.__class__ in _RECURSIVE:  # type: ignore[union-attr]
        ra, rb = a.ref, b.ref  # type: ignore[union-attr,attr-defined]
        return (ra > rb) - (ra < rb)
    key = (id(a), id(b))
    if memo is None:
        memo = {}
    else:
        found = memo.get(key)
        if found is not None:
            return found  # type: ignore[no-any-return]
    # (one frame per level of the types where it can be: deep types are met)
    c = 0
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        if a.dynamic is not None and b.dynamic is None:
            c = 1
        elif b.dynamic is not None and a.dynamic is None:
            c = -1
        elif a.dynamic is not None and b.dynamic is not None:
            c = compare(a.dynamic, b.dynamic, memo)
        if not c:
            for pa, pb in zip(a.static, b.static):
                c = compare(pa, pb, memo)
                if c:
                    break
            else:
                c = (len(a.static) > len(b.static)) - (len(a.static) < len(b.static))
    elif isinstance(a, ObjectType) and isinstance(b, ObjectType):
        if a.dynamic is not None and b.dynamic is None:
            c = 1
        elif b.dynamic is not None and a.dynamic is None:
            c = -1
        elif a.dynamic is not None and b.dynamic is not None:
            c = compare(a.dynamic[0], b.dynamic[0], memo) or compare(a.dynamic[1], b.dynamic[1], memo)
        if not c:
            for (ka, va), (kb, vb) in zip(a.static, b.static):
                c = compare_json(ka, kb) or compare(va, vb, memo)
                if c:
                    break
            else:
                c = (len(a.static) > len(b.static)) - (len(a.static) < len(b.static))
    elif isinstance(a, SetType) and isinstance(b, SetType):
        if a.of is None or b.of is None:
            c = (a.of is not None) - (b.of is not None)
        else:
            c = compare(a.of, b.of, memo)
    elif isinstance(a, AnyType) and isinstance(b, AnyType):
        c = _slice_compare(a.of, b.of, memo)
    elif isinstance(a, FunctionType) and isinstance(b, FunctionType):
        if len(a.args) != len(b.args):
            c = -1 if len(a.args) < len(b.args) else 1
        else:
            c = _slice_compare(a.args, b.args, memo) or compare(a.result, b.result, memo) or compare(a.variadic, b.variadic, memo)
    memo[key] = c
    return c


def _insert_sorted(members: tuple[Type, ...], t: Type) -> tuple[Type, ...]:
    for i, m in enumerate(members):
        if compare(m, t) >= 0:
            return members[:i] + (t,) + members[i:]
    return members + (t,)


def new_any(*of: Type) -> AnyType:
    """``any<...>`` of the given members, sorted (duplicates kept, as OPA's NewAny does)."""
    out: tuple[Type, ...] = ()
    for t in of:
        out = _insert_sorted(out, t)
    return AnyType(out)


def any_contains(a: AnyType, other: MaybeType) -> bool:
    if isinstance(other, FunctionType):
        return False
    if not a.of:
        return True
    return any(compare(m, other) == 0 for m in a.of)


def contains(a: MaybeType, b: MaybeType) -> bool:
    """Whether ``a`` is ``b`` or an ``any`` holding it."""
    a = unwrap(a)
    if isinstance(a, AnyType):
        return any_contains(a, b)
    return compare(a, b) == 0


def _any_union(a: AnyType, b: AnyType) -> AnyType:
    if not a.of:
        return a
    if not b.of:
        return b
    merged: list[Type] = []
    i = j = 0
    while i < len(a.of) or j < len(b.of):
        if i == len(a.of):
            merged.extend(b.of[j:])
            break
        if j == len(b.of):
            merged.extend(a.of[i:])
            break
        c = compare(a.of[i], b.of[j])
        if c < 0:
            merged.append(a.of[i])
            i += 1
        elif c == 0:
            merged.append(a.of[i])
            i += 1
            j += 1
        else:
            merged.append(b.of[j])
            j += 1
    return AnyType(tuple(merged))


def _any_merge(a: AnyType, other: Type) -> AnyType:
    if isinstance(other, AnyType):
        return _any_union(a, other)
    if any_contains(a, other):
        return a
    return AnyType(_insert_sorted(a.of, other))


def _function_union(a: FunctionType, b: FunctionType) -> MaybeType:
    if len(a.args) != len(b.args):
        return None
    if (a.variadic is None) != (b.variadic is None):
        return None
    args = tuple(or_(x, y) for x, y in zip(a.arg_types(), b.arg_types()))
    return FunctionType(args, or_(a.result_type(), b.result_type()), or_(unwrap(a.variadic), unwrap(b.variadic)))


def or_(a: MaybeType, b: MaybeType) -> MaybeType:
    """The union of two types; the superset itself when one contains the other."""
    if a.__class__ is NamedType:
        a = a.type  # type: ignore[union-attr]
    if b.__class__ is NamedType:
        b = b.type  # type: ignore[union-attr]
    if a is None:
        return b
    if b is None or (a is b and a.__class__ is not FunctionType):
        return a  # (a type's union with itself is that type: a function's is made anew)
    fa, fb = isinstance(a, FunctionType), isinstance(b, FunctionType)
    if fa and fb:
        return _function_union(a, b)  # type: ignore[arg-type]
    if fa or fb:
        return None
    if isinstance(a, AnyType):
        return _any_merge(a, b)
    if isinstance(b, AnyType):
        return _any_merge(b, a)
    if compare(a, b) == 0:
        return a
    return new_any(a, b)


# ---------------------------------------------------------------- selection


def type_of(x: Any) -> Type:
    """The type of a JSON value."""
    if x is None:
        return NULL
    if x is True or x is False:
        return BOOLEAN
    if isinstance(x, str):
        return STRING
    if isinstance(x, JNum):
        return NUMBER
    if isinstance(x, JMap):
        return ObjectType([(k, type_of(v)) for k, v in x.pairs])
    if isinstance(x, tuple):
        return ArrayType(tuple(type_of(v) for v in x))
    raise TypeError(f"not a JSON value: {x!r}")


def select(a: MaybeType, x: Any) -> MaybeType:
    """The type of ``a``'s element or property ``x`` (a JSON value); None when unknown."""
    a = unwrap(a)
    if isinstance(a, ArrayType):
        if not isinstance(x, JNum):
            return None
        try:
            pos = int(x.text)
        except ValueError:
            return None
        return a.select(pos)
    if isinstance(a, ObjectType):
        return a.select(x)
    if isinstance(a, SetType):
        t = type_of(x)
        if compare(a.of, t) == 0:
            return a.of
        if isinstance(a.of, AnyType) and any_contains(a.of, t):
            return t
        return None
    if isinstance(a, AnyType):
        if not a.of:
            return ANY
        out: MaybeType = None
        for m in a.of:
            out = or_(select(m, x), out)
        return out
    return None


def keys(a: MaybeType) -> MaybeType:
    """The type of the keys that enumerate ``a`` (numbers for arrays)."""
    a = unwrap(a)
    if isinstance(a, ArrayType):
        return NUMBER
    if isinstance(a, ObjectType):
        out: MaybeType = None
        for k, _ in a.static:
            out = or_(out, type_of(k))
        if a.dynamic is not None:
            out = or_(out, a.dynamic[0])
        return out
    if isinstance(a, SetType):
        return a.of
    if isinstance(a, AnyType):
        if not a.of:
            return ANY
        out = None
        for m in a.of:
            out = or_(keys(m), out)
        return out
    return None


def values(a: MaybeType) -> MaybeType:
    """The type of the values that enumerate ``a``."""
    a = unwrap(a)
    if isinstance(a, ArrayType):
        out: MaybeType = None
        for t in a.static:
            out = or_(out, t)
        return or_(out, a.dynamic)
    if isinstance(a, ObjectType):
        out = None
        for _, t in a.static:
            out = or_(out, t)
        if a.dynamic is not None:
            out = or_(out, a.dynamic[1])
        return out
    if isinstance(a, SetType):
        return a.of
    if isinstance(a, AnyType):
        if not a.of:
            return ANY
        out = None
        for m in a.of:
            out = or_(values(m), out)
        return out
    return None


def is_nil(a: MaybeType) -> bool:
    """Whether ``a`` is unknown or holds an unknown part (OPA's ``types.Nil``).

    A composite type keeps the answer (in ``nil``): types are shared, not
    copied (a rule's type is in the type of every rule that holds its
    value), so a walk of every part each time would grow with the size of
    the printed type, which doubles with each level of sharing."""
    if a is None:
        return True
    cls = a.__class__
    if cls in _SCALAR_TYPES or cls is AnyType or cls in _RECURSIVE:
        return False
    if cls is NamedType:
        return is_nil(a.type)  # type: ignore[attr-defined]
    found: bool | None = a.nil  # type: ignore[attr-defined]
    if found is None:
        found = a.nil = _holds_nil(a)  # type: ignore[attr-defined]
    return found


def _holds_nil(a: Type) -> bool:
    # (loops, not any() over generators, and scalars told in place: arrays of
    # literals are checked often)
    if isinstance(a, FunctionType):
        for x in a.args:
            if is_nil(x):
                return True
        return is_nil(a.result)
    if isinstance(a, ArrayType):
        for x in a.static:
            if x.__class__ not in _SCALAR_TYPES and is_nil(x):
                return True
        return a.dynamic is not None and is_nil(a.dynamic)
    if isinstance(a, ObjectType):
        for _, v in a.static:
            if v.__class__ not in _SCALAR_TYPES and is_nil(v):
                return True
        return a.dynamic is not None and (is_nil(a.dynamic[0]) or is_nil(a.dynamic[1]))
    if isinstance(a, SetType):
        return is_nil(a.of)
    return False


# ---------------------------------------------------------------- declarations (capabilities JSON)


def from_decl(d: dict[str, Any]) -> Type:
    """A type from OPA's JSON form (``{"type": "array", "dynamic": {...}}``), names kept."""
    kind = d["type"]
    t: Type
    if kind == "null":
        t = NULL
    elif kind == "boolean":
        t = BOOLEAN
    elif kind == "number":
        t = NUMBER
    elif kind == "string":
        t = STRING
    elif kind == "any":
        t = new_any(*[from_decl(x) for x in d.get("of", [])])
    elif kind == "array":
        static = tuple(from_decl(x) for x in d.get("static", []))
        dyn = from_decl(d["dynamic"]) if "dynamic" in d else None
        t = ArrayType(static, dyn)
    elif kind == "object":
        props: list[tuple[Any, MaybeType]] = [(p["key"], from_decl(p["value"])) for p in d.get("static", [])]
        dyn_d = d.get("dynamic")
        t = ObjectType(props, (from_decl(dyn_d["key"]), from_decl(dyn_d["value"])) if dyn_d else None)
    elif kind == "set":
        t = SetType(from_decl(d["of"]) if "of" in d else None)
    elif kind == "function":
        args = tuple(from_decl(x) for x in d.get("args", []))
        result = from_decl(d["result"]) if "result" in d else None
        variadic = from_decl(d["variadic"]) if "variadic" in d else None
        t = FunctionType(args, result, variadic)
    else:
        raise ValueError(f"unknown type {kind!r}")
    name = d.get("name")
    return NamedType(name, t) if name else t


# (unification has a module of its own, which reads everything above)

__all__ = [
    "Type",
    "NullType",
    "BooleanType",
    "NumberType",
    "StringType",
    "ArrayType",
    "ObjectType",
    "SetType",
    "AnyType",
    "NamedType",
    "FunctionType",
    "NULL",
    "BOOLEAN",
    "NUMBER",
    "STRING",
    "ANY",
    "JNum",
    "JMap",
    "compare",
    "compare_json",
    "contains",
    "or_",
    "new_any",
    "select",
    "keys",
    "values",
    "is_nil",
    "sprint",
    "type_of",
    "unwrap",
    "from_decl",
    "func_args_text",
    "go_value_text",
]
