"""Huge numbers: read, computed and printed in time, or refused at once.

JSON with a huge exponent (``1e1000000``) is read as it is written (a
``Decimal``), not turned into an int of millions of bits; float results of
huge integers are found from their leading digits; integers past the size
limit (2**20 bits) are a builtin error. Answers agree with OPA.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

import pyrego
from pyrego.runtime import bigint

LIMIT = 1.0


def _engine(policy: str | None = None) -> pyrego.Engine:
    eng = pyrego.Engine()
    eng.set_strict_builtin_errors(True)
    if policy:
        eng.add_policy("p.rego", policy)
    eng.eval_query("x := count(json.marshal([1]))")  # builtins loaded
    eng.set_eval_timeout(LIMIT)
    return eng


def _x(eng: pyrego.Engine, query: str) -> Any:
    return eng.eval_query(query)["result"][0]["bindings"]["x"]


@pytest.mark.parametrize("text", ["1e1000000", '{"a": 1e3000000}', "[-1.5e2000000, 1e-1000000]", "12345e999999"])
def test_json_with_a_huge_exponent_loads_at_once(text: str) -> None:
    eng = _engine()
    start = time.monotonic()
    eng.set_input_json(text)
    eng.add_data_json('{"d": ' + text + "}")
    assert time.monotonic() - start < LIMIT
    assert _x(eng, "x := input == data.d") is True
    assert _x(eng, "x := count({input, data.d})") == 1


@pytest.mark.parametrize(
    "query, want",
    [
        ("x := input > 5", True),
        ("x := input == 10", False),
        ("x := count(json.marshal(input))", 1000001),  # all the digits (OPA echoes the text: 1e1000000)
        ("x := count(json.marshal(input / 3))", 1000000),
        ("x := substring(json.marshal(input / 3), 0, 22)", "3333333333333333333200"),  # as OPA
        ("x := input - input", 0),
    ],
)
def test_a_huge_json_number_in_arithmetic(query: str, want: Any) -> None:
    eng = _engine()
    eng.set_input_json("1e1000000")
    start = time.monotonic()
    assert _x(eng, query) == want
    assert time.monotonic() - start < 5 * LIMIT


@pytest.mark.parametrize("query", ["x := input + 1", "x := round(input)", "x := input % 7", "x := format_int(input, 10)"])
def test_integer_arithmetic_past_the_size_limit_is_refused(query: str) -> None:
    eng = _engine()
    eng.set_input_json("1e1000000")
    start = time.monotonic()
    with pytest.raises(pyrego.EvalBuiltinError, match="more than the limit of 1048576 bits"):
        eng.eval_query(query)
    assert time.monotonic() - start < LIMIT


def test_cli_reads_a_huge_exponent_at_once(tmp_path: Any) -> None:
    import subprocess

    big = tmp_path / "big.json"
    big.write_text("1e1000000")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "eval", "-i", str(big), "--timeout", "1s", "input > 5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"value": true' in proc.stdout
    assert time.monotonic() - start < 30  # a process start, not minutes


BIG = "package p\na := bits.lsh(1, 1000000) + 1\n"


@pytest.mark.parametrize(
    "query",
    [
        "x := count(json.marshal(data.p.a / 7))",
        "x := count(json.marshal(data.p.a + 0.5))",
        "x := count(json.marshal(round(data.p.a / 3)))",
        "x := count(json.marshal(data.p.a))",
        "x := count(format_int(data.p.a, 10))",
        "x := count(json.marshal(data.p.a / 7 + 1))",
    ],
)
def test_float_results_of_a_million_bit_integer_are_quick(query: str) -> None:
    eng = _engine(BIG)
    start = time.monotonic()
    assert _x(eng, query) in (301029, 301030)
    assert time.monotonic() - start < 5 * LIMIT


@pytest.mark.parametrize(
    "query",
    [
        "x := bits.lsh(1, 4000000)",
        "x := bits.lsh(1, 600000) * bits.lsh(1, 600000)",
        "x := product([bits.lsh(1, 600000), bits.lsh(1, 600000)])",
    ],
)
def test_integers_past_the_size_limit_are_refused(query: str) -> None:
    eng = _engine()
    start = time.monotonic()
    with pytest.raises(pyrego.EvalBuiltinError, match="limit of 1048576 bits"):
        eng.eval_query(query)
    assert time.monotonic() - start < LIMIT


@pytest.mark.parametrize("bits", [64, 65, 300, 3000, 20000, 200000, 1000000])
def test_huge_integer_float_arithmetic_matches_opa(bits: int, oracle: Any) -> None:
    a = f"bits.lsh(1, {bits})"
    exprs = [
        f"{a} / 7",
        f"({a} + 1) / 7",
        f"{a} + 0.5",
        f"round({a} / 3)",
        f"ceil({a} / 3)",
        f"floor(-{a} / 3)",
        f"{a} * 1.5",
        f"1 / {a}",
        f"3 / ({a} + 1)",
        f"{a} / 7 + 1",
    ]
    query = "x := [" + ", ".join(f"json.marshal({e})" for e in exprs) + "]"
    want = oracle.evaluate({}, query)
    assert not want.is_error, want.error_message
    assert _x(_engine(), query) == want.bindings[0]["x"]


@pytest.mark.parametrize("digits", [5, 3000, 3001, 20000, 100000])
def test_big_int_conversions_are_exact(digits: int) -> None:
    from decimal import Decimal

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        n = int("7" * digits) * 3 + 1
        text = str(n)
        assert bigint.int_text(n) == text and bigint.int_text(-n) == "-" + text
        assert bigint.text_int(text) == n
        assert bigint.decimal_to_int(Decimal(text)) == n
        assert bigint.decimal_to_int(Decimal(f"-{text}e5")) == -n * 10**5
        assert bigint.int_decimal(n) == Decimal(text)
    finally:
        sys.set_int_max_str_digits(old)


@pytest.mark.parametrize("digits", [4301, 5000, 50000])
def test_json_integers_past_python_digit_limit_load(digits: int) -> None:
    # OPA reads integers of any length; Python's JSON reader refuses past 4,300 digits.
    eng = _engine()
    eng.set_input_json("[" + "1" * digits + ", -" + "9" * digits + "]")
    assert _x(eng, "x := input[0] % 7") == (10**digits - 1) // 9 % 7
    assert _x(eng, "x := count(json.marshal(input[0] + 1))") == digits
    assert _x(eng, "x := substring(json.marshal(input[1] - 1), 0, 4)") == "-100"
    assert _x(eng, "x := input[0] > input[1]") is True


def test_shortest_digits_from_leading_digits_match_the_exact_digits(monkeypatch: Any) -> None:
    # Floats of 14,000 bits and more get their shortest digits from 50
    # leading digits; the exact expansion must give the same digits.
    import random

    from pyrego.runtime import bigfloat

    rng = random.Random(20)
    exact = bigfloat._decimal
    values = []
    for i in range(80):
        prec = 64 if i % 3 else 53
        mant = [1 << (prec - 1), (1 << prec) - 1, rng.getrandbits(prec) | 1 << (prec - 1)][i % 3]
        exp = rng.choice([1, -1]) * rng.randint(14_000, 30_000)
        values.append(bigfloat.BigFloat(bool(i & 4), mant, exp, prec))
    fast = [bigfloat.shortest(v) for v in values]
    monkeypatch.setattr(bigfloat, "_decimal", lambda m, e, lead=False: exact(m, e, False))
    assert fast == [bigfloat.shortest(v) for v in values]


HUGE = 'json.unmarshal("1e999999999")'  # what a JSON input ``1e999999999`` reads as, in OPA too


@pytest.mark.parametrize(
    "query",
    [
        f"x := json.marshal({HUGE})",
        f'x := sprintf("%v", [{HUGE}])',
        f'x := json.marshal([{HUGE}, json.unmarshal("-1.5e999999999")])',
        f"x := yaml.marshal({HUGE})",
        'x := to_number("1e999999999")',
        f"x := numbers.range({HUGE}, 1)",
        f"x := bits.or({HUGE}, 1)",
        f'x := substring("abc", {HUGE}, 1)',
        'x := units.parse("1e-999999")',
    ],
)
def test_a_billion_digit_exponent_as_opa(oracle: Any, query: str) -> None:
    # Each of these wrote out or converted all billion digits (minutes, gigabytes).
    from opa_oracle import plain_numbers

    eng = _engine()
    start = time.monotonic()
    try:
        ours: Any = ("ok", plain_numbers(_x(eng, query)))
    except pyrego.RegoError as err:
        ours = ("err", err.code, err.message)
    assert time.monotonic() - start < LIMIT
    r = oracle.evaluate({"p.rego": "package p\n"}, query)
    theirs = ("err", r.error_code, r.error_message.split(": ", 2)[-1]) if r.error_code else ("ok", plain_numbers(r.bindings[0]["x"]))
    if ours[0] == "err":
        ours = ("err", ours[1], ours[2].split(": ", 1)[-1] if ours[2].startswith("query:") else ours[2])
    assert ours == theirs


@pytest.mark.parametrize(
    "query",
    [
        "x := input + 1",
        "x := input + 0.5",
        "x := input - 0",
        "x := input - json.unmarshal(\"1e-999999999\")",
        "x := round(input)",
        "x := floor(input)",
        "x := input % 7",
        "x := format_int(input, 10)",
        'x := units.parse(sprintf("%v", [input]))',
    ],
)
@pytest.mark.parametrize("text", ["1e999999999", "-1.5e999999999", "-1e999999"])
def test_arithmetic_on_a_billion_digit_exponent_ends_at_once(query: str, text: str) -> None:
    # OPA fails these (+Inf, or a panic); pyrego answers or refuses at once.
    eng = _engine()
    eng.set_input_json(text)
    start = time.monotonic()
    try:
        eng.eval_query(query)
    except pyrego.RegoError as err:
        assert err.code == "eval_builtin_error", err
    assert time.monotonic() - start < 3 * LIMIT  # (minutes before; a million-digit text is read in this one)


@pytest.mark.parametrize(
    "text, want",
    [("1e999999999", "1e999999999"), ("-1.5e-999999999", "-1.5e-999999999"), ("1e5000", "1" + "0" * 5000), ("5.00", "5")],
)
def test_go_json_writes_a_huge_decimal_at_once(text: str, want: str) -> None:
    # The server's and the command line's JSON writer: str(int(d)) of JSON
    # input 1e999999999 ran for minutes (and past 4,300 digits raised ValueError).
    from decimal import Decimal

    from pyrego.go_json import marshal

    start = time.monotonic()
    assert marshal(Decimal(text)) == want
    assert time.monotonic() - start < LIMIT
