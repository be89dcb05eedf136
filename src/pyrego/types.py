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
"""

from __future__ import annotations

from typing import Any, Optional, Union

# JSON values (object keys): kept in their own module, re-exported here.
from .types_json import JMap, JNum, compare_json, go_value_text

# ---------------------------------------------------------------- types


class Type:
    """Base class of every type."""

    __slots__ = ()
    order = -1

    def __str__(self) -> str:  # pragma: no cover - each subclass prints itself
        raise NotImplementedError

    def __repr__(self) -> str:
        return str(self)


class NullType(Type):
    __slots__ = ()
    order = 0

    def __str__(self) -> str:
        return "null"


class BooleanType(Type):
    __slots__ = ()
    order = 1

    def __str__(self) -> str:
        return "boolean"


class NumberType(Type):
    __slots__ = ()
    order = 2

    def __str__(self) -> str:
        return "number"


class StringType(Type):
    __slots__ = ()
    order = 3

    def __str__(self) -> str:
        return "string"


MaybeType = Optional[Type]


class ArrayType(Type):
    """``array<static...>[dynamic]``."""

    __slots__ = ("static", "dynamic")
    order = 4

    def __init__(self, static: tuple[MaybeType, ...] = (), dynamic: MaybeType = None) -> None:
        self.static = static
        self.dynamic = dynamic

    def select(self, pos: int) -> MaybeType:
        if pos >= 0:
            if pos < len(self.static):
                return self.static[pos]
            if self.dynamic is not None:
                return self.dynamic
        return None

    def __str__(self) -> str:
        out = "array"
        if self.static:
            out += "<" + ", ".join(sprint(t) for t in self.static) + ">"
        if self.dynamic is not None:
            out += "[" + str(self.dynamic) + "]"
        return out


class ObjectType(Type):
    """``object<key: type, ...>[key type: value type]``; static keys are JSON values, sorted."""

    __slots__ = ("static", "dynamic")
    order = 5

    def __init__(
        self,
        static: list[tuple[Any, MaybeType]] | tuple[tuple[Any, MaybeType], ...] = (),
        dynamic: tuple[MaybeType, MaybeType] | None = None,
    ) -> None:
        self.static: tuple[tuple[Any, MaybeType], ...] = tuple(_sort_props(list(static))) if len(static) > 1 else tuple(static)
        self.dynamic = dynamic

    def keys(self) -> list[Any]:
        return [k for k, _ in self.static]

    @property
    def dynamic_value(self) -> MaybeType:
        return self.dynamic[1] if self.dynamic is not None else None

    def select(self, name: Any) -> MaybeType:
        for k, v in self.static:
            if compare_json(k, name) == 0:
                return v
        if self.dynamic is not None and contains(self.dynamic[0], type_of(name)):
            return self.dynamic[1]
        return None

    def __str__(self) -> str:
        out = "object"
        if self.static:
            out += "<" + ", ".join(f"{go_value_text(k)}: {sprint(v)}" for k, v in self.static) + ">"
        if self.dynamic is not None:
            out += "[" + sprint(self.dynamic[0]) + ": " + sprint(self.dynamic[1]) + "]"
        return out


def _sort_props(props: list[tuple[Any, MaybeType]]) -> list[tuple[Any, MaybeType]]:
    if all(type(k) is str for k, _ in props):
        # (strings compare as in Go: by code point, which is their UTF-8 byte order)
        return sorted(props, key=lambda p: p[0])
    from functools import cmp_to_key

    def by_key(a: tuple[Any, MaybeType], b: tuple[Any, MaybeType]) -> int:
        return compare_json(a[0], b[0])

    return sorted(props, key=cmp_to_key(by_key))


class SetType(Type):
    __slots__ = ("of",)
    order = 6

    def __init__(self, of: MaybeType) -> None:
        self.of = of

    def __str__(self) -> str:
        return "set[" + sprint(self.of) + "]"


class AnyType(Type):
    """The union of ``of`` (kept sorted); with no members, every type."""

    __slots__ = ("of",)
    order = 7

    def __init__(self, of: tuple[Type, ...] = ()) -> None:
        self.of = of

    def __str__(self) -> str:
        if not self.of:
            return "any"
        return "any<" + ", ".join(sprint(t) for t in self.of) + ">"


class NamedType(Type):
    """A builtin argument or result with its name (printed ``name: type``)."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: Type) -> None:
        self.name = name
        self.type = type

    def __str__(self) -> str:
        return f"{self.name}: {self.type}"


class FunctionType(Type):
    """Arguments (possibly named), a result (None: void) and a variadic tail."""

    __slots__ = ("args", "result", "variadic", "_arg_types")
    order = 8

    def __init__(self, args: tuple[MaybeType, ...], result: MaybeType, variadic: MaybeType = None) -> None:
        self.args = args
        self.result = result
        self.variadic = variadic
        self._arg_types: tuple[MaybeType, ...] | None = None

    def arg_types(self) -> tuple[MaybeType, ...]:
        """The argument types without their names (worked out once: builtins' types are shared)."""
        found = self._arg_types
        if found is None:
            found = self._arg_types = tuple([unwrap(a) for a in self.args])
        return found

    def result_type(self) -> MaybeType:
        return unwrap(self.result)

    def __str__(self) -> str:
        return func_args_text(self.arg_types(), unwrap(self.variadic)) + " => " + sprint(self.result_type())


class _Recursive:
    """A schema met again while it is being read (a recursive ``$ref``).

    It is the type being read (its contents are filled in when that is
    done), printed ``recursive(<ref>)`` as OPA prints it; comparisons and
    unifications stop at it, so that the cycle is never walked twice."""

    __slots__ = ()
    ref: str

    def __str__(self) -> str:
        return f"recursive({self.ref})"


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
    """A type as OPA prints it in messages; ``???`` for an unknown type."""
    return "???" if t is None else str(t)


def func_args_text(args: tuple[MaybeType, ...] | list[MaybeType], variadic: MaybeType = None) -> str:
    parts = [sprint(a) for a in args]
    if variadic is not None:
        parts.append(sprint(variadic) + "...")
    return "(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------- comparison and union


def _slice_compare(a: tuple[MaybeType, ...], b: tuple[MaybeType, ...]) -> int:
    for x, y in zip(a, b):
        c = compare(x, y)
        if c:
            return c
    return (len(a) > len(b)) - (len(a) < len(b))


def compare(a: MaybeType, b: MaybeType) -> int:
    """OPA's total order on types (by kind first, then structure)."""
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
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        if a.dynamic is not None and b.dynamic is None:
            return 1
        if b.dynamic is not None and a.dynamic is None:
            return -1
        if a.dynamic is not None and b.dynamic is not None:
            c = compare(a.dynamic, b.dynamic)
            if c:
                return c
        return _slice_compare(a.static, b.static)
    if isinstance(a, ObjectType) and isinstance(b, ObjectType):
        if a.dynamic is not None and b.dynamic is None:
            return 1
        if b.dynamic is not None and a.dynamic is None:
            return -1
        if a.dynamic is not None and b.dynamic is not None:
            c = compare(a.dynamic[0], b.dynamic[0]) or compare(a.dynamic[1], b.dynamic[1])
            if c:
                return c
        for (ka, va), (kb, vb) in zip(a.static, b.static):
            c = compare_json(ka, kb) or compare(va, vb)
            if c:
                return c
        return (len(a.static) > len(b.static)) - (len(a.static) < len(b.static))
    if isinstance(a, SetType) and isinstance(b, SetType):
        if a.of is None and b.of is None:
            return 0
        if a.of is None:
            return -1
        if b.of is None:
            return 1
        return compare(a.of, b.of)
    if isinstance(a, AnyType) and isinstance(b, AnyType):
        return _slice_compare(a.of, b.of)
    if isinstance(a, FunctionType) and isinstance(b, FunctionType):
        if len(a.args) != len(b.args):
            return -1 if len(a.args) < len(b.args) else 1
        c = _slice_compare(a.args, b.args)
        if c:
            return c
        return compare(a.result, b.result) or compare(a.variadic, b.variadic)
    return 0


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
    """Whether ``a`` is unknown or holds an unknown part (OPA's ``types.Nil``)."""
    if a is None:
        return True
    cls = a.__class__
    if cls in _SCALAR_TYPES or cls is AnyType or cls in _RECURSIVE:
        return False
    a = unwrap(a)
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


# ---------------------------------------------------------------- unification of types


def unifies(a: MaybeType, b: MaybeType) -> bool:
    """Whether values of types ``a`` and ``b`` can be equal (OPA's checker rule)."""
    if a is b:  # (the same type unifies with itself, whatever it is)
        return a is not None
    if a is None or b is None:
        return False
    ca, cb = a.__class__, b.__class__
    if ca is NamedType:
        a = a.type  # type: ignore[attr-defined]
        ca = a.__class__
    if cb is NamedType:
        b = b.type  # type: ignore[attr-defined]
        cb = b.__class__
    if ca in _SCALAR_TYPES and cb in _SCALAR_TYPES:
        return ca is cb
    if (ca is AnyType and not a.of and cb is not FunctionType) or (cb is AnyType and not b.of and ca is not FunctionType):  # type: ignore[union-attr]
        return True  # any: every value but a function's
    if a is b or (ca in _RECURSIVE and cb in _RECURSIVE and a.ref == b.ref):  # type: ignore[union-attr]
        return True  # (a recursive type unifies with itself: its cycle is not walked)
    any_a = isinstance(a, AnyType)
    any_b = isinstance(b, AnyType)
    if any_a and _unifies_any(a, b):  # type: ignore[arg-type]
        return True
    if any_b and _unifies_any(b, a):  # type: ignore[arg-type]
        return True
    if any_a or any_b:
        return False
    if isinstance(a, ArrayType):
        return isinstance(b, ArrayType) and _unifies_arrays(a, b)
    if isinstance(a, ObjectType):
        return isinstance(b, ObjectType) and _unifies_objects(a, b)
    if isinstance(a, SetType):
        return isinstance(b, SetType) and unifies(values(a), values(b))
    if isinstance(a, FunctionType):
        if not isinstance(b, FunctionType) or len(a.args) != len(b.args):
            return False
        return all(unifies(x, y) for x, y in zip(a.arg_types(), b.arg_types()))
    return type(a) is type(b)


def _unifies_any(a: AnyType, b: Type) -> bool:
    if isinstance(b, FunctionType):
        return False
    for m in a.of:
        if unifies(m, b):
            return True
    return not a.of


def _unifies_arrays(a: ArrayType, b: ArrayType) -> bool:
    for i in range(len(a.static)):
        if not unifies(a.select(i), b.select(i)):
            return False
    for i in range(len(b.static)):
        if not unifies(b.select(i), a.select(i)):
            return False
    return a.dynamic is None or b.dynamic is None or unifies(a.dynamic, b.dynamic)


def _unifies_objects(a: ObjectType, b: ObjectType) -> bool:
    return (
        _unifies_objects_static(a, b)
        and _unifies_objects_static(b, a)
        and (a.dynamic is None or b.dynamic is None or unifies(a.dynamic[1], b.dynamic[1]))
    )


def _unifies_objects_static(a: ObjectType, b: ObjectType) -> bool:
    for k, _ in a.static:
        other = b.select(k)
        # A key the other object lacks is fine when either has dynamic
        # properties: OPA (as of v1.20.2) leaves those to the dynamic check.
        if other is None and (a.dynamic is not None or b.dynamic is not None):
            continue
        if not unifies(a.select(k), other):
            return False
    return True


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
    "unifies",
    "sprint",
    "type_of",
    "unwrap",
    "from_decl",
    "func_args_text",
    "go_value_text",
]
