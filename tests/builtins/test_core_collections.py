"""numbers.*, bits.*, rand.intn, array.*, sets and objects (core collection builtins)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, BuiltinHalt, OperandTypeError, lookup
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import freeze, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


S = make_set

# ---------------------------------------------------------------- numbers


def rng(name: str, *args: Any, ctx: EvalContext | None = None) -> Any:
    b = lookup(name)
    assert b is not None and b.needs_context
    return b.fn(ctx or EvalContext(), *args)


def test_numbers_range() -> None:
    assert rng("numbers.range", 0, 0) == [0]
    assert rng("numbers.range", -2, 3) == [-2, -1, 0, 1, 2, 3]
    assert rng("numbers.range", 2, -3) == [2, 1, 0, -1, -2, -3]
    assert rng("numbers.range", 1, 3.0) == [1, 2, 3]
    assert rng("numbers.range", 10**20, 10**20 + 1) == [10**20, 10**20 + 1]
    assert len(rng("numbers.range", 1, 3_000_000)) == 3_000_000
    with pytest.raises(OperandTypeError, match="^operand 1 must be integer number but got floating-point number$"):
        rng("numbers.range", 1.5, 3)
    with pytest.raises(OperandTypeError, match="^operand 2 must be integer but got string$"):
        rng("numbers.range", 1, "a")


def test_numbers_range_stops_at_the_deadline() -> None:
    ctx = EvalContext(deadline=time.monotonic() - 1)
    with pytest.raises(BuiltinHalt, match="^timed out before generating all numbers in range$") as info:
        rng("numbers.range", 0, 10**12, ctx=ctx)
    assert info.value.code == "eval_cancel_error"


def test_numbers_range_step() -> None:
    assert rng("numbers.range_step", 0, 10, 2) == [0, 2, 4, 6, 8, 10]
    assert rng("numbers.range_step", 0, -10, 2) == [0, -2, -4, -6, -8, -10]
    assert rng("numbers.range_step", 10, 3, 2) == [10, 8, 6, 4]
    assert rng("numbers.range_step", 2, 5, 2) == [2, 4]
    assert rng("numbers.range_step", 0, 10, 99999999999999999999) == [0]
    assert rng("numbers.range_step", 5, 0, 10**30) == [5]
    for step in (0, -2):
        with pytest.raises(BuiltinError, match="^numbers.range_step: step must be a positive integer$"):
            rng("numbers.range_step", 0, 10, step)


def test_bits() -> None:
    assert call("bits.and", 50, 0) == 0
    assert call("bits.and", -5, 3) == 3
    assert call("bits.or", 5, 3) == 7
    assert call("bits.xor", 42, 3) == 41
    assert call("bits.negate", 5) == -6
    assert call("bits.negate", -123456789012345678901234) == 123456789012345678901233
    assert call("bits.lsh", 2147483647, 1) == 4294967294
    assert call("bits.lsh", 9223372036854775807, 1) == 18446744073709551614
    assert call("bits.lsh", -1, 3) == -8
    assert call("bits.rsh", 8, 3) == 1
    assert call("bits.rsh", -16, 2) == -4
    with pytest.raises(OperandTypeError, match="^operand 1 must be integer number but got floating-point number$"):
        call("bits.and", 7.2, 42)
    with pytest.raises(OperandTypeError, match="^operand 2 must be integer but got string$"):
        call("bits.xor", 1, "x")
    with pytest.raises(OperandTypeError, match="^operand 2 must be an unsigned integer number but got a negative integer$"):
        call("bits.lsh", 1, -1)


def test_rand_intn_is_stable_per_query() -> None:
    fn = lookup("rand.intn")
    assert fn is not None and fn.needs_context and fn.nondeterministic
    ctx = EvalContext()
    values = {fn.fn(ctx, "key", 100) for _ in range(50)}
    assert len(values) == 1 and 0 <= values.pop() < 100
    assert fn.fn(ctx, "key", 0) == 0
    assert 0 <= fn.fn(ctx, "x", -5) < 5
    with pytest.raises(OperandTypeError, match="^operand 2 must be integer number but got floating-point number$"):
        fn.fn(ctx, "a", 1.5)
    with pytest.raises(OperandTypeError, match="^operand 1 must be string but got number$"):
        fn.fn(ctx, 1, 1)


# ---------------------------------------------------------------- arrays


def test_array_builtins() -> None:
    assert call("array.concat", [1, 2], [3, 4]) == [1, 2, 3, 4]
    assert call("array.slice", [1, 2, 3, 4, 5], 1, 3) == [2, 3]
    assert call("array.slice", [1, 2, 3], 0, 0) == []
    assert call("array.slice", [1, 2, 3, 4, 5], -4, -1) == []
    assert call("array.slice", [1, 2, 3], -5, 10) == [1, 2, 3]
    assert call("array.slice", [1, 2, 3], 2, 1) == []
    assert call("array.reverse", [1, [2], "x"]) == ["x", [2], 1]
    assert call("array.flatten", [[1, 2], "string", [3, {"a": "b"}], 4.5, [6, [7, 8]]]) == [
        1, 2, "string", 3, {"a": "b"}, 4.5, 6, [7, 8],
    ]
    assert call("array.flatten", []) == []
    with pytest.raises(OperandTypeError, match="^operand 1 must be array but got object$"):
        call("array.concat", {}, [])
    with pytest.raises(OperandTypeError, match="^operand 1 must be array but got number$"):
        call("array.flatten", 42)
    with pytest.raises(OperandTypeError, match="^operand 3 must be integer number but got floating-point number$"):
        call("array.slice", [1], 0, 1.5)


# ---------------------------------------------------------------- sets


def test_set_builtins() -> None:
    assert call("intersection", S([S([]), S([1, 2])])) == frozenset()
    assert call("intersection", S([S(["a", "b", "c", "d"]), S(["b", "c", "d"]), S(["c", "d"]), S(["d"])])) == S(["d"])
    assert call("intersection", S([])) == frozenset()
    assert call("union", S([S([1, 2]), S([2, True])])) == S([1, 2, True])
    assert call("union", S([])) == frozenset()
    assert call("set_diff", S([1, 2]), S([2])) == S([1])
    with pytest.raises(OperandTypeError, match="^operand 1 must be set but got number$"):
        call("union", S([1]))
    with pytest.raises(OperandTypeError, match="^operand 1 must be set but got array$"):
        call("intersection", [S([1])])


# ---------------------------------------------------------------- objects


def test_object_get() -> None:
    o = {"a": {"b": "c"}, "x": [1, {"y": S([1, 2])}], 1: "one"}
    assert call("object.get", o, "a", True) == {"b": "c"}
    assert call("object.get", o, "b", True) is True
    assert call("object.get", o, 1, None) == "one"
    assert call("object.get", o, 1.0, None) == "one"
    assert call("object.get", o, ["a", "b"], None) == "c"
    assert call("object.get", o, ["x", 1, "y", 2], None) == 2
    assert call("object.get", o, ["x", 1, "y", 3], "d") == "d"
    assert call("object.get", o, ["x", "1"], "d") == "d"
    assert call("object.get", o, [], None) is o
    with pytest.raises(OperandTypeError, match="^operand 1 must be object but got array$"):
        call("object.get", [1], 0, 1)


def test_object_keys_remove_filter() -> None:
    k = freeze(S([1]))  # a non-string key, in frozen form
    o = {"a": 1, "b": {"c": 3}, "d": 4, k: 5}
    assert call("object.keys", o) == S(["a", "b", "d", S([1])])
    assert call("object.remove", o, S(["b", "d"])) == {"a": 1, k: 5}
    assert call("object.remove", o, {"b": 1, "d": ""}) == {"a": 1, k: 5}
    assert call("object.remove", o, [S([1]), "zz"]) == {"a": 1, "b": {"c": 3}, "d": 4}
    assert call("object.filter", o, ["a", S([1])]) == {"a": 1, k: 5}
    assert call("object.filter", o, {}) == {}
    assert "a" in o  # untouched
    with pytest.raises(OperandTypeError, match=r"^operand 2 must be one of \{object, set, array\} but got string$"):
        call("object.remove", o, "a")
    with pytest.raises(OperandTypeError, match="^operand 1 must be object but got null$"):
        call("object.filter", None, [])


def test_object_union() -> None:
    assert call("object.union", {"b": 2}, {"a": {"b": {"c": 1}}}) == {"a": {"b": {"c": 1}}, "b": 2}
    assert call("object.union", {"a": 1}, {"a": {"b": {"c": 1}}, "d": 7}) == {"a": {"b": {"c": 1}}, "d": 7}
    a = {"a": {"x": 1, "y": {"z": 1}}}
    assert call("object.union", a, {"a": {"y": {"w": 2}}}) == {"a": {"x": 1, "y": {"z": 1, "w": 2}}}
    assert a == {"a": {"x": 1, "y": {"z": 1}}}
    with pytest.raises(OperandTypeError, match="^operand 2 must be object but got array$"):
        call("object.union", {}, [])


def test_object_union_n() -> None:
    assert call("object.union_n", []) == {}
    assert call("object.union_n", [{"foo": "bar"}, {"foo": "baz"}]) == {"foo": "baz"}
    assert call("object.union_n", [{"a": {"b": 2}}, {"a": 4}, {"a": {"c": 3}}]) == {"a": {"c": 3}}
    assert call("object.union_n", [{"a": {"b": 1}}, {"a": 4}, {"a": {"c": 3}}, {"a": {"d": 5}}]) == {"a": {"c": 3, "d": 5}}
    with pytest.raises(OperandTypeError, match="^operand 1 must be array of objects but got array containing number$"):
        call("object.union_n", [{"a": 1}, 5])


def test_object_subset() -> None:
    a = {"a": 5, "b": 7, "nested": {"x": 10, "set1": S([1, 2, 3, 4]), "arr1": [6, 7, 8, 9]}}
    b = {"a": 5, "nested": {"x": 10, "set1": S([4, 1]), "arr1": [6, 7]}}
    assert call("object.subset", a, b) is True
    assert call("object.subset", b, a) is False
    assert call("object.subset", S([1, 2, 3]), S([3, 2])) is True
    assert call("object.subset", S([1, 2, 3, S(["a", "b"])]), S([3, S(["a"])])) is False
    assert call("object.subset", [1, 2, 3, 4, 5, 6], [3, 4, 5]) is True
    assert call("object.subset", [1, 2, 3, 4, 5, 6], [4, 5, 6, 8]) is False
    assert call("object.subset", [1, 1, 2], [1, 2]) is True
    assert call("object.subset", [1, 2, 3, 4, 5, 6], S([4, 3, 2])) is True
    assert call("object.subset", [1, 2, 3], S([9])) is False
    # as OPA counts: duplicates count again, an empty array holds nothing
    assert call("object.subset", [1, 2, 1], S([1, 2, 3])) is True
    assert call("object.subset", [], S([])) is False
    assert call("object.subset", [0], S([])) is True
    with pytest.raises(OperandTypeError, match="^both arguments object.subset must be of the same type or array and set$"):
        call("object.subset", S([1]), [1])
