"""count, sum, product, max, min, sort, all, any (builtins/aggregates.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import OperandTypeError, lookup
from pyrego.runtime.values import UNDEF, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


S = make_set


def test_count() -> None:
    assert call("count", [1, 2, 3, 4]) == 4
    assert call("count", {"a": 1}) == 1
    assert call("count", S([1, True])) == 2
    assert call("count", "héllo😀") == 6  # code points
    assert call("count", "") == 0
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{array, object, set, string\} but got number$"):
        call("count", 5)


def test_sum_and_product() -> None:
    assert call("sum", S([1, 2, 3, 4])) == 10
    assert call("sum", []) == 0
    assert call("sum", [9223372036854775807, 1]) == 9223372036854775808
    assert call("sum", [18446744073709551617, 1]) == 18446744073709551618
    assert call("sum", [0.1, 0.2]) == 0.3
    assert call("sum", [1, 2.5]) == 3.5
    total = call("sum", [1.5, 2.5])
    assert total == 4 and type(total) is int
    assert call("product", S([1, 2, 3, 4])) == 24
    assert call("product", []) == 1
    assert call("product", [18446744073709551617, 2]) == 36893488147419103234
    assert call("product", [1.5, 2]) == 3
    with pytest.raises(OperandTypeError, match="^operand 1 must be array of numbers but got array containing string$"):
        call("sum", [1, "a"])
    with pytest.raises(OperandTypeError, match="^operand 1 must be set of numbers but got set containing boolean$"):
        call("product", S([True]))
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{set, array\} but got object$"):
        call("sum", {})


def test_max_min() -> None:
    assert call("max", S([1, 2, 3, 4])) == 4
    assert call("min", [3, 2, 1, 4, 6, -7, 10]) == -7
    assert call("max", [3, 3.5, 3.25, 3.4999]) == 3.5
    assert call("min", [3, 3.5, 2.75, 2.7499]) == 2.7499
    assert call("max", [None, 1, "a", [1], {"a": 1}]) == {"a": 1}
    assert call("min", [None, 1, "a"]) is None
    assert call("max", []) is UNDEF
    assert call("min", S([])) is UNDEF
    with pytest.raises(OperandTypeError):
        call("max", "abc")


def test_sort() -> None:
    assert call("sort", [4, 3, 2, 1]) == [1, 2, 3, 4]
    assert call("sort", [3.5, 3, 3.25, -2.5, 0.5]) == [-2.5, 0.5, 3, 3.25, 3.5]
    assert call("sort", S(["b", "a", "c"])) == ["a", "b", "c"]
    assert call("sort", [[2], [1, 5], [1], "z", None, True, 0]) == [None, True, 0, "z", [1], [1, 5], [2]]
    assert call("sort", []) == []
    data = [3, 1, 2]
    call("sort", data)
    assert data == [3, 1, 2]  # argument untouched
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{set, array\} but got string$"):
        call("sort", "x")


def test_all_any() -> None:
    assert call("all", [True, True]) is True
    assert call("all", []) is True
    assert call("all", [True, 1]) is False
    assert call("all", S([True])) is True
    assert call("all", S([True, False])) is False
    assert call("any", [False, True]) is True
    assert call("any", [1, "true"]) is False
    assert call("any", []) is False
    assert call("any", S([False, True])) is True
    assert call("any", S([1])) is False
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{array, set\} but got object$"):
        call("all", {})
