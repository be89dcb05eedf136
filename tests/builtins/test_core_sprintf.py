"""sprintf with Go's fmt semantics (builtins/sprintf.py); expected texts are OPA v1.20.2's."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import OperandTypeError, lookup
from pyrego.builtins.sprintf import format_value, go_quote
from pyrego.runtime.values import freeze, make_set


def sprintf(fmt: str, args: list[Any]) -> str:
    b = lookup("sprintf")
    assert b is not None
    return b.fn(fmt, args)  # type: ignore[no-any-return]


S = make_set
BIG = 123456789012345678901234567890


@pytest.mark.parametrize(
    "fmt,args,want",
    [
        ("hi %s", ["there"], "hi there"),
        ("hi %02X.%02X", [127, 1], "hi 7F.01"),
        ("hi %.2f", [3.1415], "hi 3.14"),
        ("hi %s", [True], "hi true"),
        ("hi %v", [["there", 5, 3.14]], 'hi ["there", 5, 3.14]'),
        ("%s", [123456789123456789123], "123456789123456789123"),
        ("%d", [42], "42"),
        ("%v %.2f %x", [{"a": S([1, 2])}, 3.14159, "hi"], '{"a": {1, 2}} 3.14 6869'),
        ("%05s|%-5d|%+d|% d|%x|%X|%o|%b|%c|%q|%U", ["ab", 3, 5, 5, 255, 255, 8, 5, 65, 65, 65], "000ab|3    |+5| 5|ff|FF|10|101|A|'A'|U+0041"),
        ("%v %v", [1234567.5, 0.000012], "1.2345675e+06 1.2e-05"),
        ("%.2f|%8.3f|%-8.3e|%g|%.3g|%#g", [3.14159, 2.5, 12345.678, 0.00001234, 1234.5678, 1.5], "3.14|   2.500|1.235e+04|1.234e-05|1.23e+03|1.50000"),
        ("%b|%08.3f|%-8.3f|%+g|% g|%E", [1.0, -3.14159, 3.14159, 1.5, 1.5, 12345.5], "1|-003.142|3.142   |+1.5| 1.5|1.234550E+04"),
        ("%3c|%-4q|%.0d|%5.0d|%.0f|%#.0f|%#.0e", [65, 66, 0, 0, 2.5, 2.5, 2.5], "  A|'B' ||     |2|2.|2.e+00"),
        ("%+v|%+v|%#v|%#v|% v|%010v|%-6v|%6.2v|%.3v", [5, 1.5, "a", 5, 5, -1.5, "ab", "hello", 3.14159], '5|1.5|"a"|5| 5|-0000001.5|ab    |    he|3.14'),
        ("%x|%X|% X|%#x|%.1x", [1.5, -1.5, "é", 3.5, "abc"], "0x1.8p+00|-0X1.8P+00|C3 A9|0x1.c000p+01|61"),
        ("%-+5d|%05d|%-05s|%0-5d|%05x|%#05x", [3, -3, "a", 3, "é", 255], "+3   |-0003|a    |3    |0c3a9|0x000ff"),
        ("%c|%q|%U", [1114112, 55296, 1114112], "\ufffd|'\ufffd'|U+110000"),
        ("%U|%#U|%c", [-1, 128512, -1], "U+FFFFFFFFFFFFFFFF|U+1F600 '😀'|\ufffd"),
        ("%6.2s|%-6s|%.1q|%8q|%#q|%+q", ["héllo", "é", "héllo", "a", "a`b", "é"], '    hé|é     |"h"|     "a"|"a`b"|"\\u00e9"'),
        ("%q", ["é\n\t\x01\u00a0\u2028😀"], '"é\\n\\t\\x01\\u00a0\\u2028😀"'),
    ],
)
def test_formats(fmt: str, args: list[Any], want: str) -> None:
    assert sprintf(fmt, args) == want


@pytest.mark.parametrize(
    "fmt,args,want",
    [
        ("%s %d %t", [5, "x", True], "%!s(int64=5) %!d(string=x) %!t(string=true)"),
        ("%d %d", [1], "1 %!d(MISSING)"),
        ("%d", [1, 2, "x", [1], 1.5, BIG], f"1%!(EXTRA int64=2, string=x, string=[1], float64=1.5, *big.Int={BIG})"),
        ("%T %T %T %T %T", [1, 1.5, "s", True, BIG], "int64 float64 string string *big.Int"),
        ("%5t|%q", [1, [1, "a"]], '%!t(int64=    1)|"[1, \\"a\\"]"'),
        ("%", [], "%!(NOVERB)"),
        ("%!", [1], "%!!(int64=1)"),
        ("%[2]d %[1]d", [1, 2], "2 1"),
        ("%[3]d %d", [1, 2], "%!d(BADINDEX) 1"),
        ("%[0]d|%[x]d|%[2]*d|%.[2]d", [1, 2, 3], "%!d(BADINDEX)|%!d(BADINDEX)| 3|2"),
        ("%*d|%.*f", [5, 42, 2, 3.14159], "   42|3.14"),
        ("%w|%p", [1, 2], "%!w(int64=1)|%!p(int64=2)"),
        ("%q %c %e", [BIG, BIG, BIG], f"%!q(big.Int={BIG}) %!c(big.Int={BIG}) %!e(big.Int={BIG})"),
    ],
)
def test_go_error_notes(fmt: str, args: list[Any], want: str) -> None:
    assert sprintf(fmt, args) == want


def test_big_integers() -> None:
    got = sprintf("%x %X %o %d %+d %08d %.3d %s %v", [BIG, BIG, BIG, -BIG, BIG, BIG, BIG, BIG, BIG])
    assert got == (
        "18ee90ff6c373e0ee4e3f0ad2 18EE90FF6C373E0EE4E3F0AD2 143564417755415637016711617605322 "
        f"-{BIG} +{BIG} {BIG} {BIG} {BIG} {BIG}"
    )
    assert sprintf("%+v|%#v", [BIG, BIG]) == f"+{BIG}|{BIG}"
    assert sprintf("%v|%d", [9223372036854775807, 9223372036854775808]) == "9223372036854775807|9223372036854775808"


def test_values_as_rego_text() -> None:
    assert sprintf("%v", [S([])]) == "set()"
    assert sprintf("%v %v %v", [None, {}, []]) == "null {} []"
    obj = {"b": 1, "a": 2, 1: 3, freeze([1]): S(["z", "y"])}
    assert sprintf("%v", [obj]) == '{1: 3, "a": 2, "b": 1, [1]: {"y", "z"}}'
    assert sprintf("%s", [{"a": "é\n"}]) == '{"a": "é\\n"}'
    assert format_value([True, None, 1.5, "x"]) == '[true, null, 1.5, "x"]'


def test_integral_floats_are_integers() -> None:
    assert sprintf("%d %v %T", [2.0, -0.0, 3.0]) == "2 0 int64"


def test_go_quote() -> None:
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("\x07\x7f") == '"\\a\\x7f"'
    assert go_quote("é", ascii_only=True) == '"\\u00e9"'
    assert go_quote("😀", ascii_only=True) == '"\\U0001f600"'
    assert go_quote("\udcff") == '"\\xff"'  # a raw byte kept by surrogateescape


def test_operand_errors() -> None:
    with pytest.raises(OperandTypeError, match="^operand 1 must be string but got number$"):
        sprintf(1, [])  # type: ignore[arg-type]
    with pytest.raises(OperandTypeError, match="^operand 2 must be array but got set$"):
        sprintf("%d", S([1]))  # type: ignore[arg-type]
