"""Number arithmetic gives OPA v1.20.2's exact answers.

OPA keeps integers exact but computes everything else in binary floats with
a 64-bit mantissa, turning each result back into the shortest decimal text
(see ``pyrego.runtime.bigfloat``). The first half checks that emulation on
its own and through the engine with known answers; the second half compares
pyrego with OPA itself (skipped when the oracle cannot be had), in each of
pyrego's three execution forms.
"""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

import pyrego
from pyrego.runtime import bigfloat, numbers
from pyrego.runtime.bigfloat import BigFloat

# ---------------------------------------------------------------- helpers


def bf(x: int | float | Decimal | str) -> BigFloat:
    return bigfloat.parse_text(x) if isinstance(x, str) else bigfloat.from_number(x)


def value(f: BigFloat) -> Fraction:
    v = Fraction(f.mant) * Fraction(2) ** f.exp
    return -v if f.neg else v


def nearest(q: Fraction, prec: int = 64) -> Fraction:
    """The ``prec``-bit binary float nearest to ``q`` (ties to even), by brute force."""
    if not q:
        return q
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    scale = Fraction(2) ** (prec - 1 - e)
    m, rest = divmod(a * scale, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2):
        m += 1
    r = m / scale
    return r if q > 0 else -r


def evaluate(query: str, policy: str = "package t\n") -> Any:
    e = pyrego.Engine()
    e.set_strict_builtin_errors(True)
    e.add_policy("t.rego", policy)
    res = e.eval_query(query)
    return res["result"][0]["bindings"]["x"]


# ---------------------------------------------------------------- the emulation


@pytest.mark.parametrize(
    "mant,exp,prec,want_mant,want_exp",
    [
        (0b1011, 0, 3, 0b110, 1),  # a tie goes to the even mantissa (up)
        (0b1001, 0, 3, 0b100, 1),  # a tie goes to the even mantissa (down)
        (0b1111, 0, 3, 0b100, 2),  # rounding up carries into a new bit
        (0b1010011, -3, 4, 0b1010, 0),  # below half: down
        (0b1011100, -3, 4, 0b1100, 0),  # above half: up
        (0b101, 7, 8, 0b101, 7),  # fits: unchanged
    ],
)
def test_round_to_nearest_even(mant: int, exp: int, prec: int, want_mant: int, want_exp: int) -> None:
    r = bigfloat._round(False, mant, exp, prec)
    assert (r.mant, r.exp) == (want_mant, want_exp)


def test_sticky_bit_breaks_a_tie() -> None:
    r = bigfloat._round(False, 0b1001, 0, 3, sticky=True)
    assert (r.mant, r.exp) == (0b101, 1)


@pytest.mark.parametrize("text", ["0.1", "0.2", "0.3", "2.5", "1e-7", "123456.789", "0.33333333333333333334", "1e27", "7e-27", "-4.75"])
def test_parsing_is_correctly_rounded_for_small_exponents(text: str) -> None:
    # With at most 27 decimal places (or powers up to 1e27) the power of five
    # is exact and the one division or multiplication rounds correctly.
    assert value(bf(text)) == nearest(Fraction(text))


def test_large_powers_of_ten_are_built_as_opa_builds_them() -> None:
    # 1e30 needs 5**30, which OPA's parser squares up at 128 bits.
    assert bigfloat.trunc(bf("1e30")) == 1000000000000000000024696061952
    assert bigfloat.trunc(bf(10**30)) == 1000000000000000000024696061952
    assert bigfloat.text(bigfloat.quo(bf("1e-400"), bf(3))) == "3.3333333333333333332e-401"
    assert bigfloat.text(bigfloat.quo(bf("1e400"), bf(3))) == "33333333333333333334" + "0" * 380


def test_operations_round_once() -> None:
    for a, b in [("0.1", "0.2"), ("1", "3"), ("2.5", "-0.3"), ("12345678901234567890123", "7"), ("1e-300", "3e-5")]:
        x, y = bf(a), bf(b)
        assert value(bigfloat.add(x, y)) == nearest(value(x) + value(y))
        assert value(bigfloat.sub(x, y)) == nearest(value(x) - value(y))
        assert value(bigfloat.mul(x, y)) == nearest(value(x) * value(y))
        assert value(bigfloat.quo(x, y)) == nearest(value(x) / value(y))


@pytest.mark.parametrize(
    "a,op,b,text",
    [
        (1, "quo", 3, "0.33333333333333333334"),
        (2, "quo", 3, "0.6666666666666666667"),
        (10, "quo", 4, "2.5"),
        ("0.1", "add", "0.2", "0.3"),
        ("1.5e-7", "mul", 1, "1.5e-07"),
        ("1234567.5", "mul", 1, "1.2345675e+06"),
        ("123456.5", "mul", 1, "123456.5"),
        ("0.0001", "mul", 1, "0.0001"),
        ("0.00001", "mul", 1, "1e-05"),
        (12345678901234567890123, "quo", 7, "1763668414462081127200"),
        ("1e30", "add", "0.5", "1000000000000000000000000000000"),
        (0, "quo", -5, "-0"),
        (0, "mul", "-1.5", "-0"),
        ("0.5", "sub", "0.5", "0"),
        ("-1.5", "add", "1.5", "0"),
    ],
)
def test_result_text(a: Any, op: str, b: Any, text: str) -> None:
    assert bigfloat.text(getattr(bigfloat, op)(bf(a), bf(b))) == text


def test_shortest_digits_read_back_and_cannot_be_shorter() -> None:
    r = random.Random(20)
    for _ in range(300):
        x = BigFloat(r.random() < 0.5, r.getrandbits(64) | (1 << 63), r.randint(-120, 40), 64)
        digits, point = bigfloat.shortest(x)
        exp10 = point - len(digits)
        assert value(bigfloat.parse(x.neg, int(digits), exp10)) == value(x)
        if len(digits) > 1:
            short = int(digits[:-1])
            for cand in (short, short + 1):
                assert value(bigfloat.parse(x.neg, cand, exp10 + 1)) != value(x)


def test_product_keeps_53_bits() -> None:
    # OPA starts the product at a float of its own (53 bits) and stays there.
    assert numbers.product([0.1, 3]) == 0.30000000000000004
    assert numbers.product([Decimal("0.33333333333333333334"), 3]) == 1
    assert numbers.product([1.1, 1.1]) == 1.2100000000000002


def test_to_number_picks_the_representation() -> None:
    assert bigfloat.to_number(bf("0.3")) == 0.3 and type(bigfloat.to_number(bf("0.3"))) is float
    third = bigfloat.to_number(bigfloat.quo(bf(1), bf(3)))
    assert type(third) is Decimal and third == Decimal("0.33333333333333333334")
    assert type(bigfloat.to_number(bf("2.0"))) is int
    negative_zero = bigfloat.to_number(bigfloat.quo(bf(0), bf(-5)))
    assert negative_zero == 0 and str(negative_zero) == "-0.0"
    assert numbers.format_number(negative_zero) == "-0"


# ---------------------------------------------------------------- known answers


KNOWN = [
    ("1/3", Decimal("0.33333333333333333334")),
    ("1/3*3", 1),
    ("2/3 + 1/3", 1),
    ("100/6*6", 100),
    ("0.1+0.2", Decimal("0.3")),
    ("0.1+0.2 == 0.3", True),
    ("10/4", Decimal("2.5")),
    ("2.5*2", 5),
    ("12345678901234567890123 / 7", 1763668414462081127200),
    ("12345678901234567890123 + 1", 12345678901234567890124),
    ("12345678901234567890123 * 3", 37037036703703703670369),
    ("(73786976294838206465*3)/3", 73786976294838206460),
    ("1e30 + 1", 10**30 + 1),
    ("1 - 0.9", Decimal("0.10000000000000000002")),
    ("1e-400 / 3", Decimal("3.3333333333333333332e-401")),
    ("abs(-12345678901234567890123)", 12345678901234567890000),
    ("round(12345678901234567890123)", 12345678901234567889920),
    ("round(9223372036854775809)", 9223372036854775810),
    ("round(1e30)", 1000000000000000000024696061952),
    ("round(-2.5)", -3),
    ("round(0.49999999999999999999999)", 1),
    ("ceil(-0.5)", 1),
    ("floor(-0.5)", 0),
    ("floor(-1.5)", -2),
    ("sum([1, 2.5, 1/3])", Decimal("3.8333333333333333333")),
    ("sum({1e20, -1e20, 0.1})", 0),
    ("product([1/3, 3])", 1),
    ("format_int(1/3*3, 10)", "1"),
    ("format_int(12345678901234567890123.5, 16)", "29d42b64e7671424400"),
    ("to_number(\"0.33333333333333333334\") * 3", 1),
    ("5.0 % 2", 1),
    ("10 % 18446744073709551616", 10),
    ("units.parse_bytes(\"1.1e30kb\")", 1099999999999999999988407883268096),
]


@pytest.mark.parametrize("expr,want", KNOWN, ids=[k[0] for k in KNOWN])
def test_known_answers(execution_form: str, expr: str, want: Any) -> None:
    got = evaluate(f"x := {expr}")
    assert got == want and type(got) is type(want) or (type(want) is Decimal and _exact(got) == want)


@pytest.mark.parametrize(
    "expr,message",
    [
        ("1/0", "div: divide by zero"),
        ("1/0.0", "div: divide by zero"),
        ("0.0/0", "div: divide by zero"),
        ("1.5/0", "div: divide by zero"),
        ("5.5 % 2", "rem: modulo on floating-point number"),
        ("5 % 0", "rem: modulo by zero"),
        ("5 % 0.0", "rem: modulo by zero"),
        ("5.5 % 0", "rem: modulo on floating-point number"),
    ],
)
def test_arithmetic_errors(execution_form: str, expr: str, message: str) -> None:
    with pytest.raises(pyrego.RegoError) as info:
        evaluate(f"x := {expr}")
    assert info.value.code == "eval_builtin_error"
    assert message in str(info.value)


def test_json_text_of_results() -> None:
    e = pyrego.Engine()
    e.add_policy("t.rego", "package t\n")
    text = e.eval_query_json("x := [1/3, 0/-5, 1/3*0.00001, 1/3*1e7, 0.1*3, json.marshal([1/3, 0/-5])]")
    got = text.split('"x":', 1)[1].split("},", 1)[0]
    assert got == '[0.33333333333333333334,-0,3.3333333333333333334e-06,3.3333333333333333335e+06,0.3,"[0.33333333333333333334,-0]"]'


# ---------------------------------------------------------------- against OPA


def _exact(v: Any) -> Any:
    """Numbers as exact Decimals (a float is the decimal its repr spells)."""
    if type(v) is float:
        return Decimal(repr(v))
    if type(v) is int:
        return Decimal(v)
    if type(v) is list:
        return [_exact(x) for x in v]
    if type(v) is dict:
        return {k: _exact(x) for k, x in v.items()}
    return v


def _integral_kind(v: Any) -> Any:
    """Where each number is integral text in OPA's output (an int, or -0)."""
    if type(v) is list:
        return [_integral_kind(x) for x in v]
    return type(v) is int or (type(v) is float and not v)


def _cases() -> dict[str, list[str]]:
    small = range(1, 13)
    negatives = [-1, -2, -3, -7, -12]
    groups: dict[str, list[str]] = {
        "div-mul": [f"{x}/{y}*{y}" for x in small for y in small],
        "div-add": [f"{x}/{y}+{x}/{y}" for x in small for y in small],
        "mul-div": [f"{x}*{y}/{y}" for x in small for y in small],
        "negatives": [f"({x})/({y})*({y})" for x in negatives + [5, 11] for y in negatives + [3, 9]]
        + [f"({x})/({y})+({x})/({y})" for x in negatives for y in negatives],
    }
    r = random.Random(42)
    nums = ["0.1", "0.2", "2.5", "1.5e-7", "123456.789", "1234567.891", "0.33333333333333333334", "7", "-3", "12", "2.0",
            "1e-30", "3e25", "0.1234567890123456789", "1e-400", "1e400", "12345678901234567890123", "(1/3)", "(2/7)", "input.f", "input.g", "input.big"]
    chains = []
    for _ in range(150):
        expr = r.choice(nums + ["-0.0", "0"])
        for _ in range(r.randint(1, 4)):
            op = r.choice("+-*/")
            expr = f"({expr} {op} {r.choice(nums if op == '/' else nums + ['-0.0', '0'])})"
        chains.append(expr)
    groups["chains"] = chains
    groups["big-integers"] = [
        "12345678901234567890123 + 98765432109876543210987", "12345678901234567890123 - 12345678901234567890122",
        "12345678901234567890123 * 98765432109876543210987", "12345678901234567890123 / 3", "12345678901234567890123 / 12345678901234567890123",
        "18446744073709551617 / 1", "18446744073709551616 / 2", "-18446744073709551617 * 1.5", "1e30 % 7", "98765432109876543210 % 1234567",
        "2147483647 + 1", "9223372036854775807 + 1", "-9223372036854775808 - 1", "4294967296 * 4294967296",
    ]
    groups["aggregates"] = [
        "sum([0.1, 0.2, 0.3])", "sum([1, 2.5, 1/3])", "sum({0.1, 1e20, -1e20})", "sum([1e20, -1e20, 0.1])", "sum([12345678901234567890123, 0.5])",
        "product([0.1, 3])", "product({0.1, 3, 7})", "product([1/3, 3])", "product([1.1, 1.1, 1.1])", "product([12345678901234567890123, 2.0])",
        "sum([input.f, input.g])", "product([input.f, input.g, 3])", "sum([])", "product([])",
    ]
    groups["unary"] = [f"{fn}({x})" for fn in ("abs", "round", "ceil", "floor") for x in (
        "2.5", "-2.5", "-0.5", "0.5", "-0.4", "1/3", "-1/3", "12345678901234567890123", "-12345678901234567890123", "9223372036854775809",
        "1e30", "-1e30", "0.49999999999999999999999", "1e-400", "-1e-400", "99.99999", "-1.001", "input.f", "input.big", "(0/-5)")]
    groups["conversions"] = [
        "format_int(1/3*3, 10)", "format_int(12345678901234567890123.5, 16)", "format_int(-2.9, 10)", "format_int(input.big, 10)",
        "to_number(\"0.33333333333333333334\") * 3", "to_number(\"1e-400\")", "units.parse_bytes(\"1.1e30kb\")", "units.parse_bytes(\"1e40\")",
        "units.parse(\"1.5m\") * 2", "units.parse(\"12345678901234567890123.5Ki\")",
    ]
    groups["order"] = [
        "1 - 0.9 > 0.1", "0.1 < 1 - 0.9", "1 - 0.9 >= 0.1", "0.1 <= 1 - 0.9", "1 - 0.9 == 0.1", "lt(0.1, 1 - 0.9)",
        "max([0.1, 1 - 0.9])", "min([1/3, 0.3333333333333333])", "sort([1 - 0.9, 0.1, 1/3, 0.3333333333333333, 1e-400, -1e-400])",
        "count({1 - 0.9, 0.1})", "0.1 + 0.2 == 0.3", "1/3 == to_number(\"0.33333333333333333334\")", "0/-5 == 0",
    ]
    return groups


CASES = _cases()
INPUT = {"f": 0.1, "g": 1e-7, "big": 1e300}
_ORACLE_ANSWERS: dict[str, Any] = {}


def _oracle_values(oracle: Any, group: str) -> Any:
    if group not in _ORACLE_ANSWERS:
        res = oracle.evaluate({"t.rego": _module(CASES[group])}, "x := data.t.all", input=INPUT)
        assert not res.is_error, res.error_message
        _ORACLE_ANSWERS[group] = res.bindings[0]["x"]
    return _ORACLE_ANSWERS[group]


def _module(exprs: list[str]) -> str:
    return "package t\n\nall := [\n" + ",\n".join(f"    {e}" for e in exprs) + ",\n]\n"


@pytest.mark.parametrize("group", list(CASES))
def test_same_numbers_as_opa(oracle: Any, execution_form: str, group: str) -> None:
    want = _oracle_values(oracle, group)
    e = pyrego.Engine()
    e.set_strict_builtin_errors(True)
    e.add_policy("t.rego", _module(CASES[group]))
    e.set_input(INPUT)
    for _ in range(2):  # the second evaluation runs the promoted (fast) code in the fast form
        got = e.eval_rule("data.t.all")
        bad = [
            f"{expr}: OPA {w} pyrego {g!r}"
            for expr, w, g in zip(CASES[group], want, got)
            if _exact(w) != _exact(g) or _integral_kind(w) != _integral_kind(g)
        ]
        assert not bad, "\n".join(bad)


@pytest.mark.parametrize("expr", ["1/0", "1/0.0", "0.0/0", "1.5/0", "5.5 % 2", "5 % 0", "5.5 % 0", "1e-400 % 1", "input.f % 1"])
def test_same_errors_as_opa(oracle: Any, execution_form: str, expr: str) -> None:
    want = oracle.evaluate({"t.rego": "package t\n"}, f"x := {expr}", input=INPUT)
    assert want.is_error
    e = pyrego.Engine()
    e.set_strict_builtin_errors(True)
    e.add_policy("t.rego", "package t\n")
    e.set_input(INPUT)
    with pytest.raises(pyrego.RegoError) as info:
        e.eval_query(f"x := {expr}")
    assert info.value.code == want.error_code == "eval_builtin_error"
    assert str(info.value).split("eval_builtin_error: ")[-1] in (want.error_message or "")
