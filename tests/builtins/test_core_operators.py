"""Comparison, arithmetic, set operators and membership (builtins/operators.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.values import freeze, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


S = make_set

# ---------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    "a,b,want",
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, None, True),
        ("a", "a", True),
        ([1, [2]], [1, [2.0]], True),
        ({"a": 1}, {"a": 1}, True),
        (S([1, 2]), S([2, 1]), True),
        (S([1]), S([True]), False),
        ([True], [1], False),
    ],
)
def test_equal_and_neq(a: Any, b: Any, want: bool) -> None:
    assert call("equal", a, b) is want
    assert call("neq", a, b) is (not want)


def test_total_order_across_types() -> None:
    order = [None, False, True, -1, 0.5, 2, "", "a", [], [1], {}, {"a": 1}, S([]), S([1])]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert call("lt", a, b) is (i < j), (a, b)
            assert call("lte", a, b) is (i <= j), (a, b)
            assert call("gt", a, b) is (i > j), (a, b)
            assert call("gte", a, b) is (i >= j), (a, b)


def test_number_comparison_is_exact() -> None:
    assert call("lt", 2**63, 2**63 + 1) is True
    assert call("lt", 0.1, 0.10000000000000001) is False  # same float
    assert call("gte", 3, 3.0) is True
    assert call("lt", "B", "a") is True  # code point order


# ---------------------------------------------------------------- arithmetic


def test_plus_minus_mul_exact() -> None:
    assert call("plus", 18446744073709551617, 1) == 18446744073709551618
    assert call("minus", -18446744073709551617, 1) == -18446744073709551618
    assert call("mul", 18446744073709551617, 2) == 36893488147419103234
    assert call("plus", 0.1, 0.2) == 0.3
    assert call("minus", 1, 0.9) == Decimal("0.10000000000000000002")  # OPA: 64-bit binary floats
    assert call("mul", 0.1, 3) == 0.3
    # Integral results are ints, as OPA prints them.
    r = call("plus", 1.5, 2.5)
    assert r == 4 and type(r) is int
    assert type(call("mul", 2.5, 2)) is int


def test_div() -> None:
    assert call("div", 6, 3) == 2 and type(call("div", 6, 3)) is int
    assert call("div", -6, 3) == -2
    assert call("div", 1, 4) == 0.25
    assert call("div", 0, 5) == 0
    assert call("div", 1, 3) == Decimal("0.33333333333333333334")
    assert call("div", 2.5, 0.5) == 5
    for zero in (0, 0.0):
        with pytest.raises(BuiltinError, match="^divide by zero$"):
            call("div", 1, zero)


def test_rem() -> None:
    assert call("rem", -17, 5) == -2
    assert call("rem", 17, -5) == 2
    assert call("rem", 4.0, 3) == 1
    assert call("rem", 10, 18446744073709551616) == 10
    assert call("rem", 18446744073709551617, 18446744073709551616) == 1
    with pytest.raises(BuiltinError, match="^modulo on floating-point number$"):
        call("rem", 1.1, 1)
    with pytest.raises(BuiltinError, match="^modulo by zero$"):
        call("rem", 1, 0)


def test_arithmetic_type_errors() -> None:
    with pytest.raises(OperandTypeError, match="^operand 1 must be number but got string$"):
        call("plus", "1", 1)
    with pytest.raises(OperandTypeError, match="^operand 2 must be number but got boolean$"):
        call("mul", 1, True)
    with pytest.raises(OperandTypeError, match="^operand 2 must be number but got null$"):
        call("div", 1, None)


def test_minus_sets_and_errors() -> None:
    assert call("minus", S([1, 2, "c"]), S(["c", 1])) == S([2])
    assert call("minus", S([1]), S([1])) == frozenset()
    with pytest.raises(OperandTypeError, match="^operand 2 must be set but got number$"):
        call("minus", S([1]), 1)
    with pytest.raises(OperandTypeError, match="^operand 2 must be number but got set$"):
        call("minus", 1, S([1]))
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{number, set\} but got string$"):
        call("minus", "a", 1)


@pytest.mark.parametrize(
    "x,rounded,ceil,floor",
    [
        (2.5, 3, 3, 2),
        (-2.5, -3, -2, -3),
        (2.4, 2, 3, 2),
        (-0.4, 0, 1, 0),  # OPA v1.20.2: ceil/floor of a number in (-1, 0) are 1 and 0
        (1.01, 1, 2, 1),
        (99.99999, 100, 100, 99),
        (-1.001, -1, -1, -2),
        (-5, -5, -5, -5),
        (10**30, 1000000000000000000024696061952, 1000000000000000000024696061952, 1000000000000000000024696061952),  # via a 64-bit float
        (1e300, *[1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144] * 3),  # 10**300 rounded to a 64-bit float, as in OPA
    ],
)
def test_round_ceil_floor(x: Any, rounded: int, ceil: int, floor: int) -> None:
    assert call("round", x) == rounded
    assert call("ceil", x) == ceil
    assert call("floor", x) == floor
    assert all(type(call(n, x)) is int for n in ("round", "ceil", "floor"))


def test_abs() -> None:
    assert call("abs", -5) == 5
    assert call("abs", -9223372036854775808) == 9223372036854775808
    assert call("abs", -2.5) == 2.5
    with pytest.raises(OperandTypeError, match="^operand 1 must be number but got string$"):
        call("abs", "x")


# ---------------------------------------------------------------- set operators


def test_and_or() -> None:
    assert call("and", S([1, 2, 3]), S([2, 3, 4])) == S([2, 3])
    assert call("or", S([1, True]), S([1, "a"])) == S([1, True, "a"])
    assert len(call("or", S([1]), S([True]))) == 2
    with pytest.raises(OperandTypeError, match="^operand 1 must be set but got array$"):
        call("and", [1], S([]))
    with pytest.raises(OperandTypeError, match="^operand 2 must be set but got number$"):
        call("or", S([]), 1)


# ---------------------------------------------------------------- membership


def test_member_2() -> None:
    m = "internal.member_2"
    assert call(m, 1, [1]) is True
    assert call(m, 1, [True]) is False
    assert call(m, True, [1]) is False
    assert call(m, 1.0, S([1])) is True
    assert call(m, True, S([1])) is False
    assert call(m, 1, {"foo": 1}) is True
    assert call(m, "foo", {"foo": 1}) is False  # values, not keys
    assert call(m, {"foo": {"baz": 2000}}, [{"foo": {"baz": 2000}}]) is True
    assert call(m, S([1, 2]), [S([2, 1])]) is True
    assert call(m, "a", ["x", "a"]) is True
    # Not a collection: false, never an error.
    assert call(m, 1, "foo") is False
    assert call(m, "foo", 1) is False
    assert call(m, None, None) is False


def test_member_3() -> None:
    m = "internal.member_3"
    assert call(m, "foo", 1, {"foo": 1}) is True
    assert call(m, "foo", 2, {"foo": 1}) is False
    assert call(m, 1, "two", ["one", "two", "three"]) is True
    assert call(m, 1.0, "two", ["one", "two"]) is True
    assert call(m, True, "two", ["one", "two"]) is False
    assert call(m, -1, "two", ["one", "two"]) is False
    assert call(m, 5, "two", ["one", "two"]) is False
    assert call(m, "a", "a", S(["a"])) is True
    assert call(m, "a", "b", S(["a"])) is False
    assert call(m, S([1]), "x", {freeze(S([1])): "x"}) is True
    assert call(m, {"foo": 100}, "ever", {freeze({"foo": 100}): "ever"}) is True
    assert call(m, 1, "foo", 1) is False
